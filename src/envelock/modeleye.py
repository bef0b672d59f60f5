"""The model's eye: how a reader that is not a parser sees a run of text.

An LLM does not tokenise markup. It will take ``</ retrieved-content>``,
``\uff1c/retrieved_content\uff1e``, a Cyrillic ``\u0435`` inside the name or a
zero-width space between ``<`` and ``/`` for a close tag. This module decides,
for the text right after an *opener*, whether that text starts something
dangerous: a reserved envelope name or a chat-template control token.

The check is a bounded lookahead: at most :data:`MAX_RUN` skipped characters in
a row and at most :data:`MAX_LOOKAHEAD` characters in all. When a bound is
reached while the text could still turn into a reserved name, the answer is
"dangerous" (fail closed), so the cost per opener is constant and every scan is
linear in the input.
"""

from __future__ import annotations

import html
import html.entities
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from .tokens import ANGLE_TOKEN_NAMES, RESERVED_NAMES
from .unicode_tables import (
    CONFUSABLE_TO_ASCII,
    DEFAULT_IGNORABLE_RANGES,
    GT_LOOKALIKES,
    LT_LOOKALIKES,
    PIPE_LOOKALIKES,
    SLASH_LOOKALIKES,
)

#: Longest run of skipped characters (whitespace, ignorables, slashes,
#: separators) the lookahead follows before failing closed.
MAX_RUN = 32
#: Most characters the lookahead examines after one opener.
MAX_LOOKAHEAD = 256


def _class(cps: Iterable[int]) -> str:
    return "".join(re.escape(chr(c)) for c in cps)


def _range_class(ranges: Iterable[tuple[int, int]]) -> str:
    return "".join(re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for lo, hi in ranges)


IGNORABLE_CLASS = _range_class(DEFAULT_IGNORABLE_RANGES)
IGNORABLE_RE = re.compile(f"[{IGNORABLE_CLASS}]")
LT_CHARS = "<" + "".join(chr(c) for c in LT_LOOKALIKES)
GT_CHARS = ">" + "".join(chr(c) for c in GT_LOOKALIKES)
SLASH_CHARS = "/" + "".join(chr(c) for c in SLASH_LOOKALIKES)
PIPE_CHARS = "|" + "".join(chr(c) for c in PIPE_LOOKALIKES)

_IGNORABLE = frozenset(chr(cp) for lo, hi in DEFAULT_IGNORABLE_RANGES for cp in range(lo, hi + 1))
_GT = frozenset(GT_CHARS)
_SLASH = frozenset(SLASH_CHARS)
_PIPE = frozenset(PIPE_CHARS)
#: ``<!name`` and ``<?name`` read as tags too (declarations, processing instructions).
_BANG = frozenset("!?\uff01\uff1f")
#: Dropped from a name's skeleton (after folding) and skipped between letters.
_SEPARATORS = frozenset("_-.\\")


#: Most ``&amp;`` layers an opener may carry (``&amp;amp;lt;`` has two).
MAX_AMP_LAYERS = 16
#: An upper bound on the length of one opener token.
MAX_OPENER_LEN = 4 + 4 * MAX_AMP_LAYERS + 32


def _lt_ref_pattern() -> str:
    """A character reference for ``<`` or a look-alike of it.

    Numeric (decimal or hex, up to 16 leading zeros, optional ``;``) for every code point in
    :data:`LT_CHARS`; named for every HTML5 entity whose value is one of them
    (``&lt``, ``&LT``, ``&lang;``, ``&lsaquo;``...; ``lt`` in any case); any number
    of ``amp;`` layers in front, up to :data:`MAX_AMP_LAYERS` (``&amp;lt;``), so an
    opener is at most about 100 characters long. Used to find openers.
    """
    codes = sorted(ord(c) for c in LT_CHARS)
    dec = "|".join(str(c) for c in codes)
    hexa = "|".join(f"{c:x}" for c in codes)
    names = sorted(
        {n.rstrip(";") for n, v in html.entities.html5.items() if v in LT_CHARS and n.endswith(";")} - {"lt", "LT"},
        key=len,
        reverse=True,
    )
    return (
        rf"&(?:[aA][mM][pP];){{0,{MAX_AMP_LAYERS}}}(?:"
        r"[lL][tT];?"
        + "".join(f"|{re.escape(n)};" for n in names)
        + rf"|#0{{0,{MAX_AMP_LAYERS}}}(?:{dec})(?![0-9]);?"
        + rf"|#[xX]0{{0,{MAX_AMP_LAYERS}}}(?i:{hexa})(?![0-9a-fA-F]);?)"
    )


