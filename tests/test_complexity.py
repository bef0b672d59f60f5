"""Complexity guard without a clock: the defang's Python-level work grows linearly.

Work is counted, not timed: every piece the model's-eye lookahead decodes
(``modeleye._decode_at``) and every per-opener Python check. On adversarial
inputs of size n and 8n the count must satisfy ``work(8n) <= 8.5 * work(n) + c``
(``c`` covers the openers near the end of the small text).
The fast path's regexes have only bounded quantifiers (at most MAX_RUN skips,
a trie of fixed depth), so their cost per opener is constant by construction.

Negative control: with the lookahead budget removed (``MAX_LOOKAHEAD`` huge),
a chain of namespace prefixes makes every opener read to the end of the text;
the same check must then fail.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from envelock import modeleye

D = importlib.import_module("envelock.defang")

ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "lt": lambda n: "<" * n,
    "conten": lambda n: ("</retrieved_conten" * n)[:n],
    "ltref": lambda n: ("&lt;&#x3c;" * n)[:n],
    "ignorables": lambda n: ("<\u200b\u200d/x " * n)[:n],
    "close": lambda n: ("</retrieved_content>" * n)[:n],
    "namespaces": lambda n: ("<a:" * n)[:n],
    "padded": lambda n: (("<" + " " * 31 + "r" + "_" * 10 + "e") * n)[:n],
    "fullwidth": lambda n: ("\uff1c\uff0fretrieved_conten" * n)[:n],
    "refs": lambda n: ("<&#114;&#x65;t" * n)[:n],
}
N = 600
SLACK = modeleye.MAX_LOOKAHEAD**2 // 2


@contextmanager
def counting() -> Iterator[list[int]]:
    box = [0]
    real_decode = modeleye._decode_at
    real_check = D._opener_needs_escape

    def decode(text: str, i: int) -> tuple[str, int]:
        box[0] += 1
        return real_decode(text, i)

    def check(*args: object, **kw: object) -> bool:
        box[0] += 1
        return real_check(*args, **kw)  # type: ignore[arg-type]

    mp = pytest.MonkeyPatch()
    mp.setattr(modeleye, "_decode_at", decode)
    mp.setattr(D, "_opener_needs_escape", check)
    try:
        yield box
    finally:
        mp.undo()


def work(fn: Callable[[str], str], text: str) -> int:
    with counting() as box:
        fn(text)
    return box[0]


def linear(fn: Callable[[str], str], make: Callable[[int], str], n: int = N) -> tuple[bool, int, int]:
    small, big = work(fn, make(n)), work(fn, make(8 * n))
    # c: openers within MAX_LOOKAHEAD of the end of the small text read less than a full lookahead.
    return big <= 8.5 * small + SLACK, small, big


IMPLS = {"reference": D.defang_reference, "fast": D.defang_fast}


@pytest.mark.parametrize("impl", sorted(IMPLS))
@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
@pytest.mark.parametrize("level", ["reserved", "markup"])
def test_work_is_linear(impl: str, kind: str, level: str) -> None:
    ok, small, big = linear(lambda t: IMPLS[impl](t, level=level), ADVERSARIAL[kind])
    assert ok, f"{impl}/{kind}: work({N})={small}, work({8 * N})={big}"


def test_reference_does_real_work() -> None:
    """The counter sees the reference lookahead (else the guard would pass vacuously)."""
    assert work(D.defang_reference, ADVERSARIAL["conten"](N)) > N // 2


def test_negative_control_unbounded_lookahead_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modeleye, "MAX_LOOKAHEAD", 10**9)
    ok, small, big = linear(D.defang_reference, ADVERSARIAL["namespaces"], 200)
    assert not ok, f"an unbounded lookahead passed the linearity check: {small} -> {big}"
    assert big > 30 * small
