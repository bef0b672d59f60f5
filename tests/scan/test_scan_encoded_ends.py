"""Where an encoded-tag finding ends: at the first blank after the escape (``str.isspace``), found by
one regex search (``encoded._word_end``) in the reference plan and by the native plan's search for
the next blank (``core::escape_plan``, the generated ``str.isspace`` table), not a loop per character.
Exhaustive over every code point on every implementation, with a control that stops at the ASCII
blanks only."""

from __future__ import annotations

import sys

import pytest
from helpers.scanning import reference_escape_plan

from envelock import scan_text
from envelock.scan import encoded

#: Every code point ``str.isspace`` calls a blank.
BLANKS = [chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()]


def _loop(text: str, e: int, lim: int) -> int:
    """The loop ``_word_end`` replaced (the reference)."""
    while e < lim and not text[e].isspace():
        e += 1
    return e


def test_the_blank_pattern_is_str_isspace_on_every_code_point() -> None:
    matched = [chr(c) for c in range(sys.maxunicode + 1) if encoded._BLANK_RE.match(chr(c))]
    assert matched == BLANKS
    assert len(BLANKS) >= 25  # the Unicode blanks, not the six ASCII ones only


@pytest.mark.usefixtures("impl")
@pytest.mark.parametrize("blank", BLANKS)
def test_a_finding_ends_at_every_blank(blank: str) -> None:
    text = f"%3Cretrieved_content%3E{blank}after"
    ends = [f.end_offset for f in scan_text(text) if f.rule == "encoded-tag"]
    assert ends == [text.index(blank)]
    assert encoded._word_end(text, 3, len(text)) == _loop(text, 3, len(text))


def test_the_end_is_the_loop_s_end_everywhere() -> None:
    text = "ab\u3000cd ef\u2028" + "x" * 40 + "\u00a0z"
    for e in range(len(text) + 2):
        for lim in range(len(text) + 1):
            assert encoded._word_end(text, e, lim) == _loop(text, e, lim), (e, lim)


def test_control_ascii_blanks_only_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    reference_escape_plan(monkeypatch)  # the mutant is the reference's; the native plan is held equal to it
    monkeypatch.setattr(encoded, "_BLANK_RE", re.compile(r"[ \t\n\r\f\v]", re.ASCII))
    text = "%3Cretrieved_content%3E\u3000after"
    ends = [f.end_offset for f in scan_text(text) if f.rule == "encoded-tag"]
    assert ends != [text.index("\u3000")]
