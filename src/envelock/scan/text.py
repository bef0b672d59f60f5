"""Prose-level rules: attribute-injection attempts and prose turn markers."""

from __future__ import annotations

import re

from ..eye.backend import native_attribute_injections, native_line_markers
from ..eye.tokens import PROSE_TURN_MARKERS
from ._base import Context, Rule, _Raw, ascii_folded
from .context import markup_attribute, string_literal_start

#: Every alternative of the quote starts with a literal character (``"``, ``'``, ``&``, ``%``): the
#: regex engine then skips the other characters in its own loop (a prefix set) instead of trying the
#: alternation at every position. A leading ``(?=["'&%])`` or ``["']`` class would not allow that.
#: The envelope's attribute names (and ``source``, the entry field ``provenance`` is written from).
_ATTRIBUTE_NAMES = ("provenance", "source", "origin", "fetched_at")
_ATTR_INJECTION_RE = re.compile(
    r"(?:\"|'|&quot;|&#0*3[49];|&#[xX]0*2[27];|&apos;|%22|%27)"
    rf"(?:[ \t\u2028\u2029]|%20|\+){{0,8}}({'|'.join(_ATTRIBUTE_NAMES)})[ \t]{{0,4}}(?:=|%3[dD])",
    re.IGNORECASE,
)


def _attribute_injections(text: str, ctx: Context | None = None) -> list[tuple[int, int, str]]:
    """(start, end, attribute name) of every ``_ATTR_INJECTION_RE`` match: one native walk (ASCII case
    folding, over :func:`ascii_folded` text where a character folds to ASCII), else the regex."""
    found = native_attribute_injections(ascii_folded(text, ctx), _ATTRIBUTE_NAMES)
    if found is None:
        return [(m.start(), m.end(), m.group(1)) for m in _ATTR_INJECTION_RE.finditer(text)]
    return [(s, e, text[ns:ne]) for s, e, ns, ne in found]


def _scan_attributes(text: str, ctx: Context, out: list[_Raw]) -> None:
    out.extend(
        _Raw(
            "forged-attribute",
            "warning",
            f"quote followed by envelope attribute {name.lower()}=: attribute-injection attempt",
            start,
            end,
        )
        for start, end, name in _attribute_injections(text, ctx)
        if not (name.lower() in ("source", "origin") and (markup_attribute(text, start) or string_literal_start(text, start)))
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


def _line_markers(text: str, ctx: Context | None = None) -> list[tuple[int, int]]:
    """The spans of ``_PROSE_HEAD_RE`` and ``_PROSE_RE``'s markers (group 1): one native walk (ASCII case
    folding, over :func:`ascii_folded` text where a character folds to ASCII), else the regexes."""
    found = native_line_markers(ascii_folded(text, ctx), PROSE_TURN_MARKERS)
    if found is not None:
        return found
    head = _PROSE_HEAD_RE.match(text)
    return [m.span(1) for m in ([head] if head else []) + list(_PROSE_RE.finditer(text))]


def _scan_prose(text: str, ctx: Context, out: list[_Raw]) -> None:
    """Turn markers at the start of a line, in any case but all-lowercase (``user: bool`` and
    ``system: linux`` are annotations and YAML keys, see :mod:`envelock.scan.context`)."""
    out.extend(
        _Raw("prose-turn-marker", "note", f"prose turn marker {text[s:e]!r} at the start of a line", s, e)
        for s, e in _line_markers(text, ctx)
        if not text[s:e].islower()
    )