LT_REF_PATTERN = _lt_ref_pattern()
#: Any opener: ``<``, a look-alike, or a character reference for ``<``.
OPENER_PATTERN = f"(?:[{_class(ord(c) for c in LT_CHARS)}]|{LT_REF_PATTERN})"
OPENER_RE = re.compile(OPENER_PATTERN)

#: A character reference as ``html.unescape`` finds one (numeric, or a name of up
#: to 32 characters, ``;`` optional). Bounded: no backtracking beyond 33 characters.
_REF_RE = re.compile(r"&(?:#[0-9]{1,8};?|#[xX][0-9a-fA-F]{1,8};?|[^\t\n\f <&#;]{1,32};?)")


def is_ignorable(ch: str) -> bool:
    """True for a Default_Ignorable_Code_Point (zero-width, TAG, bidi, VS...)."""
    return ch in _IGNORABLE


def _is_skip(ch: str) -> bool:
    return ch.isspace() or ch in _IGNORABLE or ch in _SEPARATORS or ch in _CONTROLS


#: Controls (Cc) and U+FFFD (what compose puts in place of characters XML cannot
#: carry) are skipped like separators: ``retrieved_\x08content`` still reads as the name.
_CONTROLS = frozenset([*map(chr, range(0x20)), *map(chr, range(0x7F, 0xA0)), "\ufffd"])


@lru_cache(maxsize=8192)
def char_skeleton(ch: str) -> str:
    """Skeleton of one character: NFKC, casefold, confusables to ASCII, separators dropped."""
    folded = unicodedata.normalize("NFKC", ch).casefold()
    mapped = "".join(CONFUSABLE_TO_ASCII.get(ord(c), c) for c in folded)
    mapped = unicodedata.normalize("NFKC", mapped).casefold()
    return "".join(c for c in mapped if not _is_skip(c))


def skeleton(text: str) -> str:
    """Skeleton of a string (see :func:`char_skeleton`)."""
    return "".join(char_skeleton(c) for c in text)


@dataclass(frozen=True)
class Names:
    """Skeletons of the names the lookahead looks for."""

    reserved: tuple[str, ...]
    tokens: tuple[str, ...]
    pipes: bool = True

    def viable(self, skel: str) -> bool:
        """Could ``skel`` still grow into a reserved name or a token?"""
        return any(r.startswith(skel) for r in self.reserved) or any(t.startswith(skel) for t in self.tokens)

    def reserved_match(self, skel: str) -> bool:
        return any(skel.startswith(r) for r in self.reserved)


@lru_cache(maxsize=64)
def names_for(reserved: tuple[str, ...] = RESERVED_NAMES) -> Names:
    """Skeleton tables for a set of reserved names (the chat tokens are fixed)."""
    skels = tuple(sorted({skeleton(n) for n in reserved if skeleton(n)}))
    if len(skels) != len(tuple(n for n in reserved if n)):
        # Two names folding to the same skeleton is harmless; an empty one is not.
        if any(not skeleton(n) for n in reserved):
            raise ValueError("a reserved name has an empty skeleton")
    tokens = tuple(sorted({skeleton(t) for t in ANGLE_TOKEN_NAMES}))
    return Names(skels, tokens)


