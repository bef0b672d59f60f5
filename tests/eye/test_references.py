"""Character references: the eye decodes them exactly as ``html.unescape`` (the WHATWG rules) does,
with any number of digits, and the work stays linear in the text however long the digit runs are.

* Every named reference (with and without ``;``, followed by text) and a sweep of numeric ones (zero
  runs from none to thousands, decimal and hex, ``;`` or not, significant digits past U+10FFFF, codes
  of every structural family): ``reader.decode_at`` consumes what ``html.unescape`` replaces and
  gives what it gives. ``html.unescape`` itself refuses more than 4300 digits on Python 3.11+
  (``int``'s digit limit); longer runs are compared with the same reference written with fewer zeros.
* Every implementation escapes a long-zero opener and slash alike.
* Work is counted, not timed: the characters the decoder consumes plus one pass per opener regex.
  A 1 MB run of zeros and many references each with a long zero run cost work linear in the text.
  Negative control: a reader whose readings do not stop at the next opener (and no lookahead bound)
  decodes every long reference again from every opener before it, and the linear check catches it.
"""

from __future__ import annotations

import html
import html.entities
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from envelock.eye import backend
from envelock.eye import reader as me
from envelock.eye import reference as ref

_CODES = sorted({ord(c) for c in me.LT_CHARS + me.GT_CHARS + me.SLASH_CHARS + me.PIPE_CHARS + "&[]:; a0\u200b"})
_ZEROS = [0, 1, 7, 16, 255, 256, 257, 300, 1000, 4000]


def agrees(text: str) -> bool:
    """Does ``decode_at`` at the start of ``text`` consume what ``html.unescape`` replaces there and give
    what it gives: the piece is the unescape of what it consumed, and the piece followed by the rest of
    the text is the unescape of the whole (the texts hold one ``&``)?"""
    piece, end = me.decode_at(text, 0)
    return piece == html.unescape(text[:end]) and piece + text[end:] == html.unescape(text) and end > 0


def _numeric(zeros: int, digits: str, hexa: bool, semi: bool) -> str:
    return "&#" + ("x" if hexa else "") + "0" * zeros + digits + (";" if semi else "")


def _numeric_cases() -> Iterator[str]:
    for zeros in _ZEROS:
        for cp in _CODES:
            for hexa in (False, True):
                for semi in (False, True):
                    yield _numeric(zeros, f"{cp:x}" if hexa else str(cp), hexa, semi)
        for digits in ("1114111", "1114112", "99999999", "123456789", "1" * 20):
            yield _numeric(zeros, digits, False, True)
        for digits in ("10ffff", "110000", "ffffffff", "123456789", "f" * 20):
            yield _numeric(zeros, digits, True, True)


def test_numeric_references_decode_as_html_unescape() -> None:
    count = 0
    for r in _numeric_cases():
        for tail in ("", "x", "0", "/retrieved_content>"):
            text = r + tail
            assert agrees(text), text[:80]
            count += 1
    assert count > 4000


def test_named_references_decode_as_html_unescape() -> None:
    for name in html.entities.html5:
        for tail in ("", "x", ";", " "):
            text = "&" + name + tail
            assert agrees(text), text


def test_digit_runs_past_the_int_limit_decode_as_the_short_form() -> None:
    """``html.unescape`` raises on more than 4300 digits (Python 3.11+); the WHATWG tokenizer and
    ``html.unescape`` below the limit read leading zeros as nothing, so the long form is the short one."""
    for zeros in (4300, 10_000, 100_000):
        for short in ("&#60;", "&#x3c;", "&#47", "&#123456789;"):
            long = short[:2] + ("x" if short[2] == "x" else "") + "0" * zeros + short[3 if short[2] == "x" else 2 :]
            piece, end = me.decode_at(long + "tail", 0)
            assert piece == html.unescape(short) and end == len(long), short


@pytest.mark.parametrize("impl", sorted(backend.IMPLEMENTATIONS))
@pytest.mark.parametrize("zeros", [257, 300, 5000])
def test_every_implementation_reads_long_zero_runs(impl: str, zeros: int) -> None:
    opener = "&#" + "0" * zeros + "60;/retrieved_content>"
    slash = "<&#x" + "0" * zeros + "2f;retrieved_content>"
    big = "<&#" + "0" * zeros + "123456789;/retrieved_content>"
    with backend.use(impl):
        from envelock.eye import escape

        for text in (opener, slash, big):
            out = escape.defang(text)
            assert out != text, (impl, text[:20])
            assert escape.undefang(out) == text
            body = escape.defang_body(text)
            assert body != text and escape.undefang_body(body) == text


# -- linear work ------------------------------------------------------------------------------


