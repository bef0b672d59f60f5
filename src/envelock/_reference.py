"""The reference defang: one model's-eye reading per opener (the oracle of every faster implementation).

``defang`` never deletes or reorders a character; it only inserts ``\\``:

* after an *opener* (``<``, a look-alike, or a character reference for one)
  that is already followed by ``\\`` (escaping the escape, so the mapping is
  injective and ``undefang(defang(s)) == s`` for every string);
* after an opener whose reading (:func:`envelock.modeleye.read_after`) is an
  envelope name, a chat-template token or padding too long to follow;
* at level ``markup`` and ``xml``, also after every ``<`` that starts markup
  (followed, past whitespace and ignorables, by a letter, ``/``, ``!`` or ``?``);
* after a bracket opener (``[``, a look-alike such as ``［`` or ``⟦``, or a
  character reference such as ``&lsqb;``) whose reading
  (:func:`envelock.modeleye.read_bracket`) is a ``[NAME]`` control token
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

from . import modeleye as _me
from .charsets import regex_class
from .levels import Level, xml_escape_text, xml_unescape_text
from .modeleye import (
    BRACKET_OPENER_PATTERN,
    BRACKET_OPENER_RE,
    MAX_RUN,
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

NAME = "reference"


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


def opener_needs_escape(text: str, m: re.Match[str], names: Names, markup: bool) -> bool:
    """The per-opener check of the reference implementation."""
    end = m.end()
    return (
        (end < len(text) and text[end] == "\\")
        or dangerous_after(text, end, names)
        or (markup and m.group() == "<" and markup_after(text, end))
    )


def defang(text: str, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """The reference defang: one Python reading per opener."""
    names = names_for(reserved)
    markup = level != "reserved"
    ends = [m.end() for m in OPENER_RE.finditer(text) if opener_needs_escape(text, m, names, markup)]
    text = insert_after(text, ends)
    text = defang_brackets(text, fast=False)
    if level == "xml":
        text = xml_escape_text(text)
    return text


def undefang(text: str, level: Level = "reserved") -> str:
    """Invert :func:`defang` exactly (``undefang(defang(s, L), L) == s``)."""
    if level == "xml":
        text = xml_unescape_text(text)
    if "\\" in text:
        # Openers exactly as the defang found them (``OPENER_RE.finditer``): a pattern that
        # re-matched ``opener + \\`` could backtrack into a longer entity name (``&ltcc;\\``)
        # and take a backslash the defang never inserted.
        n = len(text)
        text = drop_after(text, [m.end() for m in OPENER_RE.finditer(text) if m.end() < n and text[m.end()] == "\\"])
    return undefang_brackets(text)


def drop_after(text: str, ends: Iterable[int]) -> str:
    """``text`` without the character at each offset of ``ends`` (the inverse of :func:`insert_after`)."""
    out: list[str] = []
    last = 0
    for e in ends:
        out.append(text[last:e])
        last = e + 1
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _may_hold_bracket(text: str) -> bool:
    if "[" in text or "&" in text:
        return True
    return not text.isascii() and any(c in text for c in _me.LBRACKET_CHARS[1:])


@lru_cache(maxsize=4)
def _bracket_prefilter(names: Names) -> re.Pattern[str]:  # pragma: no mutate block
    """Bracket openers that :func:`read_bracket` must look at (a superset of the dangerous ones).

    After the opener and at most ``MAX_RUN - 1`` skipped ASCII characters or slashes, the
    first :data:`_PREFILTER_DEPTH` letters of a bracket token name through their ASCII
    readings (skipped ASCII characters allowed between them), where any non-ASCII
    character, ``&`` or run of ``MAX_RUN`` skipped characters counts as a possible
    continuation. So ``list[i]`` or ``[x]`` in code needs no Python reading, while
    ``[INST``, ``[ins`` or ``[\u200b`` gets one.
    """
    skip = [chr(c) for c in range(0x80) if _me.is_skip(chr(c))]
    lead = regex_class([*skip, *(c for c in _me.SLASH_CHARS if ord(c) < 0x80)])
    gap = regex_class(skip)
    by_part: dict[str, list[str]] = {}
    for c in map(chr, range(0x80)):
        if c not in skip and c != "&":
            for part in readings(c):
                by_part.setdefault(part, []).append(c)
    unsure = f"[^\\x00-\\x7f]|&|{gap}{{{MAX_RUN}}}"

    def state(prefix: str, depth: int) -> str:
        if depth == 0 or prefix in names.brackets:
            return ""
        alts = [
            f"{regex_class(chars)}(?:{state(prefix + part, depth - 1)})"
            for part, chars in sorted(by_part.items())
            if prefix + part in names._blive
        ]
        body = "|".join([unsure, *alts])
        return f"(?:{gap}{{{MAX_RUN}}}|{gap}{{0,{MAX_RUN - 1}}}+(?:{body}))"

    first = state("", _PREFILTER_DEPTH).replace(gap, lead, 2)  # the run before the name may hold slashes
    return re.compile(f"{_me.atomic_opener(BRACKET_OPENER_PATTERN)}(?={first})")


#: Letters of a bracket token name the prefilter follows before asking the reader.
_PREFILTER_DEPTH = 3


def defang_brackets(text: str, *, fast: bool = True) -> str:
    """Insert ``\\`` after every bracket opener whose reading is a ``[NAME]`` token (or fails closed)."""
    if not _may_hold_bracket(text):
        return text
    names = names_for()
    finder = _bracket_prefilter(names) if fast and POSSESSIVE else BRACKET_OPENER_RE
    return insert_after(text, [m.end() for m in finder.finditer(text) if read_bracket(text, m.end(), names)])


def undefang_brackets(text: str) -> str:
    """Invert :func:`defang_brackets`: drop the ``\\`` after a bracket opener whose reading is still dangerous.

    The eye reads past backslashes, and a reading stops at the next opener, so the
    reading at an opener is the same before and after the defang inserted its
    backslash: exactly the inserted ones are removed.
    """
    if "\\" not in text or not _may_hold_bracket(text):
        return text
    names = names_for()
    n = len(text)
    return drop_after(
        text,
        [
            m.end()
            for m in BRACKET_OPENER_RE.finditer(text)
            if m.end() < n and text[m.end()] == "\\" and read_bracket(text, m.end(), names)
        ],
    )


def insert_after(text: str, ends: Iterable[int]) -> str:
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


#: Python 3.11 has possessive quantifiers (``{0,n}+``): the generated prefilters need them.
POSSESSIVE = sys.version_info >= (3, 11)
