"""JSON as the CLI reads it: an object with a key twice is refused, not read as its last value.

Readers disagree on a duplicate key (Python's ``json`` and most keep the last, some the first), so an
entry ``{"source": "external", …, "source": "system-config"}`` would be composed or gated as one
thing and used downstream as another (red-team find of stop 42: ``compose`` wrote the last
``source`` silently). Duplicates are bad input: the caller names the line and reports it.
"""

from __future__ import annotations

import json
from typing import Any


class StrictJSONError(ValueError):
    """Text ``json.loads`` would take that JSON (RFC 8259) does not, or that no reader agrees on."""


class DuplicateKeyError(StrictJSONError):
    """An object holds a key twice."""

    def __init__(self, key: str) -> None:
        super().__init__(f"duplicate key {key!r} in an object (JSON readers disagree on which value counts)")
        self.key = key


def _unique(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


def _constant(name: str) -> Any:
    # ``NaN``, ``Infinity`` and ``-Infinity`` are Python's extension, not JSON (a CLI-probe find of stop 51:
    # a JSON Lines id ``NaN`` was read).
    raise StrictJSONError(f"{name} is not a JSON value")


def _integer(digits: str) -> int:
    # Python refuses an integer of more than 4300 digits with a plain ValueError (an internal error of
    # the CLI until stop 51): bad input, named as such.
    try:
        return int(digits)
    except ValueError:
        raise StrictJSONError(f"an integer of {len(digits)} digits is over this reader's limit") from None


def loads(text: str) -> Any:
    """``json.loads(text)``, raising :class:`StrictJSONError` for a key given twice in one object
    (:class:`DuplicateKeyError`), ``NaN`` or ``Infinity``, or an integer too long to read."""
    return json.loads(text, object_pairs_hook=_unique, parse_constant=_constant, parse_int=_integer)
