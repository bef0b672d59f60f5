"""JSON as the CLI reads it: an object with a key twice is refused, not read as its last value.

Readers disagree on a duplicate key (Python's ``json`` and most keep the last, some the first), so an
entry ``{"source": "external", …, "source": "system-config"}`` would be composed or gated as one
thing and used downstream as another (red-team find of stop 42: ``compose`` wrote the last
``source`` silently). Duplicates are bad input: the caller names the line and reports it.
"""

from __future__ import annotations

import json
from typing import Any


class DuplicateKeyError(ValueError):
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


def loads(text: str) -> Any:
    """``json.loads(text)``, raising :class:`DuplicateKeyError` for a key given twice in one object."""
    return json.loads(text, object_pairs_hook=_unique)
