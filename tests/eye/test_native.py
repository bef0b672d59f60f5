"""The native core (``envelock._native``, Rust) equals the Python reference, byte for byte.

Differential tests over hypothesis text built from the generated tables (look-alike
letters, skipped characters, openers, bars, brackets, closers, character references
with ``&``-layers, legacy names and long zero runs): ``defang``, ``undefang`` and
``defang_body`` at every level, ``read_after`` and ``read_bracket`` at every position,
``openers`` against the Python loop over ``OPENER_RE``/``BRACKET_OPENER_RE``, and
``defang_many``.

Negative controls: a reference with one reading removed, or with its non-ASCII skip
characters removed (monkeypatched), must make the same differential checks fail.

Skipped when ``envelock._native`` is not built; ``ENVELOCK_REQUIRE_NATIVE=1`` turns the
skip into a failure.
"""

from __future__ import annotations

import html.entities
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from helpers.data import NATIVE_HOW, ROOT, optional_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envelock import escape
from envelock.escape import Level
from envelock.eye import backend
from envelock.eye import reader as me
from envelock.eye import reference as _reference
from envelock.eye.tokens import ANGLE_TOKEN_NAMES, BRACKET_TOKEN_NAMES, RESERVED_NAMES
from envelock.eye.unicode_tables import (
    AMP_REFERENCES,
    GT_LOOKALIKES,
    LBRACKET_LOOKALIKES,
    LT_LOOKALIKES,
    LT_NUMERIC,
    LT_REFERENCES,
    PIPE_LOOKALIKES,
    RBRACKET_LOOKALIKES,
    READINGS,
    SKIP_RANGES,
    SLASH_LOOKALIKES,
)

optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)
from envelock import _native  # noqa: E402 -- after the check, which skips (or fails in CI) without the core

LEVELS: tuple[Level, ...] = ("reserved", "markup", "xml")
CUSTOM = ("memory", "retrieved_content", "t\u043eol")

# ---------------------------------------------------------------------------
# The reference, as the oracle
# ---------------------------------------------------------------------------


