"""Shared pieces of the scanner: the finding types, character sets, positions and snippets."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from urllib.parse import unquote

from .. import modeleye
from ..modeleye import (
    GT_CHARS,
    LT_CHARS,
    PIPE_CHARS,
    SLASH_CHARS,
    visible,
)
from ..rules import Severity

#: Longest snippet (in code points, before making it visible).
SNIPPET_MAX = 80
#: Longest run of base64/hex decoded per candidate (bounds memory, not time).
BLOB_MAX = 1 << 20


@dataclass(frozen=True)
class Finding:
    """One hostile construct found by :func:`scan_text`.

    ``offset``/``end_offset`` are 0-based code-point offsets (end exclusive);
    ``line``/``column`` and ``end_line``/``end_column`` are 1-based, in code
    points (``end_column`` is exclusive: the column just after the match).
    ``snippet`` is the matched text with invisible and control characters
    shown as ``U+XXXX`` (at most :data:`SNIPPET_MAX` characters, then ``…``).
    """

    rule: str
    severity: Severity
    message: str
    offset: int
    line: int
    column: int
    end_offset: int
    end_line: int
    end_column: int
    snippet: str

    def as_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "offset": self.offset,
            "line": self.line,
            "column": self.column,
            "end_offset": self.end_offset,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "snippet": self.snippet,
        }


@dataclass(frozen=True)
class _Raw:
    rule: str
    severity: Severity
    message: str
    start: int
    end: int


_GT = frozenset(GT_CHARS)
_LT = frozenset(LT_CHARS)
_SLASH = frozenset(SLASH_CHARS)
_PIPE = frozenset(PIPE_CHARS)


def _in(ranges: tuple[tuple[int, int], ...], ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in ranges)


def _disguises(snippet: str, canonical: str) -> str:
    if snippet == canonical:
        return ""
    found: list[str] = []
    if "&" in snippet:
        found.append("character references")
    if any(modeleye.is_ignorable(c) for c in snippet):
        found.append("invisible characters")
    if any(ord(c) > 0x7F and not modeleye.is_ignorable(c) for c in snippet):
        found.append("look-alike characters")
    if any(c.isupper() for c in snippet) and not canonical.isupper():
        found.append("case")
    if not found:
        found.append("spacing or separators")
    return " (disguised by " + ", ".join(found) + ")"


class _Lines:
    """Line starts (LF-terminated lines), computed once per text: linear."""

    def __init__(self, text: str) -> None:
        self.starts = [0]
        i = text.find("\n")
        while i >= 0:
            self.starts.append(i + 1)
            i = text.find("\n", i + 1)

    def position(self, offset: int) -> tuple[int, int]:
        k = bisect.bisect_right(self.starts, offset) - 1
        return k + 1, offset - self.starts[k] + 1


def _snippet(text: str, start: int, end: int) -> str:
    part = text[start : min(end, start + SNIPPET_MAX)]
    shown = visible(part)
    if len(shown) > 2 * SNIPPET_MAX:
        shown = shown[: 2 * SNIPPET_MAX]
    return shown + ("…" if end - start > len(part) or len(shown) < len(visible(part)) else "")


_ESC_RE = re.compile(
    r"\\{1,4}(?:u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]{1,6})\}|x([0-9a-fA-F]{2})|x\{([0-9a-fA-F]{1,6})\}|U([0-9a-fA-F]{8})"
    r"|([0-7]{3})|([0-9a-fA-F]{1,6}) ?)"
    r"|%[uU]([0-9a-fA-F]{4})|=([0-9A-Fa-f]{2})|\+(AD[w4]|AC8)-?"
)
_UTF7 = {"ADw": "<", "AD4": ">", "AC8": "/"}


def _esc_char(m: re.Match[str]) -> str:
    if m.group(10):
        return _UTF7[m.group(10)]
    for g, base in ((1, 16), (2, 16), (3, 16), (4, 16), (5, 16), (6, 8), (7, 16), (8, 16), (9, 16)):
        v = m.group(g)
        if v is not None:
            cp = int(v, base)
            if 0 < cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
                return chr(cp)
            return m.group()
    return m.group()


def _decode_escapes(window: str) -> str:
    for _ in range(3):
        new = unquote(_ESC_RE.sub(_esc_char, window), errors="replace")
        if new == window:
            break
        window = new
    return window
