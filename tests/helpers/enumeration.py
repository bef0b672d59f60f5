"""Shared by the exhaustive eye tests (test_eye_tables, test_eye_shapes): run a defang over
generated variants and say which it left unchanged."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from envelock.eye import reader as me

#: A defang of one text (one implementation, one level).
Defang = Callable[[str], str]


def misses(defang: Defang, variants: Iterator[str]) -> tuple[int, list[str]]:
    """How many variants were tried, and those ``defang`` left unchanged."""
    n = 0
    missed: list[str] = []
    for v in variants:
        n += 1
        if defang(v) == v:
            missed.append(v)
    return n, missed


def show(missed: list[str]) -> str:
    return f"{len(missed)} not escaped, e.g. {[me.visible(m) for m in missed[:5]]}"
