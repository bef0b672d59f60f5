"""``scan_text``: report hostile constructs in raw third-party text.

The scanner looks at text *before* it is composed, the way a model would read
it, and reports every construct that could break an envelope or hide
instructions. The rules and their default severities are the data table in
:mod:`envelock.rules`.

Detection reuses the model's eye of :mod:`envelock.modeleye`: every *opener*
(``<``, a look-alike, ``&lt;``...) is followed through the same bounded
lookahead the defang uses (:func:`~envelock.modeleye.dangerous_after`), so
what ``compose_preface`` would escape is what the scanner reports. A tag is a
close tag when a slash (or look-alike, or ``&#47;``) was skipped before the
name, an open tag otherwise.

Positions are code-point offsets (0-based) and 1-based line and column in
code points. Lines end at LF (CRLF counts once because the CR sits at the end
of its line); a lone CR, U+2028 or NEL does not start a new line.

Every pass is linear in the input: candidates are found with regexes without
nested or overlapping quantifiers, and each candidate is examined with a
lookahead of at most :data:`~envelock.modeleye.MAX_LOOKAHEAD` characters.

Deliberate exceptions (content that is *not* reported), so that ordinary
HTML, code, Markdown, right-to-left and Indic prose and emoji stay clean:

* ZWJ (U+200D) and ZWNJ (U+200C) next to a letter of a script that uses
  them for shaping (Arabic incl. Persian and Urdu, Syriac, N'Ko, the Indic
  scripts and Sinhala, Tibetan, Myanmar, Khmer, Mongolian); ZWJ between emoji
  (an emoji ZWJ sequence is never "inside a word");
* ZWSP (U+200B) and WORD JOINER (U+2060) between letters of scripts written
  without spaces (Thai, Lao, Khmer, Myanmar, Han, Hiragana, Katakana);
* a single variation selector after a character (a variation sequence, e.g.
  an emoji presentation selector or a CJK ideographic variation);
* LRM, RLM and ALM (U+200E, U+200F, U+061C): marks, not overrides;
* CGJ (U+034F) in Hebrew; Hangul fillers next to Hangul; a BOM at offset 0;
* RGI emoji flag tag sequences (England, Scotland, Wales);
* ``<|`` without a closing ``|>`` or ``>`` (an Elm/F# pipe operator); a bar shape with blanks
  inside (``<| im_end |>``), ``<s>`` and ``</s>`` only as warnings (the operator again, HTML
  strikethrough, generic type parameters).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from itertools import islice
from operator import eq, itemgetter

from ..eye.backend import encoded_once, native_findings, native_starts_increase
from ..eye.load_tokens import Tokens
from ..eye.tokens import RESERVED_NAMES
from ..types import Finding, LineIndex, Severity
from . import encoded, hidden, tags, text
from ._base import SNIPPET_MAX, Context, Rule, _Raw, _Reports, _snippet
from .rules import RULES, RULES_BY_ID, SEVERITY_RANK

__all__ = ["FAMILIES", "RULES", "Family", "Finding", "Rule", "Severity", "scan_text"]


@dataclass(frozen=True)
class Family:
    """One pass of the scanner: the rules it can report (their records) and the function that runs it."""

    name: str
    rules: tuple[Rule, ...]
    run: Callable[[str, Context, list[_Raw]], None]
    #: The ids of ``rules`` (made once: every scan asks each family).
    rule_ids: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "rule_ids", frozenset(r.id for r in self.rules))


#: The registry: every pass of the scanner, with the rules it may report. ``disable=`` skips a pass
#: whose rules are all disabled (the work is not done, not filtered afterwards).
FAMILIES: tuple[Family, ...] = (
    Family(
        "openers", (tags.CLOSE_TAG, tags.OPEN_TAG, tags.CONTROL_TOKEN, tags.DEFANGED_TAG, tags.PADDED_OPENER), tags._scan_openers
    ),
    Family("brackets", (tags.CONTROL_TOKEN, tags.DEFANGED_TAG, tags.PADDED_OPENER), tags._scan_brackets),
    Family("exact", (tags.CONTROL_TOKEN, tags.DEFANGED_TAG), tags._scan_exact),
    Family("tag-characters", (hidden.TAG_SMUGGLING,), hidden._scan_tags),
    Family("bidi", (hidden.BIDI_CONTROL,), hidden._scan_bidi),
    Family("hidden", (hidden.INVISIBLE_IN_WORD, hidden.INVISIBLE_RUN), hidden._scan_hidden),
    Family("controls", (hidden.CONTROL_CHARACTER,), hidden._scan_controls),
    Family("encoded", (encoded.ENCODED_TAG,), encoded._scan_encoded),
    Family("blobs", (encoded.ENCODED_BLOB_TAG,), encoded._scan_blobs),
    Family("attributes", (text.FORGED_ATTRIBUTE,), text._scan_attributes),
    Family("prose", (text.PROSE_TURN_MARKER,), text._scan_prose),
)

_ALL_RULE_IDS = frozenset(RULES_BY_ID)


def scan_text(
    text: str,
    *,
    reserved: tuple[str, ...] = RESERVED_NAMES,
    disable: frozenset[str] | set[str] | tuple[str, ...] = (),
    tokens: Tokens | None = None,
) -> list[Finding]:
    """Report hostile constructs in raw third-party ``text``, sorted by position.

    ``reserved`` are the envelope names to look for (default
    :data:`~envelock.tokens.RESERVED_NAMES`); ``disable`` is a set of rule ids
    (see :data:`envelock.rules.RULES`) not to report. Never raises on any
    ``str``; the cost is linear in ``len(text)``.

    >>> from envelock import scan_text
    >>> for f in scan_text("fine\\nthen </ Retrieved-Content> and <|im_end|>"):
    ...     print(f.line, f.column, f.severity, f.rule, f.snippet)
    2 6 error envelope-close-tag </ Retrieved-Content>
    2 32 error chat-control-token <|im_end|>
    >>> scan_text("<|im_end|>", disable={"chat-control-token"})
    []
    """
    if not isinstance(text, str):
        raise TypeError(f"scan_text expects str, got {type(text).__name__}")
    unknown = set(disable) - _ALL_RULE_IDS
    if unknown:
        raise ValueError(f"unknown rule id(s): {', '.join(sorted(unknown))}")
    ctx = Context(tuple(reserved), tokens)
    off = frozenset(disable)
    raw: list[_Raw] = _Reports()
    # One UTF-8 copy of a non-ASCII text for every native pass below, not one each.
    with encoded_once(text, view=True):
        for family in FAMILIES:
            if not off or not family.rule_ids <= off:
                family.run(text, ctx, raw)
        return _findings(text, raw, off)


def _order(r: _Raw) -> tuple[int, int, str, int]:
    # By index: a pass may report plain tuples (_base._adder).
    return (r[3], -SEVERITY_RANK[r[1]], r[0], r[4])


#: The start of a raw report (``_Raw.start``), as a C-level key: sorting by it is stable, so the reports
#: of one start keep the passes' order and only groups of equal starts need :func:`_order`.
_START = itemgetter(3)


def _untied(raw: list[_Raw]) -> list[_Raw]:
    """Raw reports sorted by start, with each group of equal starts sorted by :func:`_order` (stable)
    and one report kept per (rule, end) in it: the order and dedupe of sorting everything by
    :func:`_order` and keeping the first of each (rule, start, end). A duplicate shares its start, so
    it is looked for only in its group."""
    out: list[_Raw] = []
    n = len(raw)
    i = 0
    while i < n:
        start = raw[i][3]
        j = i + 1
        while j < n and raw[j][3] == start:
            j += 1
        if j == i + 1:
            out.append(raw[i])
        else:
            kept: set[tuple[str, int]] = set()
            for r in sorted(raw[i:j], key=_order):
                if (r[0], r[4]) not in kept:
                    kept.add((r[0], r[4]))
                    out.append(r)
        i = j
    return out


def _findings(text: str, raw: list[_Raw], off: frozenset[str]) -> list[Finding]:
    """The findings of the passes' raw reports: sorted by position (then severity, rule, end), the
    disabled rules dropped, one per (rule, start, end). Hostile text repeats one construct hundreds
    of thousands of times, so the work per report is kept to a few steps: a C-level sort by start
    (only groups of equal starts are sorted further and deduplicated, :func:`_untied`), line and
    column from the line of the previous report, and a snippet made once per distinct text it shows."""
    if off:
        raw = [r for r in raw if r[0] not in off]
    if not raw:
        return []  # a clean text, the usual case
    # Reports in order with no two at one start (one pass reporting a repeated construct) need neither
    # the sort nor the dedupe: one native pass tells.
    if not native_starts_increase(raw):
        raw.sort(key=_START)
        if len(raw) > 1:
            starts = list(map(_START, raw))
            if True in map(eq, starts, islice(starts, 1, None)):
                raw = _untied(raw)
    built = native_findings(Finding, _FIELDS, text, raw, _snippet, SNIPPET_MAX)
    if built is not None:
        return built
    return _py_findings(text, raw)


#: Finding's fields in declaration order (the order its ``__init__`` sets them; tests/scan checks it).
_FIELDS = tuple(f.name for f in fields(Finding))


def _py_findings(text: str, raw: list[_Raw]) -> list[Finding]:
    """The Findings of ordered, deduplicated raw reports, in Python: the reference of the native
    ``_native.findings`` (tests/scan/test_scan_native_findings.py holds them equal)."""
    lines = LineIndex(text)
    locate, line_offset = lines.locate, lines.offset
    # The line of the current start, its first offset and the next line's (the starts come in order:
    # a start or an end before ``following`` is on ``line``; any other is looked up). A text without
    # a line break is one line (``following`` past every offset).
    line, first = 1, 0
    following = line_offset(2) if "\n" in text else len(text) + 1
    # Snippets of spans of at most SNIPPET_MAX characters (inside the text) by their text, others by the
    # text shown and whether it is cut.
    short: dict[str, str] = {}
    long: dict[tuple[str, bool], str] = {}
    n = len(text)
    findings: list[Finding] = []
    append = findings.append
    for rule, severity, message, start, end in raw:
        if start >= following:
            line, col = locate(start)
            first = start - col + 1
            following = line_offset(line + 1)
        if end - start <= SNIPPET_MAX and end <= n:
            part = text[start:end]
            snippet = short.get(part)
            if snippet is None:
                snippet = short[part] = _snippet(text, start, end)
        else:
            part = text[start : min(end, start + SNIPPET_MAX)]
            shown = (part, end - start > len(part))
            snippet = long.get(shown)
            if snippet is None:
                snippet = long[shown] = _snippet(text, start, end)
        if end < following:
            end_line, end_col = line, end - first + 1
        else:
            end_line, end_col = locate(end)
        found = Finding(rule, severity, message, start, line, start - first + 1, end, end_line, end_col, snippet)
        append(found)
    return findings
