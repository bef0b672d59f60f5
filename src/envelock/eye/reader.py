"""The model's eye: how a reader that is not a parser sees a run of text.

An LLM does not tokenise markup. It will take ``</ retrieved-content>``,
``\uff1c/RETRI\u0395VED_CONTENT\uff1e``, ``externaI_content`` with a capital I, a
strike-through mark on every letter, an em dash for the underscore or a braille
blank between ``<`` and ``/`` for a close tag. This module decides, for the text
right after an *opener*, what a reader sees there: nothing, an envelope tag, a
chat-template control token, or padding too long to follow.

Every character table comes from Unicode data through the committed generator
(:mod:`envelock.unicode_tables`, ``scripts/gen_unicode_tables.py``):

* a character is **skipped** (``SKIP_RANGES``) when it renders as nothing, as a
  space, as a mark on its base, or as a separator (``- _ . \\`` and what folds
  or looks like them);
* otherwise it has a set of **readings** (``READINGS``): every ASCII string a
  reader may take it for. The name is followed as a set of live skeletons (a
  small NFA over the reserved names and tokens), so ``р`` (looks like ``p``,
  sounds like ``r``) and ``I``/``l``/``|`` (one shape) match either way;
* openers, closers, slashes, bars, brackets and quotes are sets derived from
  names, NFKC and UTS #39.

The check is a bounded lookahead: at most :data:`MAX_RUN` skipped characters in
a row and at most :data:`MAX_LOOKAHEAD` characters in all. When a bound is
reached while the text could still turn into a reserved name, the answer is
"dangerous" (fail closed). A reading also ends at the next opener (which is read
on its own), so the work per opener is bounded by the distance to the next one
and every scan is linear in the input.
"""

from __future__ import annotations

import bisect
import html
import html.entities
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from typing import Literal

from .charsets import char_class, regex_class
from .tokens import ANGLE_TOKEN_NAMES, BRACKET_TOKEN_NAMES, RESERVED_NAMES
from .unicode_tables import (
    ALNUM_RANGES,
    ALPHA_RANGES,
    BANG_CHARACTERS,
    DEFAULT_IGNORABLE_RANGES,
    GT_LOOKALIKES,
    LBRACKET_LOOKALIKES,
    LT_LOOKALIKES,
    PIPE_LOOKALIKES,
    RBRACKET_LOOKALIKES,
    READINGS,
    SKIP_RANGES,
    SLASH_LOOKALIKES,
    SPACE_RANGES,
)

#: Longest run of skipped characters (whitespace, ignorables, marks, slashes,
#: separators) the lookahead follows before failing closed.
MAX_RUN = 32
#: Most characters the lookahead examines after one opener.
MAX_LOOKAHEAD = 256


IGNORABLE_CLASS = char_class(DEFAULT_IGNORABLE_RANGES)
IGNORABLE_RE = re.compile(f"[{IGNORABLE_CLASS}]")
LT_CHARS = "<" + "".join(chr(c) for c in LT_LOOKALIKES)
GT_CHARS = ">" + "".join(chr(c) for c in GT_LOOKALIKES)
SLASH_CHARS = "/" + "".join(chr(c) for c in SLASH_LOOKALIKES)
PIPE_CHARS = "|" + "".join(chr(c) for c in PIPE_LOOKALIKES)
LBRACKET_CHARS = "[" + "".join(chr(c) for c in LBRACKET_LOOKALIKES)
RBRACKET_CHARS = "]" + "".join(chr(c) for c in RBRACKET_LOOKALIKES)

