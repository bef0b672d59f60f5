"""The body escape: insert one backslash after an opener that starts something dangerous.

``defang`` never deletes or reorders a character; it only inserts ``\\``:

* after an *opener* (``<``, a look-alike, or a character reference for ``<``)
  that is already followed by ``\\`` (escaping the escape, so the mapping is
  injective and ``undefang(defang(s)) == s`` for every string);
* after an opener whose lookahead, through the model's eye
  (:func:`envelock.modeleye.dangerous_after`), starts a reserved envelope name
  or a chat-template control token;
* at level ``markup`` and ``xml``, also after every ``<`` that starts markup
  (followed, past whitespace and ignorables, by a letter, ``/``, ``!`` or ``?``);
* after a bracket opener (``[``, a look-alike such as ``［`` or ``⟦``, or a
  character reference such as ``&lsqb;``) whose lookahead, through the same eye
  (:func:`envelock.modeleye.read_bracket`), reads a ``[NAME]`` control token
  (``[INST]`` -> ``[\\INST]``, ``[\\INST]`` -> ``[\\\\INST]``: the eye reads past
  backslashes, so an escaped token gets one more and the map stays injective).

Level ``xml`` then escapes the result as XML text (``&``, ``<``, ``>`` and CR
as ``&#13;``), so a strict XML parser returns the defanged text exactly.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from functools import lru_cache
from typing import Literal

from . import modeleye as _me
from .modeleye import (
    BRACKET_OPENER_PATTERN,
    BRACKET_OPENER_RE,
    MAX_RUN,
    OPENER_PATTERN,
    OPENER_RE,
    Names,
    dangerous_after,
    is_alpha,
    is_ignorable,
    is_space,
    names_for,
    read_bracket,
    readings,
)
from .tokens import RESERVED_NAMES
from .unicode_tables import SKIP_RANGES

Level = Literal["reserved", "markup", "xml"]
LEVELS: tuple[Level, ...] = ("reserved", "markup", "xml")

#: An opener followed by a backslash: loses that backslash.
_OPENER_UNDO_RE = re.compile(rf"({OPENER_PATTERN})\\")

_XML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\r", "&#13;"))
_XML_UNESCAPE_RE = re.compile(r"&(amp|lt|gt|#13);")
_XML_UNESCAPE = {"amp": "&", "lt": "<", "gt": ">", "#13": "\r"}


def check_level(level: str) -> Level:
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    return level


def markup_after(text: str, pos: int) -> bool:
    """Does the ``<`` ending at ``pos`` start markup (letter, ``/``, ``!``, ``?``)?"""
    end = min(len(text), pos + MAX_RUN)
    i = pos
    while i < end:
        ch = text[i]
        if is_space(ch) or is_ignorable(ch):
            i += 1
            continue
        return is_alpha(ch) or ch in "/!?"
    return i < len(text)  # fail closed after MAX_RUN skipped characters


def _names(reserved: tuple[str, ...]) -> Names:
    return names_for(tuple(reserved))


def _opener_needs_escape(text: str, m: re.Match[str], names: Names, markup: bool) -> bool:
    """The per-opener check of the reference implementation."""
    end = m.end()
    return (
        (end < len(text) and text[end] == "\\")
        or dangerous_after(text, end, names)
        or (markup and m.group() == "<" and markup_after(text, end))
    )


def defang_reference(text: str, *, level: str = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """The reference defang (the oracle of the fast path): one Python check per opener."""
    lvl = check_level(level)
    names = _names(tuple(reserved))
    markup = lvl != "reserved"
    out: list[str] = []
    last = 0
    for m in OPENER_RE.finditer(text):
        if _opener_needs_escape(text, m, names, markup):
            end = m.end()
            out.append(text[last:end])
            out.append("\\")
            last = end
    if last:
        out.append(text[last:])
        text = "".join(out)
    text = defang_brackets(text, fast=False)
    if lvl == "xml":
        text = xml_escape_text(text)
    return text


def undefang(text: str, *, level: str = "reserved") -> str:
    """Invert :func:`defang` exactly (``undefang(defang(s, level=L), level=L) == s``)."""
    lvl = check_level(level)
    if lvl == "xml":
        text = xml_unescape_text(text)
    text = _OPENER_UNDO_RE.sub(r"\1", text)
    return undefang_brackets(text)


def _may_hold_bracket(text: str) -> bool:
    if "[" in text or "&" in text:
        return True
    return not text.isascii() and any(c in text for c in _me.LBRACKET_CHARS[1:])


@lru_cache(maxsize=4)
def _bracket_prefilter(names: Names) -> re.Pattern[str]:  # pragma: no mutate block
    """Bracket openers that :func:`read_bracket` must look at (a superset of the dangerous ones).

    ASCII skipped characters and slashes (at most ``MAX_RUN - 1``) followed by a
    non-ASCII character, an ``&`` or an ASCII character one of whose readings
    starts a bracket token name; or a run of ``MAX_RUN`` skipped ASCII characters.
    """
    skip = [chr(c) for c in range(0x80) if _me.is_skip(chr(c)) or chr(c) in _me.SLASH_CHARS]
    first = {b[:1] for b in names.brackets}
    letters = [chr(c) for c in range(0x80) if chr(c) not in skip and any(r[:1] in first for r in readings(chr(c)))]
    sk = _cls(skip)
    return re.compile(
        f"{BRACKET_OPENER_PATTERN}(?={sk}{{0,{MAX_RUN - 1}}}+(?:[^\\x00-\\x7f]|&|{_cls(letters)})|{sk}{{{MAX_RUN}}})"
    )


def defang_brackets(text: str, *, fast: bool = True) -> str:
    """Insert ``\\`` after every bracket opener whose reading is a ``[NAME]`` token (or fails closed)."""
    if not _may_hold_bracket(text):
        return text
    names = names_for()
    finder = _bracket_prefilter(names) if fast and FAST_AVAILABLE else BRACKET_OPENER_RE
    return _insert_after(text, [m.end() for m in finder.finditer(text) if read_bracket(text, m.end(), names)])


def undefang_brackets(text: str) -> str:
    """Invert :func:`defang_brackets`: drop the ``\\`` after a bracket opener whose reading is still dangerous.

    The eye reads past backslashes, and a reading stops at the next opener, so the
    reading at an opener is the same before and after the defang inserted its
    backslash: exactly the inserted ones are removed.
    """
    if "\\" not in text or not _may_hold_bracket(text):
        return text
    names = names_for()
    out: list[str] = []
    last = 0
    n = len(text)
    for m in BRACKET_OPENER_RE.finditer(text):
        e = m.end()
        if e < n and text[e] == "\\" and read_bracket(text, e, names):
            out.append(text[last:e])
            last = e + 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def xml_escape_text(text: str) -> str:
    """XML text escape with an exact round trip: ``&``, ``<``, ``>``, CR."""
    for raw, ref in _XML_ESCAPES:
        text = text.replace(raw, ref)
    return text


def xml_unescape_text(text: str) -> str:
    """Inverse of :func:`xml_escape_text` (only the four references it emits)."""
    return _XML_UNESCAPE_RE.sub(lambda m: _XML_UNESCAPE[m.group(1)], text)


# ---------------------------------------------------------------------------
# Fast path. ``defang_reference`` above is the oracle: one Python check per
# opener. The fast path decides the common cases in C with two generated
# regexes over the same trie of name skeletons:
#
# * ``danger``: openers whose lookahead certainly starts a dangerous construct
#   (every step of the match is a step :func:`dangerous_after` takes, on
#   characters whose behaviour was computed from the model's-eye functions);
# * ``unsure``: openers whose lookahead reaches something the trie does not
#   model (a character reference other than ``&lt;``-forms, an unknown
#   non-ASCII character, a possible namespace prefix, a long skip run) at a
#   point where a name could still form. Only these get the Python check.
#
# An opener matched by neither is certainly safe. ``danger`` and ``unsure``
# may overlap; a ``danger`` match is dangerous whatever the rest says.
# tests/test_fast_defang.py checks ``defang == defang_reference`` (hypothesis).
# ---------------------------------------------------------------------------

_LT_REF_BODY = r"(?:lt|LT|\#[xX]0{0,6}3[cC]|\#0{0,6}60);"
#: After ``&``: no character reference can start here, so ``&`` reads as itself.
_AMP_PLAIN = r"(?=[\t\n\f <&;]|\Z)"
_GT_REF_BODY = r"(?:gt|GT|\#[xX]0{0,6}3[eE]|\#0{0,6}62);"
#: ASCII name characters and separators that ``_after_namespace`` reads past.
_NS_RUN = r"[A-Za-z0-9_\-.\\]{0,33}+(?::|[^\x00-\x7f])"


def _ranges(chars: Iterable[str]) -> str:  # pragma: no mutate block
    """A regex class body for ``chars``, written as ranges (compiles fast)."""
    cps = sorted({ord(c) for c in chars})
    out: list[str] = []
    i = 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        lo, hi = re.escape(chr(cps[i])), re.escape(chr(cps[j]))
        out.append(lo if i == j else f"{lo}-{hi}")
        i = j + 1
    return "".join(out)


def _cls(chars: Iterable[str], extra: str = "") -> str:  # pragma: no mutate block
    body = _ranges(chars) + extra
    return f"[{body}]" if body else "(?!)"


def _known_chars() -> list[str]:  # pragma: no mutate block
    """Characters outside names whose behaviour the regexes model (ignorables come as ranges)."""
    chars = {chr(c) for c in range(0xA0)} | {chr(c) for c in range(0xA0, 0x3001) if is_space(chr(c)) and _me.is_skip(chr(c))}
    chars |= set(_me.SLASH_CHARS) | set(_me.PIPE_CHARS) | set(_me.GT_CHARS) | set(_me._BANG) | {"\ufffd"}
    chars.discard("&")
    return sorted(c for c in chars if not _me.is_ignorable(c) and ord(c) <= 0xFFFF)


def _lookahead(names: Names, kind: str) -> tuple[str, str]:  # pragma: no mutate block
    """The ``danger`` or ``unsure`` lookaheads (after an opener; after a ``<`` for markup).

    Inside a name only ASCII is modelled; any other character there is
    ``unsure``. Before the name (the skip run after an opener) whitespace,
    ignorables, controls, slashes and their look-alikes are modelled too.
    """
    from .modeleye import MAX_LOOKAHEAD

    # Only BMP skipped characters are modelled, so that every class compiles to a
    # constant-time lookup table; astral ones (TAG characters...) are unsure.
    bmp = [(lo, min(hi, 0xFFFF)) for lo, hi in SKIP_RANGES if lo <= 0xFFFF]
    skipr = _ranges(chr(c) for lo, hi in bmp for c in range(lo, hi + 1))
    ign = _ranges(chr(c) for lo, hi in bmp for c in range(lo, hi + 1) if _me.is_ignorable(chr(c)))
    known = _known_chars()
    ascii_ = [c for c in known if ord(c) < 0x80]
    nonascii = "[^\\x00-\\x7f]"
    p1 = _cls((c for c in known if _me.is_skip(c) or c in _me._SLASH or c in _me._BANG), skipr)
    gap = _cls(c for c in ascii_ if _me.is_skip(c))
    gtskip = _cls((c for c in known if _me.is_skip(c) or c in _me._SLASH), skipr)
    wi = _cls((c for c in known if is_space(c) or _me.is_ignorable(c)), ign)

    def skip1(c: str) -> bool:
        return _me.is_skip(c) or c in _me._SLASH or c in _me._BANG

    pipe = _cls(c for c in known if not skip1(c) and c in _me._PIPE)
    gt = _cls(c for c in known if not (_me.is_skip(c) or c in _me._SLASH) and c in _me._GT)
    by_part: dict[str, list[str]] = {}
    for c in ascii_:
        if _me.is_skip(c):
            continue
        for part in readings(c):
            by_part.setdefault(part, []).append(c)
    letters = [(p, _cls(cs)) for p, cs in sorted(by_part.items())]
    letters.append((readings("<")[0], f"&{_LT_REF_BODY}"))
    letters.append((readings("&")[0], f"&{_AMP_PLAIN}"))
    colonish = _cls(c for c in ascii_ if any(r.endswith(":") for r in readings(c)))

    def live(s: str) -> bool:
        return not names.reserved_match(s) and (names.viable(s) or s in names.tokens)

    # Bound the characters a fast decision reads so that MAX_LOOKAHEAD is never reached.
    depth = 1 + max(len(x) for x in (*names.reserved, *names.tokens))
    budget = MAX_LOOKAHEAD - 1 - (MAX_RUN - 1) - (MAX_RUN + 1)
    run = min(MAX_RUN - 1, budget // depth - 1)
    if run < 1:  # pragma: no cover - names too long for the fast path
        raise ValueError("reserved names too long for the fast path")

    gt_d = f"(?:{gtskip}{{0,{MAX_RUN - 1}}}+(?:{gt}|&{_GT_REF_BODY})|{gtskip}{{{MAX_RUN}}}[\\s\\S])"
    gt_u = f"(?:(?!{gtskip}{{{MAX_RUN}}}){gtskip}{{0,{MAX_RUN - 1}}}+(?:&(?!{_GT_REF_BODY})|{nonascii}))"
    point_u = f"(?:&(?!{_LT_REF_BODY}|{_AMP_PLAIN})|{nonascii}|{colonish}|(?:&{_LT_REF_BODY}|&{_AMP_PLAIN}|[^&]){_NS_RUN})"
    want_d = kind == "danger"
    memo: dict[str, str | None] = {}

    def state(s: str) -> str | None:
        if s in memo:
            return memo[s]
        alts: list[str] = [] if want_d else [point_u]
        for p, chars in letters:
            new = s + p
            if names.reserved_match(new):
                if want_d:
                    alts.append(chars)
                continue
            if not live(new):
                continue
            nxt: list[str] = []
            if new in names.tokens:
                nxt.append(gt_d if want_d else gt_u)
            if names.viable(new):
                sub = state(new)
                if sub:
                    nxt.append(sub)
            if nxt:
                alts.append(f"{chars}(?:{'|'.join(nxt)})")
        if not alts:
            out = None
        elif want_d:
            out = f"{gap}{{0,{run}}}+(?:{'|'.join(alts)})"
        else:
            out = f"(?:{gap}{{{run + 1}}}|{gap}{{0,{run}}}+(?:{'|'.join(alts)}))"
        memo[s] = out
        return out

    first = state("") or "(?!)"
    if want_d:
        start = f"{pipe}|{first}" if names.pipes else first
        after = f"\\\\|{p1}{{{MAX_RUN}}}|{p1}{{0,{MAX_RUN - 1}}}+(?:{start})"
        alpha = _cls(c for c in known if not (is_space(c) or _me.is_ignorable(c)) and (is_alpha(c) or c in "/!?"))
        mk = f"{wi}{{0,{MAX_RUN - 1}}}+{alpha}|{wi}{{{MAX_RUN}}}[\\s\\S]"
    else:
        no_pipe = f"(?!{pipe})" if names.pipes else ""
        after = f"(?!\\\\)(?!{p1}{{{MAX_RUN}}}){p1}{{0,{MAX_RUN - 1}}}+{no_pipe}{first}"
        mk = f"(?!{wi}{{{MAX_RUN}}}){wi}{{0,{MAX_RUN - 1}}}+{nonascii}"
    return after, mk


@lru_cache(maxsize=32)
def _fast_regex(names: Names, markup: bool) -> re.Pattern[str]:
    """One regex matching every opener that is certainly dangerous or unsure.

    A match with ``lastgroup`` ``None`` is dangerous; ``"u"`` means unsure
    (decide with the reference check).
    """
    after_d, mk_d = _lookahead(names, "danger")
    after_u, mk_u = _lookahead(names, "unsure")
    # The opener as finditer reads it (``;`` taken greedily, never given back);
    # not an atomic group, so that the regex engine keeps its first-character scan.
    op = OPENER_PATTERN.replace(";?", ";?+")
    pattern = f"{op}(?:(?={after_d})|(?={after_u})(?P<u>))"
    if markup:
        pattern = f"{pattern}|<(?:(?={mk_d})|(?={mk_u})(?P<v>))"
    return re.compile(pattern)


def _insert_after(text: str, ends: Iterable[int]) -> str:
    out: list[str] = []
    last = 0
    for e in ends:
        out.append(text[last:e])
        out.append("\\")
        last = e
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


_LT_OTHERS = tuple(c for c in _me.LT_CHARS if c != "<")


def _may_hold_opener(text: str) -> bool:
    """False when ``text`` holds no opener at all (a few memchr-speed scans)."""
    if "<" in text or "&" in text:
        return True
    return not text.isascii() and any(c in text for c in _LT_OTHERS)


def defang_fast(text: str, *, level: str = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """:func:`defang` through the generated regexes; equal to :func:`defang_reference` on every input."""
    lvl = check_level(level)
    if not _may_hold_opener(text):
        text = defang_brackets(text)
        return xml_escape_text(text) if lvl == "xml" else text
    names = _names(tuple(reserved))
    markup = lvl != "reserved"
    ends = [
        m.end()
        for m in _fast_regex(names, markup).finditer(text)
        if m.lastgroup is None or _opener_needs_escape(text, m, names, markup)
    ]
    if ends:
        text = _insert_after(text, ends)
    text = defang_brackets(text)
    if lvl == "xml":
        text = xml_escape_text(text)
    return text


#: The fast path uses possessive quantifiers (``{0,n}+``), new in Python 3.11;
#: on 3.10 every call takes the reference implementation (same output, slower).
FAST_AVAILABLE = sys.version_info >= (3, 11)
#: ``"fast"`` (default where available) or ``"reference"``; tests run the suite over both.
_IMPL = "fast" if FAST_AVAILABLE else "reference"


def defang(text: str, *, level: str = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """Escape ``text`` so that no reader of ``level`` sees a tag or control token in it.

    Injective; :func:`undefang` is its exact inverse.
    """
    if _IMPL == "reference" or not FAST_AVAILABLE:
        return defang_reference(text, level=level, reserved=reserved)
    return defang_fast(text, level=level, reserved=reserved)


#: What follows every body in a composed preface: the LF before the close tag, then ``<``.
BODY_CONTEXT = "\n<"


def defang_body(text: str, *, level: str = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """:func:`defang` for a body, judged in the context it is rendered in.

    In a preface a body is always followed by ``\n</retrieved_content>``. The
    lookahead at the end of a body must see that ``\n`` (one more skipped
    character towards the fail-closed bound) and then a ``<`` (which ends any
    name), exactly as a reader of the whole preface does; :func:`defang` alone
    judges the end of its text as the end of input. ``undefang`` inverts both.
    """
    lvl = check_level(level)
    inner = "markup" if lvl == "xml" else lvl
    if not _may_hold_opener(text[-(_me.MAX_LOOKAHEAD + _me.MAX_OPENER_LEN + 2) :]):
        # No opener ends close enough to the end for its lookahead to reach it.
        out = defang(text, level=inner, reserved=reserved)
    else:
        out = defang(text + BODY_CONTEXT, level=inner, reserved=reserved)
        if not out.endswith(BODY_CONTEXT):  # pragma: no cover - a '<' at the end of input is never escaped
            raise AssertionError("body context was escaped")
        out = out[: -len(BODY_CONTEXT)]
    return xml_escape_text(out) if lvl == "xml" else out