_HTML5 = html.entities.html5
#: The longest legacy (no ``;``) entity name.
_LEGACY_MAX = max(len(n) for n in _HTML5 if not n.endswith(";"))


def _decode_at(text: str, i: int) -> tuple[str, int]:
    """The text at ``i``: one character, or one character reference decoded as ``html.unescape`` would.

    Only the reference itself is consumed: for a legacy reference without ``;``
    (``&LTfoo``, ``&ampx``) that is the longest known entity name, as in
    ``html.unescape``, and the characters after it are read one by one.
    """
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


#: Public name of :func:`_decode_at` (the scanner walks text with the same decoding).
def decode_at(text: str, i: int) -> tuple[str, int]:
    """The piece of text at ``i`` as the model's eye reads it (see :func:`_decode_at`)."""
    return _decode_at(text, i)


def dangerous_after(text: str, pos: int, names: Names) -> bool:
    """Does the text at ``pos`` (just after an opener) start a dangerous construct?

    Skips whitespace, default-ignorables, controls, backslashes, ``!``, ``?``,
    slashes and look-alike slashes (also written as character references); then a pipe or look-alike
    pipe is a chat-template token, and a name whose skeleton starts with a
    reserved name, or equals a ``<NAME>`` token followed by ``>``, is
    dangerous. Character references are decoded as ``html.unescape`` does.
    """
    n = len(text)
    end = min(n, pos + MAX_LOOKAHEAD)
    i = pos
    run = 0
    # Phase 1: whitespace, ignorables, backslashes and slashes in any order.
    while i < end:
        piece, nxt = _decode_at(text, i)
        if not all(_is_skip(c) or c in _SLASH or c in _BANG for c in piece):
            break
        i = nxt
        run += 1
        if run >= MAX_RUN:
            return True  # fail closed: too much padding to follow
    if i >= n:
        return False
    if i >= end:
        return True
    first, _ = _decode_at(text, i)
    if names.pipes and (first[0] in _PIPE or unicodedata.normalize("NFKC", first[0])[:1] in _PIPE):
        return True
    # Phase 2: the name, folded to its skeleton one piece at a time.
    skel = ""
    run = 0
    while i < end:
        piece, i = _decode_at(text, i)
        part = skeleton(piece)
        if not part:
            run += 1
            if run >= MAX_RUN:
                return True
            continue
        run = 0
        skel += part
        if names.reserved_match(skel):
            return True
        if skel in names.tokens and _gt_follows(text, i, end):
            return True
        if not names.viable(skel):
            # A namespace prefix (``ns:retrieved_content``) is read past, not stopped at.
            if part.endswith(":"):
                skel = ""
                continue
            after = _after_namespace(text, i, end)
            if after < 0:
                return False
            skel, i = "", after
    # The lookahead budget ran out (or the text ended) while a name was forming.
    return i < n


def _after_namespace(text: str, i: int, end: int) -> int:
    """If a name prefix continues from ``i`` and ends in a colon, the index after the colon; else -1."""
    k = i
    while k < end and k - i < MAX_RUN and (text[k].isalnum() or text[k] in _SEPARATORS):
        k += 1
    return k + 1 if k < end and unicodedata.normalize("NFKC", text[k]) == ":" else -1


def _gt_follows(text: str, i: int, end: int) -> bool:
    """Is the next non-skipped piece a ``>``, a look-alike or a reference to one?"""
    run = 0
    while i < end and run < MAX_RUN:
        piece, i = _decode_at(text, i)
        if all(_is_skip(c) or c in _SLASH for c in piece):
            run += 1
            continue
        first = piece[0]
        return first in _GT or unicodedata.normalize("NFKC", first)[:1] in _GT
    return i < len(text) and run >= MAX_RUN


def reserved_tag_count(text: str, names: Names | None = None) -> int:
    """How many envelope tags (open or close, reserved names only) a model's eye sees.

    Counts openers not followed by ``\\`` whose lookahead reaches a reserved
    name. Chat tokens are not counted (see :func:`dangerous_after`).
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
