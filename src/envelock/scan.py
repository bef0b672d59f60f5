"""``scan_text``: report hostile constructs in raw third-party text.

The scanner looks at text *before* it is composed, the way a model would read
it, and reports every construct that could break an envelope or hide
instructions. The rules and their default severities are the data table in
:mod:`envelock.rules`.

Detection reuses the model's eye of :mod:`envelock.modeleye`: every *opener*
(``<``, a look-alike, ``&lt;``...) is followed through the same bounded
lookahead the defang uses (:func:`~envelock.modeleye.dangerous_after`), so
what ``compose_preface`` would escape is what the scanner reports. A tag is a
close tag when a slash (or look-alike, or ``&#47;``) was skipped before the
name, an open tag otherwise.

Positions are code-point offsets (0-based) and 1-based line and column in
code points. Lines end at LF (CRLF counts once because the CR sits at the end
of its line); a lone CR, U+2028 or NEL does not start a new line.

Every pass is linear in the input: candidates are found with regexes without
nested or overlapping quantifiers, and each candidate is examined with a
lookahead of at most :data:`~envelock.modeleye.MAX_LOOKAHEAD` characters.

Deliberate exceptions (content that is *not* reported), so that ordinary
HTML, code, Markdown, right-to-left and Indic prose and emoji stay clean:

* ZWJ (U+200D) and ZWNJ (U+200C) next to a letter of a script that uses
  them for shaping (Arabic incl. Persian and Urdu, Syriac, N'Ko, the Indic
  scripts and Sinhala, Tibetan, Myanmar, Khmer, Mongolian); ZWJ between emoji
  (an emoji ZWJ sequence is never "inside a word");
* ZWSP (U+200B) and WORD JOINER (U+2060) between letters of scripts written
  without spaces (Thai, Lao, Khmer, Myanmar, Han, Hiragana, Katakana);
* a single variation selector after a character (a variation sequence, e.g.
  an emoji presentation selector or a CJK ideographic variation);
* LRM, RLM and ALM (U+200E, U+200F, U+061C): marks, not overrides;
* CGJ (U+034F) in Hebrew; Hangul fillers next to Hangul; a BOM at offset 0;
* RGI emoji flag tag sequences (England, Scotland, Wales);
* ``<|`` without a closing ``|>`` (an Elm/F# pipe operator), ``<s>`` and
  ``</s>`` only as warnings (HTML strikethrough, generic type parameters).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import codecs
import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import unquote

from . import modeleye
from .charsets import (
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
from .modeleye import (
    BRACKET_OPENER_RE,
    GT_CHARS,
    LT_CHARS,
    MAX_LOOKAHEAD,
    MAX_RUN,
    OPENER_RE,
    PIPE_CHARS,
    SLASH_CHARS,
    Names,
    Reading,
    decode_at,
    names_for,
    read_after,
    read_bracket,
    visible,
)
from .rules import RULES, RULES_BY_ID, SEVERITY_RANK, Rule, Severity
from .tokens import ANGLE_TOKEN_NAMES, BRACKET_TOKEN_NAMES, PROSE_TURN_MARKERS, RESERVED_NAMES
from .unicode_tables import DEFAULT_IGNORABLE_RANGES, RGI_EMOJI_TAG_SEQUENCES

__all__ = ["RULES", "Finding", "Rule", "Severity", "scan_text"]

#: Longest snippet (in code points, before making it visible).
SNIPPET_MAX = 80
#: Longest run of base64/hex decoded per candidate (bounds memory, not time).
BLOB_MAX = 1 << 20


@dataclass(frozen=True)
class Finding:
    """One hostile construct found by :func:`scan_text`.

    ``offset``/``end_offset`` are 0-based code-point offsets (end exclusive);
    ``line``/``column`` and ``end_line``/``end_column`` are 1-based, in code
    points (``end_column`` is exclusive: the column just after the match).
    ``snippet`` is the matched text with invisible and control characters
    shown as ``U+XXXX`` (at most :data:`SNIPPET_MAX` characters, then ``…``).
    """

    rule: str
    severity: Severity
    message: str
    offset: int
    line: int
    column: int
    end_offset: int
    end_line: int
    end_column: int
    snippet: str

    def as_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "offset": self.offset,
            "line": self.line,
            "column": self.column,
            "end_offset": self.end_offset,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "snippet": self.snippet,
        }


@dataclass(frozen=True)
class _Raw:
    rule: str
    severity: Severity
    message: str
    start: int
    end: int


# ---------------------------------------------------------------------------
# Character classes

_GT = frozenset(GT_CHARS)
_LT = frozenset(LT_CHARS)
_SLASH = frozenset(SLASH_CHARS)
_PIPE = frozenset(PIPE_CHARS)
_BIDI_CLASS = char_class(BIDI_EMBEDDING_CONTROLS)
((_TAG_LO, _TAG_HI),) = TAG_CHARACTERS
_MARKS = frozenset(map(chr, BIDI_MARKS))


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


def _in(ranges: tuple[tuple[int, int], ...], ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in ranges)


def _is_variation_selector(ch: str) -> bool:
    return in_ranges(VARIATION_SELECTORS, ch) or in_ranges(MONGOLIAN_VARIATION_SELECTORS, ch)


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or unicodedata.category(ch)[0] == "M"


def _is_skip(ch: str) -> bool:
    # The model's eye decides what is skipped between opener, slash and name.
    return modeleye._is_skip(ch)


# ---------------------------------------------------------------------------
# The model's eye after an opener: one reader (:func:`envelock.modeleye.read_after`)
# decides; this only finds where the construct it read ends, for the finding's span.


@dataclass(frozen=True)
class _Hit:
    kind: str  # "reserved", "token" or "pipe"
    name: str
    slash: bool
    end: int  # end of the construct in the text (after '>' when there is one)
    closed: bool  # a '>' (or look-alike, or &gt;) ends it


@lru_cache(maxsize=64)
def _name_maps(reserved: tuple[str, ...]) -> tuple[Names, dict[str, str], dict[str, str], dict[str, str]]:
    names = names_for(reserved)
    res = {modeleye.skeleton(n): n for n in reserved}
    tok = {modeleye.skeleton(n): n for n in ANGLE_TOKEN_NAMES}
    brk = {modeleye.skeleton(n): n for n in BRACKET_TOKEN_NAMES}
    return names, res, tok, brk


def _tag_end(text: str, i: int) -> tuple[int, bool]:
    """Extend a tag past its attributes to its '>' (bounded), stopping at a new line or opener."""
    n = len(text)
    lim = min(n, i + MAX_LOOKAHEAD)
    j = i
    while j < lim:
        ch = text[j]
        if ch in _LT or ch == "\n":
            break
        piece, nxt = decode_at(text, j)
        if piece and piece[0] in _GT:  # a reference may decode to nothing (html.unescape("&#1;") == "")
            return nxt, True
        j = nxt
    return i, False


def _pipe_token(text: str, i: int, slash: bool) -> _Hit | None:
    """``name|>`` from ``i`` (just after the opening bar; bars and ``>`` may be look-alikes or references)."""
    n = len(text)
    lim = min(n, i + 64)
    j = i
    name: list[str] = []
    while j < lim:
        piece, nxt = decode_at(text, j)
        ch = piece[:1]
        if ch and ch in _PIPE:
            gt = modeleye.closer_after(text, nxt, min(n, nxt + MAX_RUN + 1), GT_CHARS)
            word = "".join(name)
            if gt >= 0 and any(c.isalnum() for c in word):
                return _Hit("pipe", f"<|{word}|>", slash, gt, True)
            return None
        if not ch or ch.isspace() or ch in _LT or ch in _GT:
            return None
        if not modeleye.is_skip(ch):
            name.append(piece)
        j = nxt
    return None


def _hit(text: str, reading: Reading, reserved: tuple[str, ...]) -> _Hit | None:
    """The construct a reading found, with the span a finding shows (``None`` for padding)."""
    _, res_map, tok_map, _ = _name_maps(reserved)
    if reading.kind == "reserved":
        close, closed = _tag_end(text, reading.end)
        return _Hit("reserved", res_map.get(reading.name, reading.name), reading.slash, close if closed else reading.end, closed)
    if reading.kind == "token":
        return _Hit("token", tok_map.get(reading.name, reading.name), reading.slash, reading.end, True)
    if reading.kind == "bar":
        # ``<|`` without a closing ``|>`` is not reported: an F#/Elm pipe operator (a deliberate exception).
        return _pipe_token(text, reading.end, reading.slash)
    return None


def _padding_finding(text: str, start: int, end: int, reserved: tuple[str, ...]) -> _Raw:
    """A finding for an opener the lookahead gave up on: an envelope tag if a reserved name
    follows the padding (an ``error``), else the padding itself (a ``warning``)."""
    names, res_map, _, _ = _name_maps(reserved)
    window = text[end : end + MAX_LOOKAHEAD]
    first_alnum = next((k for k, c in enumerate(window) if c.isalnum()), len(window))
    lead = next((k for k, c in enumerate(window) if not (modeleye.is_skip(c) or c in _SLASH or c in "!?")), len(window))
    skel = modeleye.skeleton(window[lead:])
    for r in names.reserved:
        if skel.startswith(r):
            name = res_map.get(r, r)
            slash = any(c in _SLASH for c in window[:first_alnum])
            close, _ = _tag_end(text, end + first_alnum)
            rule = "envelope-close-tag" if slash else "envelope-open-tag"
            what = "close" if slash else "open"
            stop = max(close, end + first_alnum)
            return _Raw(rule, "error", f"envelope {what} tag for {name!r} (disguised by padding)", start, stop)
    stop = min(len(text), end + MAX_LOOKAHEAD)
    return _Raw("padded-opener", "warning", "opener followed by padding too long to read past", start, stop)


# Describing what was found


def _disguises(snippet: str, canonical: str) -> str:
    if snippet == canonical:
        return ""
    found: list[str] = []
    if "&" in snippet:
        found.append("character references")
    if any(modeleye.is_ignorable(c) for c in snippet):
        found.append("invisible characters")
    if any(ord(c) > 0x7F and not modeleye.is_ignorable(c) for c in snippet):
        found.append("look-alike characters")
    if any(c.isupper() for c in snippet) and not canonical.isupper():
        found.append("case")
    if not found:
        found.append("spacing or separators")
    return " (disguised by " + ", ".join(found) + ")"


_ATTR_RE = re.compile(r"(provenance|source|origin)[ \t]{0,4}=[ \t]{0,4}\\?[\"']?([^\"'\\\s>]{1,64})", re.IGNORECASE)


def _describe_hit(text: str, start: int, hit: _Hit) -> tuple[str, str, Severity]:
    """(rule, message, severity) for a hit that starts at ``start``."""
    snippet = text[start : hit.end]
    if hit.kind == "reserved":
        if hit.slash:
            canonical = f"</{hit.name}>"
            return (
                "envelope-close-tag",
                f"envelope close tag for {hit.name!r}{_disguises(snippet, canonical)}",
                "error",
            )
        canonical = f"<{hit.name}>"
        forged = ""
        attrs = _ATTR_RE.search(snippet)
        if attrs:
            forged = f", forging {attrs.group(1).lower()}={attrs.group(2)!r}"
        shown = snippet if snippet.startswith(f"<{hit.name}") and snippet.isascii() else canonical
        return (
            "envelope-open-tag",
            f"forged envelope open tag for {hit.name!r}{forged}{_disguises(shown if attrs else snippet, canonical)}",
            "error",
        )
    if hit.kind == "pipe":
        return "chat-control-token", f"chat-template control token {visible(hit.name)}", "error"
    token = f"<{'/' if hit.slash else ''}{hit.name}>"
    if hit.name == "s":
        return (
            "chat-control-token",
            f"{token} is the Llama 2 BOS/EOS token (also HTML strikethrough or a type parameter)",
            "warning",
        )
    return "chat-control-token", f"chat-template control token {token}{_disguises(snippet, token)}", "error"


def _first_danger(text: str, reserved: tuple[str, ...]) -> str | None:
    """The first envelope tag or control token in (decoded) ``text``, described; else ``None``."""
    names = _name_maps(reserved)[0]
    for m in OPENER_RE.finditer(text):
        end = m.end()
        if end < len(text) and text[end] == "\\":
            continue
        hit = _hit(text, read_after(text, end, names), reserved)
        if hit is not None:
            return visible(text[m.start() : hit.end][:SNIPPET_MAX])
    for m in BRACKET_OPENER_RE.finditer(text):
        r = read_bracket(text, m.end(), names)
        if r.kind == "token" and text[m.end() : m.end() + 1] != "\\":
            return visible(text[m.start() : r.end][:SNIPPET_MAX])
    return None


# ---------------------------------------------------------------------------
# Rules


def _scan_openers(text: str, reserved: tuple[str, ...], out: list[_Raw]) -> None:
    """Every opener the model's eye reads as a tag or token (what the defang escapes) is a finding."""
    names = _name_maps(reserved)[0]
    n = len(text)
    for m in OPENER_RE.finditer(text):
        start, end = m.start(), m.end()
        reading = read_after(text, end, names)
        escaped = end < n and text[end] == "\\"
        if escaped:
            k = end
            while k < n and k - end < MAX_RUN and text[k] == "\\":
                k += 1
            hit = _hit(text, reading, reserved)
            if hit is None:
                # A backslash-escaped slash: <\u002f...
                window = _decode_escapes(text[end : k + 128])
                if read_after(window, 0, names).kind in ("reserved", "token"):
                    out.append(_Raw("defanged-tag", "warning", "escaped slash before a reserved name", start, min(n, k + 16)))
                continue
            what = "an envelope tag" if hit.kind == "reserved" else "a control token"
            out.append(_Raw("defanged-tag", "warning", f"already-escaped form of {what} ({hit.name!r})", start, hit.end))
            continue
        if not reading:
            continue
        if reading.kind == "padding":
            out.append(_padding_finding(text, start, end, reserved))
            continue
        hit = _hit(text, reading, reserved)
        if hit is None:
            continue  # a bare ``<|`` (see _hit)
        rule, message, severity = _describe_hit(text, start, hit)
        out.append(_Raw(rule, severity, message, start, max(hit.end, end)))


