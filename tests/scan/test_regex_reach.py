"""``regex_reach.starts`` reads off a regex what its matches start with: the encoded pass searches
only near those places, so a start it leaves out is an escape the scanner never sees.

Claims, each with a control:
- the fixtures below (patterns with their expected triples, ``None`` where no triple holds every
  match or a construct is not modelled) are read as written;
- every match of every encoded scheme, drawn by hypothesis from the regex itself, starts as its
  triple says (control: a reading that keeps only the first branch of an alternation misses
  ``%3C`` and ``\\x3c``)."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envelock.scan import encoded, regex_reach

FIXTURES: list[tuple[str, tuple[str, str, str] | None]] = [
    ("a(?:b|cd)", ("a", "bc", "")),  # "ab" ends after two characters: any third
    ("ab?c", ("a", "bc", "")),
    ("ab{2,}", ("a", "b", "b")),
    ("a(?:bc)*d", ("a", "bd", "")),
    ("a(?>b|c)d", ("a", "bc", "d")),
    ("a(?=x)b", ("a", "b", "")),  # a lookahead reads nothing of the match
    ("(?<=x)ab", ("a", "b", "")),
    ("ab|ac", ("a", "bc", "")),
    ("ab.", ("a", "b", "")),  # any third character
    ("%[0-9A-F]{2}", ("%", "0123456789ABCDEF", "0123456789ABCDEF")),
    ("a", None),  # one character long
    ("[ab]c", None),  # two first characters
    ("ab|cd", None),
    ("x{0,3}y", None),
    (r"\\{0,3}u", None),
    ("a.b", None),  # any second character
    ("a[^b]c", None),
    (r"a\dc", None),  # a category: any character, as far as a start can tell
    ("(?i)ab", None),  # case-blind: "Ab" too
    ("(?i:ab)c", None),
    (r"(a)\1", None),  # a back reference is not modelled
]


@pytest.mark.parametrize(("pattern", "expected"), FIXTURES)
def test_fixture(pattern: str, expected: tuple[str, str, str] | None) -> None:
    assert regex_reach.starts(pattern) == expected


def holds(triple: tuple[str, str, str], text: str) -> bool:
    first, second, third = triple
    return text[:1] == first and text[1:2] != "" and text[1] in second and (not third or (text[2:3] != "" and text[2] in third))


def test_every_scheme_is_read() -> None:
    # None would not be wrong (the passes then search the whole text) but the fast path would be gone.
    assert encoded._SCHEME_STARTS is not None
    assert len(encoded._SCHEME_STARTS) == len(encoded._SCHEMES)


@pytest.mark.parametrize("k", range(len(encoded._SCHEMES)))
@given(data=st.data())
def test_every_match_of_a_scheme_starts_as_read(k: int, data: st.DataObject) -> None:
    pattern = encoded._SCHEMES[k]
    text = data.draw(st.from_regex(re.compile(pattern), fullmatch=True))
    triple = regex_reach.starts(pattern)
    assert triple is not None and holds(triple, text), (text, triple)


def test_fixtures_hold_on_their_own_matches() -> None:
    for pattern, expected in FIXTURES:
        if expected is not None:
            for text in ("ab", "acd", "abc", "ad", "abbb", "abcd", "%3F", "abx"):
                if re.fullmatch(pattern, text):
                    assert holds(expected, text), (pattern, text)


def test_control_a_reading_of_the_first_branch_only_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = regex_reach._item

    def first_branch(op: Any, av: Any, k: int, c: Any) -> Any:
        if op is c.BRANCH:
            return regex_reach._prefixes(av[1][0], k, c)
        return real(op, av, k, c)

    monkeypatch.setattr(regex_reach, "_item", first_branch)
    pct, backslash = regex_reach.starts(encoded._SCHEMES[0]), regex_reach.starts(encoded._SCHEMES[2])
    assert pct is not None and backslash is not None
    assert re.fullmatch(encoded._SCHEMES[0], "%3C") and not holds(pct, "%3C")
    assert re.fullmatch(encoded._SCHEMES[2], "\\x3c") and not holds(backslash, "\\x3c")


def test_one_unreadable_pattern_leaves_no_table() -> None:
    # The passes search the whole text then: a table without that scheme would skip its escapes.
    assert regex_reach.all_starts(("ab", "cd")) == (("a", "b", ""), ("c", "d", ""))
    assert regex_reach.all_starts(("ab", "a", "cd")) is None
