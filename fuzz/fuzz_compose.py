#!/usr/bin/env python3
"""Fuzz ``compose_preface``: 1-6 entries, arbitrary Unicode fields, every level.

Properties (docs/design.md, sections 1-4):

* composition succeeds, or raises a documented ``EnvelockError`` for a field
  that can be invalid (empty/XML-impossible ``source``/``origin``, a bad
  ``fetched_at``); a field-valid input must compose;
* ``verify_preface(out, expected=entries, level=L).ok``;
* ``parse_preface(out, level=L)`` gives the entries back, modulo the
  documented handling (TAG/bidi stripped, XML-impossible characters in
  bodies replaced by U+FFFD), ``fetched_at`` rendered in UTC;
* the model's eye sees exactly two reserved tags per envelope
  (``reserved_tag_count(out) == 2 * n``).

Input: header bytes from the end (level, per-entry timestamp bits, timestamp
seed); the rest is UTF-8 text, entries split on ``\\x1e``, fields on ``\\x1f``:
``body`` | ``origin\\x1fbody`` | ``source\\x1forigin\\x1fbody`` |
``source\\x1forigin\\x1ffetched_at\\x1fbody`` (see ``_common.py``).
"""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _common import LEVELS, RS, US, XML_IMPOSSIBLE, Input, expected_attr, expected_text

import envelock
from envelock import InvalidEntry, PrefaceEntry, compose_preface, parse_preface, verify_preface
from envelock.envelope.invisible import handle_invisible
from envelock.envelope.provenance import passes_for_higher
from envelock.eye.reader import reserved_tag_count

HEADER = 4
MAX_ENTRIES = 6


def _stamp(seed: int, tz: int, k: int) -> datetime:
    micro = 0 if seed % 3 == 0 else (seed * 3907 + k) % 1_000_000
    zone = timezone(timedelta(minutes=(tz - 128) * 10))
    day, hour = 1 + (seed + k) % 28, (seed + k) % 24
    return datetime(1990 + seed % 80, 1 + seed % 12, day, hour, (seed * 7) % 60, k % 60, micro, tzinfo=zone)


def _utc(d: datetime) -> str:
    u = d.astimezone(timezone.utc)
    s = u.strftime("%Y-%m-%dT%H:%M:%S")
    return s + (f".{u.microsecond:06d}" if u.microsecond else "") + "Z"


def decode(data: bytes) -> tuple[str, list[PrefaceEntry]]:
    """The level and the entries an input stands for."""
    inp = Input(data, HEADER)
    level_b, stamps, seed, tz = inp.header
    level = LEVELS[level_b % 3]
    entries = []
    for k, rec in enumerate(inp.text.split(RS)[:MAX_ENTRIES]):
        f = rec.split(US)
        fetched: datetime | str | None = None
        if len(f) == 1:
            source, origin, body = "external", "fuzz", f[0]
        elif len(f) == 2:
            source, origin, body = "external", f[0], f[1]
        elif len(f) == 3:
            source, origin, body = f
        else:
            source, origin, fetched, body = f[0], f[1], f[2], US.join(f[3:])
        if fetched is None and stamps >> k & 1:
            fetched = _stamp(seed, tz, k)
        entries.append(PrefaceEntry(source, origin, body, fetched))
    return level, entries


def empty_source(source: str) -> bool:
    """Empty, or empty once its invisible characters are stripped (the composer refuses both)."""
    return not handle_invisible(source, "strip", index=0, field="source")[0]


def posing(source: str) -> bool:
    """A source that reads as a tier above its own, given or with its invisible characters stripped
    (a model would take the rendered ``provenance`` for it: ``System-Config``, ``system-config
    (verified)``; SECURITY.md). Compose asks it of what it renders, which may differ by an escape, so
    this is an allowance for a refusal, never a demand for one."""
    stripped = handle_invisible(source, "strip", index=0, field="source")[0]
    return passes_for_higher(source) is not None or (bool(stripped) and passes_for_higher(stripped, own=source) is not None)


def invalid_source(source: str) -> bool:
    """Empty or XML-impossible: compose must refuse it."""
    return empty_source(source) or bool(XML_IMPOSSIBLE.search(source))


def refused_source(source: str) -> bool:
    """:func:`invalid_source`, or :func:`posing`: compose may refuse it."""
    return invalid_source(source) or posing(source)


def may_be_invalid(e: PrefaceEntry, field: str) -> bool:
    """Could this field of this entry legitimately be refused with InvalidEntry?"""
    if field == "source":
        return refused_source(e.source)
    if field == "origin":
        return bool(XML_IMPOSSIBLE.search(e.origin))
    if field == "fetched_at":
        return isinstance(e.fetched_at, str)  # we do not re-implement ISO 8601 here
    return False


def check(data: bytes) -> None:
    level, entries = decode(data)
    try:
        out = compose_preface(entries, level=level)
    except InvalidEntry as exc:
        idx = exc.index
        assert idx is not None and 0 <= idx < len(entries), f"InvalidEntry without a valid index: {exc}"
        assert may_be_invalid(entries[idx], exc.field), f"refused a valid field: {exc!r} for {entries[idx]!r}"
        # Everything before the refused entry was valid.
        for j in range(idx):
            for fld in ("source", "origin"):
                bad = (fld == "source" and invalid_source(entries[j].source)) or XML_IMPOSSIBLE.search(getattr(entries[j], fld))
                assert not bad, f"entry {j} was invalid but entry {idx} was reported: {exc}"
        return
    except envelock.EnvelockError as exc:
        raise AssertionError(f"undocumented error for plain str bodies: {exc!r}") from exc
    for j, e in enumerate(entries):
        for fld in ("source", "origin"):
            # (posing is an allowance only: compose asks it of the rendered value)
            invalid = invalid_source(e.source) if fld == "source" else may_be_invalid(e, fld)
            assert not invalid, f"accepted invalid {fld} of entry {j}: {e!r}"

    assert isinstance(out, envelock.Preface), type(out)
    assert not XML_IMPOSSIBLE.search(out), "output holds a character XML cannot carry"

    v = verify_preface(out, expected=entries, level=level)
    assert v.ok, f"verify_preface rejects the composer's own output at {level}: {[str(p) for p in v.problems]}"

    envs = parse_preface(out, level=level)
    assert len(envs) == len(entries), (len(envs), len(entries))
    for j, (env, e) in enumerate(zip(envs, entries, strict=True)):
        assert env.children == (), f"entry {j}: a str body parsed as nested envelopes"
        assert env.source == expected_attr(e.source), (j, env.source, e.source)
        assert env.origin == expected_attr(e.origin), (j, env.origin, e.origin)
        assert env.body == expected_text(e.body), (j, env.body, e.body)
        if e.fetched_at is None:
            assert env.fetched_at is None
        elif isinstance(e.fetched_at, datetime):
            assert env.fetched_at == _utc(e.fetched_at), (env.fetched_at, e.fetched_at)
        else:
            assert env.fetched_at is not None and env.fetched_at.endswith("Z")

    count = reserved_tag_count(out)
    assert count == 2 * len(entries), f"the model's eye sees {count} envelope tags for {len(entries)} envelopes"


if __name__ == "__main__":
    _common.neutralise_missing_readers()
    _common.main("compose", check)
