"""The reference defang: one model's-eye reading per escape point (the oracle of every faster implementation).

``defang`` never deletes or reorders a character; it only inserts ``\\``, right after an escape
point whose reading is dangerous:

* an *opener* (``<``, a look-alike, or a character reference for one) whose reading
  (:func:`envelock.eye.reader.read_after`) is an envelope name, a chat-template token, a bar or
  padding too long to follow; at level ``markup`` and ``xml`` also a ``<`` that starts markup
  (followed, past whitespace and ignorables, by a letter, ``/``, ``!`` or ``?``); and a ``<``
  that starts an exact token (``<NAME>``, ``&lt;NAME>``: :func:`envelock.eye.reader.exact_after`);
* a bracket opener (``[``, ``［``, ``⟦``, ``&lsqb;``...) whose reading
  (:func:`envelock.eye.reader.read_bracket`) is a ``[NAME]`` or ``[|NAME|]`` token, or that starts an
  exact token (``[IMG]``);
* the first character of an exact token that has no opener (``>>TITLE<<``, ``]~b]``, ``｜DSML｜``), or a
  reference for it (``&gt;&gt;TITLE&lt;&lt;``: the ``\\`` goes after the reference).

Every one of these readings reads past the backslashes right after its escape point (the eye
skips ``\\``; the markup and exact rules skip them first), so inserting one leaves the reading
as it was: ``undefang`` drops the ``\\`` after an escape point exactly when the reading there is
dangerous, and the map is injective (``undefang(defang(s)) == s`` for every string). An opener
already followed by ``\\`` is escaped only when its reading is dangerous: ``<\\/retrieved_content>``
becomes ``<\\\\/retrieved_content>``, while a roff ``«\\-`` or a regex ``<\\w+`` is left alone.

Level ``xml`` then escapes the result as XML text (``&``, ``<``, ``>`` and CR as ``&#13;``), so a
strict XML parser returns the defanged text exactly.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from .levels import BODY_CONTEXT, Level, xml_escape_text, xml_unescape_text
from .load_tokens import Tokens
from .reader import (
    BRACKET_OPENER_RE,
    MAX_LOOKAHEAD,
    MAX_OPENER_LEN,
    MAX_RUN,
    OPENER_RE,
    Names,
    dangerous_after,
    decode_at,
    exact_after,
    exact_escaped,
    first_piece_end,
    is_alpha,
    is_ignorable,
    is_space,
    may_hold_bracket,
    may_hold_opener,
    names_for,
    read_bracket,
    reference_run_start,
)
from .tokens import RESERVED_NAMES

NAME = "reference"


def markup_after(text: str, pos: int) -> bool:
    """Does the ``<`` ending at ``pos`` start markup (letter, ``/``, ``!``, ``?``), past the backslashes
    right after it (so that an escape does not change the answer) and whitespace or ignorables?"""
    n = len(text)
    while pos < n and text[pos] == "\\":
        pos += 1
    end = min(n, pos + MAX_RUN)
    i = pos
    while i < end:
        ch = text[i]
        if is_space(ch) or is_ignorable(ch):
            i += 1
            continue
        return is_alpha(ch) or ch in "/!?"
    return i < n  # fail closed after MAX_RUN skipped characters


def opener_needs_escape(text: str, m: re.Match[str], names: Names, markup: bool) -> bool:
    """The per-opener check of the reference implementation: is the reading after the opener
    dangerous (read past the backslashes right after it)?"""
    end = m.end()
    return (
        dangerous_after(text, end, names)
        or (markup and m.group() == "<" and markup_after(text, end))
        or starts_exact(text, m, names)
    )


def starts_exact(text: str, m: re.Match[str], names: Names) -> bool:
    """Does the opener ``m`` start an exact token (``<NAME>``, ``&lt;NAME&gt;``)? Only an opener that is one
    piece (a character, or a reference for one), which the eye reads as that token's first character."""
    return first_piece_end(text, m.start()) == m.end() and exact_after(text, m.start(), names) >= 0


def bracket_needs_escape(text: str, m: re.Match[str], names: Names) -> bool:
    """The per-bracket check: a ``[NAME]``/``[|NAME|]`` reading, or an exact token (``[IMG]``)."""
    return bool(read_bracket(text, m.end(), names)) or starts_exact(text, m, names)


def _non_opener_starts(names: Names) -> str:
    """The first characters of the exact tokens that are not openers (``>``, ``]``, ``｜``)."""
    return "".join(c for c in names.exact_starts() if not OPENER_RE.fullmatch(c) and not BRACKET_OPENER_RE.fullmatch(c))