def _scan_brackets(text: str, reserved: tuple[str, ...], out: list[_Raw]) -> None:
    """``[NAME]`` control tokens through the same eye (:func:`envelock.modeleye.read_bracket`).

    An error in any case or disguise (look-alikes, references, invisible characters,
    spacing); an already-escaped one (``[\\INST]``) is a warning.
    """
    names, _, _, brk = _name_maps(reserved)
    n = len(text)
    for m in BRACKET_OPENER_RE.finditer(text):
        start, end = m.start(), m.end()
        reading = read_bracket(text, end, names)
        if not reading:
            continue
        if reading.kind == "padding":
            out.append(_Raw("padded-opener", "warning", "bracket followed by padding too long to read past", start, reading.end))
            continue
        name = brk.get(reading.name, reading.name)
        token = f"[{'/' if reading.slash else ''}{name}]"
        span = text[start : reading.end]
        if end < n and text[end] == "\\":
            out.append(_Raw("defanged-tag", "warning", f"already-escaped form of control token {token}", start, reading.end))
        else:
            msg = f"chat-template control token {token}{_disguises(span, token)}"
            out.append(_Raw("chat-control-token", "error", msg, start, reading.end))


def _decode_tag_chars(run: str) -> str:
    out: list[str] = []
    for c in run:
        v = ord(c) - _TAG_LO
        out.append(chr(v) if 0x20 <= v < 0x7F or v in (0x09, 0x0A, 0x0D) else f"U+{ord(c):04X}")
    return "".join(out)


