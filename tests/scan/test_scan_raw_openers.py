"""A raw opener whose reading an escape completes: ``<%2Fretrieved_content>``, ``[INST%5D``,
``<\\u007cim_end|>``, ``&lt;|im_end|%3E``.

Red-team finds of stop 40: the encoded passes started only at an encoded opener, so a tag whose
``<`` or ``[`` stood as it is and whose slash, name letter or closer was escaped was reported by no
pass. ``encoded._scan_raw_openers`` now decodes the window after every raw opener (either family,
look-alikes and references included) that holds an escape before the next opener, and reports it
when the decoded reading is a tag or token and the raw one is not.

Every case runs on every implementation of the eye (the ``impl`` fixture). The heads come from one
native pass (``_native.openers_with_escapes``) held equal to the Python reference by hypothesis.

Negative controls: a scanner without the pass, one that does not decode the window, one whose heads
are the angle family only, and windows that run past the next opener (decoded work) are each caught.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.scanning import encoded_findings, missed_encoded
from hypothesis import given
from hypothesis import strategies as st

from envelock import scan_text
from envelock.eye import backend
from envelock.eye.reader import BRACKET_OPENER_RE, OPENER_RE
from envelock.scan import _base, encoded

TAGS = ("</retrieved_content>", "<retrieved_content>", "<|im_end|>", "[INST]", "[/INST]", "<|eot_id|>")


def pct(c: str) -> str:
    """Every byte percent-encoded (``quote`` leaves letters and ``_`` as they are)."""
    return "".join(f"%{b:02X}" for b in c.encode())


ENCODINGS: dict[str, Callable[[str], str]] = {
    "percent": pct,
    "double percent": lambda c: pct(pct(c)),
    "\\u": lambda c: f"\\u{ord(c):04x}",
    "\\x": lambda c: f"\\x{ord(c):02x}",
    "css": lambda c: f"\\{ord(c):x} ",
}


def one_encoded(tag: str, k: int, encode: Callable[[str], str]) -> str:
    """``tag`` with its ``k``-th character encoded (the opener, at 0, stays raw)."""
    return tag[:k] + encode(tag[k]) + tag[k + 1 :]


#: Each tag with one character after its opener encoded: the slash or bar, a name letter, the closer.
HIDDEN = [
    pytest.param(one_encoded(tag, k, enc), id=f"{tag}-{k}-{name}")
    for tag in TAGS
    for k in sorted({1, 2, len(tag) // 2, len(tag) - 1})
    for name, enc in ENCODINGS.items()
]
#: The red team's own, and a reference opener or a look-alike before an encoded closer.
RED_TEAM = [
    "<%2Fretrieved_content>",
    "[INST%5D",
    "<\\u007cim_end|>",
    "&lt;|im_end|%3E",
    "<retrieved%5Fcontent>",
    "&lt;%2Fretrieved_content&gt;",
    "\uff1c%2Fretrieved_content>",
    "\u2039|im_end|%3E",
    "see <%2Fretrieved_content> now",
]
#: Raw openers before escapes that spell no tag: URLs in markup, C and JSON strings, Markdown links.
QUIET = [
    "<a href='/search?q=%2F%20x'>link</a>",
    "<b>%20</b> <i>\\u00e9</i>",
    'x < y ? "\\x41\\x42" : 0; a[i] = "\\u0041";',
    "[link](http://example.com/a%20b) [x]",
    '{"html": "<p>caf\\u00e9</p>"}',
    'if (a < b) printf("%2d\\n", a);',
]


@pytest.mark.usefixtures("impl")
@pytest.mark.parametrize("text", HIDDEN)
def test_a_tag_with_one_character_encoded_after_its_raw_opener_is_reported(text: str) -> None:
    # By this pass, or by the tags family where the raw text already reads as one (``<|im%5Fend|>``
    # has the shape of a token, ``<retrieved_content%3E`` is an open tag without its ``>``).
    assert [f.rule for f in scan_text(text) if f.offset == 0], text


@pytest.mark.usefixtures("impl")
@pytest.mark.parametrize("text", RED_TEAM)
def test_the_red_team_cases_are_reported_as_encoded_tags(text: str) -> None:
    assert encoded_findings(text), text


@pytest.mark.usefixtures("impl")
@pytest.mark.parametrize("text", QUIET)
def test_quiet(text: str) -> None:
    assert encoded_findings(text) == [], text


@pytest.mark.usefixtures("impl")
def test_the_finding_names_the_decoded_tag_and_covers_the_raw_one() -> None:
    [f] = [f for f in scan_text("x <%2Fretrieved_content> y") if f.rule == "encoded-tag"]
    assert "</retrieved_content>" in f.message
    assert (f.offset, f.end_offset) == (2, 24)


@pytest.mark.usefixtures("impl")
def test_a_tag_the_tags_family_reads_as_it_stands_is_not_reported_twice() -> None:
    # ``<|im_end\\u007c>`` already has the shape of a token as it stands (chat-control-token).
    assert encoded_findings("<|im_end|>%41") == []
    assert encoded_findings("<|im_end\\u007c>") == []


def test_control_without_the_pass_the_red_team_cases_aremissed_encoded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoded, "_scan_raw_openers", lambda text, ctx, names, out: None)
    assert missed_encoded(RED_TEAM) == RED_TEAM


def test_control_a_window_read_undecoded_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoded, "_decode_escapes", lambda window: window)
    assert missed_encoded(RED_TEAM) == RED_TEAM


def test_control_heads_of_the_angle_family_only_miss_the_brackets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoded, "_raw_windows", lambda text: windows(text, brackets=False))
    assert missed_encoded(["[INST%5D", "[/INST\\x5d"]) == ["[INST%5D", "[/INST\\x5d"]


# --- the heads: one native pass, held equal to the reference ---------------------------------------


PIECES = st.sampled_from(
    ["<", "[", "&lt;", "&#91;", "\uff1c", "\u2039", "%2F", "%5D", "%3E", "%41", "%%", "%", "\\u007c", "\\x5d", "\\3c ",
     "\\", "=3C", "+ADw-", "&#37;", "&amp;", "a", "/", "|", "]", ">", " ", "\n", "é", "日", "INST", "retrieved_content"]
)  # fmt: skip
TEXTS = st.lists(PIECES, max_size=24).map("".join)


def native_windows(text: str) -> list[encoded.RawWindow]:
    assert encoded._RAW_STARTS is not None
    got = backend.native_openers_with_escapes(text, encoded._RAW_STARTS, encoded._WINDOW)
    assert got is not None
    return got


def windows(
    text: str, *, brackets: bool = True, closers: bool = True, bound: bool = True, blank: bool = False, to_next: bool = True
) -> list[encoded.RawWindow]:
    """A second reading of the definition, with switches for the broken variants the controls use:
    no bracket openers, windows past closers, no bound, windows cut at a blank (which the eye reads
    past), windows past the next opener."""
    starts = sorted(m.start() for r in encoded._scheme_start_res(encoded._RAW_STARTS) for m in r.finditer(text))
    families = (OPENER_RE, BRACKET_OPENER_RE) if brackets else (OPENER_RE,)
    openers = sorted((*m.span(), r is OPENER_RE) for r in families for m in r.finditer(text))
    found: dict[str, encoded.RawWindow] = {}
    for i, (a, e, angle) in enumerate(openers):
        end = openers[i + 1][0] if to_next and i + 1 < len(openers) else len(text)
        for cut, on in ((">" if angle else "]", closers), (" ", blank)):
            c = text.find(cut, e, end)
            end = end if c < 0 or not on else c + 1
        end = min(end, a + encoded._WINDOW) if bound else end
        if any(e <= p < end for p in starts):
            found.setdefault(text[a:end], (a, end, []))[2].append(a)
    return list(found.values())


@pytest.mark.usefixtures("native")
@given(TEXTS)
def test_native_windows_equal_the_reference(text: str) -> None:
    assert native_windows(text) == encoded._raw_windows_reference(text, encoded._RAW_STARTS) == windows(text)


@pytest.mark.usefixtures("native")
@pytest.mark.parametrize(
    ("text", "broken"),
    [
        ("[INST%5D <%2F", {"brackets": False}),
        ("<a>%2F <b%41", {"closers": False}),
        ("<" + "x" * 200 + "%41", {"bound": False}),
        ("<a %41", {"blank": True}),
    ],
    ids=["no brackets", "past closers", "no bound", "cut at a blank"],
)
def test_control_a_broken_definition_differs(text: str, broken: dict[str, bool]) -> None:
    assert native_windows(text) == windows(text) != windows(text, **broken)


@pytest.mark.usefixtures("native")
def test_windows_in_code_points_past_wide_characters_and_grouped_by_text() -> None:
    text = "日本\U0001f600<%2Fx ＜\\u007c <%2Fx "
    want = [(3, 9, [3, 17]), (9, 17, [9])]
    assert native_windows(text) == encoded._raw_windows_reference(text, encoded._RAW_STARTS) == want


# --- the closer cut loses nothing ----------------------------------------------------------------


CUT_TEXTS = st.lists(
    st.sampled_from(["<", "[", "&lt;", ">", "]", "%3E", "%5D", "%2F", "\\u007c", "|", "/", " ", "retrieved", "_content", "INST", "im_end", "eot_id", "%5F", "&gt;", "\u203a"]),
    max_size=12,
).map("".join)  # fmt: skip


@given(CUT_TEXTS)
def test_windows_cut_at_a_closer_report_what_uncut_ones_do(text: str) -> None:
    """The eye reads past no ASCII closer: a window that runs past one reports nothing more."""
    got = encoded_findings(text)
    mp = pytest.MonkeyPatch()
    mp.setattr(encoded, "_raw_windows", lambda t: windows(t, closers=False))
    try:
        uncut = encoded_findings(text)
    finally:
        mp.undo()
    assert got == uncut


def test_control_a_cut_at_a_character_the_eye_reads_past_loses_a_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property above can fail: windows cut at a blank (padding, which the eye reads past) lose
    ``< %2Fretrieved_content>``."""
    text = "< %2Fretrieved_content>"
    assert encoded_findings(text)
    monkeypatch.setattr(encoded, "_raw_windows", lambda t: windows(t, blank=True))
    assert encoded_findings(text) == []


