"""A letter or number drawn as a bar inside a bar token's name (``<|Ⅰm_end|>``, ``‹|eot_ǀd|>``,
``‹|x丨y|>``): the defang escapes it, so the scanner reports it (a red-team find: the scanner took
the first bar look-alike for the closing bar, found no ``>`` after it and gave up). A bar that is no
letter still ends the shape (``<|a|b`` is a pipe operator), and the control makes the first
character stop the shape as before."""

from __future__ import annotations

import pytest

import envelock.escape as escape
from envelock import scan_text
from envelock.eye import reader as modeleye
from envelock.scan import tags

pytestmark = pytest.mark.usefixtures("impl")

LETTER_BARS = ["<|\u2160m_end|>", "\u2039|eot_\u01c0d|>", "\u2039|x\u4e28y|>", "<|im_\u01c0nd|>"]


@pytest.mark.parametrize("text", LETTER_BARS)
def test_a_letter_drawn_as_a_bar_is_read_into_the_name(text: str) -> None:
    assert escape.defang(text) != text  # the defang escapes it ...
    assert [f.rule for f in scan_text(text)] == ["chat-control-token"]  # ... and the scanner reports it


@pytest.mark.parametrize("text", ["x <|a|b", "<|", "<||>", "f <| g | h"])
def test_a_bar_that_is_no_letter_still_ends_the_shape(text: str) -> None:
    assert scan_text(text) == []


def test_control_stopping_at_every_bar_misses_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tags, "_PIPE_FIRST_STOPS", tags._PIPE_STOPS)
    real = tags._pipe_token

    def gives_up(text: str, i: int, slash: bool) -> tags._Hit | None:
        hit = real(text, i, slash)
        # The old loop: the first bar look-alike ended the name, closer or not.
        j = next((k for k in range(i, len(text)) if text[k] in modeleye._PIPE), None)
        if hit is not None and j is not None and text[j].isalnum():
            return None
        return hit

    monkeypatch.setattr(tags, "_pipe_token", gives_up)
    assert scan_text(LETTER_BARS[0]) == []