_IGNORABLE = frozenset(chr(cp) for lo, hi in DEFAULT_IGNORABLE_RANGES for cp in range(lo, hi + 1))
_SKIP = frozenset(chr(cp) for lo, hi in SKIP_RANGES for cp in range(lo, hi + 1))
_READ: dict[str, tuple[str, ...]] = {chr(cp): rs for cp, rs in READINGS.items()}
_GT = frozenset(GT_CHARS)
_SLASH = frozenset(SLASH_CHARS)
_PIPE = frozenset(PIPE_CHARS)
_RBRACKET = frozenset(RBRACKET_CHARS)
#: Opener characters: a reading ends at one (some are letters too, e.g. U+1438 CANADIAN SYLLABICS PA).
_OPENER_CHARS = frozenset(LT_CHARS + LBRACKET_CHARS)
#: ``<!name`` and ``<?name`` read as tags too (declarations, processing instructions).
_BANG = frozenset(chr(c) for c in BANG_CHARACTERS)
#: The separators of a name (also in the generated skip set); ``_after_namespace`` reads past them.
_SEPARATORS = frozenset("_-.\\")

#: Most ``&amp;`` layers an opener may carry (``&amp;amp;lt;`` has two).
MAX_AMP_LAYERS = 16
#: Most leading zeros of a numeric character reference the reader decodes (the lookahead bound).
MAX_ZEROS = MAX_LOOKAHEAD
#: An upper bound on the length of one opener token.
MAX_OPENER_LEN = 2 + (MAX_AMP_LAYERS + 1) * (MAX_ZEROS + 12) + 32

_HTML5 = html.entities.html5


def _ref_pattern(chars: str) -> str:
    """A character reference for one of ``chars``, with any ``&`` layers in front.

    Numeric (decimal or hex, up to :data:`MAX_ZEROS` leading zeros, optional ``;``)
    for every code point in ``chars``; named for every HTML5 entity whose value is
    one of them (``&lt``, ``&LT``, ``&lang;``, ``&lsqb;``...; ``lt`` in any case);
    and up to :data:`MAX_AMP_LAYERS` layers of ``&`` written as ``amp;``, ``amp``,
    ``AMP``, ``&#38;`` or ``&#x26;`` in front (``&amp;lt;``, ``&#38;lt;``, ``&amplt;``).
    """
    codes = sorted(ord(c) for c in chars)
    dec = "|".join(str(c) for c in codes)
    hexa = "|".join(f"{c:x}" for c in codes)
    names = sorted(
        {n.rstrip(";") for n, v in _HTML5.items() if v in chars and n.endswith(";")} - {"lt", "LT"},
        key=len,
        reverse=True,
    )
    lt = "[lL][tT];?|" if "<" in chars else ""
    amp = rf"(?:[aA][mM][pP];?|#0{{0,{MAX_ZEROS}}}38(?![0-9]);?|#[xX]0{{0,{MAX_ZEROS}}}26(?![0-9a-fA-F]);?)"
    return (
        rf"&{amp}{{0,{MAX_AMP_LAYERS}}}(?:"
        + lt
        + "|".join(f"{re.escape(n)};" for n in names)
        + rf"|#0{{0,{MAX_ZEROS}}}(?:{dec})(?![0-9]);?"
        + rf"|#[xX]0{{0,{MAX_ZEROS}}}(?i:{hexa})(?![0-9a-fA-F]);?)"
    )


def _opener_pattern(chars: str, ref: str) -> str:
    """One of ``chars``, or ``ref`` (a reference pattern starting with ``&``).

    Written as one character class first (``[<＜…&]``) and the rest of a reference
    after an ``&``, so that the regex engine finds candidates with its fast
    first-character scan instead of trying an alternation at every position.
    """
    if not ref.startswith("&"):
        raise ValueError("a reference pattern starts with '&'")
    return f"(?:{regex_class(chars + '&')}(?:(?<=&){ref[1:]}|(?<!&)))"


def atomic_opener(pattern: str) -> str:
    """An opener pattern whose reference part is an atomic group (Python 3.11+).

    Inside a larger regex (``opener(?=lookahead)``) the engine could otherwise
    backtrack into another tokenization of the same text (``&lt`` instead of
    ``&ltcc;``) to satisfy the lookahead; atomic, it keeps the one
    ``OPENER_RE.finditer`` finds, so every implementation judges the same openers.
    """
    return pattern.replace("(?:(?<=&)", "(?>(?<=&)", 1)


