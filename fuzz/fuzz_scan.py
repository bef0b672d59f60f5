#!/usr/bin/env python3
"""Fuzz ``scan_text`` on arbitrary text.

Properties:

* never raises on a ``str``; findings are sorted by offset;
* every position is within the text: ``0 <= offset <= end_offset <= len``,
  and ``line``/``column`` (and ``end_line``/``end_column``) are exactly the
  1-based line (LF-separated) and code-point column of those offsets;
* every rule id and severity is one of the rule table's;
* the scanner agrees with the defang's model's eye: every opener not followed
  by ``\\`` after which the real ``dangerous_after`` sees a *reserved name*
  is reported by a finding that starts at that opener;
* scan parity: every opener (``<``-like or ``[``-like) that ``defang`` escapes
  for its reading lies inside a finding (``_common.parity_violations``).

Until ``envelock.scan_text`` exists the harness prints a message and exits 0.

Input: the whole input is the text.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _common import (
    REAL_DANGEROUS_AFTER,
    _modeleye,
    text_of,
)

import envelock
from envelock.eye.reader import OPENER_RE, Names, names_for

_N = names_for()
ONLY_RESERVED = Names(_N.reserved, (), pipes=False)
HAVE_SCAN = hasattr(envelock, "scan_text")
if HAVE_SCAN:
    from envelock.scan.rules import RULES_BY_ID, SEVERITY_RANK


def _pos(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def check(data: bytes) -> None:
    text = text_of(data)
    findings = envelock.scan_text(text)  # looked up each call: a mutant may replace it
    last = -1
    starts = set()
    for f in findings:
        assert 0 <= f.offset <= f.end_offset <= len(text), f"finding outside the text (len {len(text)}): {f}"
        assert f.offset >= last, "findings are not sorted by offset"
        last = f.offset
        assert (f.line, f.column) == _pos(text, f.offset), f"wrong line/column for offset {f.offset}: {f}"
        assert (f.end_line, f.end_column) == _pos(text, f.end_offset), f"wrong end line/column: {f}"
        assert f.rule in RULES_BY_ID, f.rule
        assert f.severity in SEVERITY_RANK, f.severity
        starts.add(f.offset)
    violations = _common.parity_violations(text, findings)
    assert not violations, violations[0]
    for m in OPENER_RE.finditer(text):
        e = m.end()
        if e < len(text) and text[e] == "\\":
            continue
        if REAL_DANGEROUS_AFTER(text, e, ONLY_RESERVED) and spelled(text, e):
            assert m.start() in starts, (
                f"the defang escapes the opener at {m.start()} (a reserved name is spelled) but scan_text "
                f"reports nothing there: {text[m.start() : m.start() + 40]!r}"
            )


def spelled(text: str, e: int) -> bool:
    """Does the lookahead reach a reserved name with its bounds lifted?

    ``dangerous_after`` fails closed when ``MAX_RUN``/``MAX_LOOKAHEAD`` run out
    (``<`` + 40 spaces is escaped); the scanner deliberately does not report
    such padding-only verdicts, so the cross-check is limited to openers after
    which a reserved name is really spelled.
    """
    saved = _modeleye.MAX_RUN, _modeleye.MAX_LOOKAHEAD
    _modeleye.MAX_RUN = _modeleye.MAX_LOOKAHEAD = 1 << 30
    try:
        return REAL_DANGEROUS_AFTER(text, e, ONLY_RESERVED)
    finally:
        _modeleye.MAX_RUN, _modeleye.MAX_LOOKAHEAD = saved


if __name__ == "__main__":
    if not HAVE_SCAN:
        print("fuzz: scan: envelock.scan_text does not exist yet; skipping (exit 0)")
        sys.exit(0)
    _common.main("scan", check)
