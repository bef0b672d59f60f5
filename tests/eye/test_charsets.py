"""``charsets.regex_class_or_nonascii``: a class for some characters and every non-ASCII one, written
as the negation of the ASCII characters left out (it compiles in microseconds where the positive form
costs milliseconds; the fast path holds about 1,400 of them). Exhaustive over every code point against
the positive form, with a control."""

from __future__ import annotations

import re
import sys

import pytest

from envelock.eye.charsets import regex_class, regex_class_or_nonascii

SETS = [
    "",
    "&0123456789:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "&0123456789:ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz|",
    "]^-\\",
    "é<",
    "".join(map(chr, range(0x80))),
]
EVERY = "".join(chr(c) for c in range(sys.maxunicode + 1))


def _matched(cls: str) -> list[int]:
    return [m.start() for m in re.finditer(cls, EVERY)]


@pytest.mark.parametrize("chars", SETS)
def test_the_negated_form_matches_what_the_positive_form_matches(chars: str) -> None:
    assert _matched(regex_class_or_nonascii(chars)) == _matched(regex_class(chars, "\\x80-\\U0010ffff"))


def test_control_a_negation_that_forgets_a_character_is_caught() -> None:
    broken = regex_class_or_nonascii("ab")[:-1] + "a]"  # 'a' negated too: left out of the class
    assert _matched(broken) != _matched(regex_class("ab", "\\x80-\\U0010ffff"))