LT_REF_PATTERN = _ref_pattern(LT_CHARS)
#: Any opener: ``<``, a look-alike, or a character reference for one.
OPENER_PATTERN = _opener_pattern(LT_CHARS, LT_REF_PATTERN)
OPENER_RE = re.compile(OPENER_PATTERN)
#: Any bracket opener: ``[``, a look-alike (``［``, ``⟦``...), or a reference for one (``&#91;``, ``&lsqb;``).
BRACKET_OPENER_PATTERN = _opener_pattern(LBRACKET_CHARS, _ref_pattern(LBRACKET_CHARS))
BRACKET_OPENER_RE = re.compile(BRACKET_OPENER_PATTERN)

#: A character reference as ``html.unescape`` finds one (numeric with up to
#: :data:`MAX_ZEROS` leading zeros, or a name of up to 32 characters, ``;`` optional).
_REF_RE = re.compile(
    rf"&(?:#0{{0,{MAX_ZEROS}}}[0-9]{{1,8}};?|#[xX]0{{0,{MAX_ZEROS}}}[0-9a-fA-F]{{1,8}};?|[^\t\n\f <&#;]{{1,32}};?)"
)


class _RangeSet:
    """Membership in a generated range table (bisect; an implementation of any language can do the same)."""

    def __init__(self, ranges: tuple[tuple[int, int], ...]) -> None:
        self.lo = [lo for lo, _ in ranges]
        self.hi = [hi for _, hi in ranges]

    def __contains__(self, ch: str) -> bool:
        cp = ord(ch)
        k = bisect.bisect_right(self.lo, cp) - 1
        return k >= 0 and cp <= self.hi[k]


_ALPHA = _RangeSet(ALPHA_RANGES)
_ALNUM = _RangeSet(ALNUM_RANGES)
_SPACE = _RangeSet(SPACE_RANGES)


def is_alpha(ch: str) -> bool:
    """A letter (category L*, Unicode 17 from the generated table, not the interpreter's data)."""
    return ch in _ALPHA


def is_alnum(ch: str) -> bool:
    """A letter or number (L*, N*; generated)."""
    return ch in _ALNUM


def is_space(ch: str) -> bool:
    """Whitespace as ``str.isspace`` defines it, from the generated table."""
    return ch in _SPACE


def is_ignorable(ch: str) -> bool:
    """True for a Default_Ignorable_Code_Point (zero-width, TAG, bidi, VS...)."""
    return ch in _IGNORABLE


def is_skip(ch: str) -> bool:
    """Does the model's eye read past ``ch`` like whitespace (generated ``SKIP_RANGES``)?"""
    return ch in _SKIP


_is_skip = is_skip


_LT_OTHERS = tuple(LT_CHARS[1:])
_LBRACKET_OTHERS = tuple(LBRACKET_CHARS[1:])


def may_hold_opener(text: str) -> bool:
    """False when ``text`` holds no angle opener at all (a few memchr-speed scans)."""
    if "<" in text or "&" in text:
        return True
    return not text.isascii() and any(c in text for c in _LT_OTHERS)


def may_hold_bracket(text: str) -> bool:
    """False when ``text`` holds no bracket opener at all."""
    if "[" in text or "&" in text:
        return True
    return not text.isascii() and any(c in text for c in _LBRACKET_OTHERS)


def readings(ch: str) -> tuple[str, ...]:
    """Every string a reader may take ``ch`` for: ``("",)`` when skipped, else the
    generated readings (primary first), else ``ch`` itself."""
    if ch in _SKIP:
        return ("",)
    return _READ.get(ch, (ch,))


def char_skeleton(ch: str) -> str:
    """The primary reading of one character (the 0.1 skeleton: NFKC, casefold, UTS #39, separators dropped)."""
    return readings(ch)[0]


def skeleton(text: str) -> str:
    """Skeleton of a string: the primary reading of each character (how names are stored)."""
    return "".join(char_skeleton(c) for c in text)


def _piece_readings(piece: str) -> tuple[str, ...]:
    if len(piece) == 1:
        return readings(piece)
    combos = {"".join(p) for p in product(*(readings(c) for c in piece[:4]))}
    return tuple(sorted(combos))[:16]


