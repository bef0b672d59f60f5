"""Reports of a scan or verify run: text lines, JSON (``envelock-report/1``) and SARIF 2.1.0.

The CLI collects one :class:`FileResult` per input and hands them here; nothing in
this module reads files or parses arguments.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .common import Finding
from .rules import RULES, SEVERITIES

INFORMATION_URI = "https://github.com/envelock/envelock"
JSON_SCHEMA_ID = "envelock-report/1"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


@dataclass
class FileResult:
    """What happened to one input: findings, or the reason it was skipped."""

    path: str  # as shown to people ("<stdin>" for stdin)
    uri: str  # for SARIF: relative to the working directory when possible
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None


def _counts(results: Sequence[FileResult]) -> dict[str, int]:
    c: dict[str, int] = {s: 0 for s in SEVERITIES}
    for r in results:
        for f in r.findings:
            c[f.severity] += 1
    return c


def _json_report(command: str, results: Sequence[FileResult], exit_code: int) -> dict[str, Any]:
    counts = _counts(results)
    return {
        "schema": JSON_SCHEMA_ID,
        "tool": {"name": "envelock", "version": __version__},
        "command": command,
        "findings": [{"path": r.path, **f.as_dict()} for r in results for f in r.findings],
        "skipped": [{"path": r.path, "reason": r.skipped} for r in results if r.skipped],
        "summary": {
            "files": sum(1 for r in results if not r.skipped),
            "skipped": sum(1 for r in results if r.skipped),
            **counts,
        },
        "exit_code": exit_code,
    }


def _sarif_rule(rule_id: str, short: str, help_text: str, level: str) -> dict[str, Any]:
    return {
        "id": rule_id,
        "name": "".join(w.capitalize() for w in rule_id.replace("_", "-").split("-")),
        "shortDescription": {"text": short},
        "fullDescription": {"text": help_text},
        "help": {"text": help_text},
        "defaultConfiguration": {"level": level},
        "helpUri": f"{INFORMATION_URI}/blob/main/docs/cli.md#rules",
    }


def sarif_report(command: str, results: Sequence[FileResult]) -> dict[str, Any]:
    """A SARIF 2.1.0 log GitHub code scanning accepts (columns in Unicode code points)."""
    if command == "scan":
        rules = [_sarif_rule(r.id, r.short, r.help, r.severity) for r in RULES]
    else:
        codes = sorted({f.rule for r in results for f in r.findings})
        rules = [
            _sarif_rule(c, f"verify: {c}", f"verify_preface problem {c!r}: the text is not a sound composed preface.", "error")
            for c in codes
        ]
    index = {r["id"]: i for i, r in enumerate(rules)}
    sarif_results: list[dict[str, Any]] = []
    for r in results:
        for f in r.findings:
            region: dict[str, Any] = {"startLine": f.line, "startColumn": f.column, "snippet": {"text": f.snippet}}
            if f.end_line == f.line and f.end_column > f.column:
                region["endColumn"] = f.end_column
            elif f.end_line > f.line:
                region["endLine"] = f.end_line
                region["endColumn"] = f.end_column
            artifact: dict[str, Any] = {"uri": r.uri}
            if not r.uri.startswith("file:"):
                artifact["uriBaseId"] = "%SRCROOT%"
            sarif_results.append(
                {
                    "ruleId": f.rule,
                    "ruleIndex": index[f.rule],
                    "level": f.severity,
                    "message": {"text": f.message},
                    "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
                    "partialFingerprints": {"envelockOffset/v1": f"{f.rule}:{f.offset}:{f.end_offset}"},
                }
            )
    notifications = [
        {
            "level": "warning",
            "message": {"text": f"skipped: {r.skipped}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": r.uri}}}],
        }
        for r in results
        if r.skipped
    ]
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
                "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().resolve().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "results": sarif_results,
            }
        ],
    }


def emit(fmt: str, command: str, results: Sequence[FileResult], exit_code: int) -> None:
    out = sys.stdout
    if fmt == "json":
        out.write(json.dumps(_json_report(command, results, exit_code), ensure_ascii=False, indent=2) + "\n")
    elif fmt == "sarif":
        out.write(json.dumps(sarif_report(command, results), ensure_ascii=False, indent=2) + "\n")
    else:
        for r in results:
            if r.skipped:
                print(f"{r.path}: skipped: {r.skipped}", file=sys.stderr)
            for f in r.findings:
                out.write(f"{r.path}:{f.line}:{f.column}: {f.severity} {f.rule} {f.message} [{f.snippet}]\n")
        c = _counts(results)
        files = sum(1 for r in results if not r.skipped)
        skipped = sum(1 for r in results if r.skipped)
        print(
            f"envelock {command}: {files} file(s), {c['error']} error(s), {c['warning']} warning(s), "
            f"{c['note']} note(s), {skipped} skipped",
            file=sys.stderr,
        )
    out.flush()
