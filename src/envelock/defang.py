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
* after the ``[`` of a bracket control token (``[INST]`` -> ``[\\INST]``,
  ``[\\INST]`` -> ``[\\\\INST]``).

Level ``xml`` then escapes the result as XML text (``&``, ``<``, ``>`` and CR
as ``&#13;``), so a strict XML parser returns the defanged text exactly.
"""

from __future__ import annotations

import re
from typing import Literal

from .modeleye import (
    MAX_RUN,
    OPENER_PATTERN,
    OPENER_RE,
    Names,
    dangerous_after,
    is_ignorable,
    names_for,
)
from .tokens import BRACKET_TOKEN_NAMES, RESERVED_NAMES

Level = Literal["reserved", "markup", "xml"]
LEVELS: tuple[Level, ...] = ("reserved", "markup", "xml")

_BRACKET_NAMES = "|".join(sorted((re.escape(n) for n in BRACKET_TOKEN_NAMES), key=len, reverse=True))
_BRACKET_TAIL = rf"[ \t]*/?[ \t]*(?:{_BRACKET_NAMES})[ \t]*\]"
#: ``[`` + any backslashes + a bracket token: gets one more backslash.
_BRACKET_RE = re.compile(rf"\[(?=\\*{_BRACKET_TAIL})", re.IGNORECASE)
#: ``[\`` + any backslashes + a bracket token: loses one backslash.
_BRACKET_UNDO_RE = re.compile(rf"\[\\(?=\\*{_BRACKET_TAIL})", re.IGNORECASE)
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
        if ch.isspace() or is_ignorable(ch):
            i += 1
            continue
        return ch.isalpha() or ch in "/!?"
    return i < len(text)  # fail closed after MAX_RUN skipped characters


def _names(reserved: tuple[str, ...]) -> Names:
    return names_for(tuple(reserved))


def defang(text: str, *, level: str = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """Escape ``text`` so that no reader of ``level`` sees a tag or control token in it.

    Injective; :func:`undefang` is its exact inverse.
    """
    lvl = check_level(level)
    names = _names(tuple(reserved))
    markup = lvl != "reserved"
    n = len(text)
    out: list[str] = []
    last = 0
    for m in OPENER_RE.finditer(text):
        end = m.end()
        if (
            (end < n and text[end] == "\\")
            or dangerous_after(text, end, names)
            or (markup and m.group() == "<" and markup_after(text, end))
        ):
            out.append(text[last:end])
            out.append("\\")
            last = end
    if last:
        out.append(text[last:])
        text = "".join(out)
    text = _BRACKET_RE.sub("[\\\\", text)
    if lvl == "xml":
        text = xml_escape_text(text)
    return text


def undefang(text: str, *, level: str = "reserved") -> str:
    """Invert :func:`defang` exactly (``undefang(defang(s, level=L), level=L) == s``)."""
    lvl = check_level(level)
    if lvl == "xml":
        text = xml_unescape_text(text)
    text = _OPENER_UNDO_RE.sub(r"\1", text)
    return _BRACKET_UNDO_RE.sub("[", text)


def xml_escape_text(text: str) -> str:
    """XML text escape with an exact round trip: ``&``, ``<``, ``>``, CR."""
    for raw, ref in _XML_ESCAPES:
        text = text.replace(raw, ref)
    return text


def xml_unescape_text(text: str) -> str:
    """Inverse of :func:`xml_escape_text` (only the four references it emits)."""
    return _XML_UNESCAPE_RE.sub(lambda m: _XML_UNESCAPE[m.group(1)], text)