def _prefixes(names: Iterable[str]) -> frozenset[str]:
    return frozenset(n[:k] for n in names for k in range(len(n) + 1))


@dataclass(frozen=True)
class Names:
    """Skeletons of the names the lookahead looks for."""

    reserved: tuple[str, ...]
    tokens: tuple[str, ...]
    pipes: bool = True
    brackets: tuple[str, ...] = ()
    _live: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())
    _blive: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())

    def __post_init__(self) -> None:
        object.__setattr__(self, "_live", _prefixes((*self.reserved, *self.tokens)))
        object.__setattr__(self, "_blive", _prefixes(self.brackets))

    def viable(self, skel: str) -> bool:
        """Could ``skel`` still grow into a reserved name or a token?"""
        return skel in self._live

    def reserved_match(self, skel: str) -> str | None:
        """The reserved skeleton ``skel`` starts with, if any."""
        for r in self.reserved:
            if skel.startswith(r):
                return r
        return None


@lru_cache(maxsize=64)
def names_for(reserved: tuple[str, ...] = RESERVED_NAMES) -> Names:
    """Skeleton tables for a set of reserved names (the chat tokens are fixed)."""
    if any(not skeleton(n) for n in reserved):
        raise ValueError("a reserved name has an empty skeleton")
    skels = tuple(sorted({skeleton(n) for n in reserved}))
    tokens = tuple(sorted({skeleton(t) for t in ANGLE_TOKEN_NAMES}))
    brackets = tuple(sorted({skeleton(t) for t in BRACKET_TOKEN_NAMES}))
    return Names(skels, tokens, True, brackets)


#: The longest legacy (no ``;``) entity name.
_LEGACY_MAX = max(len(n) for n in _HTML5 if not n.endswith(";"))


def _decode_at(text: str, i: int) -> tuple[str, int]:
    """The text at ``i``: one character, or one character reference decoded as ``html.unescape`` would.

    Only the reference itself is consumed: for a legacy reference without ``;``
    (``&LTfoo``, ``&ampx``) that is the longest known entity name, as in
    ``html.unescape``, and the characters after it are read one by one. A
    reference that decodes to ``&`` (``&amp;``, ``&#38;``, ``&AMP``) followed by
    the body of another reference is read as that one too, up to
    :data:`MAX_AMP_LAYERS` layers (``&amp;gt;`` reads as ``>``), as the openers are.
    """
    piece, nxt = _decode_one(text, i)
    layers = 0
    while piece == "&" and nxt - i > 1 and layers < MAX_AMP_LAYERS and nxt < len(text):
        inner, used = _decode_one("&" + text[nxt : nxt + MAX_ZEROS + 16], 0)
        if used <= 1:
            break
        piece, nxt = inner, nxt + used - 1
        layers += 1
    return piece, nxt


def _decode_one(text: str, i: int) -> tuple[str, int]:
    if text[i] == "&":
        m = _REF_RE.match(text, i)
        if m:
            ref = m.group()
            if ref[1] == "#":
                decoded = html.unescape(ref)
                if decoded != ref:
                    return decoded, m.end()
            else:
                name = ref[1:]
                if name in _HTML5:
                    return _HTML5[name], m.end()
                for k in range(min(len(name), _LEGACY_MAX), 1, -1):
                    if name[:k] in _HTML5:
                        return _HTML5[name[:k]], i + 1 + k
    return text[i], i + 1


def decode_at(text: str, i: int) -> tuple[str, int]:
    """The piece of text at ``i`` as the model's eye reads it (see :func:`_decode_at`)."""
    return _decode_at(text, i)


Kind = Literal["none", "reserved", "token", "bar", "padding"]


