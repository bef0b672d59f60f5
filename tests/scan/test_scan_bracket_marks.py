"""A combining mark inside a bracket token's name (``[I\u0336NST]``) is a disguise, an error as in an
angle token (a red-team find: it was graded "differs only in case or spacing", a warning, so the
default gate passed it). Visible punctuation read past (``[ARGS…]``) stays a warning; the control
grades marks as spacing again and must see the warning."""

from __future__ import annotations

import unicodedata

import pytest

from envelock import scan_text
from envelock.eye import reader as modeleye
from envelock.scan import tags

pytestmark = pytest.mark.usefixtures("impl")

MARKED = ["[I\u0336NST]", "[AVAILABL\u0360E_TOOLS]", "[/I\u0301NST]"]


@pytest.mark.parametrize("text", MARKED)
def test_a_mark_in_a_bracket_token_is_an_error(text: str) -> None:
    assert [(f.rule, f.severity) for f in scan_text(text)] == [("chat-control-token", "error")]


def test_visible_punctuation_read_past_stays_a_warning() -> None:
    assert [f.severity for f in scan_text("[ARGS\u2026]")] == ["warning"]


def test_control_marks_graded_as_spacing_are_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    def old(span: str) -> bool:
        return "&" in span or any(
            c > "\x7f" and (modeleye.is_ignorable(c) or c in tags._BRACKETS or any(modeleye.readings(c))) for c in span
        )

    monkeypatch.setattr(tags, "_disguised", old)
    assert unicodedata.category("\u0336") == "Mn"
    assert [f.severity for f in scan_text(MARKED[0])] == ["warning"]
