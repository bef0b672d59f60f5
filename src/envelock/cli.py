"""The ``envelock`` command: ``scan``, ``verify``, ``compose`` and ``wrap``. See docs/cli.md.

Exit codes (every command): 0 clean; 1 findings at or above ``--fail-on``
(``scan``, and skipped files with ``--fail-on-skip``), a problem (``verify``,
``compose --verify``, ``wrap --verify``); 2 usage error, I/O error, no file to
scan, or a bad entry (``compose``, ``wrap``).

Input is never skipped silently: bytes that are not UTF-8 are decoded (as the
encoding the file declares, else as UTF-8 with replacement characters) and
scanned; only files with a NUL byte are binary, and every skipped file is
counted in every output format.
"""

from __future__ import annotations

import argparse
import codecs
import fnmatch
import json
import multiprocessing
import os
import re
import stat
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Protocol

from . import __version__, cli_rows
from .common import Finding
from .compose import compose_preface
from .entry import PrefaceEntry
from .errors import EnvelockError, EnvelopeBreach, InvalidEntry, InvalidOption, NestingError
from .escape import LEVELS, Level, implementation
from .modeleye import visible
from .nesting import NESTING_POLICIES, NestingPolicy, Preface
from .report import JSON_SCHEMA_ID, Baseline, FileResult, Suppressed, emit, fingerprints, relative_uri, srcroot_for
from .rules import RULES_BY_ID, SEVERITIES, SEVERITY_RANK
from .scan import scan_text
from .scan.suppress import inline_ignores, split_suppressed
from .spotlight import SPOTLIGHT_MODES, check_marker, check_nonce, new_nonce
from .verify import verify_preface

#: Directories never walked into unless ``--no-default-excludes``: version control metadata,
#: virtual environments, dependency folders and tool caches. A directory holding a
#: ``pyvenv.cfg`` (a virtual environment, whatever its name) is pruned too.
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", "_darcs", ".jj",
        ".venv", ".tox", ".nox", "node_modules", "__pycache__", ".eggs",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
    }
)  # fmt: skip
#: Bytes sniffed for a NUL to call a file binary (as git does).
SNIFF = 8192
#: Seconds before a progress line appears (stderr a terminal only); ENVELOCK_PROGRESS_DELAY overrides.
PROGRESS_AFTER = 1.0
#: The documentation, shipped in the sdist and online.
DOCS_URL = "https://github.com/envelock/envelock/blob/main/docs/cli.md"

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """Bad arguments, unreadable input or nothing to scan: exit 2."""


# ---------------------------------------------------------------------------
# Decoding: fail closed


@dataclass(frozen=True)
class Decoded:
    """Text to scan (``None`` for a binary file), how it was decoded when it was not plain
    UTF-8, and the reason it was skipped."""

    text: str | None
    how: str | None = None
    skipped: str | None = None


_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# A declared encoding: a PEP 263 cookie (first two lines), an XML declaration, an HTML meta charset.
_COOKIE_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
_XML_DECL_RE = re.compile(rb"^\s*<\?xml[^>]{0,200}?encoding\s*=\s*[\"']([-\w.:]+)[\"']")
_META_RE = re.compile(rb"<meta[^>]{0,200}?charset\s*=\s*[\"']?([-\w.:]+)", re.IGNORECASE)


def declared_encoding(data: bytes) -> str | None:
    """The encoding the bytes declare (a Python coding cookie, ``<?xml encoding=...?>`` or an HTML
    ``<meta charset>``), normalised by :mod:`codecs`; ``None`` when none is declared or known."""
    head = data[:1024]
    first_two = b"\n".join(head.split(b"\n")[:2])
    for rx, part in ((_COOKIE_RE, first_two), (_XML_DECL_RE, head), (_META_RE, head)):
        m = rx.search(part)
        if m:
            try:
                return codecs.lookup(m.group(1).decode("ascii")).name
            except (LookupError, UnicodeDecodeError):
                continue
    return None


def _replaced(text: str) -> int:
    return text.count("\ufffd")


