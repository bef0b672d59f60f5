"""The batch path's core, without Arrow: scan or verify a list of texts row by row.

Every row goes through :func:`envelock.scan_text` (or :func:`envelock.verify_preface`)
itself, so a batch gives exactly what the per-row call gives; what this module adds is
the row number, the content fingerprint of each finding (:func:`envelock.scan.fingerprints.fingerprints`,
for baselines) and the limits every batch input is held to. The Arrow layer
(:mod:`envelock.batch.columnar`) and the CLI's JSON Lines input (:mod:`envelock.cli.rows`)
both call it; :mod:`envelock.batch.pool` spreads the chunks over worker processes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..envelope.verify import verify_preface
from ..eye.escape import Level
from ..eye.load_tokens import Tokens
from ..eye.tokens import RESERVED_NAMES
from ..scan import scan_text
from ..scan.fingerprints import fingerprints
from ..types import Finding, Problem

#: Largest text of one row, in UTF-8 bytes (a larger row is a :class:`~envelock.errors.BatchInputError`,
#: never skipped or cut). Scanning is linear, so this bounds the memory one row takes, not the time.
MAX_TEXT_BYTES = 64 * 1024 * 1024
#: Rows per task handed to a worker process (a task is also the unit of ordered output).
TASK_ROWS = 1024


@dataclass(frozen=True)
class ScanSpec:
    """The options of a batch scan, checked once (picklable, for worker processes)."""

    reserved: tuple[str, ...] = RESERVED_NAMES
    disable: frozenset[str] = frozenset()
    tokens: Tokens | None = None

    def __post_init__(self) -> None:
        scan_text("", reserved=self.reserved, disable=self.disable, tokens=self.tokens)  # unknown rule ids raise ValueError here


@dataclass(frozen=True)
class RowFindings:
    """The findings of one row (only rows with findings are returned) and their fingerprints."""

    row: int
    findings: tuple[Finding, ...]
    fingerprints: tuple[str, ...]


@dataclass(frozen=True)
class RowProblems:
    """The verification problems of one row (only rows with problems are returned)."""

    row: int
    problems: tuple[Problem, ...]


def scan_texts(texts: Sequence[str], first_row: int, spec: ScanSpec) -> list[RowFindings]:
    """``scan_text`` of every text; row numbers count from ``first_row``."""
    out: list[RowFindings] = []
    for i, text in enumerate(texts):
        found = scan_text(text, reserved=spec.reserved, disable=spec.disable, tokens=spec.tokens)
        if found:
            out.append(RowFindings(first_row + i, tuple(found), tuple(fingerprints(found, text))))
    return out


def finding_of(d: dict[str, Any]) -> Finding:
    """A :class:`Finding` from its :meth:`~Finding.as_dict` fields (extra keys ignored)."""
    return Finding(*(d[k] for k in _FINDING_FIELDS))


_FINDING_FIELDS = ("rule", "severity", "message", "offset", "line", "column", "end_offset", "end_line", "end_column", "snippet")


def verify_texts(texts: Sequence[str], first_row: int, level: Level, tokens: Tokens | None = None) -> list[RowProblems]:
    """``verify_preface`` of every text at ``level`` (``tokens``: a team's own control tokens); row
    numbers count from ``first_row``."""
    out: list[RowProblems] = []
    for i, text in enumerate(texts):
        verdict = verify_preface(text, level=level, tokens=tokens)
        if verdict.problems:
            out.append(RowProblems(first_row + i, verdict.problems))
    return out
