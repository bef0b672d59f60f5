"""Shared fixtures of the diagnostics tests (they pin what mutmut showed was unpinned; fuzz/README.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, TypedDict

from envelock import PrefaceEntry, compose_preface
from envelock.envelope.parse import scan_preface
from envelock.escape import Level

if TYPE_CHECKING:
    from typing_extensions import Unpack  # typing.Unpack is 3.11+; only read by the type checker

E = PrefaceEntry
GOOD = str(compose_preface([E("external", "a", "x"), E("external", "b", "y\nz")]))
OPEN = '<retrieved_content provenance="external" origin="'
THIRD = GOOD + "\n\n" + OPEN  # the third envelope starts at offset 156, line 10, column 1
ONE = OPEN


class ScanOptions(TypedDict, total=False):
    """The keyword options of ``scan_preface``."""

    level: Level
    reserved: tuple[str, ...]
    max_depth: int
    invisible: str


def problems(text: str, **kw: Unpack[ScanOptions]) -> list[tuple[object, ...]]:
    _, probs, _ = scan_preface(text, **kw)
    return [(p.code, p.offset, p.line, p.column, p.entry, p.path) for p in probs]


def full(text: str, **kw: Unpack[ScanOptions]) -> list[tuple[object, ...]]:
    _, probs, _ = scan_preface(text, **kw)
    return [(p.code, p.offset, p.line, p.column, p.entry, p.path, p.message) for p in probs]
