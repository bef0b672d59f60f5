"""Shared fixtures of the diagnostics tests (they pin what mutmut showed was unpinned; fuzz/README.md)."""

from __future__ import annotations

from envelock import PrefaceEntry, compose_preface
from envelock.parse import scan_preface

E = PrefaceEntry
GOOD = str(compose_preface([E("external", "a", "x"), E("external", "b", "y\nz")]))
OPEN = '<retrieved_content provenance="external" origin="'
THIRD = GOOD + "\n\n" + OPEN  # the third envelope starts at offset 156, line 10, column 1
ONE = OPEN


def problems(text: str, **kw: object) -> list[tuple[object, ...]]:
    _, probs, _ = scan_preface(text, **kw)  # type: ignore[arg-type]
    return [(p.code, p.offset, p.line, p.column, p.entry, p.path) for p in probs]


def full(text: str, **kw: object) -> list[tuple[object, ...]]:
    _, probs, _ = scan_preface(text, **kw)  # type: ignore[arg-type]
    return [(p.code, p.offset, p.line, p.column, p.entry, p.path, p.message) for p in probs]
