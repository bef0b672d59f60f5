#!/usr/bin/env python3
"""Fuzz ``defang``/``undefang`` at every level.

Properties (docs/design.md, section 2), for every level ``L``:

* ``undefang(defang(s, level=L), level=L) == s`` (the escape is injective);
* at ``reserved``/``markup`` defang only inserts backslashes;
* no dangerous opener is left: every ``OPENER_RE`` match in the output that
  is not followed by ``\\`` has ``dangerous_after(out, end, names) == False``
  (the real model's-eye lookahead, captured before any mutant is applied);
* at ``markup``/``xml`` no literal ``<`` that starts markup is left
  (``markup_after``), at ``xml`` the output holds no raw ``<``, ``>``, CR and
  only the four references the escape emits;
* no ``[INST]``-style bracket token is left without its backslash.

Input: the whole input is the string (UTF-8 with ``surrogateescape``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _common import LEVELS, REAL_DANGEROUS_AFTER, REAL_MARKUP_AFTER, text_of

from envelock import defang, undefang
from envelock.eye.reader import OPENER_RE, names_for
from envelock.eye.tokens import BRACKET_TOKEN_NAMES

NAMES = names_for()
_BRACKET_LEFT = re.compile(
    r"\[[ \t]*/?[ \t]*(?:" + "|".join(re.escape(n) for n in BRACKET_TOKEN_NAMES) + r")[ \t]*\]", re.IGNORECASE
)
_XML_REF = re.compile(r"&(?!(?:amp|lt|gt|#13);)")
_XML_UNESCAPE = re.compile(r"&(amp|lt|gt|#13);")
_XML_MAP = {"amp": "&", "lt": "<", "gt": ">", "#13": "\r"}


def _unxml(t: str) -> str:
    return _XML_UNESCAPE.sub(lambda m: _XML_MAP[m.group(1)], t)


def check_output(s: str, out: str, level: str) -> None:
    back = undefang(out, level=level)
    assert back == s, f"round trip broken at {level}: {s!r} -> {out!r} -> {back!r}"
    if level != "xml":
        assert len(out) - len(s) == out.count("\\") - s.count("\\"), f"defang did more than insert backslashes at {level}"
    for m in OPENER_RE.finditer(out):
        e = m.end()
        if e < len(out) and out[e] == "\\":
            continue
        assert not REAL_DANGEROUS_AFTER(out, e, NAMES), (
            f"dangerous opener left at {m.start()} at level {level}: {out[m.start() : m.start() + 40]!r}"
        )
    if level != "reserved":
        plain = _unxml(out) if level == "xml" else out
        for k, ch in enumerate(plain):
            if ch == "<" and not (k + 1 < len(plain) and plain[k + 1] == "\\"):
                assert not REAL_MARKUP_AFTER(plain, k + 1), f"markup opener left at {k} at level {level}: {plain[k : k + 20]!r}"
    if level == "xml":
        assert "<" not in out and ">" not in out and "\r" not in out, f"raw XML special in xml output: {out!r}"
        bad = _XML_REF.search(out)
        assert bad is None, f"stray & at {bad.start()} in xml output: {out!r}"
    left = _BRACKET_LEFT.search(_unxml(out) if level == "xml" else out)
    assert left is None, f"bracket token left at {level}: {left.group()!r}"


def check(data: bytes) -> None:
    s = text_of(data)
    for level in LEVELS:
        check_output(s, defang(s, level=level), level)


if __name__ == "__main__":
    _common.main("defang", check)
