"""Prose-level rules: attribute-injection attempts and prose turn markers."""

from __future__ import annotations

import re

from ..eye.tokens import PROSE_TURN_MARKERS
from ._base import _Raw
from .context import markup_attribute, string_literal_start

_ATTR_INJECTION_RE = re.compile(
    r"(?:[\"']|&quot;|&#0*3[49];|&#[xX]0*2[27];|&apos;|%22|%27)"
    r"(?:[ \t\u2028\u2029]|%20|\+){0,8}(provenance|source|origin|fetched_at)[ \t]{0,4}(?:=|%3[dD])",
    re.IGNORECASE,
)


def _scan_attributes(text: str, out: list[_Raw]) -> None:
    out.extend(
        _Raw(
            "forged-attribute",
            "warning",
            f"quote followed by envelope attribute {m.group(1).lower()}=: attribute-injection attempt",
            m.start(),
            m.end(),
        )
        for m in _ATTR_INJECTION_RE.finditer(text)
        if not (
            m.group(1).lower() in ("source", "origin")
            and (markup_attribute(text, m.start()) or string_literal_start(text, m.start()))
        )
    )


_PROSE_RE = re.compile(
    r"(?:^|(?<=[\r\u2028\u2029\x85]))[ \t]{0,8}("
    + "|".join(re.escape(p) for p in sorted(PROSE_TURN_MARKERS, key=len, reverse=True))
    + ")",
    re.IGNORECASE | re.MULTILINE,
)


def _scan_prose(text: str, out: list[_Raw]) -> None:
    """Turn markers at the start of a line, in any case but all-lowercase (``user: bool`` and
    ``system: linux`` are annotations and YAML keys, see :mod:`envelock.scan.context`)."""
    out.extend(
        _Raw("prose-turn-marker", "note", f"prose turn marker {m.group(1)!r} at the start of a line", m.start(1), m.end(1))
        for m in _PROSE_RE.finditer(text)
        if not m.group(1).islower()
    )
