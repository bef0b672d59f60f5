"""The four commands: ``scan`` and ``verify`` (the gate), ``compose`` and ``wrap`` (the composer).

Each takes the parsed arguments and returns the exit code (:mod:`envelock.cli.exits`); a
:class:`~envelock.cli.exits.UsageError` is exit 2. The gate builds one
:class:`~envelock.cli.report.FileResult` per input, whole (URI, suppressions and baseline
applied), and :func:`conclude` decides the exit code the same way for files and for columnar
input: an input that could not be read, or a run that read nothing (unless ``--allow-empty``),
is exit 2; then findings at or above ``--fail-on`` (every problem, for ``verify``) are exit 1.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import BinaryIO

from .._version import __version__
from ..envelope.compose import compose_preface
from ..envelope.entry import PrefaceEntry
from ..envelope.nesting import Preface
from ..envelope.spotlight import new_nonce
from ..errors import EnvelockError, EnvelopeBreach
from ..eye.reader import visible
from ..scan.rules import SEVERITY_RANK
from . import rows
from .baseline import Baseline, suppress
from .decode import decode
from .entries import entries_from_json, parse_entries
from .exits import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, UsageError
from .progress import Progress
from .read import read_input, reason
from .report import JSON_SCHEMA_ID, FileResult, emit, relative_uri, srcroot_for
from .scanning import Checked, ScanOptions, scan_path, scan_paths, verify_path
from .walk import Target, Walk, expand, reals

#: Characters of the preface encoded and written at a time (no second copy of the whole output).
WRITE_CHUNK = 1 << 20


# ---------------------------------------------------------------------------
# The gate: scan and verify


def _walk_options(args: argparse.Namespace) -> Walk:
    return Walk(
        include=args.include,
        exclude=args.exclude,
        default_excludes=not args.no_default_excludes,
        gitignore=not args.no_gitignore,
        follow_symlinks=args.follow_symlinks,
    )


def _no_files(args: argparse.Namespace, targets: Sequence[Target]) -> UsageError:
    how = " with --include " + " ".join(repr(g) for g in args.include) if args.include else ""
    listed = "".join(
        f"\n  {t.path}: error: {t.error}" if t.error else f"\n  {t.path}: skipped: {t.skipped}" for t in targets[:20]
    )
    allow = "" if any(t.error for t in targets) else "; --allow-empty accepts this"
    return UsageError(
        f"no files to read in {' '.join(args.paths)}{how} (the default excludes, .gitignore'd files and "
        f"--exclude matches are not walked): the gate checked nothing{allow}{listed}"
    )


def _targets(args: argparse.Namespace, command: str) -> list[Target]:
    targets = expand(args.paths, _walk_options(args))
    if not any(t.readable for t in targets) and (not args.allow_empty or any(t.error for t in targets)):
        error = _no_files(args, targets)
        if args.format != "text":
            # The report first, as for an input that cannot be read: a CI job that uploads the SARIF
            # gets a document saying the gate checked nothing, not an empty file (red-team, stop 42).
            srcroot, resolved = _srcroot(args, args.paths)
            why = str(error).split("\n", 1)[0]
            results = [FileResult(p, relative_uri(p, srcroot, resolved.get(p)), error=why) for p in args.paths]
            emit(args.format, command, results, EXIT_USAGE, quiet=True, srcroot=srcroot)
        raise error
    return targets


def _srcroot(args: argparse.Namespace, shown: Sequence[str]) -> tuple[Path, dict[str, Path]]:
    """%SRCROOT% and the real path of every file shown (each resolved once, for both)."""
    if args.srcroot and Path(args.srcroot).exists() and not Path(args.srcroot).is_dir():
        raise UsageError(f"--srcroot {args.srcroot}: not a directory (the root the report's paths are relative to)")
    files = [s for s in shown if not s.startswith("<")]
    resolved = reals(files)
    return srcroot_for(files, Path(args.srcroot) if args.srcroot else None, resolved), resolved


def _result(shown: str, uri: str, c: Checked, baseline: Baseline | None) -> FileResult:
    kept, prints, suppressed = suppress(shown, c.findings, c.fingerprints, c.suppressed, baseline)
    return FileResult(
        shown,
        uri,
        kept,
        skipped=c.skipped,
        fingerprints=prints,
        suppressed=suppressed,
        decoding=c.decoding,
        notices=c.notices,
        size=c.size,
        error=c.error,
    )


def _unread(t: Target) -> Checked:
    return Checked(skipped=t.skipped, error=t.error)


def _scan_all(targets: Sequence[Target], options: ScanOptions, args: argparse.Namespace) -> list[Checked]:
    """The outcome of every target, in order: ``-`` read here first, files on the worker pool."""
    out: dict[int, Checked] = {}
    disk: list[tuple[int, Target]] = []
    for i, t in enumerate(targets):
        if not t.readable:
            out[i] = _unread(t)
        elif t.path == "-":
            out[i] = scan_path("-", options)
        else:
            disk.append((i, t))
    files = [t for _, t in disk]
    with Progress(files, enabled=not args.quiet) as progress:
        done = 0
        progress.working_on(files[0] if files else None)
        for task in scan_paths(files, options, args.jobs):
            for c in task:
                out[disk[done][0]] = c
                progress.finished(files[done].size)
                done += 1
            progress.working_on(files[done] if done < len(files) else None)
    return [out[i] for i in range(len(targets))]


def conclude(
    args: argparse.Namespace, command: str, results: Sequence[FileResult], srcroot: Path, *, failed: bool, read: bool
) -> int:
    """Write the report and return the exit code: 2 when an input could not be read or nothing was
    read (unless ``--allow-empty``), else 1 when ``failed``, else 0."""
    errors = sum(1 for r in results if r.error)
    empty = not read and not args.allow_empty
    code = EXIT_USAGE if errors or empty else EXIT_FINDINGS if failed else EXIT_CLEAN
    emit(args.format, command, results, code, quiet=args.quiet, srcroot=srcroot, nothing_read=empty and not errors)
    if errors:
        print(
            f"envelock {command}: error: {errors} input(s) could not be read: the gate did not check everything", file=sys.stderr
        )
    elif empty:
        skipped = sum(1 for r in results if r.skipped)
        print(
            f"envelock {command}: error: nothing was read ({skipped} skipped): the gate checked nothing; "
            "--allow-empty accepts this",
            file=sys.stderr,
        )
    return code


def _fails_scan(args: argparse.Namespace, results: Sequence[FileResult]) -> bool:
    threshold = SEVERITY_RANK[args.fail_on]
    failed = any(SEVERITY_RANK[f.severity] >= threshold for r in results for f in r.findings)
    return failed or bool(args.fail_on_skip and any(r.skipped for r in results))


def _rows(args: argparse.Namespace, command: str, baseline: Baseline | None) -> int:
    srcroot, _ = _srcroot(args, [p for p in args.paths if p != "-"])
    results = rows.results(args, command, baseline, srcroot)
    failed = _fails_scan(args, results) if command == "scan" else any(r.findings for r in results)
    # A scan read its rows; a verify whose rows are all empty prefaces read nothing, as a verify of
    # files of zero bytes (an empty preface holds no envelope to check).
    read = any(r.rows for r in results) if command == "scan" else any(r.filled for r in results)
    return conclude(args, command, results, srcroot, failed=failed, read=read)


def cmd_scan(args: argparse.Namespace) -> int:
    baseline = None
    if args.baseline:
        try:
            baseline = Baseline.load(args.baseline, args.pipe_timeout)
        except ValueError as e:
            raise UsageError(str(e)) from e
    if rows.wanted(args):
        return _rows(args, "scan", baseline)
    targets = _targets(args, "scan")
    shown = [args.stdin_filename if t.path == "-" else t.path for t in targets]
    srcroot, resolved = _srcroot(args, shown)
    options = ScanOptions(frozenset(args.disable), not args.no_inline_ignore, args.pipe_timeout, args.tokenizer)
    checked = _scan_all(targets, options, args)
    results = [_result(s, relative_uri(s, srcroot, resolved.get(s)), c, baseline) for s, c in zip(shown, checked, strict=True)]
    # An empty file was read (an empty `__init__.py` is ordinary), but an empty stdin is not: the
    # producer of `producer | envelock scan -` that died wrote nothing, and the gate saw nothing.
    read = any(r.read and (r.size or t.path != "-") for t, r in zip(targets, results, strict=True))
    return conclude(args, "scan", results, srcroot, failed=_fails_scan(args, results), read=read)


def cmd_verify(args: argparse.Namespace) -> int:
    if rows.wanted(args):
        return _rows(args, "verify", None)
    targets = _targets(args, "verify")
    shown = [args.stdin_filename if t.path == "-" else t.path for t in targets]
    srcroot, resolved = _srcroot(args, shown)
    results = []
    sizes = []
    for s, t in zip(shown, targets, strict=True):
        c = (
            verify_path(
                t.path,
                level=args.level,
                nonce=args.nonce,
                spotlight=args.spotlight,
                pipe_timeout=args.pipe_timeout,
                tokens=args.tokenizer,
            )
            if t.readable
            else _unread(t)
        )
        sizes.append(c.size)
        results.append(_result(s, relative_uri(s, srcroot, resolved.get(s)), c, None))
    failed = any(r.findings or r.skipped for r in results)
    # A file that is not UTF-8 was read, and fails (exit 1): it is not a composed preface. Zero bytes in
    # all is nothing read (exit 2 unless --allow-empty): `producer | envelock verify --nonce N -` whose
    # producer died wrote nothing, and an empty preface holds no envelope to check (stop 49, a red-team find).
    read = any(t.readable and r.error is None and size for t, r, size in zip(targets, results, sizes, strict=True))
    return conclude(args, "verify", results, srcroot, failed=failed, read=read)


# ---------------------------------------------------------------------------
# The composer: compose and wrap


def _read_text(path: str, pipe_timeout: float, stdin_name: str) -> tuple[str, str, str | None]:
    """(shown path, text, decoding note) of a file or ``-`` to compose; the bytes are let go once
    decoded. Raises UsageError."""
    shown = stdin_name if path == "-" else path
    try:
        data = read_input(path, pipe_timeout=pipe_timeout)
    except OSError as e:
        raise UsageError(f"{path}: {reason(e)}") from e
    decoded = decode(data)
    del data
    if decoded.text is None:
        raise UsageError(f"{shown}: {decoded.skipped}")
    return shown, decoded.text, decoded.how


def _write_text(out: BinaryIO, text: str) -> None:
    """``text`` as UTF-8, a chunk at a time (slicing a ``Preface`` gives plain ``str`` pieces). A lone
    surrogate (a file name that is not UTF-8, an id read from JSON) is written as its ``\\udcff``
    escape: a report names it, in JSON and SARIF as the same escape; a preface never holds one."""
    for i in range(0, len(text), WRITE_CHUNK):
        out.write(text[i : i + WRITE_CHUNK].encode("utf-8", "backslashreplace"))


def _write_output(args: argparse.Namespace, text: str, *, newline_on_tty: bool) -> None:
    """To ``--output FILE`` (exactly ``text``), else to stdout (a newline after it on a terminal only)."""
    if args.output:
        try:
            with open(args.output, "wb") as f:
                _write_text(f, text)
        except OSError as e:
            raise UsageError(f"{args.output}: {reason(e)}") from e
        return
    sys.stdout.flush()
    _write_text(sys.stdout.buffer, text)
    if newline_on_tty and sys.stdout.isatty():
        sys.stdout.buffer.write(b"\n")  # the shell prompt after the last line; never in a file or a pipe
    sys.stdout.buffer.flush()


def _write_preface(args: argparse.Namespace, command: str, preface: Preface) -> None:
    if args.format == "json":
        doc = {
            "schema": JSON_SCHEMA_ID,
            "tool": {"name": "envelock", "version": __version__},
            "command": command,
            "preface": str(preface),
            "spotlight": {"mode": preface.spotlight.mode, "marker": preface.spotlight.marker, "seed": preface.spotlight.seed},
            "nonce": preface.nonce,
            "hygiene_rule": preface.hygiene_rule(),
            "transformations": [
                {"entry": t.entry, "field": t.field, "kind": t.kind, "start": t.start, "end": t.end}
                | {"removed": visible(t.removed)}
                for t in preface.transformations
            ],
            "exit_code": 0,
        }
        _write_output(args, json.dumps(doc, ensure_ascii=False, indent=2) + "\n", newline_on_tty=False)
    else:
        _write_output(args, preface, newline_on_tty=True)
        for t in preface.transformations:
            print(f"envelock {command}: {t}", file=sys.stderr)


def _compose(args: argparse.Namespace, command: str, entries: Callable[[], list[PrefaceEntry]]) -> int:
    """Compose the entries ``entries()`` reads (read inside, so that only the composer holds them)."""
    nonce = new_nonce() if args.nonce == "new" else args.nonce
    try:
        preface: Preface = compose_preface(
            entries(),
            level=args.level,
            verify=args.verify,
            nesting=args.nesting,
            strict_provenance=args.strict_provenance,
            spotlight=args.spotlight or "none",
            marker=args.marker,
            nonce=nonce,
            tokens=args.tokenizer,
        )
    except EnvelopeBreach as e:
        print(f"envelock {command}: {e}", file=sys.stderr)
        return EXIT_FINDINGS
    except (EnvelockError, TypeError) as e:
        raise UsageError(str(e)) from e
    if args.hygiene_out:
        try:
            Path(args.hygiene_out).write_text(preface.hygiene_rule(), encoding="utf-8")
        except OSError as e:
            raise UsageError(f"{args.hygiene_out}: {reason(e)}") from e
    _write_preface(args, command, preface)
    return EXIT_CLEAN


def _json_entries(args: argparse.Namespace) -> list[PrefaceEntry]:
    shown, text, how = _read_text(args.file, args.pipe_timeout, args.stdin_filename)
    if how:
        raise UsageError(f"{shown}: {how}: entries must be UTF-8 JSON")
    values = parse_entries(text)
    del text
    if not values:
        raise UsageError(f"{shown}: no entries (an empty file or an empty array composes nothing)")
    return entries_from_json(values, level=args.level, nesting=args.nesting, strict=args.strict_provenance, tokens=args.tokenizer)


def _wrapped_entry(args: argparse.Namespace) -> list[PrefaceEntry]:
    shown, text, how = _read_text(args.file, args.pipe_timeout, args.stdin_filename)
    if how:
        print(f"envelock wrap: {shown}: {how}", file=sys.stderr)
    return [PrefaceEntry(args.source, args.origin, text, args.fetched_at)]


def cmd_compose(args: argparse.Namespace) -> int:
    return _compose(args, "compose", lambda: _json_entries(args))


def cmd_wrap(args: argparse.Namespace) -> int:
    return _compose(args, "wrap", lambda: _wrapped_entry(args))


COMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "scan": cmd_scan,
    "verify": cmd_verify,
    "compose": cmd_compose,
    "wrap": cmd_wrap,
}