def decode(data: bytes) -> Decoded:
    """Decode bytes for scanning; never raises and never drops text.

    A BOM (UTF-8, UTF-16, UTF-32) decides the encoding. Otherwise a NUL byte in the first
    :data:`SNIFF` bytes makes the file binary (skipped, and counted); valid UTF-8 is UTF-8;
    anything else is decoded as the encoding it declares (a coding cookie, an XML
    declaration, an HTML meta charset), else as UTF-8 with U+FFFD for each undecodable
    byte, and scanned: one stray byte cannot hide a close tag from the gate.
    """
    for bom, enc in _BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(enc, "replace")
            bad = _replaced(text) - _replaced(data[len(bom) :].decode(enc, "ignore"))
            how = f"not valid {enc.upper()}: {bad} undecodable sequence(s) replaced with U+FFFD" if bad else None
            return Decoded(text, how)
    if b"\x00" in data[:SNIFF]:
        return Decoded(None, skipped="binary file (NUL byte)")
    try:
        return Decoded(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        first = f"{e.reason} at byte {e.start}"
    declared = declared_encoding(data)
    if declared is not None and declared != "utf-8":
        text = data.decode(declared, "replace")
        return Decoded(text, f"not valid UTF-8 ({first}); decoded as {declared}, the encoding it declares")
    text = data.decode("utf-8", "replace")
    bad = _replaced(text) - _replaced(data.decode("utf-8", "ignore"))
    return Decoded(text, f"not valid UTF-8 ({first}); {bad} undecodable byte sequence(s) replaced with U+FFFD")


# ---------------------------------------------------------------------------
# The walk


@dataclass
class Target:
    """One input: a file to read, ``-``, or an entry skipped before reading (with the reason)."""

    path: str
    size: int = 0
    skipped: str | None = None


class _Spec(Protocol):
    def check_file(self, file: str) -> Any: ...


def _load_pathspec() -> Callable[[list[str]], _Spec] | None:
    try:
        from pathspec import GitIgnoreSpec
    except ImportError:
        return None
    return GitIgnoreSpec.from_lines


@dataclass
class Ignores:
    """``.gitignore`` files (and ``.git/info/exclude``) as git applies them, read with ``pathspec``."""

    enabled: bool
    make: Callable[[list[str]], _Spec] | None = field(default_factory=_load_pathspec)
    cache: dict[Path, _Spec | None] = field(default_factory=dict)
    missing_reported: bool = False

    def _spec(self, directory: Path) -> _Spec | None:
        if directory in self.cache:
            return self.cache[directory]
        lines: list[str] = []
        for name in (".gitignore", ".git/info/exclude"):
            lines += _read_lines(directory / name)
        spec = self.make(lines) if lines and self.make is not None else None
        if lines and self.make is None and not self.missing_reported:
            self.missing_reported = True
            print(
                f"envelock: {directory / '.gitignore'} is NOT applied: reading .gitignore needs the optional "
                "'pathspec' package (pip install 'envelock[gitignore]'); ignored files are scanned too",
                file=sys.stderr,
            )
        self.cache[directory] = spec
        return spec

    def chain(self, root: Path) -> list[Path]:
        """The directories above ``root`` (absolute) whose ignore files apply to it, outermost first:
        its parents up to the repository root (the nearest directory holding ``.git``)."""
        if not self.enabled:
            return []
        ancestors = [root, *root.parents]
        for i, a in enumerate(ancestors):
            if (a / ".git").exists():
                return list(reversed(ancestors[1 : i + 1]))
        return []

    def ignored(self, path: Path, is_dir: bool, dirs: Sequence[Path]) -> bool:
        """Is ``path`` ignored by the ignore files of ``dirs`` (outermost first; the deepest decides)?"""
        if not self.enabled:
            return False
        for d in reversed(dirs):
            spec = self._spec(d)
            if spec is None:
                continue
            rel = path.relative_to(d).as_posix() + ("/" if is_dir else "")
            verdict = spec.check_file(rel).include
            if verdict is not None:
                return bool(verdict)
        return False


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def _kind(mode: int) -> str:
    for test, what in (
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return what
    return "special file"


@dataclass
class Walk:
    """How directories are walked (see :func:`expand`)."""

    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    default_excludes: bool = True
    gitignore: bool = True
    follow_symlinks: bool = False


def expand(paths: Sequence[str], walk: Walk) -> list[Target]:
    """The inputs, in a stable order; ``-`` stays ``-``. Raises UsageError for a missing path.

    A file named explicitly is read even if ``--include``/``--exclude``/``.gitignore`` would
    leave it out (a named pipe too, for ``<(command)``), and a directory named explicitly is
    walked even if it is ignored itself. In a directory: sorted order;
    directories in :data:`DEFAULT_EXCLUDED_DIRS`, virtual environments, ``--exclude``
    matches and ``.gitignore``d entries are pruned; FIFOs, sockets and devices are never
    opened; symbolic links to directories are reported as skipped unless ``--follow-symlinks``
    (each real directory is walked once).
    """
    ignores = Ignores(walk.gitignore)
    out: list[Target] = []
    for arg in paths:
        if arg == "-":
            out.append(Target("-"))
            continue
        p = Path(arg)
        try:
            st = p.stat()
        except OSError:
            if p.is_symlink():
                out.append(Target(arg, skipped="broken symbolic link"))
                continue
            raise UsageError(f"{arg}: no such file or directory") from None
        if stat.S_ISDIR(st.st_mode):
            out.extend(_walk_dir(p, walk, ignores, {p.resolve()}))
        elif stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            out.append(Target(arg, st.st_size if stat.S_ISREG(st.st_mode) else 0))
        else:
            out.append(Target(arg, skipped=f"not a regular file ({_kind(st.st_mode)}), not opened"))
    return out


def _walk_dir(top: Path, walk: Walk, ignores: Ignores, seen: set[Path]) -> Iterator[Target]:
    """Walk ``top`` in sorted order (depth first); ``seen`` holds the real directories walked
    (with ``--follow-symlinks``, a link to one of them is a loop)."""
    top_abs = Path(os.path.abspath(top))
    top_real = top.resolve()
    chain = ignores.chain(top_abs)
    if chain and ignores.ignored(top_abs, True, chain):
        chain = []  # a directory named explicitly is walked even if it is ignored itself (its own ignore files apply)
    stack: list[tuple[Path, Path, list[Path]]] = [(top, top_abs, [*chain, top_abs])]
    while stack:
        directory, dir_abs, dirs = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as e:
            yield Target(str(directory), skipped=f"unreadable directory ({e.strerror or e})")
            continue
        subdirs: list[tuple[Path, Path, list[Path]]] = []
        for entry in entries:
            full, full_abs = Path(entry.path), dir_abs / entry.name
            rel = full_abs.relative_to(top_abs).as_posix()
            try:
                link = entry.is_symlink()
                st = full.stat() if link else entry.stat(follow_symlinks=False)
            except OSError as e:
                if not _pruned(full_abs, rel, walk, ignores, dirs, is_dir=False) and _included(rel, walk):
                    yield Target(str(full), skipped="broken symbolic link" if link else f"unreadable ({e.strerror or e})")
                continue
            if stat.S_ISDIR(st.st_mode):
                if _pruned(full_abs, rel, walk, ignores, dirs, is_dir=True):
                    continue
                if walk.default_excludes and (full / "pyvenv.cfg").is_file():
                    continue  # a virtual environment, whatever its name
                if link:
                    real = full.resolve()
                    if not walk.follow_symlinks:
                        yield Target(str(full), skipped="symbolic link to a directory, not followed (--follow-symlinks)")
                        continue
                    if real == top_real or top_real in real.parents:
                        yield Target(str(full), skipped="symbolic link to a directory inside the scanned tree (walked there)")
                        continue
                    if real in seen:
                        yield Target(str(full), skipped="symbolic link to a directory already walked (a loop), not followed")
                        continue
                    seen.add(real)
                elif walk.follow_symlinks:  # reached through a followed link: walk each real directory once
                    real = full.resolve()
                    if real in seen:
                        yield Target(str(full), skipped="directory already walked through a symbolic link (a loop)")
                        continue
                    seen.add(real)
                subdirs.append((full, full_abs, [*dirs, full_abs]))
                continue
            if _pruned(full_abs, rel, walk, ignores, dirs, is_dir=False):
                continue
            if not _included(rel, walk):
                continue
            if stat.S_ISREG(st.st_mode):
                yield Target(str(full), st.st_size)
            else:
                yield Target(str(full), skipped=f"not a regular file ({_kind(st.st_mode)}), not opened")
        stack.extend(reversed(subdirs))


def _included(rel: str, walk: Walk) -> bool:
    return not walk.include or _matches(rel, walk.include)


def _pruned(full: Path, rel: str, walk: Walk, ignores: Ignores, dirs: list[Path], *, is_dir: bool) -> bool:
    if is_dir and walk.default_excludes and full.name in DEFAULT_EXCLUDED_DIRS:
        return True
    if walk.exclude and _matches(rel, walk.exclude):
        return True
    return ignores.ignored(full, is_dir, dirs)


# ---------------------------------------------------------------------------
# Reading and scanning one input


@dataclass(frozen=True)
class ScanOptions:
    """What the scan of one file needs (picklable, for worker processes)."""

    disable: frozenset[str] = frozenset()
    inline_ignore: bool = True


def _read(path: str, stdin_name: str) -> tuple[str, bytes]:
    """(shown path, bytes). Raises OSError."""
    if path == "-":
        return stdin_name, sys.stdin.buffer.read()
    return path, Path(path).read_bytes()


def scan_bytes(shown: str, data: bytes, options: ScanOptions) -> FileResult:
    """Decode and scan one input's bytes (never raises on content)."""
    decoded = decode(data)
    if decoded.text is None:
        return FileResult(shown, "", skipped=decoded.skipped, size=len(data))
    text = decoded.text
    findings = scan_text(text, disable=options.disable)
    prints = fingerprints(findings, text)
    result = FileResult(shown, "", findings, fingerprints=prints, decoding=decoded.how, size=len(data))
    if options.inline_ignore:
        ignores = inline_ignores(text)
        if ignores.by_line:
            kept, gone = split_suppressed(findings, ignores)
            by_id = {id(f): fp for f, fp in zip(findings, prints, strict=True)}
            result.findings = kept
            result.fingerprints = [by_id[id(f)] for f in kept]
            result.suppressed = [Suppressed(f, by_id[id(f)], "inline") for f in gone]
        result.notices = [f"line {line}: envelock: ignore[{rule}] names no rule" for line, rule in ignores.unknown]
    return result


def _scan_file(path: str, options: ScanOptions) -> FileResult:
    """Worker: scan one file (I/O errors become a skip reason)."""
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        return FileResult(path, "", skipped=f"unreadable ({e.strerror or e})")
    return scan_bytes(path, data, options)


def _human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover


class Progress:
    """A progress line on stderr by bytes, only when stderr is a terminal: refreshed on a timer
    (so one large file still shows the time running and its name), after :data:`PROGRESS_AFTER`."""

    def __init__(self, targets: Sequence[Target], *, enabled: bool) -> None:
        self.total = sum(t.size for t in targets)
        self.files = len(targets)
        self.done_bytes = 0
        self.done_files = 0
        self.current = ""
        self.current_size = 0
        self.start = time.monotonic()
        self.enabled = enabled and sys.stderr.isatty()
        self.delay = float(os.environ.get("ENVELOCK_PROGRESS_DELAY", PROGRESS_AFTER))
        self.shown = False
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="envelock-progress", daemon=True)
            self._thread.start()

    def working_on(self, target: Target | None) -> None:
        with self._lock:
            self.current = target.path if target else ""
            self.current_size = target.size if target else 0

    def finished(self, size: int) -> None:
        with self._lock:
            self.done_bytes += size
            self.done_files += 1

    def line(self) -> str:
        with self._lock:
            elapsed = int(time.monotonic() - self.start)
            pct = f" ({100 * self.done_bytes // self.total}%)" if self.total else ""
            text = (
                f"envelock: {_human(self.done_bytes)} of {_human(self.total)}{pct}, "
                f"{self.done_files}/{self.files} files, {elapsed // 60}:{elapsed % 60:02d}"
            )
            if self.current:
                text += f", scanning {self.current} ({_human(self.current_size)})"
        return text

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            if time.monotonic() - self.start < self.delay:
                continue
            line = self.line()
            try:
                width = os.get_terminal_size(sys.stderr.fileno()).columns or 120
            except OSError:
                width = 120
            sys.stderr.write("\r\x1b[K" + line[: max(20, width - 1)])
            sys.stderr.flush()
            self.shown = True

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()


def _iter_scan(files: Sequence[Target], jobs: int, options: ScanOptions, progress: Progress) -> Iterator[FileResult]:
    work = partial(_scan_file, options=options)
    if jobs <= 1 or len(files) <= 1:
        for t in files:
            progress.working_on(t)
            res = work(t.path)
            progress.finished(t.size)
            yield res
        progress.working_on(None)
        return
    chunk = max(1, min(16, len(files) // (jobs * 8) or 1))
    # Workers are not forked from this process: it runs the progress thread, and fork() with
    # threads running can deadlock the child (forkserver where there is one, else spawn).
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    progress.working_on(files[0])
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        for i, res in enumerate(pool.map(work, [t.path for t in files], chunksize=chunk)):
            progress.finished(files[i].size)
            progress.working_on(files[i + 1] if i + 1 < len(files) else None)
            yield res


# ---------------------------------------------------------------------------
# Commands


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
    skipped = "".join(f"\n  {t.path}: skipped: {t.skipped}" for t in targets[:20])
    return UsageError(
        f"no files to read in {' '.join(args.paths)}{how} (the default excludes, .gitignore'd files and "
        f"--exclude matches are not walked): the gate checked nothing{skipped}"
    )


def _finish_results(results: list[FileResult], srcroot: Path) -> None:
    for r in results:
        r.uri = "stdin" if r.path.startswith("<") else relative_uri(r.path, srcroot)


def cmd_scan(args: argparse.Namespace) -> int:
    baseline = None
    if args.baseline:
        try:
            baseline = Baseline.load(args.baseline)
        except ValueError as e:
            raise UsageError(str(e)) from e
    if cli_rows.wanted(args):
        return _rows(args, "scan", baseline)
    targets = expand(args.paths, _walk_options(args))
    if not any(t.skipped is None for t in targets):
        raise _no_files(args, targets)
    options = ScanOptions(frozenset(args.disable), not args.no_inline_ignore)
    results: dict[int, FileResult] = {}
    disk = [(i, t) for i, t in enumerate(targets) if t.path != "-" and t.skipped is None]
    for i, t in enumerate(targets):
        if t.skipped is not None:
            results[i] = FileResult(t.path, "", skipped=t.skipped)
        elif t.path == "-":
            shown, data = _read("-", args.stdin_filename)
            results[i] = scan_bytes(shown, data, options)
    progress = Progress([t for _, t in disk], enabled=not args.quiet)
    try:
        for (i, _), res in zip(disk, _iter_scan([t for _, t in disk], args.jobs, options, progress), strict=True):
            results[i] = res
    finally:
        progress.close()
    ordered = [results[i] for i in range(len(targets))]
    if baseline is not None:
        for r in ordered:
            baseline.apply(r)
    srcroot = srcroot_for([r.path for r in ordered if not r.path.startswith("<")], Path(args.srcroot) if args.srcroot else None)
    _finish_results(ordered, srcroot)
    threshold = SEVERITY_RANK[args.fail_on]
    failed = any(SEVERITY_RANK[f.severity] >= threshold for r in ordered for f in r.findings)
    failed = failed or (args.fail_on_skip and any(r.skipped for r in ordered))
    code = EXIT_FINDINGS if failed else EXIT_CLEAN
    emit(args.format, "scan", ordered, code, quiet=args.quiet, srcroot=srcroot)
    return code


def _rows(args: argparse.Namespace, command: str, baseline: Baseline | None) -> int:
    """Columnar input (Parquet, JSON Lines): :mod:`envelock.cli_rows`."""
    try:
        return cli_rows.run(args, command, baseline, _finish_results)
    except cli_rows.RowsUsageError as e:
        raise UsageError(str(e)) from e


def cmd_verify(args: argparse.Namespace) -> int:
    if cli_rows.wanted(args):
        return _rows(args, "verify", None)
    targets = expand(args.paths, _walk_options(args))
    if not any(t.skipped is None for t in targets):
        raise _no_files(args, targets)
    results: list[FileResult] = []
    for t in targets:
        if t.skipped is not None:
            results.append(FileResult(t.path, "", skipped=t.skipped))
            continue
        try:
            shown, data = _read(t.path, args.stdin_filename)
        except OSError as e:
            raise UsageError(f"{t.path}: {e.strerror or e}") from e
        try:
            text = data.decode("utf-8")  # a composed preface is UTF-8, exactly
        except UnicodeDecodeError as e:
            why = f"not valid UTF-8 ({e.reason} at byte {e.start}): not a composed preface"
            results.append(FileResult(shown, "", skipped=why))
            continue
        verdict = verify_preface(text, level=args.level, nonce=args.nonce, spotlight=args.spotlight)
        findings = [Finding.from_problem(p, text) for p in verdict.problems]
        results.append(FileResult(shown, "", findings, fingerprints=fingerprints(findings, text), size=len(data)))
    srcroot = srcroot_for([r.path for r in results if not r.path.startswith("<")], Path(args.srcroot) if args.srcroot else None)
    _finish_results(results, srcroot)
    failed = any(r.findings for r in results) or any(r.skipped for r in results)
    code = EXIT_FINDINGS if failed else EXIT_CLEAN
    emit(args.format, "verify", results, code, quiet=args.quiet, srcroot=srcroot)
    return code


_ENTRY_FIELDS = ("source", "origin", "body", "fetched_at")


def _entries_from_json(
    values: list[Any], where: str = "", *, level: Level = "reserved", nesting: NestingPolicy = "allow", strict: bool = False
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
            raise bad(f"expected a JSON object, got {_json_type(v)}", "entry")
        for k in v:
            if k not in _ENTRY_FIELDS:
                raise bad(f"unknown field (allowed: {', '.join(_ENTRY_FIELDS)})", str(k))
        for k in ("source", "origin", "body"):
            if k not in v:
                raise bad("missing", k)
            if v[k] is None:
                raise bad("null (expected a string" + (", or an array of entries)" if k == "body" else ")"), k)
        body = v["body"]
        if isinstance(body, list):
            # A JSON array as a body is an explicit nested preface (the caller's trust decision).
            inner = _entries_from_json(body, f"{label}.", level=level, nesting=nesting, strict=strict)
            try:
                body = compose_preface(inner, level=level, nesting=nesting, strict_provenance=strict)
            except (InvalidEntry, NestingError) as e:
                raise bad(f"(entry {e.index} inside) {e.reason}", e.field) from e
        for k in ("source", "origin"):
            if not isinstance(v[k], str):
                raise bad(f"expected a string, got {_json_type(v[k])}", k)
        if not isinstance(body, str):
            raise bad(f"expected a string or an array of entries, got {_json_type(body)}", "body")
        out.append(PrefaceEntry(v["source"], v["origin"], body, v.get("fetched_at")))
    return out


def _json_type(value: object) -> str:
    """The JSON name of a parsed value's type (``null``, ``a number``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else type(value).__name__


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


def _read_text_input(path: str, stdin_name: str) -> tuple[str, str, str | None]:
    """(shown path, text, decoding note) of a file or ``-`` to compose. Raises UsageError."""
    try:
        shown, data = _read(path, stdin_name)
    except OSError as e:
        raise UsageError(f"{path}: {e.strerror or e}") from e
    decoded = decode(data)
    if decoded.text is None:
        raise UsageError(f"{shown}: {decoded.skipped}")
    return shown, decoded.text, decoded.how


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
        sys.stdout.write(json.dumps(doc, ensure_ascii=False, indent=2) + "\n")
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(str(preface).encode("utf-8"))
        sys.stdout.buffer.flush()
        for t in preface.transformations:
            print(f"envelock {command}: {t}", file=sys.stderr)


def _compose(args: argparse.Namespace, command: str, entries: Callable[[], list[PrefaceEntry]]) -> int:
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
            raise UsageError(f"{args.hygiene_out}: {e.strerror or e}") from e
    _write_preface(args, command, preface)
    return EXIT_CLEAN


def cmd_compose(args: argparse.Namespace) -> int:
    shown, text, how = _read_text_input(args.file, args.stdin_filename)
    if how:
        raise UsageError(f"{shown}: {how}: entries must be UTF-8 JSON")
    values = parse_entries(text)
    if not values:
        raise UsageError(f"{shown}: no entries (an empty file or an empty array composes nothing)")
    return _compose(
        args, "compose", lambda: _entries_from_json(values, level=args.level, nesting=args.nesting, strict=args.strict_provenance)
    )


def cmd_wrap(args: argparse.Namespace) -> int:
    shown, text, how = _read_text_input(args.file, args.stdin_filename)
    if how:
        print(f"envelock wrap: {shown}: {how}", file=sys.stderr)
    return _compose(args, "wrap", lambda: [PrefaceEntry(args.source, args.origin, text, args.fetched_at)])


# ---------------------------------------------------------------------------
# Argument parsing


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse exits 2 on usage errors; keep it, with our prefix
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"envelock: error: {message}\n")


def _rule_id(value: str) -> str:
    if value not in RULES_BY_ID:
        raise argparse.ArgumentTypeError(f"unknown rule id {value!r} (see docs/cli.md#rules)")
    return value


def _nonce(value: str) -> str:
    if value == "new":
        return value
    try:
        return check_nonce(value)
    except InvalidOption as e:
        raise argparse.ArgumentTypeError(e.reason) from None


def _verify_nonce(value: str) -> str:
    if value == "new":
        raise argparse.ArgumentTypeError("'new' only makes sense when composing; give the turn's nonce")
    return _nonce(value)


def _marker(value: str) -> str:
    try:
        return check_marker(value)
    except InvalidOption as e:
        raise argparse.ArgumentTypeError(e.reason) from None


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {value!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return n


EPILOG = f"Exit codes: 0 clean, 1 findings/problems, 2 usage or I/O error. Documentation: docs/cli.md ({DOCS_URL})."


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="envelock",
        description="Security gate for retrieved content: scan raw text, verify composed prefaces, compose entries, wrap a file.",
        epilog=EPILOG,
    )
    version = f"envelock {__version__} ({implementation()})"  # the implementation of the defang: native, fast or reference
    parser.add_argument("--version", action="version", version=version)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def common(p: argparse.ArgumentParser, formats: tuple[str, ...]) -> None:
        p.add_argument("--version", action="version", version=version)
        p.add_argument("--format", choices=formats, default="text", help="output format (default text)")
        p.add_argument("--stdin-filename", default="<stdin>", metavar="NAME", help="name to report for '-'")

    def walking(p: argparse.ArgumentParser) -> None:
        g = p.add_argument_group("walking directories")
        g.add_argument("--include", action="append", default=[], metavar="GLOB", help="only files matching (repeatable)")
        g.add_argument(
            "--exclude",
            action="append",
            default=[],
            metavar="GLOB",
            help="skip files and prune directories matching (repeatable)",
        )
        g.add_argument(
            "--no-default-excludes",
            action="store_true",
            help="also walk .git, .venv, node_modules, __pycache__, tool caches and virtual environments",
        )
        g.add_argument("--no-gitignore", action="store_true", help="do not apply .gitignore files (applying them needs pathspec)")
        g.add_argument(
            "--follow-symlinks", action="store_true", help="walk symbolic links to directories (reported as skipped otherwise)"
        )
        p.add_argument(
            "--quiet", "-q", action="store_true", help="print findings only: no skipped files, notes, summary or progress"
        )
        p.add_argument("--srcroot", metavar="DIR", help="SARIF %%SRCROOT%% (default: the working directory)")

    scan = sub.add_parser(
        "scan",
        help="report hostile constructs in raw retrieved text",
        description="Report hostile constructs in raw retrieved text.",
        epilog=EPILOG,
    )
    scan.add_argument("paths", nargs="+", metavar="PATH", help="files, directories (walked recursively) or '-'")
    scan.add_argument("--fail-on", choices=SEVERITIES, default="error", help="lowest severity that fails (default error)")
    scan.add_argument("--fail-on-skip", action="store_true", help="exit 1 when a file was skipped (binary, unreadable, special)")
    scan.add_argument("--jobs", "-j", type=_positive, default=1, metavar="N", help="worker processes (default 1)")
    scan.add_argument("--baseline", metavar="FILE", help="leave out findings listed in this earlier --format json report")
    scan.add_argument(
        "--no-inline-ignore", action="store_true", help="report findings that envelock: ignore[rule] comments suppress"
    )
    scan.add_argument(
        "--disable", action="append", default=[], type=_rule_id, metavar="RULE", help="rule id not to report (repeatable)"
    )
    common(scan, ("text", "json", "sarif"))
    walking(scan)
    cli_rows.add_arguments(scan)
    scan.set_defaults(func=cmd_scan)

    verify = sub.add_parser(
        "verify",
        help="check composed prefaces with verify_preface",
        description="Check composed prefaces with verify_preface.",
        epilog=EPILOG,
    )
    verify.add_argument("paths", nargs="+", metavar="FILE", help="files, directories or '-'")
    verify.add_argument(
        "--level", choices=LEVELS, default="reserved", help="level the prefaces were composed at (default reserved)"
    )
    verify.add_argument(
        "--nonce", type=_verify_nonce, help="every envelope must carry this nonce (problems nonce-missing, nonce-mismatch)"
    )
    verify.add_argument(
        "--spotlight", choices=SPOTLIGHT_MODES, help="every text body must use this transform (problem spotlight-mismatch)"
    )
    common(verify, ("text", "json", "sarif"))
    walking(verify)
    cli_rows.add_arguments(verify)
    verify.set_defaults(jobs=1)
    verify.set_defaults(func=cmd_verify)

    def composing(p: argparse.ArgumentParser) -> None:
        p.add_argument("--level", choices=LEVELS, default="reserved", help="defang level (default reserved)")
        p.add_argument("--verify", action="store_true", help="verify the output against the entries (exit 1 on a problem)")
        p.add_argument(
            "--strict-provenance",
            action="store_true",
            help="refuse a source that is not a trust tier or a content key of a known kind (exit 2)",
        )
        p.add_argument(
            "--spotlight", choices=SPOTLIGHT_MODES, help="transform every text body: datamark, interleave, base64 (default none)"
        )
        p.add_argument("--marker", type=_marker, help="the datamark/interleave marker (default: one chosen per turn)")
        p.add_argument("--nonce", type=_nonce, help="write this nonce on every envelope ('new': a fresh one from secrets)")
        p.add_argument(
            "--hygiene-out", metavar="FILE", help="write the matching system-prompt text (marker and nonce included) to FILE"
        )
        common(p, ("text", "json"))

    compose = sub.add_parser(
        "compose",
        help="compose a JSON array / JSON Lines of entries into a preface",
        description="Compose a JSON array or JSON Lines of entries {source, origin, body, fetched_at?} into a preface.",
        epilog=EPILOG,
    )
    compose.add_argument("file", metavar="FILE", help="JSON file or '-'")
    compose.add_argument("--nesting", choices=NESTING_POLICIES, default="allow", help="array bodies nest (default allow)")
    composing(compose)
    compose.set_defaults(func=cmd_compose)

    wrap = sub.add_parser(
        "wrap",
        help="compose one plain text file into a preface",
        description="Compose one plain text file (or '-') into a one-envelope preface, without writing JSON.",
        epilog=EPILOG,
    )
    wrap.add_argument("file", metavar="FILE", help="text file or '-' (the body, as is)")
    wrap.add_argument(
        "--source", required=True, help="provenance: a trust tier or a content key (e.g. external, web:https://...)"
    )
    wrap.add_argument("--origin", required=True, help="where the text came from (e.g. web:https://a.example/)")
    wrap.add_argument("--fetched-at", metavar="ISO8601", help="when it was fetched, with an offset (e.g. 2026-11-29T21:29:03Z)")
    composing(wrap)
    wrap.set_defaults(func=cmd_wrap, nesting="allow")
    return parser


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
