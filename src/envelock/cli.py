"""The ``envelock`` command: ``scan``, ``verify`` and ``compose``. See docs/cli.md.

Exit codes (every command): 0 clean; 1 findings at or above ``--fail-on``
(``scan``), a problem (``verify``, ``compose --verify``); 2 usage error, I/O
error, or a bad entry (``compose``). Undecodable and binary files are reported
and skipped, never a crash.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

from . import __version__
from .common import Finding
from .compose import compose_preface
from .entry import PrefaceEntry
from .errors import EnvelockError, EnvelopeBreach, InvalidEntry, NestingError
from .escape import LEVELS, Level
from .modeleye import visible
from .nesting import NESTING_POLICIES, NestingPolicy, Preface
from .report import JSON_SCHEMA_ID, FileResult, emit
from .rules import SEVERITIES, SEVERITY_RANK
from .scan import scan_text
from .verify import verify_preface

#: Directories never walked into (VCS metadata).
DEFAULT_EXCLUDED_DIRS = frozenset({".git", ".hg", ".svn"})
#: Bytes sniffed for a NUL to call a file binary.
SNIFF = 8192
#: A scan longer than this (seconds) shows a progress line when stderr is a terminal.
PROGRESS_AFTER = 1.0

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments or unreadable input: exit 2."""


# ---------------------------------------------------------------------------
# Input


def decode(data: bytes) -> tuple[str | None, str | None]:
    """(text, None) or (None, reason): UTF-8 (BOM removed) or UTF-16 with a BOM; never raises."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16"), None
        except UnicodeDecodeError as e:
            return None, f"not valid UTF-16 ({e.reason} at byte {e.start})"
    if b"\x00" in data[:SNIFF]:
        return None, "binary file (NUL byte)"
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError as e:
        return None, f"not valid UTF-8 ({e.reason} at byte {e.start})"


def _uri(path: str) -> str:
    p = Path(path)
    try:
        rel = p.resolve().relative_to(Path.cwd().resolve())
        return quote(rel.as_posix())
    except ValueError:
        return p.resolve().as_uri()


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def expand(paths: Sequence[str], include: Sequence[str], exclude: Sequence[str]) -> list[str]:
    """Files to read, in a stable order; ``-`` stays ``-``. Raises UsageError for a missing path."""
    out: list[str] = []
    for arg in paths:
        if arg == "-":
            out.append(arg)
            continue
        p = Path(arg)
        if p.is_dir():
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDED_DIRS)
                for name in sorted(files):
                    full = Path(root) / name
                    rel = full.relative_to(p).as_posix()
                    if include and not _matches(rel, include):
                        continue
                    if exclude and _matches(rel, exclude):
                        continue
                    out.append(str(full))
        elif p.exists():
            out.append(arg)  # an explicit file is read even if --include would not match
        else:
            raise UsageError(f"{arg}: no such file or directory")
    return out


def read_input(path: str, stdin_name: str) -> tuple[str, str, str | None, str | None]:
    """(shown path, uri, text, skip reason). Raises UsageError on an I/O error."""
    if path == "-":
        data = sys.stdin.buffer.read()
        shown, uri = stdin_name, quote(stdin_name) if stdin_name != "<stdin>" else "stdin"
    else:
        try:
            data = Path(path).read_bytes()
        except OSError as e:
            raise UsageError(f"{path}: {e.strerror or e}") from e
        shown, uri = path, _uri(path)
    text, reason = decode(data)
    return shown, uri, text, reason


def _scan_one(path: str) -> FileResult:
    """Worker: scan one file (never raises on content; I/O errors become a skip reason)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return FileResult(path, _uri(path), skipped=f"unreadable ({e.strerror or e})")
    text, reason = decode(data)
    if text is None:
        return FileResult(path, _uri(path), skipped=reason)
    return FileResult(path, _uri(path), scan_text(text))


