"""Reports of a scan or verify run: text lines, JSON (``envelock-report/1``) and SARIF 2.1.0.

The CLI builds one :class:`FileResult` per input (whole: nothing patches it afterwards) and hands
them here; nothing in this module reads files or parses arguments. Baselines are in
:mod:`envelock.cli.baseline`.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from .._version import __version__
from ..eye.reader import visible
from ..scan.rules import RULE_TAGS, RULES, SECURITY_SEVERITY, SEVERITIES, VERIFY_SECURITY_SEVERITY
from ..types import Finding, Problem
from .walk import real

INFORMATION_URI = "https://github.com/envelock/envelock"
DOCS_URI = f"{INFORMATION_URI}/blob/main/docs/cli.md"
JSON_SCHEMA_ID = "envelock-report/1"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: Key of envelock's content-based fingerprint in SARIF ``partialFingerprints``.
FINGERPRINT_KEY = "envelockContent/v1"
#: Key of the row (its id, else its number) of a finding in columnar input, in SARIF ``partialFingerprints``.
ROW_FINGERPRINT_KEY = "envelockRow/v1"


@dataclass(frozen=True)
class Suppressed:
    """A finding that is not reported: ``how`` is ``"inline"`` (an ``envelock: ignore[...]``
    comment) or ``"baseline"`` (listed in the ``--baseline`` report)."""

    finding: Finding
    fingerprint: str
    how: str


@dataclass(frozen=True)
class FileResult:
    """What happened to one input, built whole once everything about it is known: its findings
    (after suppression), the reason it was skipped, or the error that kept it from being read."""

    path: str  # as shown to people ("<stdin>" for stdin)
    uri: str  # for SARIF: relative to %SRCROOT%
    findings: tuple[Finding, ...] = ()
    skipped: str | None = None
    #: Content-based fingerprints, one per finding (see :func:`envelock.scan.fingerprints.fingerprints`).
    fingerprints: tuple[str, ...] = ()
    suppressed: tuple[Suppressed, ...] = ()
    #: How the bytes were decoded when they were not plain UTF-8 (``None``: they were).
    decoding: str | None = None
    #: Other things worth saying about this input (an unknown rule id in a suppression).
    notices: tuple[str, ...] = ()
    size: int = 0
    #: Columnar input: the 0-based row whose text the findings are in (``None`` for a whole file),
    #: that row's id (``--id-column``), and on a file's own result the rows it held.
    row: int | None = None
    row_id: str | None = None
    rows: int = 0
    #: Columnar input, on a file's own result: the rows whose text is not empty (``verify`` of rows
    #: that are all empty prefaces read nothing, as a file of zero bytes does).
    filled: int = 0
    #: Why an input that should have been read was not (unreadable, a symbolic link loop, a named
    #: pipe with no writer): the command exits 2.
    error: str | None = None

    @property
    def where(self) -> str:
        """The path, and for a row of columnar input the row and its id: ``data.parquet[row 7, id 'u']``."""
        if self.row is None:
            return self.path
        return f"{self.path}[row {self.row}" + (f", id {self.row_id!r}" if self.row_id is not None else "") + "]"

    @property
    def read(self) -> bool:
        """Was this input read (a file, or the container of rows; not a row, a skip or an error)?"""
        return self.skipped is None and self.error is None and self.row is None


# ---------------------------------------------------------------------------
# Verification problems as findings


def problem_finding(problem: Problem, text: str | None) -> Finding:
    """A verification problem as an ``error`` finding one character wide, for every report of ``verify``:
    the one conversion (a row of a columnar input has no text at hand: its snippet is empty)."""
    where = f"entry {problem.entry}" if problem.entry is not None else "outside envelopes"
    end, end_col, snippet = problem.offset, problem.column, ""
    if text is not None:
        end = min(len(text), problem.offset + 1)
        end_col = problem.column + (1 if end > problem.offset else 0)
        snippet = visible(text[problem.offset : problem.offset + 40])
    return Finding(
        problem.code,
        "error",
        f"{where}: {problem.message}",
        problem.offset,
        problem.line,
        problem.column,
        end,
        problem.line,
        end_col,
        snippet,
    )


# ---------------------------------------------------------------------------
# Summaries


def counts(results: Sequence[FileResult]) -> dict[str, int]:
    """Findings per severity, files read, skipped and suppressed."""
    c: dict[str, int] = {s: 0 for s in SEVERITIES}
    for r in results:
        for f in r.findings:
            c[f.severity] += 1
    out = {
        "files": sum(1 for r in results if r.read),
        "skipped": sum(1 for r in results if r.skipped),
        **c,
        "suppressed": sum(len(r.suppressed) for r in results),
        "decoded_with_replacement": sum(1 for r in results if r.decoding),
    }
    rows = sum(r.rows for r in results)
    if rows:
        out["rows"] = rows
    errors = sum(1 for r in results if r.error)
    if errors:
        out["errors"] = errors
    return out


def summary_line(command: str, results: Sequence[FileResult]) -> str:
    c = counts(results)
    rows = f" ({c['rows']} rows)" if "rows" in c else ""
    line = (
        f"envelock {command}: {c['files']} file(s){rows}, {c['error']} error(s), {c['warning']} warning(s), "
        f"{c['note']} note(s), {c['skipped']} skipped"
    )
    if c["suppressed"]:
        line += f", {c['suppressed']} suppressed"
    if c["decoded_with_replacement"]:
        line += f", {c['decoded_with_replacement']} not valid UTF-8 (decoded and scanned)"
    if "errors" in c:
        line += f", {c['errors']} not read (error)"
    return line


# ---------------------------------------------------------------------------
# JSON


def _row_fields(r: FileResult) -> dict[str, Any]:
    """``row`` and ``id`` of a finding in columnar input (nothing for a file)."""
    return {} if r.row is None else {"row": r.row, "id": r.row_id}


def json_report(command: str, results: Sequence[FileResult], exit_code: int, nothing_read: bool = False) -> dict[str, Any]:
    c = counts(results)
    summary = {k: c[k] for k in ("files", "skipped", *SEVERITIES, "suppressed", "rows", "errors") if k in c}
    errors = [{"path": r.path, "reason": r.error} for r in results if r.error]
    return {
        "schema": JSON_SCHEMA_ID,
        "tool": {"name": "envelock", "version": __version__},
        "command": command,
        "findings": [
            {"path": r.path, **_row_fields(r), **f.as_dict(), "fingerprint": fp}
            for r in results
            for f, fp in zip(r.findings, r.fingerprints, strict=True)
        ],
        "skipped": [{"path": r.path, "reason": r.skipped} for r in results if r.skipped],
        "suppressed": [
            {"path": r.path, **_row_fields(r), **s.finding.as_dict(), "fingerprint": s.fingerprint, "how": s.how}
            for r in results
            for s in r.suppressed
        ],
        "decoded": [{"path": r.path, "how": r.decoding} for r in results if r.decoding],
        **({"errors": errors} if errors else {}),
        **({"nothing_read": True} if nothing_read else {}),
        "summary": summary,
        "exit_code": exit_code,
    }


#: What a report says of a run that read nothing (``conclude``'s stderr line, in the report itself).
NOTHING_READ = "nothing was read: the gate checked nothing (--allow-empty accepts this)"


# ---------------------------------------------------------------------------
# SARIF


def _sarif_rule(rule_id: str, short: str, help_text: str, level: str, security_severity: float) -> dict[str, Any]:
    precision = {"error": "high", "warning": "medium", "note": "low"}[level]
    return {
        "id": rule_id,
        "name": "".join(w.capitalize() for w in rule_id.replace("_", "-").split("-")),
        "shortDescription": {"text": short},
        "fullDescription": {"text": help_text},
        "help": {"text": help_text, "markdown": f"{help_text}\n\n[envelock rules]({DOCS_URI}#rules)"},
        "defaultConfiguration": {"level": level},
        "helpUri": f"{DOCS_URI}#rules",
        "properties": {"tags": list(RULE_TAGS), "security-severity": f"{security_severity:.1f}", "precision": precision},
    }


def srcroot_for(paths: Iterable[str], base: Path | None = None, resolved_paths: Mapping[str, Path] | None = None) -> Path:
    """%SRCROOT%: ``base`` (default: the working directory), or the nearest directory that
    holds it and every path in ``paths`` when some lie outside it (so every URI is relative).
    ``resolved_paths``: their real paths where already known (:func:`walk.reals`)."""
    root = real(base or Path.cwd())
    known = resolved_paths or {}
    resolved = [known[p] if p in known else real(p) for p in paths]
    outside = [str(p) for p in resolved if not p.is_relative_to(root)]  # (`root in p.parents` walks them all)
    if outside:
        root = Path(os.path.commonpath([str(root), *outside]))
    return root


def relative_uri(path: str, srcroot: Path, resolved: Path | None = None) -> str:
    """The URI of ``path`` relative to ``srcroot`` (percent-encoded, ``/``-separated); ``stdin`` for
    a name in angle brackets (``<stdin>``). ``resolved``: its real path, where already known."""
    if path.startswith("<"):
        return "stdin"
    if resolved is None:
        resolved = real(path)
    try:
        rel = resolved.relative_to(srcroot)
    except ValueError:
        rel = Path(os.path.relpath(resolved, srcroot))
    # The name's own bytes (a name that is not UTF-8 comes back from the OS with surrogate escapes).
    return quote(os.fsencode(rel.as_posix()))


def _sarif_result(
    f: Finding, fp: str, uri: str, index: dict[str, int], how: str | None = None, r: FileResult | None = None
) -> dict[str, Any]:
    region: dict[str, Any] = {"startLine": f.line, "startColumn": f.column, "snippet": {"text": f.snippet}}
    if f.end_line == f.line and f.end_column > f.column:
        region["endColumn"] = f.end_column
    elif f.end_line > f.line:
        region["endLine"] = f.end_line
        region["endColumn"] = f.end_column
    out: dict[str, Any] = {
        "ruleId": f.rule,
        "ruleIndex": index[f.rule],
        "level": f.severity,
        "message": {"text": f.message},
        "locations": [{"physicalLocation": {"artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"}, "region": region}}],
        "partialFingerprints": {FINGERPRINT_KEY: fp},
    }
    if r is not None and r.row is not None:
        # Columnar input: the region is inside the row's text; the row is a logical location.
        name = r.row_id if r.row_id is not None else f"row {r.row}"
        out["locations"][0]["logicalLocations"] = [{"name": name, "fullyQualifiedName": r.where, "kind": "object"}]
        out["properties"] = {"row": r.row, "id": r.row_id, "regionIn": "row text"}
        out["partialFingerprints"][ROW_FINGERPRINT_KEY] = f"{r.row_id if r.row_id is not None else r.row}"
    if how == "inline":
        out["suppressions"] = [{"kind": "inSource", "justification": "envelock: ignore[...] comment"}]
    elif how == "baseline":
        out["suppressions"] = [{"kind": "external", "justification": "listed in the --baseline report"}]
    return out


def sarif_report(
    command: str, results: Sequence[FileResult], srcroot: Path | None = None, nothing_read: bool = False
) -> dict[str, Any]:
    """A SARIF 2.1.0 log GitHub code scanning accepts (columns in Unicode code points, every
    URI relative to ``%SRCROOT%``, rules with ``security-severity`` and ``tags``)."""
    root = srcroot or real(Path.cwd())
    if command == "scan":
        rules = [_sarif_rule(r.id, r.short, r.help, r.severity, SECURITY_SEVERITY[r.id]) for r in RULES]
    else:
        codes = sorted({f.rule for r in results for f in r.findings})
        rules = [
            _sarif_rule(
                c,
                f"verify: {c}",
                f"verify_preface problem {c!r}: the text is not a sound composed preface.",
                "error",
                VERIFY_SECURITY_SEVERITY,
            )
            for c in codes
        ]
    index = {r["id"]: i for i, r in enumerate(rules)}
    sarif_results: list[dict[str, Any]] = []
    for r in results:
        for f, fp in zip(r.findings, r.fingerprints, strict=True):
            sarif_results.append(_sarif_result(f, fp, r.uri, index, r=r))
        sarif_results.extend(
            _sarif_result(s.finding, s.fingerprint, r.uri, index, s.how, r) for s in r.suppressed if s.finding.rule in index
        )
    notifications: list[dict[str, Any]] = []
    for r in results:
        where = [{"physicalLocation": {"artifactLocation": {"uri": r.uri, "uriBaseId": "%SRCROOT%"}}}]
        if r.error:
            notifications.append({"level": "error", "message": {"text": f"not read: {r.error}"}, "locations": where})
        if r.skipped:
            notifications.append({"level": "warning", "message": {"text": f"skipped: {r.skipped}"}, "locations": where})
        if r.decoding:
            notifications.append({"level": "note", "message": {"text": f"decoded: {r.decoding}"}, "locations": where})
        notifications.extend({"level": "note", "message": {"text": n}, "locations": where} for n in r.notices)
    # A run that read nothing did not succeed, though no input was in error (stop 51, a CLI-probe find:
    # the SARIF of `scan` over a directory of binary files said executionSuccessful).
    if nothing_read:
        notifications.append({"level": "error", "message": {"text": NOTHING_READ}})
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "envelock",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "invocations": [
                    {
                        "executionSuccessful": not nothing_read and not any(r.error for r in results),
                        "toolExecutionNotifications": notifications,
                    }
                ],
                "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri().rstrip("/") + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": sarif_results,
                "properties": {"summary": counts(results)},
            }
        ],
    }


# ---------------------------------------------------------------------------
# Writing


def one_line(text: str) -> str:
    """``text`` as one line of a log: what is not printable (a newline or a bidi control in a file
    name, which a walked directory may hold) written as its escape, so a name cannot print a line of
    its own, such as a false summary, into a CI log (red-team find of stop 43). Python's escapes, not
    the snippets' ``U+XXXX`` (:func:`~envelock.eye.reader.visible`): a file name that is not UTF-8
    is reported by its bytes (``c\\udcff.txt``), as the report wrote it before."""
    return (
        text
        if text.isprintable()
        else "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    )


def emit(
    fmt: str,
    command: str,
    results: Sequence[FileResult],
    exit_code: int,
    *,
    quiet: bool = False,
    srcroot: Path | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    nothing_read: bool = False,
) -> None:
    """Write the report of ``results`` to ``out`` (stdout); ``nothing_read``: the run exits 2 for having
    read nothing (the JSON and SARIF reports say so). In the text format, skipped files,
    decoding notes and the summary go to ``err`` (stderr) unless ``quiet``; inputs that could not
    be read go there even with ``quiet`` (they are why the command exits 2)."""
    out = out or sys.stdout
    err = err or sys.stderr
    if fmt == "json":
        out.write(json.dumps(json_report(command, results, exit_code, nothing_read), ensure_ascii=False, indent=2) + "\n")
    elif fmt == "sarif":
        out.write(json.dumps(sarif_report(command, results, srcroot, nothing_read), ensure_ascii=False, indent=2) + "\n")
    else:
        for r in results:
            if r.error:
                print(one_line(f"{r.path}: error: {r.error}"), file=err)
            if not quiet:
                if r.skipped:
                    print(one_line(f"{r.path}: skipped: {r.skipped}"), file=err)
                if r.decoding:
                    print(one_line(f"{r.path}: decoded: {r.decoding}"), file=err)
                for n in r.notices:
                    print(one_line(f"{r.path}: {n}"), file=err)
            for f in r.findings:
                out.write(one_line(f"{r.where}:{f.line}:{f.column}: {f.severity} {f.rule} {f.message} [{f.snippet}]") + "\n")
        if not quiet:
            print(summary_line(command, results), file=err)
    out.flush()
