"""The scanner's rewritten regexes match exactly as the forms they replace (differential, hypothesis),
with a control: a rewrite that changes matches is caught."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envelock.scan import encoded, hidden

#: Word characters, invisible ones, characters that are both (a variation selector and CGJ are marks,
#: so word characters, and default-ignorable, so invisible), and others.
ALPHABET = ["a", "\u00e9", "7", "\u0301", "\u200b", "\u2060", "\ufe00", "\u034f", " ", "<", "\u00ad"]
TEXTS = st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join)

GREEDY = re.compile(f"[{hidden._WORD_CLASS}](?:[{hidden._HIDDEN_CLASS}]{{1,3}}[{hidden._WORD_CLASS}])+")
#: The control: possessive in the wrong place (inside the iteration), which can change the match.
INNER_POSSESSIVE = f"[{hidden._WORD_CLASS}](?:[{hidden._HIDDEN_CLASS}]{{1,3}}+[{hidden._WORD_CLASS}])+"


def spans(rx: re.Pattern[str], text: str) -> list[tuple[int, int] | None]:
    out: list[tuple[int, int] | None] = []
    for i in range(len(text)):
        m = rx.match(text, i)
        out.append(m.span() if m else None)
    return out


@given(TEXTS)
def test_word_pattern_matches_as_the_greedy_form(text: str) -> None:
    assert spans(hidden._IN_WORD_RE, text) == spans(GREEDY, text)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive quantifiers need Python 3.11")
def test_control_a_rewrite_that_changes_matches_is_caught() -> None:
    wrong = re.compile(INNER_POSSESSIVE)
    text = "a\ufe00\ufe00"  # the selector is invisible and a mark: greedy gives one back, possessive cannot
    assert spans(GREEDY, text) != spans(wrong, text)
    assert spans(hidden._IN_WORD_RE, text) == spans(GREEDY, text)


BINARY = st.lists(st.sampled_from(["0", "1", "01100001", " ", "\t", "  ", "x", "\n"]), max_size=60).map("".join)


@given(BINARY)
def test_binary_prefilter_never_hides_a_match(text: str) -> None:
    """The pairs the binary-groups prefilter looks for are in every match: where it says no, the regex
    finds nothing."""
    if not encoded._may_hold_binary_groups(text):
        assert encoded._BIN_RE.search(text) is None


def test_control_a_prefilter_missing_a_pair_is_caught() -> None:
    text = "01100001\t01100010\t01100011\t01100100"
    assert encoded._BIN_RE.search(text) is not None
    assert encoded._may_hold_binary_groups(text)
    assert not any(p in text for p in ("0 ", "1 "))  # a prefilter without the tab pairs would hide it


#: The forms the prefix-set rewrites replaced: a leading lookahead, which no match needed.
OLD_ATTRIBUTE = re.compile(
    r"(?=[\"'&%])(?:[\"']|&quot;|&#0*3[49];|&#[xX]0*2[27];|&apos;|%22|%27)"
    r"(?:[ \t\u2028\u2029]|%20|\+){0,8}(provenance|source|origin|fetched_at)[ \t]{0,4}(?:=|%3[dD])",
    re.IGNORECASE,
)
ATTRIBUTE_TEXT = st.lists(
    st.sampled_from(['"', "'", "&quot;", "&#34;", "&#x27;", "&apos;", "%22", "%27", "&", "%", " ", "%20", "+",
                     "provenance", "Source", "ORIGIN", "fetched_at", "=", "%3D", "\t", "x"]),
    max_size=20,
).map("".join)


@given(ATTRIBUTE_TEXT)
def test_attribute_pattern_matches_as_the_lookahead_form(text: str) -> None:
    from envelock.scan import text as scan_text_rules

    new = [(m.span(), m.group(1)) for m in scan_text_rules._ATTR_INJECTION_RE.finditer(text)]
    assert new == [(m.span(), m.group(1)) for m in OLD_ATTRIBUTE.finditer(text)]


def _exact_names() -> object:
    from envelock.eye.tokens import RESERVED_NAMES
    from envelock.scan import tags
    from envelock.scan._base import Context

    return tags._name_maps(Context(RESERVED_NAMES))[0]


def _zero_width_finder(names: object) -> re.Pattern[str]:
    """The finder as it was: one lookahead over every alternative (zero-width matches)."""
    exact = names._exact  # type: ignore[attr-defined]
    alts = [f"{re.escape(c)}\\\\*(?:{'|'.join(re.escape(r) for r in exact[c])})" for c in names.exact_starts()]  # type: ignore[attr-defined]
    return re.compile(f"(?=(?:{'|'.join(alts)}))")


EXACT_PIECES = ["<", ">", "[", "]", "\\", "\uff5c", "PAD>", ">TITLE<<", "IMG]", "INST]", "DSML\uff5c", "pad>", "x", " "]


@given(st.lists(st.sampled_from(EXACT_PIECES), max_size=24).map("".join))
def test_exact_finder_starts_as_the_zero_width_form(text: str) -> None:
    names = _exact_names()
    new = [m.start() for m in names.exact_finder().finditer(text)]  # type: ignore[attr-defined]
    assert new == [m.start() for m in _zero_width_finder(names).finditer(text)]


def test_control_a_finder_that_consumes_the_token_is_caught() -> None:
    """Overlapping tokens (``<PASSWORD>`` ends where ``>>INTRODUCTION<<`` starts): a finder whose
    matches take the whole token misses the second; the one-character finder does not."""
    names = _exact_names()
    whole = re.compile(_zero_width_finder(names).pattern[len("(?=(?:") : -len("))")])  # the alternatives, consumed
    text = "<PASSWORD>>INTRODUCTION<<"
    want = [m.start() for m in _zero_width_finder(names).finditer(text)]
    assert want == [0, 9]
    assert [m.start() for m in whole.finditer(text)] != want
    assert [m.start() for m in names.exact_finder().finditer(text)] == want  # type: ignore[attr-defined]