def ref_defang(text: str, level: Level, reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    return _reference.defang(text, level, reserved)


def ref_undefang(text: str, level: Level, reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    return _reference.undefang(text, level, reserved)


def ref_defang_body(text: str, level: Level, reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    with backend.use("reference"):
        return escape.defang_body(text, level=level, reserved=reserved)


def ref_undefang_body(text: str, level: Level, reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    with backend.use("reference"):
        return escape.undefang_body(text, level=level, reserved=reserved)


def _names(reserved: tuple[str, ...], tokens: bool, pipes: bool) -> me.Names:
    names = me.names_for(reserved)
    if tokens and pipes:
        return names
    # spelled: the reserved names as written (their separator positions, the letter stand-in rule);
    # without it a Names built from the skeletons alone reads no stand-in at a separator position.
    return me.Names(names.reserved, names.tokens if tokens else (), pipes, spelled=names.spelled)


def ref_read_after(text: str, pos: int, reserved: tuple[str, ...], tokens: bool = True, pipes: bool = True) -> tuple[Any, ...]:
    r = me.read_after(text, pos, _names(reserved, tokens, pipes))
    return (r.kind, r.name, r.slash, r.end)


def ref_read_bracket(text: str, pos: int) -> tuple[Any, ...]:
    r = me.read_bracket(text, pos, me.names_for())
    return (r.kind, r.name, r.slash, r.end)


def ref_openers(text: str, reserved: tuple[str, ...]) -> list[tuple[Any, ...]]:
    """The Python loop the scanner runs: every opener whose reading is not none or that is followed by ``\\``."""
    names = me.names_for(reserved)
    out: list[tuple[Any, ...]] = []
    readers: tuple[tuple[str, Any, Callable[[str, int, me.Names], me.Reading]], ...] = (
        ("angle", me.OPENER_RE, me.read_after),
        ("bracket", me.BRACKET_OPENER_RE, me.read_bracket),
    )
    for family, regex, read in readers:
        for m in regex.finditer(text):
            r = read(text, m.end(), names)
            if r.kind != "none" or text[m.end() : m.end() + 1] == "\\":
                out.append((m.start(), m.end(), r.kind, r.name, r.slash, r.end, family))
    out.sort(key=lambda o: o[0])
    return out


# ---------------------------------------------------------------------------
# Text built from the generated tables
# ---------------------------------------------------------------------------

_LETTERS = sorted(chr(cp) for cp in READINGS)
#: Marks and symbols with a letter reading that may also be read past (``""`` among their readings).
_EITHER = sorted(me._EITHER)


def _not_surrogate(cp: int) -> bool:
    # SKIP_RANGES holds the surrogates; a str with one cannot cross into Rust (the fallback's case).
    return not 0xD800 <= cp <= 0xDFFF


#: Skipped characters: both ends and the middle of every range of SKIP_RANGES (almost every code
#: point is skipped, so the table is sampled, not listed), and any point of a range.
_SKIPS = sorted({chr(cp) for lo, hi in SKIP_RANGES for cp in (lo, hi, (lo + hi) // 2) if _not_surrogate(cp)})
skip_chars = st.one_of(
    st.sampled_from(_SKIPS),
    st.sampled_from(SKIP_RANGES).flatmap(lambda r: st.integers(*r)).filter(_not_surrogate).map(chr),
)
_STRUCTURE = [
    chr(c)
    for c in (*LT_LOOKALIKES, *GT_LOOKALIKES, *SLASH_LOOKALIKES, *PIPE_LOOKALIKES, *LBRACKET_LOOKALIKES, *RBRACKET_LOOKALIKES)
]
_NAMES = [*RESERVED_NAMES, *ANGLE_TOKEN_NAMES, *BRACKET_TOKEN_NAMES, "RETRIEVED_CONTENT", "externaI_content", "im_end"]
_ENTITIES = sorted(html.entities.html5)
FRAGMENTS = [
    "<", "</", "<\\", "[", "[/", "[\\", "]", ">", "|", "/", "\\", "!", "?", ":", "ns:", "a:", "<:", " ", "\n", "\t",
    "&", "&lt;", "&lt", "&LT", "&LTfoo", "&Lt;", "&ltcc;", "&ltcc;\\", "&lang;", "&#60;", "&#x3c;", "&#X3C", "&#0060",
    "&#38;lt;", "&#x26;lt;", "&amplt;", "&amp;lt;", "&AMP;GT;", "&amp;amp;lt;", "&amp", "&ampx", "&gt;", "&gt",
    "&lsqb;", "&#91;", "&#x5B;", "&verbar;", "&vert;", "&#124;", "&#47;", "&sol;", "&#1;", "&#0;", "&#13;", "&#x80;",
    "&#xD800;", "&#1114112;", "&#123456789", "&#;", "&#x;", "&nosuch;", "&notit;", "&fjlig;", "&ThickSpace;", "&nvlt;",
    "retrieved", "_content", "content", "RETRI\u0395VED", "r\u0435trieved", "\u0435", "INST", "inst", "s>", "sys",
    "<|im_end|>", "</s>", "[INST]", "<think>", "<seed:think>", "\u200b", "\u2800", "\u0336", "\u2014", "\uff1c",
    "\uff5c", "\uff3b", "\u27e6", "\U000e0041",
]


def _numeric(zeros: int, cp: int, hexa: bool, semi: bool) -> str:
    digits = f"{cp:x}" if hexa else str(cp)
    return "&#" + ("x" if hexa else "") + "0" * zeros + digits + (";" if semi else "")


numeric_refs = st.builds(
    _numeric,
    st.sampled_from([0, 1, 2, 16, 255, 256, 257, 300]),
    st.one_of(
        st.sampled_from([ord(c) for c in me.LT_CHARS + me.LBRACKET_CHARS + me.GT_CHARS + me.PIPE_CHARS + "&/ \u200b"]),
        st.integers(0, 0x110010),
    ),
    st.booleans(),
    st.booleans(),
)
amp_layers = st.builds(
    lambda layers, final: "&" + "".join(layers) + final,
    st.lists(st.sampled_from(["amp;", "amp", "AMP;", "aMp", "#38;", "#0038", "#x26;", "#X026", "#x0026;"]), max_size=17),
    st.sampled_from(["lt;", "lt", "LT", "gt;", "GT", "lsqb;", "#60;", "#x3C", "ltcc;", "lang;", "Lt;", "verbar;", "#91", "x"]),
)
fragment = st.one_of(
    st.sampled_from(FRAGMENTS),
    st.sampled_from(_NAMES),
    st.sampled_from(_LETTERS),
    st.sampled_from(_EITHER),
    skip_chars,
    st.sampled_from(_STRUCTURE),
    st.sampled_from(_ENTITIES).map(lambda n: "&" + n),
    numeric_refs,
    amp_layers,
    st.text(st.characters(codec="utf-8"), max_size=3),
)
eye_text = st.lists(fragment, max_size=30).map("".join)
#: Long skip runs and long texts: the MAX_RUN / MAX_LOOKAHEAD bounds.
padded_text = st.builds(
    lambda a, pad, n, b: a + pad * n + b,
    eye_text,
    st.sampled_from([" ", "\u200b", "/", "\\", "&#32;", "&#x200b;", "_", "\u2800", "a"]),
    st.sampled_from([30, 31, 32, 33, 63, 64, 200, 255, 256, 257]),
    eye_text,
)
any_text = st.one_of(eye_text, eye_text, padded_text)
reserved_sets = st.sampled_from([RESERVED_NAMES, CUSTOM])

DIFF = settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], deadline=None)

# ---------------------------------------------------------------------------
# The checks (also run by the negative controls)
# ---------------------------------------------------------------------------


def check_defang(text: str, reserved: tuple[str, ...]) -> None:
    for level in LEVELS:
        want = ref_defang(text, level, reserved)
        assert _native.defang(text, level, reserved) == want, (level, text)
        body = ref_defang_body(text, level, reserved)
        assert _native.defang_body(text, level, reserved) == body, (level, text)
        assert _native.undefang_body(body, level, reserved) == ref_undefang_body(body, level, reserved), (level, body)
        assert _native.undefang_body(text, level, reserved) == ref_undefang_body(text, level, reserved), (level, text)
        assert _native.undefang(want, level, reserved) == ref_undefang(want, level, reserved), (level, want)
        assert _native.undefang(text, level, reserved) == ref_undefang(text, level, reserved), (level, text)
        for t in (text, body):  # verify's canonical-form check: the undo, and whether redoing it gives t
            plain = ref_undefang_body(t, level, reserved)
            want_check = (plain, ref_defang_body(plain, level, reserved) == t)
            assert _native.canonical_body(t, level, reserved) == want_check, (level, t)
            # The same body where it lies in a preface (read in place when ASCII, sliced otherwise).
            for head in ("<a>\n", "\u00e9\n"):
                framed = head + t + "\n</a>"
                got = _native.canonical_body(framed, level, reserved, len(head), len(head) + len(t))
                assert got == want_check, (level, head, t)
                # ... and found in one UTF-8 copy of the preface (verify's), its cursor coming from the
                # end of the text (a walk back) and then from the body itself (a walk forward).
                copy = utf8_of(framed)
                if copy is not None:
                    for _ in range(2):
                        _native.canonical_body(framed, level, reserved, len(framed), len(framed), copy)
                        got = _native.canonical_body(framed, level, reserved, len(head), len(head) + len(t), copy)
                        assert got == want_check, (level, head, t)


def utf8_of(text: str) -> _native.Utf8 | None:
    """A UTF-8 copy of ``text``, or ``None`` for a lone surrogate (the native core takes no such text)."""
    try:
        return _native.Utf8(text)
    except _native.SurrogateError:
        return None


def check_readings(text: str, reserved: tuple[str, ...]) -> None:
    for pos in range(len(text) + 1):
        for tokens, pipes in ((True, True), (False, False)):
            got = _native.read_after(text, pos, reserved, tokens, pipes)
            assert got == ref_read_after(text, pos, reserved, tokens, pipes), (pos, tokens, pipes, text)
        assert _native.read_bracket(text, pos) == ref_read_bracket(text, pos), (pos, text)


def check_openers(text: str, reserved: tuple[str, ...]) -> None:
    assert _native.openers(text, reserved) == ref_openers(text, reserved), text


# ---------------------------------------------------------------------------
# Differential properties
# ---------------------------------------------------------------------------


@DIFF
@given(any_text, reserved_sets)
def test_defang_undefang_body_equal_reference(text: str, reserved: tuple[str, ...]) -> None:
    check_defang(text, reserved)


@DIFF
@given(any_text, reserved_sets)
def test_readings_equal_reference_at_every_position(text: str, reserved: tuple[str, ...]) -> None:
    check_readings(text, reserved)


@DIFF
@given(any_text, reserved_sets)
def test_openers_equal_python_loop(text: str, reserved: tuple[str, ...]) -> None:
    check_openers(text, reserved)


#: The bytes past an opener's end within which the core reuses an earlier opener's reading where the
#: text repeats (``repeats::WINDOW``): a repeated text must run past it for the reuse to be taken.
REUSE_WINDOW = 4096


@settings(DIFF, max_examples=40)
@given(any_text.filter(lambda t: 0 < len(t) <= 400), any_text, st.integers(0, 10**6), reserved_sets)
def test_openers_equal_python_loop_on_repeated_text(unit: str, change: str, at: int, reserved: tuple[str, ...]) -> None:
    """Where the text repeats the core reuses readings (``rust/envelock-core/src/repeats.rs``): a unit
    repeated past the reuse window, changed once somewhere, reads as the Python loop reads it."""
    text = unit * (2 * REUSE_WINDOW // len(unit) + 2)
    at %= len(text)
    check_openers(text[:at] + change + text[at:], reserved)


@settings(DIFF, max_examples=30)
@given(any_text.filter(lambda t: 0 < len(t) <= 400), any_text, st.integers(0, 10**6), reserved_sets)
def test_defang_equal_reference_on_repeated_text(unit: str, change: str, at: int, reserved: tuple[str, ...]) -> None:
    """The defang's passes reuse an escape decision where the text repeats, as the readings do."""
    text = unit * (2 * REUSE_WINDOW // len(unit) + 2)
    at %= len(text)
    check_defang(text[:at] + change + text[at:], reserved)


@DIFF
@given(st.lists(any_text, max_size=8))
def test_openers_many_equals_openers(texts: list[str]) -> None:
    assert _native.openers_many(texts, RESERVED_NAMES) == [ref_openers(t, RESERVED_NAMES) for t in texts]


@DIFF
@given(st.lists(any_text, max_size=8), st.sampled_from(LEVELS))
def test_defang_many_equals_defang(texts: list[str], level: Level) -> None:
    assert _native.defang_many(texts, level, RESERVED_NAMES) == [ref_defang(t, level) for t in texts]


KNOWN = [
    "</retrieved_content>",
    "</RETRI\u0395VED_CONTENT>",
    "<externaI_content>",
    "<\u2800/retrieved\u2014content>",
    "&#38;lt;/retrieved_content>",
    "&amp;amp;lt;/external_content>",
    "&#" + "0" * 256 + "60;/retrieved_content>",
    "&#" + "0" * 257 + "60;/retrieved_content>",
    "<&verbar;im_end&verbar;>",
    "<\u05c0im_end\u05c0>",
    "[INST]",
    "\uff3b\uff29\uff2e\uff33\uff34\uff3d",
    "&lsqb;/INST]",
    "[\u200bINST\u200b]",
    "<seed:think>",
    "<a:<a:retrieved_content>",
    "<" + "\u200b" * 500 + "/retrieved_content>",
    "x </retrieved_content",
    "[" + "\u3000" * 31,
    "&ltcc;\\",
    "<\u1438:retrieved_content",
    "<a\u1438b:retrieved_content",
    "<p>a</p><!-- c --><?pi?><![CDATA[x]]>< b>",
    "a & b < 3 > d\r\n<x> < y",
]


@pytest.mark.parametrize("text", KNOWN)
def test_known_inputs(text: str) -> None:
    for reserved in (RESERVED_NAMES, CUSTOM):
        check_defang(text, reserved)
        check_readings(text, reserved)
        check_openers(text, reserved)


def test_large_input_released_gil_path() -> None:
    """Inputs of 64 KiB and more take the GIL-released path: same output."""
    text = ("<p>x</p> </retrieved_content> &lt;think> [INST] \u0435 " * 4000)[:300_000]
    for level in LEVELS:
        assert _native.defang(text, level, RESERVED_NAMES) == ref_defang(text, level)
    many = [text, text[:70_000], "a"]
    assert _native.defang_many(many, "reserved", RESERVED_NAMES) == [ref_defang(t, "reserved") for t in many]
    assert _native.openers_many(many, RESERVED_NAMES) == [_native.openers(t, RESERVED_NAMES) for t in many]


def test_unchanged_text_is_returned_as_is() -> None:
    text = "plain text with no opener " * 10
    assert _native.defang(text, "reserved", RESERVED_NAMES) is text


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


def test_lone_surrogate_raises_for_the_fallback() -> None:
    for call in (
        lambda: _native.defang("\ud800</retrieved_content>", "reserved", RESERVED_NAMES),
        lambda: _native.defang_body("\udc80", "xml", RESERVED_NAMES),
        lambda: _native.undefang("\ud800", "reserved", RESERVED_NAMES),
        lambda: _native.read_after("\ud800<x", 2, RESERVED_NAMES),
        lambda: _native.read_bracket("[\ud800", 1),
        lambda: _native.openers("\ud800", RESERVED_NAMES),
        lambda: _native.defang_many(["ok", "\ud800"], "reserved", RESERVED_NAMES),
        lambda: _native.openers_many(["ok", "\ud800"], RESERVED_NAMES),
        lambda: _native.undefang_body("\ud800", "xml", RESERVED_NAMES),
    ):
        with pytest.raises(_native.SurrogateError):
            call()
    assert issubclass(_native.SurrogateError, ValueError)


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="level must be one of"):
        _native.defang("x", "html", RESERVED_NAMES)  # type: ignore[arg-type]  # deliberately not a level
    with pytest.raises(ValueError, match="empty skeleton"):
        _native.defang("x", "reserved", ("\u200b",))
    with pytest.raises(ValueError, match="empty skeleton"):
        me.names_for(("\u200b",))
    assert _native.read_after("<x", 99, RESERVED_NAMES) == ("none", "", False, 0)
    assert _native.skeleton("RETRI\u0395VED-CONTENT") == me.skeleton("RETRI\u0395VED-CONTENT")


# ---------------------------------------------------------------------------
# Negative controls: a broken reference must make the differential checks fail
# ---------------------------------------------------------------------------


@contextmanager
def _patched(name: str, value: object) -> Iterator[None]:
    saved = getattr(me, name)
    setattr(me, name, value)
    me.names_for.cache_clear()
    try:
        yield
    finally:
        setattr(me, name, saved)
        me.names_for.cache_clear()


def _drop_reading(ch: str) -> dict[str, tuple[str, ...]]:
    """The readings table with the readings of ``ch`` removed (it reads as itself)."""
    return {c: r for c, r in me._READ.items() if c != ch}


def _ascii_skips_only() -> frozenset[str]:
    return frozenset(chr(c) for c in range(128) if chr(c) in me._SKIP)


CONTROLS: list[tuple[str, Callable[[], Any], str]] = [
    # The name runs on past its end: only the reading of the Cyrillic ie reaches it (a letter that stands in
    # must end the name, the letter stand-in rule).
    ("cyrillic ie loses its reading", lambda: _patched("_READ", _drop_reading("\u0435")), "</r\u0435trieved_contents>"),
    ("no non-ASCII skip", lambda: _patched("_SKIP", _ascii_skips_only()), "</retrieved\u200b_content>"),
]


@pytest.mark.parametrize(("label", "mutant", "text"), CONTROLS, ids=[c[0] for c in CONTROLS])
def test_negative_control_known_input(label: str, mutant: Callable[[], Any], text: str) -> None:
    check_defang(text, RESERVED_NAMES)  # equal without the mutant
    with mutant(), pytest.raises(AssertionError):
        check_defang(text, RESERVED_NAMES)
    with mutant(), pytest.raises(AssertionError):
        check_readings(text, RESERVED_NAMES)
    with mutant(), pytest.raises(AssertionError):
        check_openers(text, RESERVED_NAMES)


def test_negative_control_hypothesis_finds_the_mutant() -> None:
    """The differential property itself, run under a mutant, must find a difference."""

    @settings(
        max_examples=300,
        derandomize=True,
        report_multiple_bugs=False,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(st.tuples(eye_text, st.sampled_from([c for c in _SKIPS if not c.isascii()]), eye_text))
    def prop(parts: tuple[str, str, str]) -> None:
        before, skip, after = parts
        check_defang(f"{before}</{skip}retrieved_content>{after}", RESERVED_NAMES)

    with _patched("_SKIP", _ascii_skips_only()), pytest.raises(AssertionError):
        prop()


# ---------------------------------------------------------------------------
# The third round of the eye, part by part: each part with the texts that exercise it, held equal
# to the reference, and a mutant of the reference (that part forgotten, or the old rule back) that
# the same checks must catch.
# ---------------------------------------------------------------------------

#: A reserved set whose name starts with the rest of an excluded legacy reference (``&lt`` +
#: ``imes;``): were ``&ltimes;`` read as ``&lt`` + ``imes``, it would open a reserved tag.
EXCLUSION_NAMES = ("imes", "retrieved_content")

NEW_PARTS: dict[str, list[str]] = {
    # A mark or symbol with a letter reading is read past and as that letter: in the lead (pending
    # name states) and inside a name.
    "both characters": [
        "<\u02b3/retrieved_content>",
        "<\u02b3etrieved_content>",
        "</\u0c02retrieved_content>",
        "<retr\u0c02ieved_content>",
        "[\u00a2ontrol_3]",
        "<\u00a2\u00a2\u00a2/external_content>",
        "<" + "\u0c02" * 40 + "/retrieved_content>",
        "<\u02b3" + "\u200b" * 31 + "etrieved_content>",
        "<\u00a7pecial_1>",
    ],
    # A placeholder family: a prefix and any number (digits, or what reads as one).
    "placeholder digits": [
        "<SPECIAL_123>",
        "<special_0>",
        "<SPECIAL_ol>",
        "<SPECIAL_>",
        "<SPECIAL_1x>",
        "<SPECIAL_12 >",
        "<SPECIAL_\u0669>",
        "<SPECIAL_" + "1" * 40 + ">",
        "<SPECIAL_0123456789>",
        "<SPECIAL_9o8l7>",
        "[control_42]",
        "[PAD7]",
        "[PAD]",
        "[REFERENCE_DOC_12]",
        "<SPECIAL_0\u200b1&gt;",
    ],
    # A namespace that is a control token by itself, dangerous at the colon.
    "namespace tokens": ["<dsml:", "<DSML:x", "<d\u200bsml:", "<dsml", "<ns:dsml:", "<seed:think>", "<a b:retrieved_content>"],
    # ``[|NAME|]`` bar tokens, falling through to the name when the bar form fails.
    "bracket bars": ["[|endofturn|]", "[|Human|]", "[||]", "[| 1; 2 |]", "[\uff5cUser\uff5c]", "[|a|", "[|ab|\u200b]", "[|ARGS]"],
    # Exact tokens (matched as a tokenizer does) and the escape points without an opener.
    "exact tokens": [
        ">>TITLE<<",
        ">\\>TITLE<<",
        "]~b]",
        "]\\~b]",
        "]\\\\~b]",
        "\uff5cDSML\uff5c",
        "<NAME>",
        "<\\NAME>",
        "[IMG]",
        "[\\IMG]",
        "a>>TITLE<",
        "[e~[",
        "]~!b[",
        "x >>SUMMARY<< y ]~b] <pad> [MASK]",
    ],
    # The reference grammar: legacy names and their exclusions, Windows-1252 numbers, case.
    "references": [
        "&ltcc;/retrieved_content>",
        "&ltimes;/retrieved_content>",
        "&ltcc/retrieved_content>",
        "&lthree;/imes",
        "&ltimes;",
        "&laquo/retrieved_content>",
        "&#139;/retrieved_content>",
        "&#x8B;/retrieved_content>",
        "&#171;/retrieved_content>",
        "&AMP;lt;/retrieved_content>",
        "&Amp;lt;/retrieved_content>",
        "&LT/retrieved_content>",
        "&lT;/retrieved_content>",
        "&lbrack;INST]",
        "&LeftDoubleBracket;INST]",
    ],
    # The escape rule read past backslashes: an opener already followed by one is escaped only
    # when its reading past it is dangerous.
    "escape rule": ["<\\w+", "\u00ab\\- option \u00bb", "<\\/retrieved_content>", "<\\\\/retrieved_content>", "[\\INST]", "<\\ w"],
    # The stand-in rule: one character read past stands for one letter of a reserved name (first,
    # inside, last; in the lead; as a reference; a second one, or in a token, does not).
    "stand-ins": [
        "</retrieved_c\u00b0ntent>",
        "</\u00aeetrieved_content>",
        "<\u00ae/etrieved_content>",
        "</retrieved_conten\u2020>",
        "</retrieved_c&deg;ntent>",
        "</r\u20actri\u20acved_content>",
        "<thi\u2229k>",
        "</e\u2716ternal_content>",
        "<\u00b0\u00b0\u00b0" + "\u00b0" * 40,
        "</\u00ae\u02b3etrieved_content>",
        "<me\u00b0ory>",
        "</retrieved_c\u00b0\u200b\u00b0ntent>",
    ],
    # Non-ASCII structural look-alikes read past inside an angle reading (not a '<' one; not a bar
    # right after the opener), and the derived shapes in their roles.
    "structural shapes": [
        "</retrieved\ufe31content>",
        "</retrieved\u300ccontent>",
        "<\u300c/retrieved_content>",
        "</retrieved\uff5ccontent>",
        "<\u203aretrieved_content",
        "<\ufe31im_end\ufe31>",
        "<\u4e28im_end\u4e28>",
        "[\u4e28endofturn\u4e28]",
        "\u3014INST\u3015",
        "[INST\u3015",
        "\u22b2/retrieved_content\u22b3",
        "<think\u22b3",
        "</retrieved\u25c1content>",
        "</retrieved\u4e00content>",
        "<SPECIAL_\u0661\u0662>",
        "<" + "\u300c" * 40 + "x",
        "<s\u300d>",
    ],
}


@pytest.mark.parametrize(("part", "text"), [(p, t) for p, ts in NEW_PARTS.items() for t in ts])
def test_new_parts_equal_reference(part: str, text: str) -> None:
    for reserved in (RESERVED_NAMES, CUSTOM, EXCLUSION_NAMES):
        check_defang(text, reserved)
        check_readings(text, reserved)
        check_openers(text, reserved)


def test_ltcc_and_ltimes_tokenize_as_the_reference() -> None:
    """``&ltcc;`` is U+2AA6 (an opener of its own); ``&ltimes;`` is U+22C9, and its ``&lt`` is no opener."""
    text = "&ltcc;/retrieved_content> &ltimes;/retrieved_content> &ltcc &lt;"
    got = _native.openers(text, RESERVED_NAMES)
    assert got == ref_openers(text, RESERVED_NAMES)
    assert [text[o[0] : o[1]] for o in got] == ["&ltcc;"]
    assert _native.defang("&ltimes;", "reserved", EXCLUSION_NAMES) == "&ltimes;"


@contextmanager
def _mutant(*patches: tuple[object, str, object]) -> Iterator[None]:
    """Set attributes of the reference's modules for the block (the caches cleared around it)."""
    saved = [(obj, name, getattr(obj, name)) for obj, name, _ in patches]
    for obj, name, value in patches:
        setattr(obj, name, value)
    me.names_for.cache_clear()
    me._exact_finder.cache_clear()
    try:
        yield
    finally:
        for obj, name, value in saved:
            setattr(obj, name, value)
        me.names_for.cache_clear()
        me._exact_finder.cache_clear()


def _openers_from(refs: Any = None, numeric: Any = None, amp: Any = None) -> tuple[tuple[object, str, object], ...]:
    """Patches that make the reference find angle openers by another grammar."""
    # the reference reads AMP_REFERENCES from its module when it builds a pattern
    setattr(me, "AMP_REFERENCES", amp if amp is not None else AMP_REFERENCES)  # noqa: B010
    try:
        pattern = me._opener_pattern(me.LT_CHARS, me._ref_pattern(refs or LT_REFERENCES, numeric or LT_NUMERIC))
    finally:
        setattr(me, "AMP_REFERENCES", AMP_REFERENCES)  # noqa: B010
    regex = re.compile(pattern)
    return ((me, "OPENER_RE", regex), (_reference, "OPENER_RE", regex))


_REAL_EXACT_AFTER = me.exact_after
_REAL_NEEDS_ESCAPE = _reference.opener_needs_escape
_REAL_LEAD = me._lead


def _lead_without_pending(*args: Any) -> Any:
    """``reader._lead`` that forgets the name states started by a character read both ways."""
    i, run, _pending, done, piece, nxt = _REAL_LEAD(*args)
    return i, run, {}, done, piece, nxt


def _lead_without_stand_ins(*args: Any) -> Any:
    """``reader._lead`` called without the stand-in table (the rule forgotten before the name)."""
    return _REAL_LEAD(*args[:7])


def _undefang_with_default_names(text: str, level: Level, reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Any = None) -> str:
    return _REAL_UNDEFANG(text, level)


_REAL_UNDEFANG = _reference.undefang

#: (part, what the mutant forgets, its patches, a text, the reserved names, the checks that must catch it).
NEW_CONTROLS: list[tuple[str, Callable[[], Any], str, tuple[str, ...], tuple[Callable[[str, tuple[str, ...]], None], ...]]] = [
    (
        "both characters: the lead no longer reads past a mark with a letter reading",
        lambda: _mutant((me, "_EITHER", frozenset())),
        "<\u02b3/retrieved_content>",
        RESERVED_NAMES,
        (check_defang, check_readings, check_openers),
    ),
    (
        "both characters: a pending name state dropped at the end of the lead",
        lambda: _mutant((me, "_lead", _lead_without_pending)),
        "<\u02b3etrieved_content>",
        RESERVED_NAMES,
        (check_defang, check_readings, check_openers),
    ),
    (
        "placeholder digits: a digit no longer extends a family",
        lambda: _mutant((me, "_DIGIT_READINGS", frozenset())),
        "<SPECIAL_123>",
        RESERVED_NAMES,
        (check_defang, check_readings, check_openers),
    ),
    (
        "namespace tokens: none",
        lambda: _mutant((me, "NAMESPACE_TOKEN_NAMES", ())),
        "<DSML:x",
        RESERVED_NAMES,
        (check_defang, check_readings, check_openers),
    ),
    (
        "bracket bars: [|NAME|] not read",
        lambda: _mutant((me, "_bracket_bar", lambda *a: me._NONE)),
        "[|endofturn|]",
        RESERVED_NAMES,
        (check_defang, check_readings, check_openers),
    ),
    (
        "exact tokens: none",
        lambda: _mutant((me, "EXACT_TOKENS", ())),
        "x ]~b] y",
        RESERVED_NAMES,
        (check_defang,),
    ),
    (
        "exact tokens: the escape points without an opener forgotten",
        lambda: _mutant((_reference, "_non_opener_starts", lambda names: "")),
        "\uff5cDSML\uff5c and >>TITLE<<",
        RESERVED_NAMES,
        (check_defang,),
    ),
    (
        "exact tokens: matched without reading past the backslashes",
        lambda: _mutant(
            (me, "exact_after", lambda t, i, n: -1 if t[i + 1 : i + 2] == "\\" else _REAL_EXACT_AFTER(t, i, n)),
            (_reference, "exact_after", lambda t, i, n: -1 if t[i + 1 : i + 2] == "\\" else _REAL_EXACT_AFTER(t, i, n)),
        ),
        "<\\NAME>",
        RESERVED_NAMES,
        (check_defang,),
    ),
    (
        "references: a legacy name without its exclusions (&ltimes; read as &lt + imes)",
        lambda: _mutant(*_openers_from(refs=tuple((n, legacy, ()) for n, legacy, _ in LT_REFERENCES))),
        "&ltimes;",
        EXCLUSION_NAMES,
        (check_defang,),
    ),
    (
        "references: a legacy name that needs its ';' (&laquo)",
        lambda: _mutant(*_openers_from(refs=tuple((n, legacy and n != "laquo", x) for n, legacy, x in LT_REFERENCES))),
        "&laquo/retrieved_content>",
        RESERVED_NAMES,
        (check_defang, check_openers),
    ),
    (
        "references: no Windows-1252 number (&#139;)",
        lambda: _mutant(*_openers_from(numeric=tuple(c for c in LT_NUMERIC if c != 0x8B))),
        "&#139;/retrieved_content>",
        RESERVED_NAMES,
        (check_defang, check_openers),
    ),
    (
        "references: &amp; layers in any case (the old grammar)",
        lambda: _mutant(*_openers_from(amp=(("AMP", True, ()), ("Amp", True, ()), ("amp", True, ())))),
        "&Amp;lt;/retrieved_content>",
        RESERVED_NAMES,
        (check_defang, check_openers),
    ),
    (
        "escape rule: an opener followed by a backslash escaped for that alone (the old rule)",
        lambda: _mutant(
            (
                _reference,
                "opener_needs_escape",
                lambda t, m, n, mk: t[m.end() : m.end() + 1] == "\\" or _REAL_NEEDS_ESCAPE(t, m, n, mk),
            )
        ),
        "re.compile(r'<\\w+')",
        RESERVED_NAMES,
        (check_defang,),
    ),
    (
        "stand-ins: a symbol no longer stands for a letter",
        lambda: _mutant((me, "is_stand_in", lambda ch: False)),
        "</retrieved_c\u00b0ntent>",
        RESERVED_NAMES,
        (check_defang, check_readings, check_openers),
    ),
    (
        "stand-ins: no stand-in in the lead",
        lambda: _mutant((me, "_lead", _lead_without_stand_ins)),
        "</\u00aeetrieved_content>",
        RESERVED_NAMES,
        (check_defang, check_readings, check_openers),
    ),
    (
        "structural shapes: a structural look-alike ends an angle reading again",
        lambda: _mutant((me, "_PASS", frozenset())),
        "</retrieved\ufe31content>",
        RESERVED_NAMES,
        (check_defang, check_readings, check_openers),
    ),
    (
        "undefang: the reserved names ignored",
        lambda: _mutant((_reference, "undefang", _undefang_with_default_names)),
        "</memory>",
        CUSTOM,
        (check_defang,),
    ),
]



@pytest.mark.parametrize(("label", "mutant", "text", "reserved", "checks"), NEW_CONTROLS, ids=[c[0] for c in NEW_CONTROLS])
def test_negative_control_new_parts(
    label: str,
    mutant: Callable[[], Any],
    text: str,
    reserved: tuple[str, ...],
    checks: tuple[Callable[[str, tuple[str, ...]], None], ...],
) -> None:
    for check in checks:
        check(text, reserved)  # equal without the mutant
        with mutant(), pytest.raises(AssertionError):
            check(text, reserved)


def test_replay_native_fuzz_corpus() -> None:
    """Every seed of fuzz/corpus/native through the fuzz harness's check (no atheris needed)."""
    import importlib
    import sys

    fuzz = ROOT / "fuzz"
    if str(fuzz) not in sys.path:
        sys.path.insert(0, str(fuzz))
    harness = importlib.import_module("fuzz_native")
    seeds = sorted((fuzz / "corpus" / "native").glob("*"))
    assert seeds
    for path in seeds:
        harness.check(path.read_bytes())


def test_body_context_round_trip() -> None:
    """Once a reference bug (found by the cargo-fuzz round trip): defang_body judged the body followed by
    '\\n<' and undefang read it alone, so a bracket reading that reached MAX_RUN through that '\\n' was
    escaped and never unescaped. escape.undefang_body judges in the same context."""
    body = "<[TOO" + " " * 31
    native = _native.defang_body(body, "reserved", RESERVED_NAMES)
    assert native == ref_defang_body(body, "reserved") != body  # the two implementations agree
    assert escape.undefang_body(native, level="reserved") == body
    assert _native.undefang_body(native, "reserved", RESERVED_NAMES) == body
    assert ref_undefang(native, "reserved") != body  # the plain undefang is not the inverse of defang_body


def test_names_follow_insertion_order_in_both_implementations() -> None:
    """Once a reference nondeterminism: read_after iterated its live states as a set, so when two states
    completed different names on one character (U+0462 reads 'b' and 'e': <Ѣos> is <bos> or <eos>) the
    name depended on PYTHONHASHSEED. Both now keep insertion order."""
    import subprocess
    import sys

    code = (
        "from envelock.eye import reader as me; r = me.read_after('<\\u0462os>', 1, me.names_for()); "
        "print(r.kind, r.name, r.end)"
    )
    seen = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={**os.environ, "PYTHONHASHSEED": str(seed)}
        ).stdout.strip()
        for seed in range(6)
    }
    kind, name, _, end = _native.read_after("<\u0462os>", 1, RESERVED_NAMES)
    assert seen == {f"{kind} {name} {end}"}


@pytest.mark.parametrize("head", ["<r>\n", "\u00e9\n"])
@pytest.mark.parametrize("body", ["plain words", "a <\\retrieved_content> b", "a <retrieved_content> b", ""])
def test_a_body_checked_where_it_lies_is_the_body_alone(head: str, body: str) -> None:
    # Left as it is (the core's answer borrows the text), the answer is the body, not its preface;
    # undone, the undone body; a body that is not canonical is found so in place too.
    framed = head + body + "\n</r>"
    got = _native.canonical_body(framed, "reserved", RESERVED_NAMES, len(head), len(head) + len(body))
    assert got == _native.canonical_body(body, "reserved", RESERVED_NAMES)
    assert got[0] != framed and len(got[0]) <= len(body)
    copy = _native.Utf8(framed)
    assert _native.canonical_body(framed, "reserved", RESERVED_NAMES, len(head), len(head) + len(body), copy) == got
    whole = _native.canonical_body(framed, "reserved", RESERVED_NAMES, 0, None, copy)
    assert whole == _native.canonical_body(framed, "reserved", RESERVED_NAMES)
    assert whole[0] is framed or whole[0] != framed  # left as it is, the text itself (no copy)
    with pytest.raises(ValueError, match="not a copy"):
        _native.canonical_body(framed + "x", "reserved", RESERVED_NAMES, 0, 1, copy)


@given(
    words=st.lists(st.sampled_from(["a", "\u00e9", "\u65e5\u672c", "\U0001f600", " ", "<", "\\", "\n"]), max_size=30),
    reps=st.integers(1, 12),
    cuts=st.lists(st.tuples(st.integers(0, 400), st.integers(0, 400)), max_size=8),
)
def test_bodies_found_in_one_copy_in_any_order(words: list[str], reps: int, cuts: list[tuple[int, int]]) -> None:
    """The cursor of a ``Utf8`` finds any body, in any order of the calls, as a slice would (texts
    longer than the walk's 64-byte step, where it ends inside a character, included)."""
    text = "".join(words) * reps
    copy = _native.Utf8(text)
    for a, b in cuts:
        a, b = min(a, b, len(text)), min(max(a, b), len(text))
        want = _native.canonical_body(text[a:b], "reserved", RESERVED_NAMES)
        assert _native.canonical_body(text, "reserved", RESERVED_NAMES, a, b, copy) == want, (text, a, b)


def test_finding_the_bodies_of_a_preface_walks_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Verify finds each body of a non-ASCII preface in its one UTF-8 copy, walking on from the body
    before: the bytes walked are linear in the text. A search from the start for every body (the
    quadratic walk the cursor replaces) would walk more than the bound: computed as a control."""
    from envelock import PrefaceEntry, compose_preface, verify_preface

    made: list[_native.Utf8] = []
    real = _native.Utf8

    def recording(text: str) -> _native.Utf8:
        made.append(real(text))
        return made[-1]

    entries = [PrefaceEntry("external", f"o{i}", f"\u65e5\u672c {i} <b> caf\u00e9") for i in range(400)]
    inner = compose_preface(entries[:3])
    out = compose_preface([*entries, PrefaceEntry("external", "nested", inner)])
    monkeypatch.setattr(_native, "Utf8", recording)
    assert backend.is_native()  # verify runs on the core whose Utf8 is recorded
    assert verify_preface(str(out)).ok
    copies = [u for u in made if len(u) == len(str(out).encode())]
    assert len(copies) == 1, [len(u) for u in made]
    size = len(copies[0])
    assert 0 < copies[0].walked <= 2 * size, (copies[0].walked, size)
    from_the_start = sum(len(str(out)[: str(out).index(f'origin="o{i}"')].encode()) for i in range(400))
    assert from_the_start > 2 * size  # the bound tells a restart per body from the cursor


def _lead_enders() -> list[str]:
    """Non-ASCII characters that may end an ASCII lead or go on with it: every slash, bang, bar and
    structural look-alike of the reader's tables, every 64th skippable character, and a few that
    are none of these (a letter, a guillemet, a CJK letter, an emoji)."""
    lead = sorted(c for c in me._SLASH | me._BANG | me._PASS | me._PIPE if c > "\x7f")
    skips = [chr(c) for c in range(0x80, 0x30000) if not 0xD800 <= c <= 0xDFFF and me.can_skip(chr(c))][::64]
    return [*lead, *skips, "é", "«", "\u65e5", "\U0001f600"]


def test_an_ascii_lead_ended_by_any_character_reads_as_the_reference() -> None:
    # The fast path reads an ASCII lead (spaces, tabs, slashes, `!`) and, at the first non-ASCII
    # character, hands the reader its end when that character is no lead character (`« « «`: a
    # guillemet, a space, the next one). Each lead, before each such character, after each opener.
    enders = _lead_enders()
    assert len(enders) > 100
    for ch in enders:
        for lead in ("", " ", " !/"):
            text = f"<{lead}{ch}im_end{ch}>"
            for tokens, pipes in ((True, True), (False, False)):
                got = _native.read_after(text, 1, RESERVED_NAMES, tokens, pipes)
                assert got == ref_read_after(text, 1, RESERVED_NAMES, tokens, pipes), text
            text = f"[{lead}{ch}INST{ch}]"
            assert _native.read_bracket(text, 1) == ref_read_bracket(text, 1), text
