"""Reading and checking one input of ``scan`` or ``verify``: bytes in, a :class:`Checked` out.

A :class:`Checked` is what a worker process hands back (picklable, no path or URI); the command
turns it into the input's :class:`~envelock.cli.report.FileResult` once the baseline has been
applied, so every result is built whole. The bytes of an input are released as soon as they are
decoded. ``scan`` spreads files over :func:`envelock.batch.pool.ordered_map` (the one process
pool), ``verify`` runs in this process.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial

from ..batch.pool import ordered_map
from ..envelope.verify import verify_preface
from ..eye.escape import Level
from ..eye.load_tokens import Tokens
from ..scan import scan_text
from ..scan.fingerprints import fingerprints
from ..scan.suppress import inline_ignores, split_suppressed
from ..types import Finding, SpotlightMode
from .decode import Decoded, decode
from .read import PIPE_TIMEOUT, read_input, reason
from .report import Suppressed, problem_finding
from .walk import Target

#: Files per task handed to a worker process (fewer when there are few files per worker).
TASK_FILES = 16


@dataclass(frozen=True)
class ScanOptions:
    """What the scan of one file needs (picklable, for worker processes)."""

    disable: frozenset[str] = frozenset()
    inline_ignore: bool = True
    pipe_timeout: float = PIPE_TIMEOUT
    tokens: Tokens | None = None


@dataclass(frozen=True)
class Checked:
    """The outcome of reading and checking one input: findings with their fingerprints (inline
    suppressions already left out), or the reason it was skipped, or the error that kept it unread."""

    findings: tuple[Finding, ...] = ()
    fingerprints: tuple[str, ...] = ()
    suppressed: tuple[Suppressed, ...] = ()
    decoding: str | None = None
    notices: tuple[str, ...] = ()
    size: int = 0
    skipped: str | None = None
    error: str | None = None


def scan_text_checked(text: str, options: ScanOptions, *, decoding: str | None = None, size: int = 0) -> Checked:
    """Scan decoded text (never raises on content); applies inline ``envelock: ignore[...]`` comments."""
    findings = scan_text(text, disable=options.disable, tokens=options.tokens)
    prints = fingerprints(findings, text)
    if not options.inline_ignore:
        return Checked(tuple(findings), tuple(prints), decoding=decoding, size=size)
    ignores = inline_ignores(text)
    notices = tuple(f"line {line}: envelock: ignore[{rule}] names no rule" for line, rule in ignores.unknown)
    if not ignores.by_line:
        return Checked(tuple(findings), tuple(prints), decoding=decoding, notices=notices, size=size)
    kept, gone = split_suppressed(findings, ignores)
    by_id = {id(f): fp for f, fp in zip(findings, prints, strict=True)}
    return Checked(
        tuple(kept),
        tuple(by_id[id(f)] for f in kept),
        tuple(Suppressed(f, by_id[id(f)], "inline") for f in gone),
        decoding,
        notices,
        size,
    )


def scan_bytes(data: bytes, options: ScanOptions) -> Checked:
    """Decode and scan one input's bytes (never raises on content)."""
    return _scan_decoded(decode(data), len(data), options)


def _scan_decoded(decoded: Decoded, size: int, options: ScanOptions) -> Checked:
    if decoded.text is None:
        return Checked(size=size, skipped=decoded.skipped)
    checked = scan_text_checked(decoded.text, options, decoding=decoded.how, size=size)
    if (
        decoded.other is not None
        and not _has_error(checked.findings)
        and _has_error(scan_text(decoded.other, disable=options.disable, tokens=options.tokens))
    ):
        # Two readings of the same bytes, and only the one another consumer may take shows an
        # error: that one is reported (fail closed).
        name = decoded.other_name
        first = f"{decoded.how}; " if decoded.how else ""
        how = f"{first}read as {name} it shows an error-level finding that reading hides: reported as {name}"
        return scan_text_checked(decoded.other, options, decoding=how, size=size)
    return checked


def _has_error(findings: Iterable[Finding]) -> bool:
    return any(f.severity == "error" for f in findings)


def scan_path(path: str, options: ScanOptions) -> Checked:
    """Read and scan one file or ``-`` (an I/O error becomes the result's error)."""
    try:
        data = read_input(path, pipe_timeout=options.pipe_timeout)
    except OSError as e:
        return Checked(error=f"unreadable ({reason(e)})")
    size = len(data)
    decoded = decode(data)
    del data  # only the text stays while it is scanned
    return _scan_decoded(decoded, size, options)


def _scan_task(paths: Sequence[str], options: ScanOptions) -> list[Checked]:
    return [scan_path(p, options) for p in paths]


def scan_paths(targets: Sequence[Target], options: ScanOptions, jobs: int) -> Iterator[list[Checked]]:
    """The outcomes of ``targets`` (all readable, none ``-``) in order, one list per task of up to
    :data:`TASK_FILES` files, on ``jobs`` worker processes."""
    per = max(1, min(TASK_FILES, len(targets) // (jobs * 8) or 1))
    tasks = [[t.path for t in targets[i : i + per]] for i in range(0, len(targets), per)]
    return ordered_map(partial(_scan_task, options=options), tasks, jobs)


def verify_path(
    path: str,
    *,
    level: Level,
    nonce: str | None,
    spotlight: SpotlightMode | None,
    pipe_timeout: float,
    tokens: Tokens | None = None,
) -> Checked:
    """Read one composed preface and verify it: every problem a finding; not UTF-8 is a skip (which fails)."""
    try:
        data = read_input(path, pipe_timeout=pipe_timeout)
    except OSError as e:
        return Checked(error=f"unreadable ({reason(e)})")
    size = len(data)
    try:
        text = data.decode("utf-8")  # a composed preface is UTF-8, exactly
    except UnicodeDecodeError as e:
        return Checked(size=size, skipped=f"not valid UTF-8 ({e.reason} at byte {e.start}): not a composed preface")
    del data
    verdict = verify_preface(text, level=level, nonce=nonce, spotlight=spotlight, tokens=tokens)
    findings = [problem_finding(p, text) for p in verdict.problems]
    return Checked(tuple(findings), tuple(fingerprints(findings, text)), size=size)
