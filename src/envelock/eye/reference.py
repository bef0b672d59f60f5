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
from collections.abc import Callable, Iterable

from .levels import BODY_CONTEXT, Level, xml_escape_text, xml_unescape_text
from .reader import (
    BRACKET_OPENER_RE,
    MAX_LOOKAHEAD,
    MAX_OPENER_LEN,
    MAX_RUN,
    OPENER_RE,
    Names,
    dangerous_after,
    is_alpha,
    is_ignorable,
    is_space,
    may_hold_bracket,
    may_hold_opener,
    names_for,
    read_bracket,
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
    text = defang_brackets(text)
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


def defang_brackets(text: str, finder: re.Pattern[str] = BRACKET_OPENER_RE) -> str:
    """Insert ``\\`` after every bracket opener whose reading is a ``[NAME]`` token (or fails closed).

    ``finder`` finds the openers to read (the fast path passes a prefilter that skips the
    certainly-safe ones)."""
    if not may_hold_bracket(text):
        return text
    names = names_for()
    return insert_after(text, [m.end() for m in finder.finditer(text) if read_bracket(text, m.end(), names)])


def undefang_brackets(text: str) -> str:
    """Invert :func:`defang_brackets`: drop the ``\\`` after a bracket opener whose reading is still dangerous.

    The eye reads past backslashes, and a reading stops at the next opener, so the
    reading at an opener is the same before and after the defang inserted its
    backslash: exactly the inserted ones are removed.
    """
    if "\\" not in text or not may_hold_bracket(text):
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


def defang_body(text: str, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """:func:`defang` of a body in the context it is rendered in (``escape.defang_body``)."""
    return body_context(defang, text, level, reserved)


def body_context(
    defang_fn: Callable[[str, Level, tuple[str, ...]], str], text: str, lvl: Level, reserved: tuple[str, ...]
) -> str:
    """``defang_fn`` of a body followed, as in a preface, by ``\\n</retrieved_content>``.

    The lookahead at the end of a body must see that ``\\n`` and then ``<`` (which ends any
    name), as a reader of the whole preface does; ``defang_fn`` alone would judge the end of
    its text as the end of input.
    """
    inner: Level = "markup" if lvl == "xml" else lvl
    tail = text[-(MAX_LOOKAHEAD + MAX_OPENER_LEN + 2) :]
    if not may_hold_opener(tail) and not may_hold_bracket(tail):
        # No opener (angle or bracket) ends close enough to the end for its lookahead to reach it.
        out = defang_fn(text, inner, reserved)
    else:
        out = defang_fn(text + BODY_CONTEXT, inner, reserved)
        if not out.endswith(BODY_CONTEXT):  # pragma: no cover - a '<' at the end of input is never escaped
            raise AssertionError("body context was escaped")
        out = out[: -len(BODY_CONTEXT)]
    return xml_escape_text(out) if lvl == "xml" else out
