"""The body escape: ``defang`` and ``undefang`` at a level, one implementation chosen at import.

Implementations (each a module with ``NAME``, ``defang(text, level, reserved)`` and
``undefang(text, level)``), equal on every input:

* :mod:`envelock._nativeimpl`: the Rust core ``envelock._native`` (when it was built);
* :mod:`envelock._fastpath`: generated regexes, the reference only where they are unsure
  (Python 3.11+);
* :mod:`envelock._reference`: one model's-eye reading per opener, the oracle.

The best available one is chosen once, at import; ``ENVELOCK_IMPL`` forces one:
``native``, ``fast``, ``reference``, or ``python`` (the best pure-Python one).
:data:`IMPLEMENTATIONS` lists what this interpreter can run; :func:`implementation`
names the chosen one. ``tests/conftest.py`` runs every core
test over every implementation.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from functools import lru_cache
from types import ModuleType
from typing import cast

from . import _fastpath, _nativeimpl, _reference
from .levels import BODY_CONTEXT, LEVELS, Level, check_level, xml_escape_text, xml_unescape_text
from .modeleye import (
    BRACKET_OPENER_RE,
    MAX_LOOKAHEAD,
    MAX_OPENER_LEN,
    OPENER_RE,
    Kind,
    Reading,
    names_for,
    read_after,
    read_bracket,
)
from .tokens import RESERVED_NAMES

__all__ = [
    "BODY_CONTEXT",
    "IMPLEMENTATIONS",
    "LEVELS",
    "Level",
    "check_level",
    "defang",
    "defang_body",
    "implementation",
    "opener_readings",
    "undefang",
    "undefang_body",
    "xml_escape_text",
    "xml_unescape_text",
]

#: Every implementation this interpreter can run, best first.
IMPLEMENTATIONS: dict[str, ModuleType] = {
    m.NAME: m for m in (_nativeimpl, _fastpath, _reference) if getattr(m, "AVAILABLE", True)
}


def _choose() -> ModuleType:
    want = os.environ.get("ENVELOCK_IMPL", "")
    if want == "python":
        return _fastpath if _fastpath.AVAILABLE else _reference
    if want and want not in IMPLEMENTATIONS:
        raise ImportError(f"ENVELOCK_IMPL={want!r}: not available here (have {', '.join(IMPLEMENTATIONS)})")
    return IMPLEMENTATIONS[want] if want else next(iter(IMPLEMENTATIONS.values()))


_impl: ModuleType = _choose()


def implementation() -> str:
    """The name of the implementation in use (``"native"``, ``"fast"`` or ``"reference"``)."""
    return str(_impl.NAME)


def defang(text: str, *, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """Escape ``text`` so that no reader of ``level`` sees a tag or control token in it.

    Inserts one ``\\`` after each dangerous opener and never deletes anything;
    injective, and :func:`undefang` is its exact inverse.

    >>> defang("</retrieved_content> and [INST]")
    '<\\\\/retrieved_content> and [\\\\INST]'
    >>> undefang(defang("<\\\\/x>")) == "<\\\\/x>"
    True
    """
    return str(_impl.defang(text, check_level(level), tuple(reserved)))


def undefang(text: str, *, level: Level = "reserved") -> str:
    """Invert :func:`defang` exactly (``undefang(defang(s, level=L), level=L) == s``)."""
    return str(_impl.undefang(text, check_level(level)))


def defang_body(text: str, *, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """:func:`defang` for a body, judged in the context it is rendered in.

    In a preface a body is always followed by ``\\n</retrieved_content>``. The
    lookahead at the end of a body must see that ``\\n`` (one more skipped
    character towards the fail-closed bound) and then a ``<`` (which ends any
    name), exactly as a reader of the whole preface does; :func:`defang` alone
    judges the end of its text as the end of input. ``undefang`` inverts both.
    """
    lvl = check_level(level)
    native_body = getattr(_impl, "defang_body", None)
    if native_body is not None:
        return str(native_body(text, lvl, tuple(reserved)))
    return _defang_body_with(_impl.defang, text, lvl, tuple(reserved))


def undefang_body(text: str, *, level: Level = "reserved") -> str:
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
    out = undefang(text + BODY_CONTEXT, level=inner)
    if not out.endswith(BODY_CONTEXT):  # pragma: no cover - undefang never touches a final '\\n<'
        raise AssertionError("body context was changed")
    return out[: -len(BODY_CONTEXT)]


def _defang_body_with(
    defang_fn: Callable[[str, Level, tuple[str, ...]], str], text: str, lvl: Level, reserved: tuple[str, ...]
) -> str:
    """The end-of-body context around one implementation's ``defang``."""
    inner: Level = "markup" if lvl == "xml" else lvl
    tail = text[-(MAX_LOOKAHEAD + MAX_OPENER_LEN + 2) :]
    if not _fastpath._may_hold_opener(tail) and not _reference._may_hold_bracket(tail):
        # No opener (angle or bracket) ends close enough to the end for its lookahead to reach it.
        out = defang_fn(text, inner, reserved)
    else:
        out = defang_fn(text + BODY_CONTEXT, inner, reserved)
        if not out.endswith(BODY_CONTEXT):  # pragma: no cover - a '<' at the end of input is never escaped
            raise AssertionError("body context was escaped")
        out = out[: -len(BODY_CONTEXT)]
    return xml_escape_text(out) if lvl == "xml" else out


def opener_readings(
    text: str, reserved: tuple[str, ...], family: str, *, native: bool | None = None
) -> Iterator[tuple[int, int, Reading]]:
    """(start, end, reading) of every ``family`` opener (``"angle"`` or ``"bracket"``) whose reading is
    not none or that is followed by ``\\``: what the defang escapes, as the one reader sees it.

    ``native`` (default: whether the chosen implementation is the native one) reads in one native
    pass over the text; otherwise ``modeleye.read_after`` / ``read_bracket`` per opener. A text
    holding a lone surrogate is always read in Python (it cannot cross into Rust as UTF-8).
    """
    if native is None:
        native = _impl is _nativeimpl
    if native and _nativeimpl.AVAILABLE:
        try:
            found = _native_openers(text, reserved)
        except _nativeimpl.SURROGATE_ERROR:
            pass
        else:
            for start, end, kind, name, slash, rend, fam in found:
                if fam == family:
                    yield start, end, Reading(cast(Kind, kind), name, slash, rend)
            return
    names = names_for(reserved)
    n = len(text)
    angle = family == "angle"
    for m in (OPENER_RE if angle else BRACKET_OPENER_RE).finditer(text):
        end = m.end()
        reading = read_after(text, end, names) if angle else read_bracket(text, end, names)
        if reading or (end < n and text[end] == "\\"):
            yield m.start(), end, reading


@lru_cache(maxsize=2)
def _native_openers(text: str, reserved: tuple[str, ...]) -> list[tuple[int, int, str, str, bool, int, str]]:
    """Every opener's reading in one native pass (both families; cached for the two passes that use it)."""
    return _nativeimpl.openers(text, reserved)
