"""The hidden-character passes are skipped where the native core finds none of their characters.

``_native.classes_present`` says, in one pass, which of the classes of the passes of
:mod:`envelock.scan.hidden` (TAG characters, bidi controls, invisible characters, controls) occur
in a text; a pass whose class does not occur is skipped. This holds that check to its tables
(every code point of every class, alone and between other text, and the code points next to each
range), and the scan to the one without the check (the Python reference, which runs every pass)
on text drawn from those classes.

Negative control: a check that misses a class (it claims no TAG character occurs) must make the
differential test fail.
"""

from __future__ import annotations

import re

import pytest
from helpers.data import NATIVE_HOW, optional_module
from helpers.scanning import scanned
from hypothesis import given, settings
from hypothesis import strategies as st

from envelock import Finding
from envelock.eye import backend, charsets
from envelock.scan import hidden

_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

CLASSES = hidden._CLASSES
MEMBERS = [sorted({cp for lo, hi in cls for cp in range(lo, hi + 1)}) for cls in CLASSES]
SETS = [frozenset(m) for m in MEMBERS]


def _str(cp: int) -> str:
    return "" if 0xD800 <= cp <= 0xDFFF else chr(cp)  # a lone surrogate is never handed to the core


@pytest.mark.parametrize("k", range(len(CLASSES)))
def test_every_member_of_every_class_is_found(k: int) -> None:
    for cp in MEMBERS[k]:
        c = _str(cp)
        if not c:
            continue
        for text in (c, f"caf\u00e9 {c} \u6f22", "a" * 70 + c):
            found = _native.classes_present(text, CLASSES)
            assert found[k], (hex(cp), text[:10])
            assert found == [any(ord(ch) in m for ch in text) for m in SETS], (hex(cp), text[:10])


@pytest.mark.parametrize("k", range(len(CLASSES)))
def test_neighbours_of_each_range_are_not_members(k: int) -> None:
    members = set(MEMBERS[k])
    for lo, hi in CLASSES[k]:
        for cp in (lo - 1, hi + 1):
            if 0 <= cp <= 0x10FFFF and cp not in members and _str(cp):
                assert not _native.classes_present(f"x{_str(cp)}y", [CLASSES[k]])[0], hex(cp)


def test_plain_and_multilingual_text_hold_none() -> None:
    text = (
        "plain text, caf\u00e9 \u00ab quote \u00bb, \u0441\u043b\u043e\u0432\u043e, \u6f22\u5b57\u3001\u304b\u306a \u2014 \u2019"
    )
    assert _native.classes_present(text, CLASSES) == [False] * len(CLASSES)