class Progress:
    """A progress line on stderr, only when stderr is a terminal and the run is long."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.start = time.monotonic()
        self.enabled = sys.stderr.isatty()
        self.shown = False
        self.last = 0.0

    def update(self, done: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < PROGRESS_AFTER or now - self.last < 0.2:
            return
        self.last = now
        self.shown = True
        sys.stderr.write(f"\renvelock: {done}/{self.total} files")
        sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _iter_scan(files: Sequence[str], jobs: int) -> Iterator[FileResult]:
    if jobs <= 1 or len(files) <= 1:
        for f in files:
            yield _scan_one(f)
        return
    chunk = max(1, min(64, len(files) // (jobs * 8) or 1))
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        yield from pool.map(_scan_one, files, chunksize=chunk)


# ---------------------------------------------------------------------------
# Commands


def cmd_scan(args: argparse.Namespace) -> int:
    files = expand(args.paths, args.include, args.exclude)
    results: list[FileResult] = []
    disk = [f for f in files if f != "-"]
    progress = Progress(len(files))
    for f in files:
        if f == "-":
            shown, uri, text, reason = read_input("-", args.stdin_filename)
            results.append(FileResult(shown, uri, scan_text(text) if text is not None else [], reason))
    done = len(results)
    for res in _iter_scan(disk, args.jobs):
        results.append(res)
        done += 1
        progress.update(done)
    progress.close()
    order = {p: i for i, p in enumerate(files)}
    results.sort(key=lambda r: order.get(r.path, -1))
    threshold = SEVERITY_RANK[args.fail_on]
    failed = any(SEVERITY_RANK[f.severity] >= threshold for r in results for f in r.findings)
    code = EXIT_FINDINGS if failed else EXIT_CLEAN
    emit(args.format, "scan", results, code)
    return code


def cmd_verify(args: argparse.Namespace) -> int:
    files = expand(args.paths, args.include, args.exclude)
    results: list[FileResult] = []
    for f in files:
        shown, uri, text, reason = read_input(f, args.stdin_filename)
        if text is None:
            results.append(FileResult(shown, uri, skipped=reason))
            continue
        verdict = verify_preface(text, level=args.level)
        findings = [Finding.from_problem(p, text) for p in verdict.problems]
        results.append(FileResult(shown, uri, findings))
    failed = any(r.findings for r in results) or any(r.skipped for r in results)
    code = EXIT_FINDINGS if failed else EXIT_CLEAN
    emit(args.format, "verify", results, code)
    return code


_ENTRY_FIELDS = ("source", "origin", "body", "fetched_at")


def _entries_from_json(
    values: list[Any], where: str = "", *, level: Level = "reserved", nesting: NestingPolicy = "allow"
) -> list[PrefaceEntry]:
    """Entries from parsed JSON; a JSON array as a body is a nested preface composed at the same
    ``level`` and ``nesting``. Errors name the top-level entry and, for a nested one, its path
    (``entry 0, field 'source': (nested entry 0.1) missing``)."""
    out: list[PrefaceEntry] = []
    for i, v in enumerate(values):
        label = f"{where}{i}"
        top = int(label.split(".")[0])

        def bad(message: str, field: str, label: str = label, top: int = top) -> InvalidEntry:
            return InvalidEntry(f"(nested entry {label}) {message}" if where else message, index=top, field=field)

        if not isinstance(v, dict):
            raise bad(f"expected a JSON object, got {type(v).__name__}", "entry")
        for k in v:
            if k not in _ENTRY_FIELDS:
                raise bad(f"unknown field (allowed: {', '.join(_ENTRY_FIELDS)})", str(k))
        for k in ("source", "origin", "body"):
            if k not in v:
                raise bad("missing", k)
        body = v["body"]
        if isinstance(body, list):
            # A JSON array as a body is an explicit nested preface (the caller's trust decision).
            inner = _entries_from_json(body, f"{label}.", level=level, nesting=nesting)
            try:
                body = compose_preface(inner, level=level, nesting=nesting)
            except (InvalidEntry, NestingError) as e:
                raise bad(f"(entry {e.index} inside) {e.reason}", e.field) from e
        out.append(PrefaceEntry(v["source"], v["origin"], body, v.get("fetched_at")))
    return out


def parse_entries(text: str) -> list[Any]:
    """A JSON array, or JSON Lines (one object per non-blank line). Raises UsageError."""
    stripped = text.strip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as e:
            raise UsageError(f"invalid JSON: {e}") from e
        if not isinstance(data, list):
            raise UsageError("expected a JSON array of entries")
        return data
    values: list[Any] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            values.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise UsageError(f"line {n}: invalid JSON Lines record: {e}") from e
    return values


def cmd_compose(args: argparse.Namespace) -> int:
    if args.format == "sarif":
        raise UsageError("compose writes a preface; --format sarif is for scan and verify")
    shown, _, text, reason = read_input(args.file, args.stdin_filename)
    if text is None:
        raise UsageError(f"{shown}: {reason}")
    values = parse_entries(text)
    try:
        entries = _entries_from_json(values, level=args.level, nesting=args.nesting)
        preface: Preface = compose_preface(entries, level=args.level, verify=args.verify, nesting=args.nesting)
    except EnvelopeBreach as e:
        print(f"envelock compose: {e}", file=sys.stderr)
        return EXIT_FINDINGS
    except (EnvelockError, TypeError) as e:
        raise UsageError(str(e)) from e
    if args.format == "json":
        doc = {
            "schema": JSON_SCHEMA_ID,
            "tool": {"name": "envelock", "version": __version__},
            "command": "compose",
            "preface": str(preface),
            "transformations": [
                {
                    "entry": t.entry,
                    "field": t.field,
                    "kind": t.kind,
                    "start": t.start,
                    "end": t.end,
                    "removed": visible(t.removed),
                }
                for t in preface.transformations
            ],
            "exit_code": 0,
        }
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(str(preface).encode("utf-8"))
        sys.stdout.buffer.flush()
        for t in preface.transformations:
            print(f"envelock compose: {t}", file=sys.stderr)
    return EXIT_CLEAN


# ---------------------------------------------------------------------------
# Argument parsing


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2 on usage errors; keep it, with our prefix
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"envelock: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="envelock",
        description="Security gate for retrieved content: scan raw text, verify composed prefaces, compose entries.",
        epilog="Exit codes: 0 clean, 1 findings/problems, 2 usage or I/O error. See docs/cli.md.",
    )
    parser.add_argument("--version", action="version", version=f"envelock {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(p: argparse.ArgumentParser, *, walk: bool = True) -> None:
        p.add_argument("--format", choices=("text", "json", "sarif"), default="text", help="output format (default text)")
        p.add_argument("--stdin-filename", default="<stdin>", metavar="NAME", help="name to report for '-'")
        if walk:
            p.add_argument("--include", action="append", default=[], metavar="GLOB", help="only files matching (repeatable)")
            p.add_argument("--exclude", action="append", default=[], metavar="GLOB", help="skip files matching (repeatable)")

    scan = sub.add_parser("scan", help="report hostile constructs in raw retrieved text")
    scan.add_argument("paths", nargs="+", metavar="PATH", help="files, directories (walked recursively) or '-'")
    scan.add_argument("--fail-on", choices=SEVERITIES, default="error", help="lowest severity that fails (default error)")
    scan.add_argument("--jobs", "-j", type=_positive, default=1, metavar="N", help="worker processes (default 1)")
    common(scan)
    scan.set_defaults(func=cmd_scan)

    verify = sub.add_parser("verify", help="check composed prefaces with verify_preface")
    verify.add_argument("paths", nargs="+", metavar="FILE", help="files, directories or '-'")
    verify.add_argument("--level", choices=LEVELS, default="reserved")
    common(verify)
    verify.set_defaults(func=cmd_verify)

    compose = sub.add_parser("compose", help="compose a JSON array / JSON Lines of entries into a preface")
    compose.add_argument("file", metavar="FILE", help="JSON file or '-'")
    compose.add_argument("--level", choices=LEVELS, default="reserved")
    compose.add_argument("--verify", action="store_true", help="verify the output against the entries (exit 1 on a problem)")
    compose.add_argument("--nesting", choices=NESTING_POLICIES, default="allow", help="array bodies nest (default allow)")
    common(compose, walk=False)
    compose.set_defaults(func=cmd_compose)
    return parser


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code: int = args.func(args)
    except UsageError as e:
        print(f"envelock {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_CLEAN
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    raise SystemExit(main())
