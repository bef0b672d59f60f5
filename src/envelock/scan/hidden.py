"""Invisible and control characters: TAG smuggling, bidi controls, hidden runs, controls."""

from __future__ import annotations

import re
import unicodedata

from ..eye.charsets import (
    BIDI_EMBEDDING_CONTROLS,
    BIDI_MARKS,
    C1_CONTROLS,
    CANCEL_TAG,
    JOINING_SCRIPTS,
    MONGOLIAN_VARIATION_SELECTORS,
    NO_SPACE_SCRIPTS,
    SNEAKY_BITS,
    TAG_CHARACTERS,
    TAG_SPEC_CHARACTERS,
    VARIATION_SELECTORS,
    XML_IMPOSSIBLE,
    char_class,
    in_ranges,
)
from ..eye.reader import (
    visible,
)
from ..eye.unicode_tables import DEFAULT_IGNORABLE_RANGES, RGI_EMOJI_TAG_SEQUENCES
from ._base import Context, _in, _Raw
from .tags import _first_danger

_BIDI_CLASS = char_class(BIDI_EMBEDDING_CONTROLS)
((_TAG_LO, _TAG_HI),) = TAG_CHARACTERS


def _ignorable_class_without_tag_bidi_marks() -> str:
    skip = {cp for lo, hi in (*BIDI_EMBEDDING_CONTROLS, *TAG_CHARACTERS) for cp in range(lo, hi + 1)}
    skip |= set(BIDI_MARKS)
    parts: list[str] = []
    for lo, hi in DEFAULT_IGNORABLE_RANGES:
        start: int | None = None
        for cp in range(lo, hi + 2):
            inside = cp <= hi and cp not in skip
            if inside and start is None:
                start = cp
            elif not inside and start is not None:
                end = cp - 1
                parts.append(re.escape(chr(start)) if start == end else f"{re.escape(chr(start))}-{re.escape(chr(end))}")
                start = None
    return "".join(parts)


_HIDDEN_RUN_RE = re.compile(f"[{_ignorable_class_without_tag_bidi_marks()}]+")
_TAG_RUN_RE = re.compile(f"[{char_class(TAG_CHARACTERS)}]+")
_BIDI_RUN_RE = re.compile(f"[{_BIDI_CLASS}]+")
#: XML-impossible characters (except FORM FEED, a page break in text files) and C1 controls.
_NO_FORM_FEED = tuple((lo, 0x0B) if (lo, hi) == (0x0B, 0x0C) else (lo, hi) for lo, hi in XML_IMPOSSIBLE)
_CONTROL_RUN_RE = re.compile(f"[{char_class(_NO_FORM_FEED, C1_CONTROLS)}]+")
_RGI_TAG_SEQUENCES = frozenset(RGI_EMOJI_TAG_SEQUENCES)
_BLACK_FLAG = "\U0001f3f4"
_WELL_FORMED_TAG_SPEC_RE = re.compile(f"[{char_class(TAG_SPEC_CHARACTERS)}]{{1,32}}{re.escape(chr(CANCEL_TAG))}")

_JOINING_SCRIPTS = JOINING_SCRIPTS
_NO_SPACE_SCRIPTS = NO_SPACE_SCRIPTS


def _is_variation_selector(ch: str) -> bool:
    return in_ranges(VARIATION_SELECTORS, ch) or in_ranges(MONGOLIAN_VARIATION_SELECTORS, ch)


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or unicodedata.category(ch)[0] == "M"


def _decode_tag_chars(run: str) -> str:
    out: list[str] = []
    for c in run:
        v = ord(c) - _TAG_LO
        out.append(chr(v) if 0x20 <= v < 0x7F or v in (0x09, 0x0A, 0x0D) else f"U+{ord(c):04X}")
    return "".join(out)


def _scan_tags(text: str, ctx: Context, out: list[_Raw]) -> None:
    for m in _TAG_RUN_RE.finditer(text):
        s, e = m.start(), m.end()
        if s > 0 and text[s - 1] == _BLACK_FLAG:
            if text[s - 1 : e] in _RGI_TAG_SEQUENCES:
                continue
            if _WELL_FORMED_TAG_SPEC_RE.fullmatch(m.group()):
                out.append(
                    _Raw("tag-smuggling", "note", f"emoji tag sequence {_decode_tag_chars(m.group())!r} is not RGI", s - 1, e)
                )
                continue
        hidden = _decode_tag_chars(m.group())
        danger = _first_danger(hidden, ctx)
        shown = visible(hidden[:160]) + ("…" if len(hidden) > 160 else "")
        if danger:
            out.append(_Raw("tag-smuggling", "error", f"TAG characters hide {danger!r}: {shown!r}", s, e))
        else:
            out.append(_Raw("tag-smuggling", "warning", f"TAG characters hide ASCII text: {shown!r}", s, e))