def _scan_tags(text: str, reserved: tuple[str, ...], out: list[_Raw]) -> None:
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
        danger = _first_danger(hidden, reserved)
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


def _scan_hidden(text: str, reserved: tuple[str, ...], out: list[_Raw]) -> None:
    n = len(text)
    for m in _HIDDEN_RUN_RE.finditer(text):
        s, e = m.start(), m.end()
        run = m.group()
        if s == 0 and run == "\ufeff":
            continue
        if len(run) >= 4:
            decoded = _decode_hidden(run)
            if decoded is not None:
                danger = _first_danger(decoded, reserved)
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


# Encoded openers of '<' or '＜': percent (incl. double-encoded and %uXXXX), backslash escapes
# (JSON/JS/Python/C/Rust/CSS), quoted-printable and UTF-7.
_ENC_OPENER_RE = re.compile(
    r"%(?:25){0,3}(?:3[cC]|[uU](?:003[cC]|[fF][fF]1[cC]))"
    r"|\\{1,4}(?:u003[cC]|u[fF][fF]1[cC]|u\{0{0,4}3[cC]\}|x3[cC]|x\{3[cC]\}|U0000003[cC]|0?74(?![0-7])|0{0,4}3[cC](?![0-9a-fA-F]))"
    r"|=3[cC]|\+ADw-?"
)
_ESC_RE = re.compile(
    r"\\{1,4}(?:u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]{1,6})\}|x([0-9a-fA-F]{2})|x\{([0-9a-fA-F]{1,6})\}|U([0-9a-fA-F]{8})"
    r"|([0-7]{3})|([0-9a-fA-F]{1,6}) ?)"
    r"|%[uU]([0-9a-fA-F]{4})|=([0-9A-Fa-f]{2})|\+(AD[w4]|AC8)-?"
)
_UTF7 = {"ADw": "<", "AD4": ">", "AC8": "/"}


