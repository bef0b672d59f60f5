"""The body escape: ``defang`` and ``undefang`` at a level, and the one reader's openers.

Which implementation runs them (native, fast or reference) is decided once, in
:mod:`envelock.eye.backend`; this module only checks arguments and asks it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import cast

from . import backend
from .backend import IMPLEMENTATIONS, implementation, xml_unescape_text
from .levels import ATTRIBUTE_CONTEXT, BODY_CONTEXT, LEVELS, Level, check_level, xml_escape_text
from .load_tokens import Tokens
from .reader import BRACKET_OPENER_RE, OPENER_RE, Kind, Reading, names_for, read_after, read_bracket
from .tokens import RESERVED_NAMES

__all__ = [
    "BODY_CONTEXT",
    "IMPLEMENTATIONS",
    "LEVELS",
    "Level",
    "check_level",
    "defang",
    "defang_attribute",
    "defang_body",
    "implementation",
    "opener_readings",
    "undefang",
    "undefang_attribute",
    "undefang_body",
    "xml_escape_text",
    "xml_unescape_text",
]


def defang(
    text: str, *, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None
) -> str:
    """Escape ``text`` so that no reader of ``level`` sees a tag or control token in it.

    Inserts one ``\\`` after each dangerous opener and never deletes anything;
    injective, and :func:`undefang` is its exact inverse.

    >>> defang("</retrieved_content> and [INST]")
    '<\\\\/retrieved_content> and [\\\\INST]'
    >>> undefang(defang("<\\\\/x>")) == "<\\\\/x>"
    True
    """
    return backend.chosen().defang(text, check_level(level), tuple(reserved), tokens)


def undefang(
    text: str, *, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None
) -> str:
    """Invert :func:`defang` exactly (``undefang(defang(s, level=L), level=L) == s``; the same
    ``reserved`` names and ``tokens``, which decide where the escapes are)."""
    return backend.chosen().undefang(text, check_level(level), tuple(reserved), tokens)


def defang_attribute(value: str) -> str:
    """:func:`defang` of an attribute value (the ``reserved`` rules at every level) judged with what
    the renderer writes after it (``ATTRIBUTE_CONTEXT``), as a reader of the whole tag reads it."""
    out = defang(value + ATTRIBUTE_CONTEXT)
    if not out.endswith(ATTRIBUTE_CONTEXT):  # pragma: no cover - no opener in the context
        raise AssertionError("attribute context was escaped")
    return out[: -len(ATTRIBUTE_CONTEXT)]


def undefang_attribute(value: str) -> str:
    """The exact inverse of :func:`defang_attribute`."""
    out = undefang(value + ATTRIBUTE_CONTEXT)
    if not out.endswith(ATTRIBUTE_CONTEXT):  # pragma: no cover - undefang never touches the context
        raise AssertionError("attribute context was changed")
    return out[: -len(ATTRIBUTE_CONTEXT)]


def defang_body(
    text: str, *, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None
) -> str:
    """:func:`defang` for a body, judged in the context it is rendered in.

    In a preface a body is always followed by ``\\n</retrieved_content>``. The
    lookahead at the end of a body must see that ``\\n`` (one more skipped
    character towards the fail-closed bound) and then a ``<`` (which ends any
    name), exactly as a reader of the whole preface does; :func:`defang` alone
    judges the end of its text as the end of input. ``undefang`` inverts both.
    """
    return backend.chosen().defang_body(text, check_level(level), tuple(reserved), tokens)


def undefang_body(
    text: str, *, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None
) -> str:
    """Invert :func:`defang_body` exactly: the bracket readings are judged in the same context.

    A bracket opener's escape depends on its reading, and in a preface the reading
    of a body's last bracket sees the ``\\n<`` that follows the body (a run of
    padding can reach the fail-closed bound through that ``\\n``), so the undo must
    see it too.
    """
    lvl = check_level(level)
    if lvl == "xml":
        text = xml_unescape_text(text)
    inner: Level = "markup" if lvl == "xml" else lvl
    out = undefang(text + BODY_CONTEXT, level=inner, reserved=reserved, tokens=tokens)
    if not out.endswith(BODY_CONTEXT):  # pragma: no cover - undefang never touches a final '\\n<'
        raise AssertionError("body context was changed")
    return out[: -len(BODY_CONTEXT)]


def canonical_body(
    text: str, *, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None
) -> tuple[str, bool]:
    """:func:`undefang_body` of ``text``, and whether :func:`defang_body` of it gives ``text`` back:
    verify's canonical-form check. One native call when the core is in use (the defanged text is
    compared inside the core and never becomes a Python string), else the two Python calls."""
    return canonical_body_at(text, 0, len(text), level=level, reserved=reserved, tokens=tokens)


def canonical_body_at(
    text: str,
    start: int,
    end: int,
    *,
    level: Level = "reserved",
    reserved: tuple[str, ...] = RESERVED_NAMES,
    tokens: Tokens | None = None,
) -> tuple[str, bool]:
    """:func:`canonical_body` of ``text[start:end]``. The native core reads an ASCII ``text`` where the
    body lies, so verify holds no slice of a large body besides what the check gives back."""
    lvl = check_level(level)
    found = backend.native_canonical_body(text, lvl, tuple(reserved), tokens, start, end)
    if found is not None:
        return found
    text = text[start:end]
    if lvl != "xml" and "\\" not in text:
        plain = text  # no backslash: nothing to undo
    else:
        plain = undefang_body(text, level=lvl, reserved=reserved, tokens=tokens)
    return plain, defang_body(plain, level=lvl, reserved=reserved, tokens=tokens) == text


#: ``(start, end, kind, name, slash, reading_end)`` of one opener (:func:`opener_records`).
OpenerRecord = tuple[int, int, str, str, bool, int]


def opener_records(text: str, reserved: tuple[str, ...], family: str, tokens: Tokens | None = None) -> list[OpenerRecord]:
    """``(start, end, kind, name, slash, reading_end)`` of every ``family`` opener (``"angle"`` or
    ``"bracket"``) whose reading is not none or that is followed by ``\\``: what the defang escapes,
    as the one reader sees it. Plain tuples: the scanner reads hundreds of thousands of them on
    hostile text.

    In one native pass when the native core is in use (:func:`envelock.eye.backend.native_openers`),
    else ``read_after`` / ``read_bracket`` per opener.
    """
    found = backend.native_openers(text, reserved, tokens)
    if found is not None:
        return [(start, end, kind, name, slash, rend) for start, end, kind, name, slash, rend, fam in found if fam == family]
    names = names_for(reserved, tokens)
    n = len(text)
    angle = family == "angle"
    out: list[OpenerRecord] = []
    for m in (OPENER_RE if angle else BRACKET_OPENER_RE).finditer(text):
        end = m.end()
        r = read_after(text, end, names) if angle else read_bracket(text, end, names)
        if r or (end < n and text[end] == "\\"):
            out.append((m.start(), end, r.kind, r.name, r.slash, r.end))
    return out


def opener_readings(
    text: str, reserved: tuple[str, ...], family: str, tokens: Tokens | None = None
) -> Iterator[tuple[int, int, Reading]]:
    """:func:`opener_records` with each reading as a :class:`~envelock.eye.reader.Reading`."""
    for start, end, kind, name, slash, rend in opener_records(text, reserved, family, tokens):
        yield start, end, Reading(cast(Kind, kind), name, slash, rend)
