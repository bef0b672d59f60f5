"""The entries of ``envelock compose``: a JSON array or JSON Lines of ``{source, origin, body, fetched_at?}``.

A JSON array as a ``body`` is a nested preface, composed at the same level and nesting policy (an
explicit trust decision of whoever wrote the file). Every refusal names the top-level entry and
field, and for a nested entry its path (``entry 0, field 'source': (nested entry 0.1) missing``).
"""

from __future__ import annotations

import json
from typing import Any

from ..envelope.compose import compose_preface
from ..envelope.entry import PrefaceEntry
from ..envelope.nesting import NestingPolicy
from ..errors import InvalidEntry, NestingError
from ..eye.escape import Level
from ..eye.load_tokens import Tokens
from . import strict_json
from .exits import UsageError

ENTRY_FIELDS = ("source", "origin", "body", "fetched_at")


def parse_entries(text: str) -> list[Any]:
    """A JSON array, or JSON Lines (one object per non-blank line). Raises UsageError."""
    stripped = text.strip()
    if not stripped:
        return []
    if stripped.startswith("["):
        try:
            data = strict_json.loads(stripped)
        except strict_json.StrictJSONError as e:
            raise UsageError(f"invalid JSON: {e}") from None
        except json.JSONDecodeError as e:
            raise UsageError(f"invalid JSON: {e}") from e
        except RecursionError:
            raise UsageError("invalid JSON: nested too deeply to be read") from None
        if not isinstance(data, list):
            raise UsageError("expected a JSON array of entries")
        return data
    values: list[Any] = []
    # Records end at LF (CRLF too: the CR is blank to JSON) only: ``str.splitlines`` also breaks at
    # U+2028, U+2029, NEL and others, which JSON strings may hold raw (a CLI-probe find of stop 51: a
    # record that ``scan --jsonl`` reads was refused by compose).
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            values.append(strict_json.loads(line))
        except strict_json.StrictJSONError as e:
            raise UsageError(f"line {n}: invalid JSON Lines record: {e}") from None
        except json.JSONDecodeError as e:
            raise UsageError(f"line {n}: invalid JSON Lines record: {e}") from e
        except RecursionError:
            raise UsageError(f"line {n}: invalid JSON Lines record: nested too deeply to be read") from None
    return values


def entries_from_json(
    values: list[Any],
    where: str = "",
    *,
    level: Level = "reserved",
    nesting: NestingPolicy = "allow",
    strict: bool = False,
    tokens: Tokens | None = None,
) -> list[PrefaceEntry]:
    """Entries from parsed JSON (see the module docstring). Raises InvalidEntry / NestingError."""
    out: list[PrefaceEntry] = []
    for i, v in enumerate(values):
        label = f"{where}{i}"
        top = int(label.split(".")[0])

        def bad(message: str, field: str, label: str = label, top: int = top) -> InvalidEntry:
            return InvalidEntry(f"(nested entry {label}) {message}" if where else message, index=top, field=field)

        if not isinstance(v, dict):
            raise bad(f"expected a JSON object, got {json_type(v)}", "entry")
        for k in v:
            if k not in ENTRY_FIELDS:
                raise bad(f"unknown field (allowed: {', '.join(ENTRY_FIELDS)})", str(k))
        for k in ("source", "origin", "body"):
            if k not in v:
                raise bad("missing", k)
            if v[k] is None:
                raise bad("null (expected a string" + (", or an array of entries)" if k == "body" else ")"), k)
        body = v["body"]
        if isinstance(body, list):
            # A JSON array as a body is an explicit nested preface (the caller's trust decision).
            inner = entries_from_json(body, f"{label}.", level=level, nesting=nesting, strict=strict, tokens=tokens)
            try:
                body = compose_preface(inner, level=level, nesting=nesting, strict_provenance=strict, tokens=tokens)
            except (InvalidEntry, NestingError) as e:
                raise bad(f"(entry {e.index} inside) {e.reason}", e.field) from e
        for k in ("source", "origin"):
            if not isinstance(v[k], str):
                raise bad(f"expected a string, got {json_type(v[k])}", k)
        if not isinstance(body, str):
            raise bad(f"expected a string or an array of entries, got {json_type(body)}", "body")
        # (JSON's names for JSON input: the library's own message speaks of datetime and None.)
        stamp = v.get("fetched_at")
        if stamp is not None and not isinstance(stamp, str):
            raise bad(f"expected a string (or null to omit it), got {json_type(stamp)}", "fetched_at")
        if stamp == "":
            raise bad("empty string (leave the field out, or null, to omit fetched_at)", "fetched_at")
        out.append(PrefaceEntry(v["source"], v["origin"], body, v.get("fetched_at")))
    return out


def json_type(value: object) -> str:
    """The JSON name of a parsed value's type (``null``, ``a number``...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    return "a string" if isinstance(value, str) else type(value).__name__
