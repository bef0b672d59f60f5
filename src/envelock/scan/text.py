"""Prose-level rules: attribute-injection attempts and prose turn markers."""

from __future__ import annotations

import re

from ..eye.tokens import PROSE_TURN_MARKERS
from ._base import Rule, _Raw
from .context import markup_attribute, string_literal_start

#: Every alternative of the quote starts with a literal character (``"``, ``'``, ``&``, ``%``): the
#: regex engine then skips the other characters in its own loop (a prefix set) instead of trying the
#: alternation at every position. A leading ``(?=["'&%])`` or ``["']`` class would not allow that.
_ATTR_INJECTION_RE = re.compile(
    r"(?:\"|'|&quot;|&#0*3[49];|&#[xX]0*2[27];|&apos;|%22|%27)"
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


_MARKERS = "|".join(re.escape(p) for p in sorted(PROSE_TURN_MARKERS, key=len, reverse=True))
#: A marker at the start of the text, or after a line break (LF, CR, U+2028, U+2029, NEL). The break
#: is matched as a character (not as ``^`` with a lookbehind) so that the regex engine skips to the
#: next break in its own loop instead of trying every position; no marker starts with a blank or
#: holds a break, so the marker spans (group 1) are those of ``(?:^|(?<=[\r...]))`` under MULTILINE.
_PROSE_HEAD_RE = re.compile(rf"\A[ \t]{{0,8}}({_MARKERS})", re.IGNORECASE)
_PROSE_RE = re.compile(rf"[\n\r\u2028\u2029\x85][ \t]{{0,8}}({_MARKERS})", re.IGNORECASE)
if any(c in "\n\r\u2028\u2029\x85" for p in PROSE_TURN_MARKERS for c in p) or any(p[:1] in " \t" for p in PROSE_TURN_MARKERS):
    raise ImportError("a prose turn marker starts with a blank or holds a line break")  # pragma: no cover

# The rules this module reports (collected by envelock.scan.rules).

FORGED_ATTRIBUTE = Rule(
    "forged-attribute",
    "Quote followed by an envelope attribute name",
    (
        "A quote (or `&quot;`, `%22`) followed by `provenance=`, `source=`, `origin=` or `fetched_at=`: an "
        "attempt to break out of an attribute value and forge provenance when the text is used as an origin "
        "or source. compose_preface escapes attribute values, so this is a hiding technique, not a breach."
    ),
    "warning",
    5.0,
    "text",
)

PROSE_TURN_MARKER = Rule(
    "prose-turn-marker",
    "Prose turn marker at the start of a line",
    (
        "`Human:`, `Assistant:`, `### Instruction:`, `SYSTEM:`, ... at the start of a line imitate a "
        "conversation turn. No escape can neutralise prose; the envelope and the hygiene rule are the "
        "defence. Reported for review only."
    ),
    "note",
    2.0,
    "text",
)

RULES: tuple[Rule, ...] = (
    FORGED_ATTRIBUTE,
    PROSE_TURN_MARKER,
)


def _scan_prose(text: str, out: list[_Raw]) -> None:
    """Turn markers at the start of a line, in any case but all-lowercase (``user: bool`` and
    ``system: linux`` are annotations and YAML keys, see :mod:`envelock.scan.context`)."""
    head = _PROSE_HEAD_RE.match(text)
    out.extend(
        _Raw("prose-turn-marker", "note", f"prose turn marker {m.group(1)!r} at the start of a line", m.start(1), m.end(1))
        for m in ([head] if head else []) + list(_PROSE_RE.finditer(text))
        if not m.group(1).islower()
    )