def _esc_char(m: re.Match[str]) -> str:
    if m.group(10):
        return _UTF7[m.group(10)]
    for g, base in ((1, 16), (2, 16), (3, 16), (4, 16), (5, 16), (6, 8), (7, 16), (8, 16), (9, 16)):
        v = m.group(g)
        if v is not None:
            cp = int(v, base)
            if 0 < cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
                return chr(cp)
            return m.group()
    return m.group()


def _decode_escapes(window: str) -> str:
    for _ in range(3):
        new = unquote(_ESC_RE.sub(_esc_char, window), errors="replace")
        if new == window:
            break
        window = new
    return window


def _cipher_names(reserved: tuple[str, ...]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    atbash = str.maketrans("abcdefghijklmnopqrstuvwxyz", "zyxwvutsrqponmlkjihgfedcba")
    for name in reserved:
        low = name.lower()
        out.append((codecs.encode(low, "rot13"), f"ROT13 of {name!r}"))
        out.append((low.translate(atbash), f"Atbash of {name!r}"))
        out.append((low[::-1], f"{name!r} reversed"))
    return out


@lru_cache(maxsize=16)
def _cipher_re(reserved: tuple[str, ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    alts: list[str] = []
    labels: dict[str, str] = {}
    for enc, label in _cipher_names(reserved):
        words = [w for w in re.split(r"[_\- ]", enc) if w]
        alts.append(r"[ \t_\-]{0,3}".join(re.escape(w) for w in words))
        labels["".join(words)] = label
    return re.compile("|".join(alts), re.IGNORECASE), labels


def _scan_encoded(text: str, reserved: tuple[str, ...], out: list[_Raw]) -> None:
    n = len(text)
    for m in _ENC_OPENER_RE.finditer(text):
        s = m.start()
        window = text[s : s + 192]
        decoded = _decode_escapes(window)
        om = OPENER_RE.match(decoded)
        if not om:
            continue
        hit = _hit(decoded, read_after(decoded, om.end(), _name_maps(reserved)[0]), reserved)
        if hit is None:
            continue
        # Map the end back roughly: the raw text up to the first whitespace after the name.
        e = s + len(m.group())
        lim = min(n, s + 192)
        while e < lim and not text[e].isspace():
            e += 1
        what = visible(decoded[: hit.end][:SNIPPET_MAX])
        out.append(_Raw("encoded-tag", "warning", f"encoded form of {what!r}", s, e))
    cre, labels = _cipher_re(tuple(reserved))
    for m in cre.finditer(text):
        key = re.sub(r"[ \t_\-]", "", m.group()).lower()
        out.append(_Raw("encoded-tag", "warning", f"{labels.get(key, 'encoded reserved name')}", m.start(), m.end()))


_B64_RE = re.compile(r"[A-Za-z0-9+/\-_]{16,}={0,2}")
_HEX_RE = re.compile(r"(?:[0-9a-fA-F]{2}){8,}")
_BIN_RE = re.compile(r"[01]{8}(?:[ \t]{1,2}[01]{8}){3,}")


def _b64_candidates(run: str) -> list[bytes]:
    body = run.rstrip("=")[:BLOB_MAX]
    alt = "-" in body or "_" in body
    if alt and ("+" in body or "/" in body):
        return []
    out: list[bytes] = []
    for shift in range(4):
        chunk = body[shift:]
        chunk = chunk[: len(chunk) - len(chunk) % 4]
        if len(chunk) < 8:
            continue
        try:
            out.append(base64.b64decode(chunk, altchars=b"-_" if alt else None, validate=True))
        except (binascii.Error, ValueError):
            continue
    return out


def _blob_danger(data: bytes, reserved: tuple[str, ...]) -> str | None:
    if b"<" not in data and b"[" not in data and b"&" not in data and b"\xef" not in data:
        return None
    return _first_danger(data.decode("utf-8", "replace"), reserved)


def _scan_blobs(text: str, reserved: tuple[str, ...], out: list[_Raw]) -> None:
    for m in _B64_RE.finditer(text):
        if m.group().isdigit():
            continue
        for data in _b64_candidates(m.group()):
            danger = _blob_danger(data, reserved)
            if danger:
                out.append(_Raw("encoded-blob-tag", "warning", f"base64 run decodes to {danger!r}", m.start(), m.end()))
                break
    for m in _HEX_RE.finditer(text):
        hexrun = m.group()
        if "3c" not in hexrun.lower() and "5b" not in hexrun.lower():
            continue
        danger = _blob_danger(bytes.fromhex(hexrun[:BLOB_MAX]), reserved)
        if danger:
            out.append(_Raw("encoded-blob-tag", "warning", f"hex run decodes to {danger!r}", m.start(), m.end()))
    for m in _BIN_RE.finditer(text):
        groups = m.group().split()
        data = bytes(int(g, 2) for g in groups[: BLOB_MAX // 8])
        danger = _blob_danger(data, reserved)
        if danger:
            out.append(_Raw("encoded-blob-tag", "warning", f"binary groups decode to {danger!r}", m.start(), m.end()))


_ATTR_INJECTION_RE = re.compile(
    r"(?:[\"']|&quot;|&#0*3[49];|&#[xX]0*2[27];|&apos;|%22|%27)"
    r"(?:[ \t\u2028\u2029]|%20|\+){0,8}(provenance|source|origin|fetched_at)[ \t]{0,4}(?:=|%3[dD])",
    re.IGNORECASE,
)


def _scan_attributes(text: str, out: list[_Raw]) -> None:
    out.extend(
        _Raw(
            "forged-attribute",
            "warning",
            f"quote followed by envelope attribute {m.group(1).lower()}=: attribute-injection attempt",
            m.start(),
            m.end(),
        )
        for m in _ATTR_INJECTION_RE.finditer(text)
    )


_PROSE_RE = re.compile(
    r"(?:^|(?<=[\r\u2028\u2029\x85]))[ \t]{0,8}("
    + "|".join(re.escape(p) for p in sorted(PROSE_TURN_MARKERS, key=len, reverse=True))
    + ")",
    re.IGNORECASE | re.MULTILINE,
)


def _scan_prose(text: str, out: list[_Raw]) -> None:
    out.extend(
        _Raw("prose-turn-marker", "note", f"prose turn marker {m.group(1)!r} at the start of a line", m.start(1), m.end(1))
        for m in _PROSE_RE.finditer(text)
    )


# ---------------------------------------------------------------------------
# Positions and the public entry point


class _Lines:
    """Line starts (LF-terminated lines), computed once per text: linear."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        i = text.find("\n")
        while i >= 0:
            self.starts.append(i + 1)
            i = text.find("\n", i + 1)

    def position(self, offset: int) -> tuple[int, int]:
        k = bisect.bisect_right(self.starts, offset) - 1
        return k + 1, offset - self.starts[k] + 1


def _snippet(text: str, start: int, end: int) -> str:
    part = text[start : min(end, start + SNIPPET_MAX)]
    shown = visible(part)
    if len(shown) > 2 * SNIPPET_MAX:
        shown = shown[: 2 * SNIPPET_MAX]
    return shown + ("…" if end - start > len(part) or len(shown) < len(visible(part)) else "")


#: Every rule runner, keyed by the rule ids it can emit (for ``disable=``).
_ALL_RULE_IDS = frozenset(RULES_BY_ID)


def scan_text(
    text: str,
    *,
    reserved: tuple[str, ...] = RESERVED_NAMES,
    disable: frozenset[str] | set[str] | tuple[str, ...] = (),
) -> list[Finding]:
    """Report hostile constructs in raw third-party ``text``, sorted by position.

    ``reserved`` are the envelope names to look for (default
    :data:`~envelock.tokens.RESERVED_NAMES`); ``disable`` is a set of rule ids
    (see :data:`envelock.rules.RULES`) not to report. Never raises on any
    ``str``; the cost is linear in ``len(text)``.
    """
    if not isinstance(text, str):
        raise TypeError(f"scan_text expects str, got {type(text).__name__}")
    unknown = set(disable) - _ALL_RULE_IDS
    if unknown:
        raise ValueError(f"unknown rule id(s): {', '.join(sorted(unknown))}")
    reserved = tuple(reserved)
    raw: list[_Raw] = []
    _scan_openers(text, reserved, raw)
    _scan_brackets(text, reserved, raw)
    _scan_tags(text, reserved, raw)
    _scan_bidi(text, raw)
    _scan_hidden(text, reserved, raw)
    _scan_controls(text, raw)
    _scan_encoded(text, reserved, raw)
    _scan_blobs(text, reserved, raw)
    _scan_attributes(text, raw)
    _scan_prose(text, raw)
    seen: set[tuple[str, int, int]] = set()
    lines = _Lines(text) if raw else None
    findings: list[Finding] = []
    for r in sorted(raw, key=lambda r: (r.start, -SEVERITY_RANK[r.severity], r.rule, r.end)):
        if r.rule in disable or (r.rule, r.start, r.end) in seen:
            continue
        seen.add((r.rule, r.start, r.end))
        assert lines is not None
        line, col = lines.position(r.start)
        end_line, end_col = lines.position(r.end)
        snippet = _snippet(text, r.start, r.end)
        findings.append(Finding(r.rule, r.severity, r.message, r.start, line, col, r.end, end_line, end_col, snippet))
    return findings
