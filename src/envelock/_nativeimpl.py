"""The native defang: the Rust core (``envelock._native``, rust/) as an implementation of :mod:`envelock.escape`.

Held equal to :mod:`envelock._reference` byte for byte (``tests/test_native.py``,
``fuzz/fuzz_native.py``). A text holding a lone surrogate cannot cross into Rust as
UTF-8: for it the call falls back to the reference (same output). :data:`AVAILABLE`
is false when the extension was not built (a source checkout without the Rust
toolchain, or ``pip install`` of the pure-Python parts only).
"""

from __future__ import annotations

from collections.abc import Sequence

from . import _reference
from .levels import Level
from .tokens import RESERVED_NAMES

try:
    from . import _native
except ImportError:  # pragma: no cover - depends on the build
    AVAILABLE = False
else:
    AVAILABLE = True

NAME = "native"
#: What the native functions raise for a text with a lone surrogate (the caller's cue to use the
#: reference); ``ValueError`` stands in when the core was not built (nothing raises it then).
SURROGATE_ERROR: type[ValueError] = _native.SurrogateError if AVAILABLE else ValueError
__all__ = ["AVAILABLE", "NAME", "SURROGATE_ERROR", "defang", "defang_body", "defang_many", "openers", "undefang"]


def defang(text: str, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> str:
    """:func:`envelock._reference.defang`, natively."""
    try:
        return _native.defang(text, level, reserved)
    except _native.SurrogateError:
        return _reference.defang(text, level, reserved)


def undefang(text: str, level: Level = "reserved") -> str:
    """:func:`envelock._reference.undefang`, natively."""
    try:
        return _native.undefang(text, level)
    except _native.SurrogateError:
        return _reference.undefang(text, level)


def defang_body(text: str, level: Level, reserved: tuple[str, ...]) -> str:
    """:func:`envelock.escape.defang_body` (the end-of-body context), natively."""
    try:
        return _native.defang_body(text, level, reserved)
    except _native.SurrogateError:
        return defang_body_python(text, level, reserved)


def defang_body_python(text: str, level: Level, reserved: tuple[str, ...]) -> str:
    from .escape import _defang_body_with

    return _defang_body_with(_reference.defang, text, level, reserved)


def defang_many(texts: Sequence[str], level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES) -> list[str]:
    """``defang`` of every text, on every core with the GIL released (a text with a lone surrogate
    is done by the reference)."""
    items = list(texts)
    try:
        return _native.defang_many(items, level, reserved)
    except _native.SurrogateError:
        return [defang(t, level, reserved) for t in items]


def openers(text: str, reserved: tuple[str, ...]) -> list[tuple[int, int, str, str, bool, int, str]]:
    """Every opener's reading in one native pass: ``_native.openers`` (raises ``SurrogateError``)."""
    return list(_native.openers(text, reserved))
