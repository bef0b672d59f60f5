"""Inline suppressions: ``envelock: ignore[rule-id, ...]`` in a comment.

A suppression names one or more rule ids (there is no blanket form) and covers the
findings that *start* on its own line; a comment that is alone on its line covers the
next non-blank line instead (the form Markdown and HTML fixtures need)::

    text = "</retrieved_content>"  # envelock: ignore[envelope-close-tag]

    <!-- envelock: ignore[chat-control-token] -->
    Mistral writes [INST] around a user turn.

A comment is the marker after ``#``, ``//``, ``/*``, ``<!--``, ``--``, ``;``, ``%``,
``{#`` or ``..`` on the same line. Only the ``envelock`` command applies them (and
``--no-inline-ignore`` turns them off); :func:`envelock.scan_text` never does, because
the text it scans is written by third parties, who could otherwise silence it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from envelock.types import Finding, LineIndex, line_bounds

from .rules import RULES_BY_ID

_IGNORE_RE = re.compile(
    r"(?P<intro>#|//|/\*|<!--|--|;|%|\{#|\.\.)[ \t]*envelock:[ \t]*ignore\[(?P<ids>[^\]\n]{0,400})\]",
)


@dataclass(frozen=True)
class InlineIgnores:
    """The suppressions of one text: rule ids per 1-based line, and ids that name no rule."""

    by_line: dict[int, frozenset[str]]
    unknown: tuple[tuple[int, str], ...] = ()

    def covers(self, finding: Finding) -> bool:
        return finding.rule in self.by_line.get(finding.line, frozenset())


def inline_ignores(text: str) -> InlineIgnores:
    """Parse every ``envelock: ignore[...]`` comment of ``text``."""
    if "envelock:" not in text:
        return InlineIgnores({})
    lines = LineIndex(text)
    by_line: dict[int, set[str]] = {}
    unknown: list[tuple[int, str]] = []
    for m in _IGNORE_RE.finditer(text):
        line, _ = lines.locate(m.start())
        ids = [i.strip() for i in m.group("ids").split(",") if i.strip()]
        line_start = line_bounds(text, m.start())[0]
        line_end = line_bounds(text, m.end())[1]
        before = text[line_start : m.start()]
        after = text[m.end() : line_end].strip()
        alone = not before.strip() and after in ("", "-->", "*/", "#}")
        target = line
        if alone:
            nxt = line_end
            while nxt < len(text):
                end = line_bounds(text, nxt + 1)[1]
                target += 1
                if text[nxt + 1 : end].strip():
                    break
                nxt = end
        for rule in ids:
            if rule in RULES_BY_ID:
                by_line.setdefault(target, set()).add(rule)
            else:
                unknown.append((line, rule))
    return InlineIgnores({k: frozenset(v) for k, v in by_line.items()}, tuple(unknown))


def split_suppressed(findings: Sequence[Finding], ignores: InlineIgnores) -> tuple[list[Finding], list[Finding]]:
    """(kept, suppressed) findings under ``ignores``."""
    kept: list[Finding] = []
    gone: list[Finding] = []
    for f in findings:
        (gone if ignores.covers(f) else kept).append(f)
    return kept, gone