class _Counting:
    def __init__(self, pattern: re.Pattern[str], box: list[int]) -> None:
        self.pattern, self.box = pattern, box

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        self.box[0] += len(text)
        return self.pattern.finditer(text)

    def fullmatch(self, text: str) -> re.Match[str] | None:
        return self.pattern.fullmatch(text)


@contextmanager
def counting() -> Iterator[list[int]]:
    """Count the characters every decode consumes (the work of the reference regex over them) and one
    pass of each opener regex over the text."""
    box = [0]
    real = me._decode_at

    def decode(text: str, i: int) -> tuple[str, int]:
        piece, nxt = real(text, i)
        box[0] += nxt - i
        return piece, nxt

    mp = pytest.MonkeyPatch()
    mp.setattr(me, "_decode_at", decode)
    mp.setattr(ref, "OPENER_RE", _Counting(me.OPENER_RE, box))
    mp.setattr(ref, "BRACKET_OPENER_RE", _Counting(me.BRACKET_OPENER_RE, box))
    try:
        yield box
    finally:
        mp.undo()


def work(text: str, fn: Callable[[str], str] = ref.defang) -> int:
    with counting() as box:
        fn(text)
    return box[0]


ZERO_TEXTS: dict[str, Callable[[int], str]] = {
    "one run": lambda n: "<&#" + "0" * n + "47;retrieved_content>",
    "one opener": lambda n: "&#" + "0" * n + "60;/retrieved_content>",
    "no code": lambda n: "<&#" + "0" * n,
    "many refs": lambda n: ("<&#" + "0" * 300 + "47;" + "&#x" + "0" * 300 + "3c;") * (n // 600),
    "layers": lambda n: ("&" + "#" + "0" * 100 + "38;" + "amp;" * 3 + "#" + "0" * 200 + "60;x") * (n // 320),
    "namespaces": lambda n: ("<a:&#" + "0" * 300 + "32;") * (n // 310),
}


@pytest.mark.parametrize("kind", sorted(ZERO_TEXTS))
def test_zero_runs_cost_linear_work(kind: str) -> None:
    n = 20_000
    small, big = work(ZERO_TEXTS[kind](n)), work(ZERO_TEXTS[kind](8 * n))
    assert big <= 8.5 * small + me.MAX_LOOKAHEAD**2, (kind, small, big)
    assert big <= 40 * len(ZERO_TEXTS[kind](8 * n)), (kind, big)


def test_a_megabyte_of_zeros_is_read_once_or_twice() -> None:
    text = "<&#" + "0" * 1_000_000 + "47;retrieved_content>"
    w = work(text)
    assert len(text) <= w <= 8 * len(text), w
    assert ref.defang(text) == "<\\" + text[1:]


def test_control_readings_past_the_next_opener_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the stop at the next opener and without the lookahead bound, every opener of a chain of
    namespace prefixes written with long references reads to the end of the text: quadratic."""
    monkeypatch.setattr(me, "MAX_LOOKAHEAD", 10**9)
    monkeypatch.setattr(me, "_stops_reading", lambda piece: False)
    make = ZERO_TEXTS["namespaces"]
    small, big = work(make(3_000)), work(make(24_000))
    assert big > 30 * small, (small, big)


def test_control_a_bounded_decoder_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The decoder as it was (at most 256 leading zeros, at most 8 digits after them) fails the sweep:
    it reads ``&#0…060;`` with 300 zeros, and ``&#123456789;``, unlike ``html.unescape``."""
    bounded = re.compile(r"#0{0,256}[0-9]{1,8};?|#[xX]0{0,256}[0-9a-fA-F]{1,8};?|[^\t\n\f <&#;]{1,32};?")
    monkeypatch.setattr(me, "_REF_BODY_RE", bounded)
    bad = [r for r in _numeric_cases() if not agrees(r + "/retrieved_content>")]
    assert any(r.startswith("&#" + "0" * 300 + "60") for r in bad)
    assert "&#123456789;" in bad


def test_a_long_reference_at_the_end_of_a_body_is_judged_in_its_context() -> None:
    """``<`` then a blank written with 5000 zeros ends a body: its reading runs past the lookahead
    in the preface (``\\n</retrieved_content>`` follows), so it fails closed; judged alone it would be
    the end of the input. The body context must see that although the ``&`` is far from the end."""
    text = "<&#" + "0" * 5000 + "32;"
    for impl in sorted(backend.IMPLEMENTATIONS):
        with backend.use(impl):
            from envelock.eye import escape

            assert escape.defang_body(text) == "<\\" + text[1:], impl
            assert escape.defang(text) == text, impl  # alone, the end of the input: the probe


def test_control_a_body_window_that_is_not_widened_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ref, "reference_run_start", lambda text, start: start)
    text = "<&#" + "0" * 5000 + "32;"
    assert ref.defang_body(text) == text
