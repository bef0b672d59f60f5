"""``backend.find``: verify's search for each body's close tag (native on ASCII text, ``str.find`` on
any other) against ``str.find``.

Negative control: a search that finds the last occurrence instead of the first is told apart by the
same cases (they hold the needle more than once after the start).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.data import NATIVE_HOW, optional_module
from hypothesis import given
from hypothesis import strategies as st

from envelock.eye import backend

_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

NEEDLES = ["\n</retrieved_content>", "</", "x"]
PIECES = ["\n", "</", "</retrieved_content>", "\n</retrieved_content", ">", "x", " ", "\u00e9", "\u4e00"]
CASES = [
    ("a\n</retrieved_content>b\n</retrieved_content>", "\n</retrieved_content>", 0),
    ("a\n</retrieved_content>b\n</retrieved_content>", "\n</retrieved_content>", 2),
    ("</</</", "</", 1),
    ("xx", "x", 3),
    ("", "x", 0),
    ("\u00e9\n</retrieved_content>\n</retrieved_content>", "\n</retrieved_content>", 0),
]


def native_find(text: str, sub: str, start: int) -> int:
    with backend.use("native"):
        return backend.find(text, sub, start)


@given(st.lists(st.sampled_from(PIECES), max_size=30).map("".join), st.sampled_from(NEEDLES), st.integers(0, 700))
def test_find_is_str_find(text: str, sub: str, start: int) -> None:
    assert native_find(text, sub, start) == text.find(sub, start)


def test_the_native_search_takes_ascii_text_only() -> None:
    assert _native.find_ascii("a</b", "</", 0) == 1
    assert _native.find_ascii("a</b", "</", 2) == -1
    assert _native.find_ascii("\u00e9</", "</", 0) is None


def rfind(text: str, sub: str, start: int) -> int:
    return text.rfind(sub, start)


@pytest.mark.parametrize("find", [native_find, rfind], ids=["native", "control-last-occurrence"])
def test_cases(find: Callable[[str, str, int], int]) -> None:
    agree = [find(t, s, k) == t.find(s, k) for t, s, k in CASES]
    assert all(agree) if find is native_find else not all(agree)
