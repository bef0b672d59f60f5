"""``backend.xml_body_is``: verify's comparison of the strict XML reader's text of a body with the raw
body, made natively without the unescaped text, against the Python expression it replaces
(``got == "\\n" + xml_unescape_text(text[start:end]) + "\\n"``).

The texts hold the four references, their near misses (``&amp`` without ``;``, ``&#14;``), bare
``&``, the characters they stand for, non-ASCII and non-BMP letters and a lone surrogate (which the
core cannot take: the Python comparison answers); ``got`` is the right answer, or one changed by one
character, one character short or long, or without its blank lines. Every body is read three ways:
an ASCII text in place, a non-ASCII one sliced, and inside ``encoded_once`` from the text's UTF-8
copy (its cursor walked back and forth).

Negative controls: a comparison that ignores which reference was written (``&lt;`` read as ``>``)
and one that forgets the blank lines are each told apart by the same cases.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.data import NATIVE_HOW, optional_module
from hypothesis import given
from hypothesis import strategies as st

from envelock.eye import backend, levels

_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

PIECES = [
    "&amp;",
    "&lt;",
    "&gt;",
    "&#13;",
    "&amp",
    "&#14;",
    "&",
    "<",
    ">",
    "\r",
    ";",
    "a",
    "\n",
    "\u00e9",
    "\U0001f600",
    "\ud800",
]


def expected(got: str, text: str, start: int, end: int) -> bool:
    return got == "\n" + levels.xml_unescape_text(text[start:end]) + "\n"


def native(got: str, text: str, start: int, end: int) -> bool:
    with backend.use("native"):
        return backend.xml_body_is(got, text, start, end)


def native_from_copy(got: str, text: str, start: int, end: int) -> bool:
    with backend.use("native"), backend.encoded_once(text):
        # A body to the right first, then this one: the copy's cursor walks back to it.
        backend.xml_body_is("", text, end, len(text))
        return backend.xml_body_is(got, text, start, end)


def same_reference_kind(got: str, text: str, start: int, end: int) -> bool:
    """Control: ``&lt;`` and ``&gt;`` read as the same character."""
    fold = str.maketrans("<>", "<<")
    plain = levels.xml_unescape_text(text[start:end]).translate(fold)
    return got.translate(fold) == "\n" + plain + "\n"


def no_blank_lines(got: str, text: str, start: int, end: int) -> bool:
    """Control: the blank lines around the body are not compared."""
    return got.strip("\n") == levels.xml_unescape_text(text[start:end]).strip("\n")


def variants(text: str, start: int, end: int) -> list[str]:
    """The right ``got`` and near misses of it."""
    plain = levels.xml_unescape_text(text[start:end])
    right = "\n" + plain + "\n"
    out = [right, right[:-1], right + "\n", plain, "\n" + plain + ";\n", "\n" + plain[:-1] + "\n"]
    for i, c in enumerate(plain):
        if c in "<>&\r":
            swap = {"<": ">", ">": "<", "&": ";", "\r": "\n"}[c]
            out.append("\n" + plain[:i] + swap + plain[i + 1 :] + "\n")
    return out


CASES = [
    ("a&lt;b&gt;c", 0, 11),
    ("x&amp;lt;y&#13;", 0, 15),
    ("\u00e9&lt;\u00e9", 0, 6),
    ("head&lt;\U0001f600&gt;tail", 4, 14),
    ("&amp&#14;&", 0, 10),
]


@pytest.mark.parametrize("compare", [native, native_from_copy, same_reference_kind, no_blank_lines])
def test_cases(compare: Callable[[str, str, int, int], bool]) -> None:
    agree = [compare(g, t, s, e) == expected(g, t, s, e) for t, s, e in CASES for g in variants(t, s, e)]
    assert all(agree) if compare in (native, native_from_copy) else not all(agree)


@given(st.lists(st.sampled_from(PIECES), max_size=24).map("".join), st.data())
def test_equals_the_python_comparison(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    for got in variants(text, start, end):
        want = expected(got, text, start, end)
        assert native(got, text, start, end) == want, (got, text, start, end)
        assert native_from_copy(got, text, start, end) == want, (got, text, start, end)


def test_the_native_comparison_is_used() -> None:
    """The native path answers (else the checks compare the Python expression with itself)."""
    assert _native.xml_body_is("\n<\n", "a&lt;b", 1, 5) is True
    assert _native.xml_body_is("\n>\n", "a&lt;b", 1, 5) is False