@dataclass(frozen=True)
class Reading:
    """What the model's eye sees after one opener.

    ``kind``: ``"none"`` (nothing dangerous), ``"reserved"`` (an envelope name),
    ``"token"`` (a ``<NAME>`` or ``[NAME]`` control token, ``>``/``]`` included),
    ``"bar"`` (a ``<|`` chat-template token opening) or ``"padding"`` (a bound was
    reached while a name could still form: fail closed). ``name`` is the skeleton
    matched; ``slash`` says a slash was read past first (a close tag); ``end`` is
    where the reading stopped in the text.
    """

    kind: Kind
    name: str = ""
    slash: bool = False
    end: int = 0

    def __bool__(self) -> bool:
        return self.kind != "none"

    @property
    def fail_closed(self) -> bool:
        return self.kind == "padding"


_NONE = Reading("none")


def _lead(text: str, pos: int, end: int, bang: bool) -> tuple[int, int, bool]:
    """Phase 1: read past skipped characters, slashes (and ``!``/``?``); (index, run, slash seen)."""
    i, run, slash = pos, 0, False
    while i < end:
        piece, nxt = _decode_at(text, i)
        if not all(c in _SKIP or c in _SLASH or (bang and c in _BANG) for c in piece):
            break
        slash = slash or any(c in _SLASH for c in piece)
        i = nxt
        run += 1
        if run >= MAX_RUN:
            break
    return i, run, slash


def read_after(text: str, pos: int, names: Names) -> Reading:
    """The model's-eye reading of the text at ``pos`` (just after an ``<``-opener).

    Reads past whitespace, skipped characters (blanks, marks, ignorables,
    separators, controls), ``!``, ``?`` and slashes (also written as character
    references); then a bar or look-alike bar opens a chat-template token, and a
    name whose readings reach a reserved name, or equal a ``<NAME>`` token followed
    by ``>``, is dangerous. Namespace prefixes (``ns:retrieved_content``) are read
    past; the next opener ends the reading.
    """
    n = len(text)
    end = min(n, pos + MAX_LOOKAHEAD)
    i, run, slash = _lead(text, pos, end, True)
    if run >= MAX_RUN:
        return Reading("padding", "", slash, i)
    if i >= n:
        return _NONE
    if i >= end:
        return Reading("padding", "", slash, i)
    first, nxt = _decode_at(text, i)
    if names.pipes and first and first[0] in _PIPE:
        return Reading("bar", "", slash, nxt)

    def accept(t: str, i: int) -> Reading | None:
        r = names.reserved_match(t)
        if r is not None:
            return Reading("reserved", r, slash, i)
        if t in names.tokens:
            gt = closer_after(text, i, end, _GT)
            if gt >= 0:
                return Reading("token", t, slash, gt)
        return None

    states: dict[str, None] = {"": None}  # live skeletons, in insertion order (deterministic)
    run = 0
    while i < end:
        piece, i = _decode_at(text, i)
        parts = _piece_readings(piece) if piece else ("",)
        if not any(parts):
            run += 1
            if run >= MAX_RUN:
                return Reading("padding", "", slash, i)
            continue
        run = 0
        hit, new = _step(states, parts, i, accept, names._live)
        if hit is not None:
            return hit
        if new:
            states = new
            continue
        # The name died. A namespace prefix (``ns:retrieved_content``) is read past, once per colon.
        if any(p.endswith(":") for p in parts):
            states = {"": None}
            continue
        if _stops_reading(piece):
            return _NONE
        after = _after_namespace(text, i, end)
        if after < 0:
            return _NONE
        states, i = {"": None}, after
    # The lookahead budget ran out (or the text ended) while a name was forming.
    return Reading("padding", "", slash, i) if i < n else _NONE


def dangerous_after(text: str, pos: int, names: Names) -> bool:
    """Does the text at ``pos`` (just after an opener) start a dangerous construct? (:func:`read_after` is not none.)"""
    return read_after(text, pos, names).kind != "none"


