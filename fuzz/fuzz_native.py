#!/usr/bin/env python3
"""Fuzz the native core (``envelock._native``, Rust) against the Python reference.

The same input goes to both; any difference fails:

* ``defang``, ``defang_body``, ``undefang`` (of the input and of its reference defang)
  and ``undefang_body`` (of the reference ``defang_body``) at every level, byte for byte,
  with the default and a custom set of names;
* ``read_after`` (with and without tokens and bars) and ``read_bracket`` at every
  position of inputs up to 160 characters (at every opener end beyond that);
* ``openers`` equals the Python loop over ``OPENER_RE`` / ``BRACKET_OPENER_RE``;
* a text with a lone surrogate raises ``SurrogateError`` (the caller's cue to fall back), and its
  ``scan_text`` is compared as below;
* the spotlight transforms ``datamark``/``undatamark``/``interleave``/``uninterleave`` equal
  :mod:`envelock.envelope.spotlight`'s (seed from the input's first 8 bytes), and invert each other;
* ``scan_text`` on the native core equals ``scan_text`` on the fast Python implementation, every
  field of every finding.

Planted mutant ``reference-forgets-capital-i``: the reference loses the readings of
``I``, so ``[INST]`` and ``<THINK>`` read differently on the two sides.

Input: the whole input is the string (UTF-8 with ``surrogateescape``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _common import LEVELS, text_of

import envelock
from envelock import _native, escape
from envelock.envelope import spotlight as spotlight
from envelock.eye import backend
from envelock.eye import reader as me
from envelock.eye import reference as _reference
from envelock.eye.tokens import RESERVED_NAMES

CUSTOM = ("memory", "retrieved_content")
FULL_POSITIONS = 160


def _ref_body(s: str, level: str, reserved: tuple[str, ...]) -> str:
    with backend.use("reference"):
        return escape.defang_body(s, level=level, reserved=reserved)  # type: ignore[arg-type]


def _ref_undo_body(s: str, level: str, reserved: tuple[str, ...]) -> str:
    with backend.use("reference"):
        return escape.undefang_body(s, level=level, reserved=reserved)  # type: ignore[arg-type]


def _ref_openers(s: str, names: me.Names) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for family, regex, read in (
        ("angle", me.OPENER_RE, me.read_after),
        ("bracket", me.BRACKET_OPENER_RE, me.read_bracket),
    ):
        for m in regex.finditer(s):
            r = read(s, m.end(), names)
            if r.kind != "none" or s[m.end() : m.end() + 1] == "\\":
                out.append((m.start(), m.end(), r.kind, r.name, r.slash, r.end, family))
    out.sort(key=lambda o: o[0])
    return out


def _tuple(r: me.Reading) -> tuple[Any, ...]:
    return (r.kind, r.name, r.slash, r.end)


def check(data: bytes) -> None:
    s = text_of(data)
    if any("\ud800" <= c <= "\udfff" for c in s):
        try:
            _native.defang(s, "reserved", RESERVED_NAMES)
        except _native.SurrogateError:
            # The scanner takes such a text (some native passes read its surrogate view, the rest fall back).
            _scan_differential(s)
            return
        raise AssertionError(f"no SurrogateError for a lone surrogate: {s!r}")
    for reserved in (RESERVED_NAMES, CUSTOM):
        for level in LEVELS:
            want = _reference.defang(s, level, reserved)  # type: ignore[arg-type]
            got = _native.defang(s, level, reserved)
            assert got == want, f"defang differs at {level} {reserved}: {s!r}: native {got!r}, reference {want!r}"
            b_want, b_got = _ref_body(s, level, reserved), _native.defang_body(s, level, reserved)
            assert b_got == b_want, f"defang_body differs at {level}: {s!r}: native {b_got!r}, reference {b_want!r}"
            ub_want, ub_got = _ref_undo_body(b_want, level, reserved), _native.undefang_body(b_want, level, reserved)
            assert ub_got == ub_want, f"undefang_body differs at {level}: {b_want!r}: native {ub_got!r}, reference {ub_want!r}"
            for t in (s, want):
                u_want = _reference.undefang(t, level, reserved)  # type: ignore[arg-type]
                u_got = _native.undefang(t, level, reserved)
                assert u_got == u_want, f"undefang differs at {level}: {t!r}: native {u_got!r}, reference {u_want!r}"
    names = me.names_for(RESERVED_NAMES)
    bare = me.Names(names.reserved, (), False, spelled=names.spelled)  # as the native core's names without tokens
    got_op = _native.openers(s, RESERVED_NAMES)
    want_op = _ref_openers(s, names)
    assert got_op == want_op, f"openers differ: {s!r}: native {got_op!r}, reference {want_op!r}"
    positions = range(len(s) + 1) if len(s) <= FULL_POSITIONS else sorted({o[1] for o in want_op} | {0, len(s)})
    for pos in positions:
        for nm, tokens in ((names, True), (bare, False)):
            ra = _native.read_after(s, pos, RESERVED_NAMES, tokens, tokens)
            assert ra == _tuple(me.read_after(s, pos, nm)), f"read_after differs at {pos} (tokens={tokens}): {s!r}: native {ra!r}"
        rb = _native.read_bracket(s, pos)
        assert rb == _tuple(me.read_bracket(s, pos, names)), f"read_bracket differs at {pos}: {s!r}: native {rb!r}"
    # The spotlight transforms (rust/envelock-core/src/spotlight.rs) against envelock.envelope.spotlight.
    seed = int.from_bytes(data[:8].ljust(8, b"\0"), "little")
    for marker in _MARKERS:
        dm = spotlight.datamark(s, marker)
        assert _native.datamark(s, marker) == dm, f"datamark differs ({marker!r}): {s!r}"
        assert _native.undatamark(s, marker) == spotlight.undatamark(s, marker), f"undatamark differs: {s!r}"
        assert _native.undatamark(dm, marker) == s, f"undatamark(datamark) is not the text: {s!r}"
        il = spotlight.interleave(s, marker, f"{seed:016x}")
        assert _native.interleave(s, marker, seed) == il, f"interleave differs ({marker!r}, {seed}): {s!r}"
        assert _native.uninterleave(s, marker) == spotlight.uninterleave(s, marker), f"uninterleave differs: {s!r}"
        assert _native.uninterleave(il, marker) == s, f"uninterleave(interleave) is not the text: {s!r}"
    _scan_differential(s)


def _scan_differential(s: str) -> None:
    """The scanner on the native core (its native reader, record loop, Finding builder, order check,
    class prefilter, blob sift and escape plan) against the scanner on the fast Python implementation,
    field by field."""
    with backend.use("native"):
        scan_native = envelock.scan_text(s)
    with backend.use("fast"):
        scan_python = envelock.scan_text(s)
    assert scan_native == scan_python, f"scan_text differs: {s!r}: native {scan_native!r}, python {scan_python!r}"


#: The paper's marker, and one a fuzzed text may well contain.
_MARKERS = ("\u02c6", "\u2192")


if __name__ == "__main__":
    _common.main("native", check)
