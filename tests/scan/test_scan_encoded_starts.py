"""The encoded pass searches only windows around the places an escape can start
(``encoded._SCHEME_STARTS``, read off the regexes by ``regex_reach.starts``, found by
``_native.scheme_starts``), and finds there just what its regexes find over the whole text.

Three claims, each with a control:
- the native starts are the places a Python loop over the text finds (control: a loop that forgets
  ``%u`` is told apart);
- every match of a scheme's regex starts at one of them (control: a start without ``uU`` misses
  ``%u2039``);
- the windowed passes find what the whole passes find (controls: a forgotten start, and a margin
  too short for the repeat lookahead, ``%3C%3C%3C``)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from helpers.data import NATIVE_HOW, skip_unless_required
from hypothesis import given
from hypothesis import strategies as st

from envelock.eye import backend
from envelock.scan import encoded, regex_reach, scan_text

assert encoded._SCHEME_STARTS is not None, "every scheme's starts are read off its regex (test_regex_reach.py)"
SCHEME_STARTS = encoded._SCHEME_STARTS

Scheme = tuple[str, str, str]

TEXTS = st.lists(
    st.one_of(
        st.text(alphabet="%=\\+25uUx{}0123456789abcdefABCDEF/-_ &#;bpeé日\n", max_size=8),
        st.sampled_from(
            ["%E2%80%B9", "%253C", "%25253C", "=E2=80", "\\ud833\\udc80", "\\\\x3c", "\\x{2039}", "+ADw-", "\\3c ",
             "%u2039", "&#37;", "&bsol;", "&percnt;", "&equals;", "&plus;", "\\U0000FF1C", "\\u{ff1c}"]
        ),
        st.sampled_from(["%3C", "%3E", "\\u003c", "=3C", "+ADw"]).flatmap(lambda e: st.integers(1, 6).map(lambda k: e * k)),
    ),
    max_size=14,
).map("".join)  # fmt: skip


def python_starts(text: str, schemes: tuple[Scheme, ...] = SCHEME_STARTS) -> list[list[int]]:
    """The reference: each place the introducer is, followed by the two classes."""
    return [
        [
            i
            for i, c in enumerate(text)
            if c == intro
            and text[i + 1 : i + 2] != ""
            and text[i + 1] in second
            and (not third or (text[i + 2 : i + 3] != "" and text[i + 2] in third))
        ]
        for intro, second, third in schemes
    ]


def whole(k: int, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in encoded._ENC_CANDIDATE_RE.passes[k].finditer(text)]


def windowed(k: int, text: str, starts: list[int], margin: int) -> list[tuple[int, int]]:
    return [m.span() for m in encoded._in_windows(encoded._ENC_CANDIDATE_RE.passes[k], text, starts, margin)]


@contextmanager
def on_native() -> Iterator[None]:
    """The block on the native core (skipped only where it is not built, failing then under
    ``ENVELOCK_REQUIRE_NATIVE=1``)."""
    if "native" not in backend.IMPLEMENTATIONS:
        skip_unless_required(f"needs envelock._native ({NATIVE_HOW})", "ENVELOCK_REQUIRE_NATIVE")
    with backend.use("native"):
        yield


@pytest.fixture
def native() -> Iterator[None]:
    with on_native():
        yield


def test_every_scheme_has_a_bounded_width() -> None:
    # Without one the pass searches the whole text: correct, but the fast path would be gone unseen.
    margins = encoded._ENC_CANDIDATE_RE.margins
    assert margins is not None and len(margins) == len(encoded._SCHEMES) == len(SCHEME_STARTS)
    assert all(m > 2 * (w or 0) for m, w in zip(margins, map(regex_reach.max_width, encoded._SCHEMES), strict=True))


@given(TEXTS)
def test_the_native_starts_are_the_python_loop(text: str) -> None:
    with on_native():
        assert backend.native_scheme_starts(text, SCHEME_STARTS, len(text) + 1) == python_starts(text)
        # Past the limit a scheme has none (its pass searches the whole text).
        for limit in (0, 1, 3):
            capped = [s if len(s) <= limit else None for s in python_starts(text)]
            assert backend.native_scheme_starts(text, SCHEME_STARTS, limit) == capped


def test_control_a_loop_that_forgets_percent_u_is_told_apart(native: None) -> None:
    forgetful = (("%", "0123456789abcdefABCDEF", "0123456789abcdefABCDEF"), *SCHEME_STARTS[1:])
    text = "x%u2039y"
    assert backend.native_scheme_starts(text, SCHEME_STARTS, 8) == python_starts(text) != python_starts(text, forgetful)


def test_a_start_that_is_not_ascii_falls_back(native: None) -> None:
    assert backend.native_scheme_starts("a%3C", (("\uff05", "3", "C"),), 8) is None


@given(TEXTS)
def test_every_match_starts_at_a_start(text: str) -> None:
    starts = python_starts(text)
    for k in range(len(encoded._SCHEMES)):
        width = regex_reach.max_width(encoded._SCHEMES[k])
        assert width is not None
        for s, e in whole(k, text):
            assert s in starts[k] and e - s <= width, (k, text[s:e])


def test_control_a_start_without_u_misses_a_match() -> None:
    text = "%u2039/retrieved_content>"
    forgetful = (("%", "0123456789abcdefABCDEF", "0123456789abcdefABCDEF"),)
    assert whole(0, text) == [(0, 6)]
    assert 0 in python_starts(text)[0] and 0 not in python_starts(text, forgetful)[0]


@given(TEXTS)
def test_the_windowed_passes_find_what_the_whole_passes_find(text: str) -> None:
    margins = encoded._ENC_CANDIDATE_RE.margins
    assert margins is not None
    for k, starts in enumerate(python_starts(text)):
        assert windowed(k, text, starts, margins[k]) == whole(k, text), k


@pytest.mark.parametrize("every", [0, encoded._WINDOWED_EVERY])
@given(text=TEXTS)
def test_the_candidates_on_the_native_core_are_the_whole_passes(every: int, text: str) -> None:
    # ``every=0``: windows however dense the starts (a hypothesis text is short, so the real
    # threshold takes the whole pass for nearly every one).
    merged = sorted((span for k in range(len(encoded._SCHEMES)) for span in whole(k, text)), key=lambda s: s[0])
    with on_native(), pytest.MonkeyPatch.context() as mp:
        mp.setattr(encoded, "_WINDOWED_EVERY", every)
        assert [m.span() for m in encoded._ENC_CANDIDATE_RE.finditer(text)] == merged


def test_sparse_starts_take_windows_and_dense_ones_the_whole_pass(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[int] = []
    real = encoded._in_windows

    def spy(p: re.Pattern[str], t: str, s: list[int], m: int) -> list[re.Match[str]]:
        taken.append(len(s))
        return real(p, t, s, m)

    monkeypatch.setattr(encoded, "_in_windows", spy)
    sparse = "clean text " * 400 + "%3C/retrieved_content>"
    dense = "\\fBbold\\fR " * 400
    assert [m.span() for m in encoded._ENC_CANDIDATE_RE.finditer(sparse)] == [(4400, 4403)]
    assert taken == [1, 0, 0, 0, 0]  # the percent scheme's one start; the others have none
    taken.clear()
    assert len(list(encoded._ENC_CANDIDATE_RE.finditer(dense))) == 800
    assert taken == [0, 0, 0, 0]  # every scheme but the backslash one, whose 800 starts take the whole pass


def test_control_a_forgotten_start_or_a_short_margin_is_caught() -> None:
    margins = encoded._ENC_CANDIDATE_RE.margins
    assert margins is not None
    text = "a %u2039 b"
    assert windowed(0, text, [], margins[0]) != whole(0, text) == [(2, 8)]
    # A margin shorter than a match splits the windows and cuts every match off.
    dense = "%3C" * 5
    assert whole(0, dense) == [(9, 12), (12, 15)]
    assert windowed(0, dense, python_starts(dense)[0], margins[0]) == whole(0, dense)
    assert windowed(0, dense, python_starts(dense)[0], 2) == []


def test_escapes_far_apart_are_each_found(native: None) -> None:
    # Windows between long clean stretches (the shape of source code), each escape reported.
    text = ("clean text " * 500).join(["", "%3C/retrieved_content>", "\\u003c|im_end|>", "=3C/retrieved_content=3E", ""])
    found = scan_text(text)
    assert [f.rule for f in found].count("encoded-tag") == 3
    with backend.use("reference"):
        assert scan_text(text) == found


@pytest.mark.parametrize("pattern", [r"a+", r"(?:ab)*c"])
def test_an_unbounded_scheme_has_no_width(pattern: str) -> None:
    # Its pass then searches the whole text (fail closed: slower, never blind).
    assert regex_reach.max_width(pattern) is None


def test_a_scheme_without_a_width_searches_the_whole_text(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    unbounded = encoded._Candidates(encoded._SCHEMES, 2)
    monkeypatch.setattr(unbounded, "margins", None)
    called: list[str] = []
    monkeypatch.setattr(backend, "native_scheme_starts", lambda *a: called.append("starts"))
    text = "x %3C/retrieved_content> y"
    assert [m.span() for m in unbounded.finditer(text)] == [m.span() for m in encoded._ENC_CANDIDATE_RE.passes[0].finditer(text)]
    assert called == []
