"""Shared by the exhaustive eye tests (test_eye_tables, test_eye_shapes): run a defang over
generated variants and say which it left unchanged."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator

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


def shard(variants: Iterable[str], k: int, of: int) -> Iterator[str]:
    """Every ``of``-th variant from the ``k``-th: the shards of one enumeration are disjoint and
    together are all of it, so a long pass can be split over test workers without leaving any out."""
    return itertools.islice(variants, k, None, of)


def show(missed: list[str]) -> str:
    return f"{len(missed)} not escaped, e.g. {[me.visible(m) for m in missed[:5]]}"