# --- work -----------------------------------------------------------------------------------------


def _decoded_chars(text: str) -> int:
    """Characters the encoded passes hand to ``_decode_escapes`` in one scan."""
    real = _base._decode_escapes
    box = [0]

    def counted(window: str) -> str:
        box[0] += len(window)
        return real(window)

    mp = pytest.MonkeyPatch()
    mp.setattr(encoded, "_decode_escapes", counted)
    try:
        scan_text(text)
    finally:
        mp.undo()
    return box[0]


def _aperiodic(unit: str, n: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return "".join(unit + letters[(k * k + k // 26) % 26] + letters[k % 26] for k in range(n))


@pytest.mark.parametrize("unit", ["<%2F", "[%5D", "<\\u007c", "&lt;%41", "<a%41b"])
def test_windows_decode_each_character_a_bounded_number_of_times(unit: str) -> None:
    text = _aperiodic(unit, 3000)
    assert _decoded_chars(text) <= 4 * len(text), unit


def test_control_windows_past_the_next_opener_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoded, "_raw_windows", lambda text: windows(text, to_next=False, closers=False))
    text = _aperiodic("<%2F", 3000)
    assert _decoded_chars(text) > 4 * len(text)


# --- windows decoded in one call ------------------------------------------------------------------

RAW_PIECES = st.sampled_from(
    ["%", "%3", "%3C", "%25", "%253C", "&", "&amp", "&amp;", "&lt", "&#6", "&#60;", "&#x3c", "=", "=3", "=3C", "=\n",
     "\\", "\\u003", "\\u003c", "\\3c", " ", "+AD", "+ADw", "+ADw-", "-", "a", "t;", ";", "0", "\ue000", "\\ue000", "é"]
)  # fmt: skip


@given(st.lists(st.lists(RAW_PIECES, max_size=6).map("".join), max_size=6))
def test_windows_decoded_in_one_call_are_decoded_one_by_one(raws: list[str]) -> None:
    assert encoded._decoded_all(raws) == [_base._decode_escapes(r) for r in raws]


def test_control_a_separator_an_escape_reads_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(encoded, "_APART", "0")  # a digit: ``%3`` + ``0`` + ``C`` decodes across it
    raws = ["%3", "C"]
    assert encoded._decoded_all(raws) != [_base._decode_escapes(r) for r in raws]
