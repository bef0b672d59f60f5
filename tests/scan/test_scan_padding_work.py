"""The work of a padded opener's finding is bounded per opener (stop 48, a red-team find).

``<`` + 40 NBSP repeated: every opener's lookahead gives up on padding, and the scanner looks for
the envelope tag the padding may hide (``tags._padding_finding``). It built the skeleton of the
256-character window one Python step per character, for every opener: 0.2 MB/s, and 0.9 MB/s with
a tag after the padding (stop 49). The lead, the skeleton, the first letter and the tag's end are
now each one call that reads the window in C (``reader.read_past_re``, ``backend.skeleton``,
``reader.first_alnum``). The work is counted (Python-level calls per opener, made while the finding
is built), never timed; the control is the per-character skeleton, which the same count catches.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

import pytest

from envelock import scan_text
from envelock.eye import backend
from envelock.eye import reader as modeleye
from envelock.scan import tags

SHAPES = ("<" + "\u00a0" * 40, "<" + "\u00a0" * 40 + "retrieved_content>")
OPENERS = 500
#: Calls per opener: the few steps of the finding, not one (or more) per character of its window.
BOUND = 60


def _calls(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """The Python and C function calls made inside ``tags._padding_finding`` while scanning ``text``."""
    calls = 0
    real: Callable[..., Any] = tags._padding_finding

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal calls
        if event in ("call", "c_call"):
            calls += 1

    def counted(*args: Any) -> Any:
        sys.setprofile(profile)
        try:
            return real(*args)
        finally:
            sys.setprofile(None)

    monkeypatch.setattr(tags, "_padding_finding", counted)
    scan_text(text)
    return calls


@pytest.mark.parametrize("unit", SHAPES)
def test_a_padded_opener_costs_a_bounded_number_of_calls(unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = unit * OPENERS
    found = scan_text(text)
    assert len(found) >= OPENERS and found[0].rule in ("padded-opener", "envelope-open-tag")
    calls = _calls(text, monkeypatch)
    assert OPENERS <= calls <= OPENERS * BOUND  # at least one call each: the count saw the findings


@pytest.mark.parametrize("unit", SHAPES)
def test_control_a_per_character_skeleton_is_caught(unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "skeleton", lambda window: "".join(modeleye.char_skeleton(c) for c in window))
    assert _calls(unit * OPENERS, monkeypatch) > OPENERS * BOUND


def test_the_skeleton_is_the_per_character_one_on_every_code_point() -> None:
    every = "".join(chr(cp) for cp in range(0x110000))
    assert modeleye.skeleton(every) == "".join(modeleye.char_skeleton(c) for c in every)
    assert backend.skeleton(every) == modeleye.skeleton(every)  # a lone surrogate: the Python passes


def test_first_alnum_is_is_alnum_on_every_code_point() -> None:
    assert all(modeleye.first_alnum("\u00a0" + chr(cp)) == (1 if modeleye.is_alnum(chr(cp)) else 2) for cp in range(0x110000))


#: A control token after padding (stop 50): read once per opener, on a window, never the whole text.
TOKEN_SHAPES = ("\u2039" + "\u2800" * 40 + "s> ", "<" + "\u2800" * 40 + "|abc> ", "<" + "\u2800" * 40 + "start_of_turn1 ")


def _longest_read(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """The longest text handed to ``backend.reading_kind_after`` while scanning ``text``."""
    longest = 0
    real = backend.reading_kind_after

    def counted(window: str, *args: Any) -> str:
        nonlocal longest
        longest = max(longest, len(window))
        return real(window, *args)

    monkeypatch.setattr(backend, "reading_kind_after", counted)
    scan_text(text)
    return longest


@pytest.mark.parametrize("unit", TOKEN_SHAPES)
def test_a_token_after_padding_is_read_on_a_window(unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = unit * OPENERS
    assert 0 < _longest_read(text, monkeypatch) <= 8 + modeleye.MAX_LOOKAHEAD + backend.REREAD_MARGIN < len(text)


def test_control_the_whole_text_per_opener_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "reading_kind_near", lambda text, pos, *rest: backend.reading_kind_after(text, pos, *rest))
    text = TOKEN_SHAPES[0] * OPENERS
    assert _longest_read(text, monkeypatch) == len(text)
