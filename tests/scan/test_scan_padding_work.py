"""The work of a padded opener's finding is bounded per opener (stop 48, a red-team find).

``<`` + 40 NBSP repeated: every opener's lookahead gives up on padding, and the scanner looks for
the envelope tag the padding may hide (``tags._padded_hit``). It built the skeleton of the whole
256-character window, one Python step per character, for every opener: 0.5 MB/s. The lead and the
runs of skipped characters are now read by a regex, and the skeleton only as far as a reserved name
is still pending. The work is counted (skeleton steps per opener), never timed; the control is the
whole-window skeleton, which the same count catches.
"""

from __future__ import annotations

import pytest

from envelock import scan_text
from envelock.eye import reader as modeleye
from envelock.scan import tags

SHAPES = ("<" + "\u00a0" * 40, "<" + "\u00a0" * 40 + "retrieved_content>")


def _steps(text: str, monkeypatch: pytest.MonkeyPatch) -> int:
    """The skeleton steps of scanning ``text`` (the monkeypatch is undone by its fixture)."""
    calls = 0
    real = modeleye.char_skeleton

    def counted(ch: str) -> str:
        nonlocal calls
        calls += 1
        return real(ch)

    monkeypatch.setattr(modeleye, "char_skeleton", counted)
    scan_text(text)
    return calls


@pytest.mark.parametrize("unit", SHAPES)
def test_a_padded_opener_costs_a_bounded_number_of_skeleton_steps(unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = unit * 500
    found = scan_text(text)
    assert len(found) >= 500 and found[0].rule in ("padded-opener", "envelope-open-tag")
    # At most the longest reserved name's letters and a few more per opener (the window is 256).
    assert _steps(text, monkeypatch) <= 500 * 40


def test_control_the_whole_window_skeleton_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tags, "_skeleton_head", lambda window, start, names: modeleye.skeleton(window[start:]))
    assert _steps(SHAPES[0] * 500, monkeypatch) > 500 * 40
