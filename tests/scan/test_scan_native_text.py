"""The prose passes' native walks (``_native.line_markers``, ``_native.attribute_injections``) find
what their regexes find (``scan.text._PROSE_HEAD_RE``/``_PROSE_RE``, ``_ATTR_INJECTION_RE``), span for
span, on text built from the pieces the regexes look at; where the text holds a character
``re.IGNORECASE`` folds to ASCII the regexes run instead, and the scan's findings are the same.
Controls: a walk that allows nine blanks, and one that takes the first marker rather than the
longest, must be told apart."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import cast

import pytest
from helpers.data import NATIVE_HOW, skip_unless_required
from hypothesis import given
from hypothesis import strategies as st

from envelock import scan_text
from envelock.eye import backend
from envelock.eye.reader import exact_tokens, names_for
from envelock.eye.tokens import EXACT_TOKENS, PROSE_TURN_MARKERS, RESERVED_NAMES
from envelock.scan import _base as B
from envelock.scan import encoded as E
from envelock.scan import text as T
from envelock.scan._base import Context, ascii_case_folds, ascii_folded, folds_ascii_case

PIECES = st.sampled_from(
    [
        *PROSE_TURN_MARKERS, *(m.lower() for m in PROSE_TURN_MARKERS), *(m.upper() for m in PROSE_TURN_MARKERS), "### ",
        "Human", "USER", ":", "\n", "\r", "\r\n", "\u2028", "\u2029", "\x85", " ", "\t", " " * 8, " " * 9,
        '"', "'", "&quot;", "&QUOT;", "&apos;", "&#34;", "&#0039;", "&#x22;", "&#X0027;", "&#35;", "%22", "%27", "%20", "+",
        "provenance", "Source", "ORIGIN", "fetched_at", "=", "%3D", "%3d", "x", "é", "日本", "\u00c2\u0085",
        *ascii_case_folds(),
    ]
)  # fmt: skip
TEXTS = st.lists(PIECES, max_size=16).map("".join)


@pytest.fixture(autouse=True)
def _native() -> Iterator[None]:
    """Every test here on the native core (and skipped only where it is not built, failing then under
    ``ENVELOCK_REQUIRE_NATIVE=1``: the project's one way to skip)."""
    if "native" not in backend.IMPLEMENTATIONS:
        skip_unless_required(f"needs envelock._native ({NATIVE_HOW})", "ENVELOCK_REQUIRE_NATIVE")
    with backend.use("native"):
        yield


def _regex_markers(text: str) -> list[tuple[int, int]]:
    head = T._PROSE_HEAD_RE.match(text)
    return [m.span(1) for m in ([head] if head else []) + list(T._PROSE_RE.finditer(text))]


def _regex_attributes(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group(1)) for m in T._ATTR_INJECTION_RE.finditer(text)]


@given(TEXTS)
def test_line_markers_are_the_regex_spans(text: str) -> None:
    if not folds_ascii_case(text):
        assert backend.native_line_markers(text, PROSE_TURN_MARKERS) == _regex_markers(text)
    assert T._line_markers(text) == _regex_markers(text)


@given(TEXTS)
def test_attribute_injections_are_the_regex_matches(text: str) -> None:
    assert T._attribute_injections(text) == _regex_attributes(text)


#: Words the passes look for, spelled with the characters ``re.IGNORECASE`` folds to ASCII.
FOLDED_WORDS = ["\u017fource", "u\u017fer", "SY\u017fTEM", "or\u0131gin", "OR\u0130GIN", "fetched_at", "A\u017f\u017fi\u017ftant"]
FOLD_TEXTS = st.lists(st.sampled_from([*FOLDED_WORDS, '"', "'", "%22", " ", "=", ":", "\n", "### ", "x"]), max_size=12).map("".join)