def _exact_points(text: str, names: Names) -> list[tuple[int, int]]:
    """The escape points of the exact pass, ``(start, end)`` of the first piece of every exact token whose
    first character is no opener: the character, or a reference for it (``&gt;`` of
    ``&gt;&gt;TITLE&lt;&lt;``). A token after an opener is the angle or bracket pass's."""
    starts = _non_opener_starts(names)
    if not starts:
        return []
    out = []
    for m in names.exact_finder(starts).finditer(text):
        p = m.start()
        first, end = decode_at(text, p)
        if first in starts and exact_after(text, p, names) >= 0:
            out.append((p, end))
    return out


def defang(text: str, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None) -> str:
    """The reference defang: one Python reading per escape point."""
    names = names_for(reserved, tokens)
    markup = level != "reserved"
    ends = [m.end() for m in OPENER_RE.finditer(text) if opener_needs_escape(text, m, names, markup)]
    text = insert_after(text, ends)
    text = defang_brackets(text, names)
    text = defang_exact(text, names)
    if level == "xml":
        text = xml_escape_text(text)
    return text


def undefang(
    text: str, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None
) -> str:
    """Invert :func:`defang` exactly (``undefang(defang(s, L), L) == s``): drop the ``\\`` after every
    escape point whose reading is dangerous (the backslash read past)."""
    if level == "xml":
        text = xml_unescape_text(text)
    if "\\" not in text:
        return text
    names = names_for(reserved, tokens)
    text = undefang_exact(text, names)
    text = undefang_brackets(text, names)
    n = len(text)
    markup = level != "reserved"
    # Openers exactly as the defang found them (``OPENER_RE.finditer``).
    return drop_after(
        text,
        [
            m.end()
            for m in OPENER_RE.finditer(text)
            if m.end() < n and text[m.end()] == "\\" and opener_needs_escape(text, m, names, markup)
        ],
    )


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


def defang_brackets(text: str, names: Names, finder: re.Pattern[str] = BRACKET_OPENER_RE) -> str:
    """Insert ``\\`` after every bracket opener whose reading is a token (or fails closed).

    ``finder`` finds the openers to read (the fast path passes a prefilter that skips the
    certainly-safe ones)."""
    if not may_hold_bracket(text):
        return text
    return insert_after(text, [m.end() for m in finder.finditer(text) if bracket_needs_escape(text, m, names)])


def defang_exact(text: str, names: Names) -> str:
    """Insert ``\\`` after the first piece of every exact token that has no opener."""
    return insert_after(text, [end for _, end in _exact_points(text, names)])


def undefang_exact(text: str, names: Names) -> str:
    """Invert :func:`defang_exact`."""
    return drop_after(text, [end for p, end in _exact_points(text, names) if exact_escaped(text, p)])


def undefang_brackets(text: str, names: Names) -> str:
    """Invert :func:`defang_brackets`: drop the ``\\`` after a bracket opener whose reading is still dangerous.

    The eye reads past backslashes, and a reading stops at the next opener, so the
    reading at an opener is the same before and after the defang inserted its
    backslash: exactly the inserted ones are removed.
    """
    if "\\" not in text or not may_hold_bracket(text):
        return text
    n = len(text)
    return drop_after(
        text,
        [
            m.end()
            for m in BRACKET_OPENER_RE.finditer(text)
            if m.end() < n and text[m.end()] == "\\" and bracket_needs_escape(text, m, names)
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


def defang_body(
    text: str, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None
) -> str:
    """:func:`defang` of a body in the context it is rendered in (``escape.defang_body``)."""
    return body_context(defang, text, level, reserved, tokens)


def body_context(
    defang_fn: Callable[[str, Level, tuple[str, ...], Tokens | None], str],
    text: str,
    lvl: Level,
    reserved: tuple[str, ...],
    tokens: Tokens | None = None,
) -> str:
    """``defang_fn`` of a body followed, as in a preface, by ``\\n</retrieved_content>``.

    The lookahead at the end of a body must see that ``\\n`` and then ``<`` (which ends any
    name), as a reader of the whole preface does; ``defang_fn`` alone would judge the end of
    its text as the end of input.
    """
    inner: Level = "markup" if lvl == "xml" else lvl
    # The window the readings near the end can come from, widened onto the ``&`` of a character
    # reference that reaches into it (its digit runs have no bound).
    tail = text[reference_run_start(text, max(0, len(text) - (MAX_LOOKAHEAD + MAX_OPENER_LEN + 2))) :]
    if not may_hold_opener(tail) and not may_hold_bracket(tail):
        # No opener (angle or bracket) ends close enough to the end for its lookahead to reach it.
        out = defang_fn(text, inner, reserved, tokens)
    else:
        out = defang_fn(text + BODY_CONTEXT, inner, reserved, tokens)
        if not out.endswith(BODY_CONTEXT):  # pragma: no cover - a '<' at the end of input is never escaped
            raise AssertionError("body context was escaped")
        out = out[: -len(BODY_CONTEXT)]
    return xml_escape_text(out) if lvl == "xml" else out
