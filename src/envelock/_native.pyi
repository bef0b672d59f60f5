"""Type stubs of ``envelock._native``, the Rust core (``rust/envelock-py``).

Offsets are code-point offsets (Python ``str`` indices). A text holding a lone
surrogate cannot cross into Rust as UTF-8: every function raises
:class:`SurrogateError` (a ``ValueError``) for it, and the caller falls back to the
Python reference (``envelock._reference``) for that call.
"""

from typing import Literal

Level = Literal["reserved", "markup", "xml"]
Kind = Literal["none", "reserved", "token", "bar", "padding"]
Family = Literal["angle", "bracket"]
#: (kind, name skeleton, slash, end): ``modeleye.Reading``; ``end`` is 0 for ``"none"``.
ReadingTuple = tuple[Kind, str, bool, int]

UNICODE_VERSION: str

class SurrogateError(ValueError):
    """The text holds a lone surrogate; use the Python reference for this call."""

def defang(text: str, level: Level, reserved: tuple[str, ...]) -> str:
    """``_reference.defang(text, level, reserved)``; returns ``text`` itself when nothing changes."""

def defang_body(text: str, level: Level, reserved: tuple[str, ...]) -> str:
    """``escape.defang_body``: ``defang`` judged followed by ``"\\n<"`` (the end-of-body context)."""

def undefang(text: str, level: Level) -> str:
    """``_reference.undefang(text, level)``."""

def undefang_body(text: str, level: Level) -> str:
    """``escape.undefang_body``: the exact inverse of :func:`defang_body` (bracket readings judged
    in the same ``"\\n<"`` context)."""

def read_after(text: str, pos: int, reserved: tuple[str, ...], tokens: bool = True, pipes: bool = True) -> ReadingTuple:
    """``modeleye.read_after`` at ``pos`` (just after an opener); ``tokens=False`` drops the
    ``<NAME>`` tokens, ``pipes=False`` the ``<|`` bars. ``pos`` past the end reads none."""

def read_bracket(text: str, pos: int) -> ReadingTuple:
    """``modeleye.read_bracket`` at ``pos`` (just after a bracket opener)."""

def openers(text: str, reserved: tuple[str, ...]) -> list[tuple[int, int, Kind, str, bool, int, Family]]:
    """(start, opener_end, kind, name, slash, reading_end, family) for every angle and bracket
    opener, in text order, whose reading is not none or that is followed by ``\\``."""

def openers_many(texts: list[str], reserved: tuple[str, ...]) -> list[list[tuple[int, int, Kind, str, bool, int, Family]]]:
    """:func:`openers` of each text, on every core with the GIL released for large batches.
    Raises :class:`SurrogateError` (with the index of the text) for a lone surrogate."""

def defang_many(texts: list[str], level: Level, reserved: tuple[str, ...]) -> list[str]:
    """``defang`` of each text, on every core with the GIL released for large batches.
    Raises :class:`SurrogateError` (with the index of the text) for a lone surrogate."""

def skeleton(text: str) -> str:
    """``modeleye.skeleton``."""

def datamark(text: str, marker: str) -> str:
    """``spotlight.datamark`` (``marker``: one code point that ``spotlight.marker_problem`` accepts)."""

def undatamark(text: str, marker: str) -> str:
    """``spotlight.undatamark``."""

def interleave(text: str, marker: str, seed: int) -> str:
    """``spotlight.interleave`` with ``seed`` the int of the hex seed (CPython's MT19937, ``random()``
    below 1/4 per boundary)."""

def uninterleave(text: str, marker: str) -> str:
    """``spotlight.uninterleave``."""