_ALPHABET = [chr(cp) for cls in MEMBERS for cp in cls[:: max(1, len(cls) // 40)] if _str(cp)]
_texts = st.lists(
    st.one_of(
        st.sampled_from(_ALPHABET), st.sampled_from(["word", " ", "\n", "\U0001f3f4", "caf\u00e9", "\u6f22"]), st.text(max_size=4)
    ),
    max_size=30,
).map("".join)


def _scan_both(text: str) -> tuple[list[Finding], ...]:
    return scanned(text, "native", "reference")


@settings(max_examples=300, deadline=None)
@given(_texts)
def test_scan_equals_the_scan_without_the_check(text: str) -> None:
    native, reference = _scan_both(text)
    assert native == reference


def test_negative_control_a_check_that_misses_a_class_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = backend.native_classes_present

    def no_tags(text: str, classes: list[list[tuple[int, int]]]) -> list[bool] | None:
        found = real(text, classes)
        return None if found is None else [False, *found[1:]]

    monkeypatch.setattr(backend, "native_classes_present", no_tags)
    native, reference = _scan_both("hi \U000e0069\U000e0067\U000e006e\U000e006f\U000e0072\U000e0065 there")
    assert native != reference


# ``_native.class_runs``: the control pass's runs (``hidden._CONTROL_RUN_RE``) in one native walk.
CONTROLS = sorted({cp for lo, hi in hidden._CONTROL_RANGES for cp in range(lo, hi + 1)})


def _regex_runs(text: str) -> list[tuple[int, int]]:
    return [m.span() for m in hidden._CONTROL_RUN_RE.finditer(text)]


def test_every_control_and_each_neighbour_reads_as_the_regex_reads_it() -> None:
    members = set(CONTROLS)
    for cp in sorted(members | {c + d for c in members for d in (-1, 1) if 0 <= c + d <= 0x10FFFF}):
        c = _str(cp)
        if c:
            text = f"a{c}{c}b\u00e9{c}"
            assert _native.class_runs(text, list(hidden._CONTROL_RANGES)) == _regex_runs(text), hex(cp)


_control_texts = st.lists(
    st.one_of(
        st.sampled_from([_str(cp) for cp in CONTROLS[:: max(1, len(CONTROLS) // 60)]]),
        st.sampled_from(["\x0c", "\t", "é", "\u6f22", "\U0001f600", "ab"]),
        st.text(max_size=3),
    ),
    max_size=20,
).map("".join)


@given(_control_texts)
def test_the_control_runs_are_the_regex_runs(text: str) -> None:
    with backend.use("native"):
        runs = backend.native_class_runs(text, hidden._CONTROL_RANGES)
    if runs is not None:  # a lone surrogate: the regex runs instead
        assert runs == _regex_runs(text)
    native, reference = _scan_both(text)
    assert native == reference


def test_control_a_class_without_its_last_range_is_caught() -> None:
    text = "bell\x07 and c1 \x85 here"
    short = list(hidden._CONTROL_RANGES[:-1])
    assert _native.class_runs(text, list(hidden._CONTROL_RANGES)) == _regex_runs(text) != _native.class_runs(text, short)


def test_a_range_no_table_holds_is_refused() -> None:
    assert _native.class_runs("abc", [(0x62, 0x61)]) is None
    assert _native.class_runs("abc", [(0x61, 0x110000)]) is None


# The hidden pass's runs (``hidden._native_runs``: ``_ANY_RUN_RE`` in one native walk), its long runs
# and the words holding short runs, against the regex loop they replace (which still runs where runs
# are dense).
HIDDEN_MEMBERS = sorted({cp for lo, hi in hidden._HIDDEN_RANGES for cp in range(lo, hi + 1)})
_hidden_texts = st.lists(
    st.sampled_from(
        [_str(cp) for cp in HIDDEN_MEMBERS[:: max(1, len(HIDDEN_MEMBERS) // 40)]]
        + ["\u200b", "\u200d", "\u2060", "\ufeff", "a", "b", "\u05d0", "\u0627", " ", "\n", "é", "\u6f22", "1"]
    ),
    max_size=30,
).map("".join)


def _regex_words(text: str) -> list[tuple[int, int]]:
    """The word search as it was: the next run by regex from the end of the last word."""
    out: list[tuple[int, int]] = []
    pos = 0
    while (run := hidden._ANY_RUN_RE.search(text, pos)) is not None:
        word = hidden._IN_WORD_RE.match(text, run.start() - 1) if run.start() > 0 else None
        if word is None:
            pos = run.end()
        else:
            out.append(word.span())
            pos = word.end()
    return out


@given(_hidden_texts)
def test_the_hidden_runs_long_runs_and_words_are_the_regexes(text: str) -> None:
    with backend.use("native"):
        runs = _native.class_runs(text, list(hidden._HIDDEN_RANGES))
        assert runs == [m.span() for m in hidden._ANY_RUN_RE.finditer(text)]
        long = [m.span() for m in hidden._LONG_RUN_RE.finditer(text)]
        assert [r for r in runs if r[1] - r[0] >= hidden._LONG_RUN] == long
        assert _native.class_runs(text, list(hidden._HIDDEN_RANGES), None, hidden._LONG_RUN) == long
        assert hidden._long_runs(text) == long
        assert hidden._words_with_invisibles(text, runs) == _regex_words(text)
        assert hidden._python_words(text, runs) == _regex_words(text)
        assert hidden._python_words(text) == _regex_words(text)
        native, reference = _scan_both(text)
    assert native == reference


def test_dense_runs_are_left_to_the_regexes_and_sparse_ones_are_not() -> None:
    dense, sparse = "a\u200b" * 5000, ("x" * 200 + "a\u200bb") * 50
    with backend.use("native"):
        assert hidden._native_runs(dense, hidden._HIDDEN_RANGES) is None
        assert hidden._native_runs(sparse, hidden._HIDDEN_RANGES) == [m.span() for m in hidden._ANY_RUN_RE.finditer(sparse)]
        for text in (dense, sparse):
            native, reference = _scan_both(text)
            assert native == reference


def test_control_a_word_search_that_does_not_skip_the_runs_inside_a_word_is_caught() -> None:
    text = "a\u200bb\u200bc d\u200be"
    runs = _native.class_runs(text, list(hidden._HIDDEN_RANGES))

    def every_run(text: str) -> list[tuple[int, int]]:
        found = (hidden._IN_WORD_RE.match(text, s - 1) for s, _ in runs if s > 0)
        return [m.span() for m in found if m is not None]

    assert hidden._python_words(text, runs) == _regex_words(text) != every_run(text)
    assert hidden._words_with_invisibles(text, runs) == _regex_words(text)


def test_long_runs_are_counted_in_characters() -> None:
    # Dense short runs (no list of every run) and long ones of characters of one to four bytes:
    # the native walk for long runs is the regex's. Control: a walk that counted bytes would take
    # the three-character, nine-byte run of U+2064 for a long one.
    text = "a\u200b" * 3000 + "b\u2064\u2064\u2064c" + "\U000e0041" * 4 + "d" + "\u200b" * 5
    long = [m.span() for m in hidden._LONG_RUN_RE.finditer(text)]
    with backend.use("native"):
        assert hidden._native_runs(text, hidden._HIDDEN_RANGES) is None  # dense: the long walk's case
        assert hidden._long_runs(text) == long == _native.class_runs(text, list(hidden._HIDDEN_RANGES), None, 4)
        by_bytes = [
            (a, e) for a, e in _native.class_runs(text, list(hidden._HIDDEN_RANGES)) or [] if len(text[a:e].encode()) >= 4
        ]
        assert by_bytes != long
        native, reference = _scan_both(text)
    assert native == reference


def test_the_run_limit_is_the_native_walks() -> None:
    text = "a\u200bb\u200bc"
    assert _native.class_runs(text, list(hidden._HIDDEN_RANGES), 2) == [(1, 2), (3, 4)]
    assert _native.class_runs(text, list(hidden._HIDDEN_RANGES), 1) is None


@pytest.mark.parametrize(
    ("ranges", "regex"),
    [(charsets.TAG_CHARACTERS, hidden._TAG_RUN_RE), (charsets.BIDI_EMBEDDING_CONTROLS, hidden._BIDI_RUN_RE)],
    ids=["tag", "bidi"],
)
def test_the_tag_and_bidi_runs_are_the_regex_runs(ranges: tuple[tuple[int, int], ...], regex: re.Pattern[str]) -> None:
    members = sorted({cp for lo, hi in ranges for cp in range(lo, hi + 1)})
    for cp in sorted(set(members) | {c + d for c in members for d in (-1, 1)}):
        text = f"a{chr(cp)}{chr(cp)}b\u00e9{chr(cp)}\U0001f3f4{chr(cp)}"
        with backend.use("native"):
            assert hidden._runs(text, ranges, regex) == [m.span() for m in regex.finditer(text)], hex(cp)
    # control: the class short of its last code point
    last = members[-1]
    text = f"x{chr(last)}y"
    short = [(lo, min(hi, last - 1)) for lo, hi in ranges if lo < last]
    assert _native.class_runs(text, short) != [m.span() for m in regex.finditer(text)]


#: Characters that are both invisible and word characters (a Hangul filler is a letter, a variation
#: selector or U+034F a mark): where a repetition of ``_IN_WORD_RE`` must give back a character.
_BOTH = sorted(
    {c for lo, hi in hidden._HIDDEN_RANGES for c in map(chr, range(lo, hi + 1))}
    & {c for lo, hi in hidden._WORD_RANGES for c in map(chr, range(lo, hi + 1))}
)

_word_texts = st.lists(
    st.sampled_from(["a", "b", "\u00e9", "<", " ", "/", "\u200b", "\u200d", "\u2060", *_BOTH[:: max(1, len(_BOTH) // 6)]]),
    max_size=40,
).map("".join)


@settings(max_examples=400)
@given(_word_texts)
def test_the_native_word_search_is_the_regexes(text: str) -> None:
    """``_native.words_with_runs`` against the regex search it replaces, on texts of word characters,
    invisible ones, characters that are both, and others (the adv-ignorables shape among them)."""
    assert _native.words_with_runs(text, list(hidden._HIDDEN_RANGES), list(hidden._WORD_RANGES)) == _regex_words(text)


def test_the_native_word_search_gives_back_a_character_that_is_both() -> None:
    """``a`` U+200B U+3164 U+200B U+200B ``<``: three invisible characters then ``<`` fail, so the
    repetition takes two, the HANGUL FILLER standing as the word character. Control: a search that
    tries only the longest run of invisible characters finds no word there."""
    both = "\u3164"
    assert both in _BOTH
    text = f"a\u200b{both}\u200b\u200b<"
    want = _regex_words(text)
    assert want == [(0, 3)]
    assert _native.words_with_runs(text, list(hidden._HIDDEN_RANGES), list(hidden._WORD_RANGES)) == want
    longest_only = re.compile(f"[{hidden._WORD_CLASS}](?:[{hidden._HIDDEN_CLASS}]{{1,3}}+[{hidden._WORD_CLASS}])+")
    assert longest_only.match(text, 0) is None


def test_the_adv_ignorables_shape_is_searched_natively() -> None:
    """Runs with no word character before them (``<`` then invisible characters) are passed over by
    the native walk: no word, as the regexes find, and no Python step per run."""
    text = "<\u200b\u200d\u2060/x " * 2000
    with backend.use("native"):
        assert hidden._native_runs(text, hidden._HIDDEN_RANGES) is None  # dense: the old path was the regexes
        assert hidden._words_with_invisibles(text) == [] == _regex_words(text)