def _scan_bidi(text: str, out: list[_Raw]) -> None:
    for m in _BIDI_RUN_RE.finditer(text):
        cps = " ".join(f"U+{ord(c):04X}" for c in m.group()[:8])
        out.append(_Raw("bidi-control", "warning", f"bidirectional control {cps} reorders displayed text", m.start(), m.end()))


def _decode_hidden(run: str) -> str | None:
    """Decode variation-selector bytes or Sneaky Bits; ``None`` when the run is neither."""
    if all(in_ranges(VARIATION_SELECTORS, c) for c in run):
        data = bytes(ord(c) - 0xFE00 if ord(c) <= 0xFE0F else ord(c) - 0xE0100 + 16 for c in run)
        return data.decode("utf-8", "replace")
    zero, one = map(chr, SNEAKY_BITS)
    bits = [c for c in run if c in (zero, one)]
    if len(bits) >= 8 and all(c in (zero, one, "\u200b") for c in run):
        # Sneaky Bits: INVISIBLE TIMES = 0, INVISIBLE PLUS = 1, ZWSP = space.
        words = run.split("\u200b")
        chars: list[str] = []
        for w in words:
            bitstr = "".join("1" if c == one else "0" for c in w)
            chars.extend(chr(int(bitstr[k : k + 8], 2)) for k in range(0, len(bitstr) - 7, 8))
            chars.append(" ")
        return "".join(chars).rstrip(" ")
    return None


def _scan_hidden(text: str, ctx: Context, out: list[_Raw]) -> None:
    n = len(text)
    for m in _HIDDEN_RUN_RE.finditer(text):
        s, e = m.start(), m.end()
        run = m.group()
        if s == 0 and run == "\ufeff":
            continue
        if len(run) >= 4:
            decoded = _decode_hidden(run)
            if decoded is not None:
                danger = _first_danger(decoded, ctx)
                shown = visible(decoded[:160])
                if danger:
                    msg = f"{len(run)} invisible characters hide {danger!r}: {shown!r}"
                    out.append(_Raw("invisible-run", "error", msg, s, e))
                else:
                    out.append(_Raw("invisible-run", "warning", f"{len(run)} invisible characters hide text: {shown!r}", s, e))
            else:
                out.append(_Raw("invisible-run", "warning", f"run of {len(run)} invisible characters", s, e))
            continue
        prev = text[s - 1] if s > 0 else ""
        nxt = text[e] if e < n else ""
        if not (prev and nxt and _is_word_char(prev) and _is_word_char(nxt)):
            continue
        kinds = set(run)
        if kinds <= {"\u200c", "\u200d"} and (_in(_JOINING_SCRIPTS, prev) or _in(_JOINING_SCRIPTS, nxt)):
            continue
        if kinds <= {"\u200b", "\u2060"} and (_in(_NO_SPACE_SCRIPTS, prev) or _in(_NO_SPACE_SCRIPTS, nxt)):
            continue
        if len(run) == 1 and _is_variation_selector(run):
            continue
        if kinds == {"\u034f"} and ("\u0590" <= prev <= "\u05ff" or "\u0590" <= nxt <= "\u05ff"):
            continue
        if kinds <= {"\u115f", "\u1160", "\u3164", "\uffa0"} and (
            unicodedata.name(prev, "").startswith("HANGUL") or unicodedata.name(nxt, "").startswith("HANGUL")
        ):
            continue
        cps = " ".join(f"U+{ord(c):04X}" for c in run)
        if kinds == {"\u00ad"}:
            out.append(_Raw("invisible-in-word", "note", f"soft hyphen {cps} inside a word", s, e))
        else:
            out.append(_Raw("invisible-in-word", "warning", f"invisible {cps} inside a word", s, e))


def _scan_controls(text: str, out: list[_Raw]) -> None:
    for m in _CONTROL_RUN_RE.finditer(text):
        cps = " ".join(f"U+{ord(c):04X}" for c in m.group()[:8])
        first = m.group()[0]
        what = (
            "lone surrogate"
            if "\ud800" <= first <= "\udfff"
            else "noncharacter"
            if first in "\ufffe\uffff"
            else "control character"
        )
        out.append(_Raw("control-character", "warning", f"{what} {cps}", m.start(), m.end()))
