"""The native spotlight transforms (``envelock._native.datamark`` ...) equal the Python reference.

``envelock.envelope.spotlight.datamark``, ``undatamark``, ``interleave`` and ``uninterleave`` are the
reference; with the native implementation chosen, compose and parse call the Rust functions
(``rust/envelock-core/src/spotlight.rs``). Differential checks over text built from the
characters that matter (every blank of ``BLANK_RANGES``, the marker, no-space-script
letters of ``INTERLEAVE_RANGES``, marks and joiners between them, ASCII), for markers drawn from
``MARKER_CANDIDATES`` plus the paper's ``ˆ``, and seeds across the 64-bit range (one- and two-word
MT19937 keys).

Negative controls: a reference that forgets to double a literal marker, and one that draws
interleave markers with probability 1/3, must make the differential checks fail.

Skipped when ``envelock._native`` is not built; ``ENVELOCK_REQUIRE_NATIVE=1`` fails instead.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest
from helpers.data import NATIVE_HOW, optional_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envelock import Spotlight
from envelock.envelope import spotlight as spotlight
from envelock.eye import backend
from envelock.eye.charsets import char_class
from envelock.eye.unicode_tables import BLANK_RANGES, INTERLEAVE_RANGES, MARKER_CANDIDATES, SKIP_RANGES

optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)
from envelock import _native  # noqa: E402 -- after the check, which skips (or fails in CI) without the core

#: The blank table at each range's ends and middle (all 960,000 would drown the letters and markers
#: below in a uniform draw, and rebuilding the list per example costs seconds).
SPACES = sorted({chr(cp) for lo, hi in BLANK_RANGES for cp in (lo, (lo + hi) // 2, hi)})
LETTERS = [chr(lo) for lo, _ in INTERLEAVE_RANGES] + [chr(hi) for _, hi in INTERLEAVE_RANGES] + list("漢字かなカタカナผมชอบ")
MARKS = [chr(lo) for lo, hi in SKIP_RANGES[:40]] + ["\u200d", "\ufe0f", "\u0e31"]
MARKERS = ["\u02c6", *(chr(cp) for cp in MARKER_CANDIDATES[::37])]


def _text(marker: str) -> st.SearchStrategy[str]:
    alphabet = st.one_of(
        st.sampled_from(SPACES), st.sampled_from([*LETTERS, *MARKS, marker, marker, " ", " ", "a", "b", "<", "\\", "\n"])
    )
    return st.lists(alphabet, max_size=60).map("".join) | st.text(max_size=40)


def _marker_and_text() -> st.SearchStrategy[tuple[str, str]]:
    return st.sampled_from(MARKERS).flatmap(lambda m: st.tuples(st.just(m), _text(m)))


SEEDS = st.integers(min_value=0, max_value=2**64 - 1)
FAST = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_datamark(reference: Callable[[str, str], str], marker: str, text: str) -> None:
    assert _native.datamark(text, marker) == reference(text, marker)
    marked = reference(text, marker)
    assert _native.undatamark(marked, marker) == spotlight.undatamark(marked, marker) == text
    # Any text decodes the same way (verify undoes first, then compares the re-encoding).
    assert _native.undatamark(text, marker) == spotlight.undatamark(text, marker)


def check_interleave(reference: Callable[[str, str, str], str], marker: str, text: str, seed: int) -> None:
    hexseed = f"{seed:016x}"
    assert _native.interleave(text, marker, seed) == reference(text, marker, hexseed)
    marked = reference(text, marker, hexseed)
    assert _native.uninterleave(marked, marker) == spotlight.uninterleave(marked, marker) == text
    assert _native.uninterleave(text, marker) == spotlight.uninterleave(text, marker)


@FAST
@given(_marker_and_text())
def test_datamark_native_equals_reference(mt: tuple[str, str]) -> None:
    check_datamark(spotlight.datamark, *mt)


@FAST
@given(_marker_and_text(), SEEDS)
def test_interleave_native_equals_reference(mt: tuple[str, str], seed: int) -> None:
    check_interleave(spotlight.interleave, *mt, seed)


def test_interleave_long_cjk_run_matches_cpython_mt() -> None:
    """A 20,000-letter run: 19,999 draws, more than one MT19937 state refill (624 words)."""
    text = "".join(random.Random(7).choice(LETTERS) for _ in range(20_000))
    for seed in (0, 1, 2**32 - 1, 2**32, 2**63 + 12345, 2**64 - 1):
        check_interleave(spotlight.interleave, "\u02c6", text, seed)


def test_control_datamark_without_doubling_is_caught() -> None:
    def no_doubling(text: str, marker: str) -> str:
        return spotlight.datamark(text.replace(marker, "\x00"), marker).replace("\x00", marker)

    with pytest.raises(AssertionError):
        check_datamark(no_doubling, "\u02c6", "a \u02c6 b")


def test_control_interleave_at_another_rate_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(spotlight, "INTERLEAVE_RATE", 1 / 3)
    text = "".join(LETTERS[:20]) * 20
    with pytest.raises(AssertionError):
        for seed in range(8):
            check_interleave(spotlight.interleave, "\u02c6", text, seed)


#: Markers that are themselves blanks of ``BLANK_RANGES`` (every marker candidate is: a middle dot, a
#: bullet, a word divider...); a marker is never a blank of its own turn (``spotlight._blank_class``).
BLANK_MARKERS = ["\u00b7", "\u2022", *(chr(cp) for cp in MARKER_CANDIDATES[::97])]
BLANK_MARKER_TEXTS = ["a\u00b7b c", "\u00b7 \u00b7\u00b7 x \u00b7", "a \u2022 b\u2022\u2022c  d", "\u2022", " \u00b7", "\u00b7 ", "漢\u00b7字 かな"]


def test_markers_are_blanks_of_the_table_but_not_of_their_turn() -> None:
    assert all(any(lo <= ord(m) <= hi for lo, hi in BLANK_RANGES) for m in BLANK_MARKERS)
    assert all(spotlight.marker_problem(m) is None for m in BLANK_MARKERS)
    for marker in BLANK_MARKERS:
        for text in [*BLANK_MARKER_TEXTS, *(t.replace("\u00b7", marker) for t in BLANK_MARKER_TEXTS)]:
            check_datamark(spotlight.datamark, marker, text)
            for seed in (0, 2**40 + 7):
                check_interleave(spotlight.interleave, marker, text, seed)
    assert _native.datamark("a\u00b7b c", "\u00b7") == "a\u00b7\u00b7b\u00b7c"


def test_control_a_marker_read_as_a_blank_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The old rule (every blank of ``BLANK_RANGES``, the marker too) must differ from the native one."""
    monkeypatch.setattr(spotlight, "_blank_class", lambda marker: char_class(BLANK_RANGES))
    spotlight._marker_res.cache_clear()
    try:
        with pytest.raises(AssertionError):
            check_datamark(spotlight.datamark, "\u00b7", "a\u00b7b c")
        with pytest.raises(AssertionError):
            check_interleave(spotlight.interleave, "\u00b7", "a\u00b7b", 0)
    finally:
        monkeypatch.undo()
        spotlight._marker_res.cache_clear()


def test_transform_dispatch_follows_the_chosen_implementation(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the native implementation chosen, ``transform`` calls Rust (a planted Python datamark is
    not used); with a Python one, it calls the Python reference (the planted one is)."""
    monkeypatch.setattr(spotlight, "datamark", lambda text, marker: "planted")
    spot = Spotlight("datamark", "\u02c6")
    monkeypatch.setattr(backend, "_impl", backend.IMPLEMENTATIONS["native"])
    assert spotlight.transform("a b", spot) == "a\u02c6b"
    monkeypatch.setattr(backend, "_impl", backend.IMPLEMENTATIONS["reference"])
    assert spotlight.transform("a b", spot) == "planted"
