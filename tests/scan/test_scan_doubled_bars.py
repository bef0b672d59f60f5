"""Bars doubled after the opener: ``<||im_end|>``. The defang escapes every one of these (the eye
reads a bar opener there), and the scanner reported none (a parity gap pinned since stop 44,
closed in stop 49): its bar-token walker gave up on a bar as the first character of the name. The
leading bars are now read past, as the eye reads them, in one regex step; a bar written as a
reference too. Every bar that is no letter, on every implementation (the ``impl`` fixture); the
control is the walker's old first-character stop."""

from __future__ import annotations

import re

import pytest

import envelock.escape as escape
from envelock import scan_text
from envelock.eye import reader
from envelock.eye import reader as modeleye
from envelock.scan import tags

pytestmark = pytest.mark.usefixtures("impl")

#: The bars read past before a name: every bar look-alike that is no letter or number.
LEADING_BARS = sorted(b for b in modeleye.PIPE_CHARS if not b.isalnum())


def _token_rules(text: str) -> list[tuple[str, str]]:
    return [(f.rule, f.severity) for f in scan_text(text)]


@pytest.mark.parametrize("bar", LEADING_BARS)
def test_a_doubled_bar_before_a_control_token_is_reported(bar: str) -> None:
    text = f"<|{bar}im_end|>"
    assert escape.defang(text) != text  # the defang escapes it: the scanner must say so
    assert _token_rules(text) == [("chat-control-token", "error")], text


@pytest.mark.parametrize("text", ["<|||im_end|>", "<|&#124;im_end|>", "<|&verbar;|im_end|>", "x <|| y >"])
def test_more_bars_and_references_are_read_past(text: str) -> None:
    assert escape.defang(text) != text
    assert len(_token_rules(text)) == 1, text


@pytest.mark.parametrize("text", ["<||>", "<|| |>", "f <|| (a, b)", "a <||> b", "x <|||> y"])
def test_bars_without_a_name_stay_quiet(text: str) -> None:
    """F#'s ``<||`` and empty bar shapes carry no name: nothing to report."""
    assert scan_text(text) == []


def test_the_work_is_one_step_per_opener() -> None:
    """``<``, 62 bars and ``>``, repeated: the leading bars are one regex match, not a Python step
    each (counted as ``decode_at`` calls; the control is a walker that decodes each bar)."""
    calls = 0
    real = reader.decode_at

    def counted(text: str, i: int) -> tuple[str, int]:
        nonlocal calls
        calls += 1
        return real(text, i)

    text = ("<" + "|" * 62 + ">") * 200
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(tags, "decode_at", counted)
        scan_text(text)
        quiet = calls
        calls = 0
        patch.setattr(tags, "_LEAD_BARS_RE", re.compile(""))
        scan_text(text)
    assert quiet <= 200 * 4 < calls


def test_control_the_old_first_character_stop_misses_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tags, "_PIPE_FIRST_STOPS", tags._PIPE_FIRST_STOPS | frozenset(LEADING_BARS))
    monkeypatch.setattr(tags, "_LEAD_BARS_RE", re.compile(""))
    monkeypatch.setattr(tags, "_pipe_token", lambda text, i, slash: None if text[i] in LEADING_BARS else real(text, i, slash))
    assert _token_rules("<||im_end|>") == []


real = tags._pipe_token