def read_bracket(text: str, pos: int, names: Names) -> Reading:
    """The reading after a bracket opener (``[``, ``［``, ``⟦``, ``&lsqb;``...): a ``[NAME]`` token or none.

    The same eye as :func:`read_after`: skipped characters and slashes first, then
    the name through its readings, then a ``]`` or look-alike past skipped
    characters. A run of :data:`MAX_RUN` skipped characters fails closed unless it
    is plain ASCII whitespace (layout: an indented JSON array or code block is not a token).
    """
    n = len(text)
    end = min(n, pos + MAX_LOOKAHEAD)
    i, run, slash = _lead(text, pos, end, False)
    if run >= MAX_RUN or (i >= end and i < n):
        blank = text[pos:i].isascii() and not text[pos:i].strip()
        return _NONE if blank else Reading("padding", "", slash, i)

    def accept(t: str, i: int) -> Reading | None:
        if t in names.brackets:
            close = closer_after(text, i, end, _RBRACKET)
            if close >= 0:
                return Reading("token", t, slash, close)
        return None

    states: dict[str, None] = {"": None}  # live skeletons, in insertion order (deterministic)
    run = 0
    while i < end:
        piece, i = _decode_at(text, i)
        parts = _piece_readings(piece) if piece else ("",)
        if not any(parts):
            run += 1
            if run >= MAX_RUN:
                return Reading("padding", "", slash, i)
            continue
        run = 0
        hit, new = _step(states, parts, i, accept, names._blive)
        if hit is not None:
            return hit
        if not new:
            return _NONE
        states = new
    return Reading("padding", "", slash, i) if i < n and states else _NONE


def _step(
    states: dict[str, None],
    parts: tuple[str, ...],
    i: int,
    accept: Callable[[str, int], Reading | None],
    live: frozenset[str],
) -> tuple[Reading | None, dict[str, None]]:
    """One piece of a forming name, for both readers: extend every live skeleton by every
    reading of the piece (in order); the first that ``accept`` takes is the reading, else the
    extensions still in ``live`` are the new states."""
    new: dict[str, None] = {}
    for s in states:
        for p in parts:
            t = s + p
            hit = accept(t, i)
            if hit is not None:
                return hit, new
            if t in live:
                new[t] = None
    return None, new


def _stops_reading(piece: str) -> bool:
    """Does a piece that ends the name also end the reading? Anything but a letter or digit
    does (punctuation, a symbol, the next opener, which is read on its own); so a reading
    never runs past the next opener and the work per opener is bounded by the text up to it."""
    return not piece or piece[0] in _OPENER_CHARS or not is_alnum(piece[0])


def _after_namespace(text: str, i: int, end: int) -> int:
    """If a name prefix continues from ``i`` and ends in a colon, the index after the colon; else -1."""
    k = i
    while k < end and k - i < MAX_RUN and ((is_alnum(text[k]) and text[k] not in _OPENER_CHARS) or text[k] in _SEPARATORS):
        k += 1
    return k + 1 if k < end and ":" in readings(text[k]) else -1


def closer_after(text: str, i: int, end: int, closers: frozenset[str] | str) -> int:
    """End of the closer (``>``/``]``, a look-alike or a reference to one) that follows ``i`` past
    skipped characters and slashes; ``i`` itself when the run is too long to follow (fail closed); else -1."""
    run = 0
    while i < end and run < MAX_RUN:
        piece, nxt = _decode_at(text, i)
        if all(c in _SKIP or c in _SLASH for c in piece):
            run += 1
            i = nxt
            continue
        return nxt if piece[0] in closers else -1
    return i if i < len(text) and run >= MAX_RUN else -1


def reserved_tag_count(text: str, names: Names | None = None) -> int:
    """How many envelope tags (open or close, reserved names only) a model's eye sees.

    Counts openers not followed by ``\\`` whose lookahead reaches a reserved
    name. Chat tokens are not counted (see :func:`read_after`).
    """
    names = names or names_for()
    only_reserved = Names(names.reserved, (), pipes=False)
    count = 0
    for m in OPENER_RE.finditer(text):
        end = m.end()
        if end < len(text) and text[end] == "\\":
            continue
        if dangerous_after(text, end, only_reserved):
            count += 1
    return count


def visible(text: str) -> str:
    """``text`` with invisible, control and ignorable characters shown as ``U+XXXX``."""
    return "".join(c if (c.isprintable() and c not in _IGNORABLE) or c == " " else f"U+{ord(c):04X}" for c in text)