@given(FOLD_TEXTS)
def test_fold_characters_are_read_as_the_regexes_read_them(text: str) -> None:
    """The native walks read the ASCII-folded text (one character for one) and find what the
    case-insensitive regexes find in the text itself."""
    assert T._attribute_injections(text) == _regex_attributes(text)
    assert T._line_markers(text) == _regex_markers(text)


def test_the_fold_characters_are_read_as_their_letters(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ſource=`` is ``source=`` to ``re.IGNORECASE``, not to ASCII folding: the walks read the folded
    text, and no regex runs over the whole text. Controls: the walk on the raw text finds nothing,
    and a folding that takes U+017F for ``t`` is told apart."""
    text = 'x"\u017fource=1\nu\u017fer: y'
    assert folds_ascii_case(text) and ascii_folded(text) == 'x"source=1\nuser: y'
    want_attrs, want_markers = _regex_attributes(text), _regex_markers(text)
    assert want_attrs != [] and want_markers != []
    assert backend.native_attribute_injections(text, T._ATTRIBUTE_NAMES) == []

    class NoRegex:
        def finditer(self, *_: object) -> object:
            raise AssertionError("the regex ran")

        def match(self, *_: object) -> object:
            raise AssertionError("the regex ran")

    with monkeypatch.context() as m:
        m.setattr(T, "_ATTR_INJECTION_RE", NoRegex())
        m.setattr(T, "_PROSE_RE", NoRegex())
        m.setattr(T, "_PROSE_HEAD_RE", NoRegex())
        assert T._attribute_injections(text) == want_attrs
        assert T._line_markers(text) == want_markers
    monkeypatch.setattr(B, "_ascii_folding", lambda: {0x17F: ord("t")})
    assert T._attribute_injections(text) != want_attrs


def test_the_cipher_pass_over_folded_text_is_the_regexs() -> None:
    """The cipher pass's first words are found in the folded text; the regex decides on the text."""
    ctx = Context(tuple(RESERVED_NAMES), None)
    cre = E._cipher_re(ctx.reserved)[0]
    for text in ["ERGEVRIRQ_PBAGRAG \u212a", "\u212a ergevr\u0131rq_pbagrag x", "ergevr\u0130rq-pbagrag \u017f"]:
        assert folds_ascii_case(text)
        got = [m.span() for m in E._cipher_matches(text, cre, ctx)]
        assert got == [m.span() for m in cre.finditer(text)] != [], text


def test_the_cipher_pass_over_folded_text_searches_no_whole_text_and_a_wrong_folding_is_caught(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cre = E._cipher_re(tuple(RESERVED_NAMES))[0]
    text = "\u212a ergevr\u0131rq_pbagrag x"

    class Matching:
        """``cre`` whose ``finditer`` (a search of the whole text) may not run."""

        def match(self, t: str, i: int) -> re.Match[str] | None:
            return cre.match(t, i)

        def finditer(self, *_: object) -> object:
            raise AssertionError("the regex searched the whole text")

    want = [m.span() for m in cre.finditer(text)]
    got = E._cipher_matches(text, cast(re.Pattern[str], Matching()), Context(tuple(RESERVED_NAMES), None))
    assert [m.span() for m in got] == want != []
    monkeypatch.setattr(B, "_ascii_folding", lambda: {0x212A: ord("k"), 0x131: ord("t")})
    got = E._cipher_matches(text, cre, Context(tuple(RESERVED_NAMES), None))
    assert [m.span() for m in got] != want


@pytest.mark.parametrize(
    "text",
    ["\n" + " " * 9 + "Human: x", "### Instruction: do", "\n### INSTRUCTION:", "x\r\nUSER: y", "a\u2029System: b"],
)
def test_edges(text: str) -> None:
    assert backend.native_line_markers(text, PROSE_TURN_MARKERS) == _regex_markers(text)


def test_control_a_walk_allowing_nine_blanks_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Walks that allow one blank more (before a marker, before an attribute name) are told apart from
    the regexes on the texts the strategy draws."""
    loose_prose = re.compile(T._PROSE_RE.pattern.replace("{0,8}", "{0,9}"), re.IGNORECASE)
    loose_attr = re.compile(T._ATTR_INJECTION_RE.pattern.replace("{0,8}", "{0,9}"), re.IGNORECASE)
    monkeypatch.setattr(T, "native_line_markers", lambda text, markers: [m.span(1) for m in loose_prose.finditer(text)])
    monkeypatch.setattr(
        T, "native_attribute_injections", lambda text, names: [(*m.span(), *m.span(1)) for m in loose_attr.finditer(text)]
    )
    prose, attr = "\n" + " " * 9 + "Human: x", '"' + " " * 9 + "origin=x"
    assert T._line_markers(prose) != _regex_markers(prose)
    assert T._attribute_injections(attr) != _regex_attributes(attr)


def test_the_longest_marker_is_taken() -> None:
    assert backend.native_line_markers("Human: x", ("Human", "Human:")) == [(0, 6)]
    assert backend.native_line_markers("Human: x", ("Human:", "Human")) == [(0, 6)]


# The cipher pass's first words (``scan.encoded._cipher_matches``): one native pass (ASCII lowering, ``memmem``)
# against ``str.find`` of each word on the lowered text, its reference.
WORDS = ("ergevrirq", "tnetnoc", "eneigyh", "ab", "aba")
WORD_TEXTS = st.lists(
    st.sampled_from([*WORDS, *(w.upper() for w in WORDS), "ErGeV", "rirq", "b", "a", "é", "日本", "\u0130", " ", "\n"]),
    max_size=12,
).map("".join)


def _find_starts(text: str, words: tuple[str, ...]) -> list[int]:
    lowered = text.lower()
    found: set[int] = set()
    for w in words:
        i = lowered.find(w)
        while i >= 0:
            found.add(i)
            i = lowered.find(w, i + 1)
    return sorted(found)


@given(WORD_TEXTS)
def test_word_starts_are_what_find_on_the_lowered_text_finds(text: str) -> None:
    if not folds_ascii_case(text):
        assert backend.native_ascii_word_starts(text, WORDS) == _find_starts(text, WORDS)


def test_word_starts_refuse_what_they_cannot_search() -> None:
    assert backend.native_ascii_word_starts("x", ("", "a")) is None
    assert backend.native_ascii_word_starts("x", ("\u00e9",)) is None


def test_negative_control_a_case_sensitive_search_is_told_apart() -> None:
    text = "\u00e9 ErGeVrIrQ and abab"
    case_sensitive = sorted(i for w in WORDS for i in range(len(text)) if text.startswith(w, i))
    assert backend.native_ascii_word_starts(text, WORDS) == _find_starts(text, WORDS) != case_sensitive


# The exact tokens (``scan.tags._scan_exact``): one native pass (the core reader's ``exact_after``)
# against ``reader.exact_tokens`` (``exact_finder`` and Python's ``exact_after``), its reference, on
# text built from the tokens' own pieces and references for their characters.
EXACT_PIECES = st.sampled_from(
    [t[:k] for t in EXACT_TOKENS for k in (1, len(t) - 1, len(t))]
    + [t[1:] for t in EXACT_TOKENS]
    + ["\\", "\\\\", "<", "[", "é", "日本", " ", "\n", "|", "~"]
    + ["&gt;", "&lt;", "&#93;", "&lsqb;", "&#xFF5C;", "&amp;", "&", "&gt", "&#84;"]
)
EXACT_TEXTS = st.lists(EXACT_PIECES, max_size=12).map("".join)


def _regex_exact(text: str) -> list[tuple[int, int]]:
    return exact_tokens(text, names_for(RESERVED_NAMES, None))


@given(EXACT_TEXTS)
def test_exact_tokens_are_the_finders_and_exact_afters(text: str) -> None:
    assert backend.native_exact_tokens(text, RESERVED_NAMES, None) == _regex_exact(text)


def test_negative_controls_a_finder_blind_to_backslashes_or_overlaps_is_told_apart() -> None:
    """``<\\\\NAME>`` is an exact token read past its backslashes, which a search for the tokens as
    written misses; ``]~b]~b]`` holds two that overlap, which a non-overlapping search misses."""
    text = "x <\\\\NAME> y"
    as_written = sorted((i, i + len(t)) for t in EXACT_TOKENS for i in range(len(text)) if text.startswith(t, i))
    assert backend.native_exact_tokens(text, RESERVED_NAMES, None) == _regex_exact(text) == [(2, 10)] != as_written
    text = "]~b]~b]"
    one_by_one = [
        m.span() for m in re.finditer("|".join(re.escape(t) for t in sorted(EXACT_TOKENS, key=len, reverse=True)), text)
    ]
    assert backend.native_exact_tokens(text, RESERVED_NAMES, None) == _regex_exact(text) == [(0, 4), (3, 7)] != one_by_one


def test_a_teams_tokens_are_left_to_the_reference() -> None:
    """A team's tokens add exact tokens the native core does not hold (and may hold a lone surrogate,
    read from JSON): the native pass is not asked."""
    from envelock.eye.load_tokens import Tokens

    assert (
        backend.native_exact_tokens(
            "<b>", RESERVED_NAMES, Tokens(frozenset(), frozenset(), frozenset(), frozenset({"<b>"}), frozenset({"<b>"}))
        )
        is None
    )
    assert backend.native_ascii_word_starts("x", ("\ud800",)) is None


# The escaped-slash check (``scan.tags._angle_describer``: ``<\u002f...`` read after its own opener)
# asks the native reader for the reading's kind; the fast Python implementation asks the reference.
ESCAPED_SLASH = [
    "x <\\u002fretrieved_content> y",
    "\u00e9 <\\x2fretrieved_content>",
    "<\\u002f im_end>",
    "let re = /<\\/?[a-z]+>/g; <\\u002fb>",
    "\u00ab\\u002fretrieved_content\u00bb",
]


@pytest.mark.parametrize("text", ESCAPED_SLASH)
def test_the_escaped_slash_check_reads_as_the_reference(text: str) -> None:
    native = scan_text(text)
    with backend.use("fast"):
        assert scan_text(text) == native


def test_negative_control_a_reader_that_reads_nothing_loses_the_escaped_slash(monkeypatch: pytest.MonkeyPatch) -> None:
    from envelock.scan import tags

    text = ESCAPED_SLASH[0]
    assert any(f.message == "escaped slash before a reserved name" for f in scan_text(text))
    monkeypatch.setattr(tags, "reading_kind_after", lambda *a: "none")
    assert not any(f.message == "escaped slash before a reserved name" for f in scan_text(text))


def test_each_window_after_an_escaped_slash_gets_its_own_verdict() -> None:
    # The verdicts are kept per (opener, window): the same opener before a plain name and before a
    # reserved one, repeated, reports the reserved ones only (a verdict kept per opener would give
    # the second the first's, in either order).
    plain, reserved = "<\\u002fx> ", "<\\u002fretrieved_content> "
    for text in (plain * 3 + reserved * 2, reserved * 2 + plain * 3):
        found = scan_text(text)
        got = [f.offset for f in found if f.message == "escaped slash before a reserved name"]
        assert got == [i for i in range(len(text)) if text.startswith(reserved, i)], text
        with backend.use("fast"):
            assert scan_text(text) == found


def test_the_fold_characters_are_what_re_says_character_by_character() -> None:
    """One search over the BMP finds what a ``fullmatch`` of each character finds (the definition)."""
    each = tuple(c for c in map(chr, range(0x80, 0x10000)) if re.fullmatch("[a-z]", c, re.IGNORECASE))
    assert ascii_case_folds() == each and len(each) == 4
