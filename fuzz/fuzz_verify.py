#!/usr/bin/env python3
"""Fuzz ``verify_preface`` and ``parse_preface`` with arbitrary text at every level.

Properties (docs/design.md, sections 3-4):

* ``verify_preface`` never raises on a ``str`` and every problem it reports
  lies within the text (0 <= offset <= len, line/column >= 1);
* ``parse_preface`` either returns envelopes or raises an ``EnvelockError``
  (``EnvelopeBreach``); nothing else;
* ``verify_preface(text).ok`` implies ``parse_preface`` succeeds;
* a sound preface is a fixed point: when ``parse_preface`` accepts the text,
  ``compose_preface(entries_of(parse_preface(text, level=L), level=L), level=L,
  invisible="keep") == text`` byte for byte (this is the "verdict ok implies
  exact re-composition" property, checked for every text the parser accepts);
* when the verdict is ok, verifying against the parsed entries as
  ``expected`` is ok too.

Input: header byte from the end (level); the rest is the text.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _common import LEVELS, Input

from envelock import EnvelockError, compose_preface, entries_of, parse_preface, verify_preface

HEADER = 1


def check(data: bytes) -> None:
    inp = Input(data, HEADER)
    level = LEVELS[inp.header[0] % 3]
    text = inp.text
    v = verify_preface(text, level=level)  # must never raise
    for p in v.problems:
        assert 0 <= p.offset <= len(text), f"problem offset {p.offset} outside text of length {len(text)}: {p}"
        assert p.line >= 1 and p.column >= 1, p
    try:
        envs = parse_preface(text, level=level)
    except EnvelockError:
        assert not v.ok, "verify_preface says ok but parse_preface refuses the text"
        return
    rebuilt = compose_preface(entries_of(envs, level=level), level=level, invisible="keep")
    assert rebuilt == text, f"parse/compose is not the identity at {level}: {text!r} -> {str(rebuilt)!r}"
    if v.ok:
        again = verify_preface(text, expected=entries_of(envs, level=level), level=level)
        assert again.ok, [str(p) for p in again.problems]


if __name__ == "__main__":
    _common.neutralise_missing_readers()
    _common.main("verify", check)
