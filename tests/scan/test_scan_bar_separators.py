"""A bar look-alike right after an opener is also a separator to the eye: ``<¦retrieved¦content>``
and ``<¦¦retrieved_content>`` spell the envelope tag with the bars read as separators. The defang
escapes them (the reading is not none), so the scanner must report them. A red-team find
(``fuzz_scan.py``): the reading took the bar shape first, no ``|>`` closed it, and the scanner
reported nothing. Every pair of bar look-alikes, on every implementation (the ``impl`` fixture);
the control is the scanner without the second reading."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import envelock.escape as escape
from envelock import scan_text
from envelock.eye import reader as modeleye
from envelock.eye.reader import BRACKET_OPENER_RE, OPENER_RE, read_bracket
from envelock.eye.tokens import RESERVED_NAMES
from envelock.scan import tags
from envelock.scan._base import SNIPPET_MAX, Context

pytestmark = pytest.mark.usefixtures("impl")

#: Every bar look-alike the eye also reads past as a separator inside a name (from the generated table).
SEPARATING_BARS = [
    b for b in modeleye.PIPE_CHARS if modeleye.read_after(f"<retrieved{b}content>", 1, modeleye.names_for()).kind == "reserved"
]


def _joined(lines: list[str]) -> tuple[str, list[int]]:
    """The lines as one text, and where each starts in it."""
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1
    return "\n".join(lines), starts


def _tags(text: str) -> list[tuple[str, int]]:
    return [(f.rule, f.offset) for f in scan_text(text) if f.rule == "envelope-open-tag"]


def test_the_table_holds_separating_bars() -> None:
    assert len(SEPARATING_BARS) >= 8  # the test below is not empty


def test_every_pair_of_bars_around_a_name_is_reported() -> None:
    """Every separating bar as the first and as the second bar (with the first, the middle and the
    last bar of the table as the other, and with itself), in both shapes, as lines of one text: each
    line the eye spells as the tag is escaped by the defang and reported at its opener."""
    unpiped = tags._unpiped(modeleye.names_for())
    k = len(SEPARATING_BARS)
    others = (SEPARATING_BARS[0], SEPARATING_BARS[k // 2], SEPARATING_BARS[-1])
    pairs = {(a, b) for a in SEPARATING_BARS for o in others for b in (o, a)} | {(o, b) for b in SEPARATING_BARS for o in others}
    lines = [
        text
        for a, b in sorted(pairs)
        for text in (f"<{a}retrieved{b}content>", f"<{a}{b}retrieved_content>")
        if modeleye.read_after(text, 1, unpiped).kind == "reserved"
    ]
    assert len(lines) >= len(pairs)  # most pairs spell it (the test is not empty)
    text, starts = _joined(lines)
    assert _tags(text) == [("envelope-open-tag", k) for k in starts]
    assert all(escape.defang(line) != line for line in lines[:: max(1, len(lines) // 200)])


#: ASCII bars before padding the lookahead gives up on: a pipe operator before blanks, a rule of
#: dashes (ASCII art), a bar reference before blanks. The second reading is padding, which is reported
#: only after a bar look-alike (or when a tag follows it).
PADDED_PIPES = ["x <|" + " " * 40 + "y", "<|" + "-" * 40, "a &lt;&verbar;" + " " * 40 + "b"]


@pytest.mark.parametrize("text", ["x <| f y", "<|<|<|", "a <|> b", "<| |>", "x <||> y", *PADDED_PIPES])
def test_a_pipe_operator_stays_quiet(text: str) -> None:
    assert scan_text(text) == []


def test_the_same_padding_after_a_bar_lookalike_is_reported() -> None:
    """The same texts, with a bar look-alike in place of the ASCII bar, are reported: the exception
    is the ASCII bar's alone (and the quiet cases above are quiet for that reason, not because the
    second reading found nothing)."""
    bar = SEPARATING_BARS[0]
    for text in PADDED_PIPES:
        lookalike = text.replace("<|", "<" + bar).replace("&verbar;", bar)
        assert [f.rule for f in scan_text(lookalike)] == ["padded-opener"], lookalike


def test_control_without_the_second_reading_misses_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tags, "_unpiped_reading", lambda text, pos, names, *bar: None)
    bar = SEPARATING_BARS[0]
    assert _tags(f"<{bar}retrieved{bar}content>") == []
    assert _tags(f"<{bar}{bar}retrieved_content>") == []


def test_every_bar_before_padding_and_a_name_is_reported() -> None:
    """A bar opener that is no token, then padding the lookahead gives up on before the name (a
    second red-team find, from CI's bounded fuzz run): the second reading is padding, and the tag
    after it is reported as an error at its opener, for every separating bar, as lines of one text."""
    pad = "\x00" * 76
    lines = [f"<{b}retrieved{pad}content>" for b in SEPARATING_BARS]
    text, starts = _joined(lines)
    assert _tags(text) == [("envelope-open-tag", k) for k in starts]
    assert all(escape.defang(line) != line for line in lines)


def test_control_without_the_padding_reading_misses_them(monkeypatch: pytest.MonkeyPatch) -> None:
    real = tags._unpiped_reading

    def tags_only(text: str, pos: int, names: modeleye.Names, *bar: Any) -> modeleye.Reading | None:
        r = real(text, pos, names, *bar)
        return None if r is None or r.kind == "padding" else r

    monkeypatch.setattr(tags, "_unpiped_reading", tags_only)
    text = f"<{SEPARATING_BARS[0]}retrieved{chr(0) * 76}content>"
    assert escape.defang(text) != text
    # The tag is missed: the NULs, and the bar shape's own warning (its name read up to the lookahead since stop 50)
    assert [(f.rule, f.severity) for f in scan_text(text)] == [("chat-control-token", "warning"), ("control-character", "warning")]


@pytest.mark.parametrize("text", ["<|a:retrieved_content>", "<|:retrieved_content>"])
def test_an_ascii_bar_read_as_a_letter_before_a_namespace_is_reported(text: str) -> None:
    """The ASCII bar too: read as a letter it starts a namespace prefix, and the tag follows it
    (reported as a Gemma-shape warning only, before the second reading)."""
    assert escape.defang(text) != text
    assert [(f.rule, f.severity) for f in scan_text(text)] == [("envelope-open-tag", "error")]


def _encoded(text: str) -> list[tuple[str, int]]:
    return [(f.rule, f.offset) for f in scan_text(text) if f.rule == "encoded-tag"]


@pytest.mark.parametrize("escape_lt", ["\\u003c", "%3C", "\\x3c"])
def test_an_encoded_opener_before_bar_separators_is_reported(escape_lt: str) -> None:
    """The encoded family reads the decoded text with the same second reading (``_hit_after``): an
    escaped ``<`` before every separating bar, as lines of one text, is an ``encoded-tag`` at the escape."""
    lines = [f"{escape_lt}{b}retrieved{b}content>" for b in SEPARATING_BARS]
    text, starts = _joined(lines)
    assert _encoded(text) == [("encoded-tag", k) for k in starts]


def test_control_the_encoded_family_without_the_second_reading_misses_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tags, "_unpiped_reading", lambda text, pos, names, *bar: None)
    bar = SEPARATING_BARS[0]
    assert _encoded(f"\\u003c{bar}retrieved{bar}content>") == []


# _first_danger (decoded text: base64, hex, binary blobs) reads its openers in one native pass and
# reads a bar opener's second reading once per distinct text after it; the reference reads every
# opener with the Python reader.

CTX = Context(tuple(RESERVED_NAMES), None)


def reference_first_danger(text: str) -> str | None:
    names = tags._name_maps(CTX)[0]
    for m in OPENER_RE.finditer(text):
        end = m.end()
        if end < len(text) and text[end] == "\\":
            continue
        hit = tags._hit_after(text, end, names, CTX)
        if hit is not None:
            return modeleye.visible(text[m.start() : hit.end][:SNIPPET_MAX])
    for m in BRACKET_OPENER_RE.finditer(text):
        r = read_bracket(text, m.end(), names)
        if r.kind in ("token", "bar") and text[m.end() : m.end() + 1] != "\\":
            return modeleye.visible(text[m.start() : r.end][:SNIPPET_MAX])
    for start, end in modeleye.exact_tokens(text, names):
        after = modeleye.first_piece_end(text, start)
        if text[after : after + 1] != "\\":
            return modeleye.visible(text[start:end][:SNIPPET_MAX])
    return None


DECODED = [
    "<|", "<|a", ":", "a:", "retrieved", "_", "content", ">", "|>", "<", "\u00a6", "\uffe4", "im_end", " ", "\\",
    "&verbar;", "&gt;", "[INST]", "[", "]", "<s>", "\x00" * 40, "x", "\n", ">>TITLE<<",
]  # fmt: skip


@given(st.lists(st.sampled_from(DECODED), max_size=60).map("".join))
def test_first_danger_equals_reading_every_opener(text: str) -> None:
    assert tags._first_danger(text, CTX) == reference_first_danger(text)


#: A bar opener that reads as nothing either way (a second bar that does not close ends its name), then
#: one with the same first characters after it that spells the tag with the bar read as a letter.
QUIET_THEN_TAG = "<|a:x|y> <|a:retrieved_content>"


@pytest.mark.parametrize("text", [QUIET_THEN_TAG, "<|<|<|<|" * 50 + "<|a:retrieved_content>"])
def test_first_danger_finds_a_tag_after_quiet_bars(text: str) -> None:
    assert tags._first_danger(text, CTX) == reference_first_danger(text) is not None


def test_control_a_too_short_quiet_window_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tags, "_QUIET_WINDOW", 3)
    assert tags._first_danger(QUIET_THEN_TAG, CTX) is None


#: An opener before padding that is code layout (quiet), then one whose first characters after it are
#: the same and whose padding hides the tag (decoded text reports an opener the lookahead gave up on
#: once per distinct text after it, as it does a bar opener).
LAYOUT_THEN_TAG = "<" + " " * 40 + "0: a\n" + "<" + " " * 40 + "retrieved_content>"


def test_first_danger_finds_a_tag_after_quiet_padding() -> None:
    assert tags._first_danger(LAYOUT_THEN_TAG, CTX) == reference_first_danger(LAYOUT_THEN_TAG) is not None


def test_control_a_too_short_padding_window_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tags, "_PADDING_WINDOW", 3)
    assert tags._first_danger(LAYOUT_THEN_TAG, CTX) is None
