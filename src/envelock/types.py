"""Shared value types and limits: a leaf module (it imports no other envelock module at load).

defusedxml keeps its exceptions in one leaf module; envelock keeps here what several
modules return or raise with: :class:`Envelope` (parse), :class:`Problem` (parse,
verify, :class:`~envelock.errors.EnvelopeBreach`), :class:`Transformation` (compose,
invisible), :class:`Finding` (scan), their shared :class:`Location`, the one
:class:`LineIndex` that computes every line and column, :data:`DEPTH_CEILING`, and the
:class:`Spotlight` an envelope declares (its behaviour is in :mod:`envelock.spotlight`).
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Literal

#: Largest ``max_depth`` accepted (the parser recurses once per level).
DEPTH_CEILING = 32
#: Finding severities, most severe first (also :data:`envelock.rules.SEVERITIES`).
Severity = Literal["error", "warning", "note"]
#: Spotlighting transforms of a text body (see :mod:`envelock.spotlight`).
SpotlightMode = Literal["none", "datamark", "interleave", "base64"]


@dataclass(frozen=True)
class Spotlight:
    """How an envelope's text body is transformed: ``mode``, with its ``marker`` and ``seed``."""

    mode: SpotlightMode = "none"
    marker: str | None = None
    seed: str | None = None

    def attributes(self) -> tuple[tuple[str, str], ...]:
        """The open-tag attributes that declare this transform (none for ``none``)."""
        if self.mode == "none":
            return ()
        out: list[tuple[str, str]] = [("transform", self.mode)]
        if self.marker is not None:
            out.append(("marker", self.marker))
        if self.seed is not None:
            out.append(("seed", self.seed))
        return tuple(out)


#: The default: bodies are only defanged.
NO_SPOTLIGHT = Spotlight()


@dataclass(frozen=True)
class Location:
    """A position in a text: 0-based code-point ``offset``, 1-based ``line`` and ``column`` (code points)."""

    offset: int
    line: int
    column: int


def _line_starts(text: str) -> list[int]:
    """Offsets where a line of ``text`` starts: 0 and one past each ``"\\n"`` (one forward pass)."""
    starts = [0]
    find = text.find
    i = find("\n")
    while i >= 0:
        i += 1
        starts.append(i)
        i = find("\n", i)
    return starts


class LineIndex:
    """The line and column of offsets in one text; the one place positions are computed.

    ``locate(offset)`` is ``(line, column)``, both 1-based: the line is one plus
    the number of ``"\\n"`` before ``offset`` and the column one plus the code
    points since the last of them. Only ``"\\n"`` ends a line: a CR (alone or
    in CRLF) is an ordinary character that counts in the column. Offsets past
    the end locate as the end does (for ``0 <= offset``). The line starts are
    found on the first lookup, in one pass; each lookup is then a bisect, so
    any number of lookups costs O(len(text) + lookups * log lines).
    """

    __slots__ = ("_starts", "_text")

    def __init__(self, text: str) -> None:
        self._text = text
        self._starts: list[int] | None = None

    def location(self, offset: int) -> Location:
        """The :class:`Location` of ``offset``."""
        return Location(offset, *self.locate(offset))

    def locate(self, offset: int) -> tuple[int, int]:
        starts = self._line_starts()
        line = bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    def offset(self, line: int, column: int = 1) -> int:
        """The offset of 1-based ``line`` and ``column`` (clamped to the text; the inverse of :meth:`locate`)."""
        starts = self._line_starts()
        if line > len(starts):
            return len(self._text)
        start = starts[max(line, 1) - 1]
        return max(0, min(start + max(column, 1) - 1, len(self._text)))

    def _line_starts(self) -> list[int]:
        if self._starts is None:
            self._starts = _line_starts(self._text)
        return self._starts


def line_bounds(text: str, offset: int) -> tuple[int, int]:
    """The start and end (exclusive, at the ``"\\n"``) of the line of ``text`` that holds ``offset``.

    A local search (the line's length), for callers that need one line and no index.
    """
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    return start, len(text) if end < 0 else end


@dataclass(frozen=True)
class Envelope:
    """One parsed envelope. ``body`` is the undefanged text, or ``None`` when it holds ``children``.

    ``nonce`` is the turn's nonce attribute (``None`` when absent); ``spotlight`` the transform its
    open tag declares (``NO_SPOTLIGHT`` when none); ``body`` is always the text before the transform.
    """

    source: str
    origin: str
    fetched_at: str | None
    body: str | None
    children: tuple[Envelope, ...] = ()
    #: Offset of the open tag in the parsed text.
    offset: int = field(default=0, compare=False)
    nonce: str | None = None
    spotlight: Spotlight = NO_SPOTLIGHT


@dataclass(frozen=True)
class Problem:
    """One reason a text is not a sound preface.

    ``code`` is a stable rule id, ``offset``/``line``/``column`` locate it
    (0-based offset; 1-based line and column in code points), ``entry`` is the
    top-level envelope index (``None`` outside any envelope) and ``path`` the
    index path through nested envelopes.
    """

    code: str
    message: str
    offset: int
    line: int
    column: int
    entry: int | None = None
    path: tuple[int, ...] = ()

    def __str__(self) -> str:
        where = f"entry {self.entry}" if self.entry is not None else "outside envelopes"
        if len(self.path) > 1:
            where += " (path " + ".".join(map(str, self.path)) + ")"
        return f"{self.line}:{self.column}: [{self.code}] {where}: {self.message}"

    @property
    def location(self) -> Location:
        return Location(self.offset, self.line, self.column)


@dataclass(frozen=True)
class Transformation:
    """One reported change to an entry's text.

    ``kind`` is ``"stripped-invisible"`` or ``"replaced-control"``; ``start``
    and ``end`` are code-point offsets in the field's original value and
    ``removed`` the original characters.
    """

    entry: int | None
    field: str
    kind: str
    start: int
    end: int
    removed: str

    def __str__(self) -> str:
        cps = " ".join(f"U+{ord(c):04X}" for c in self.removed[:8])
        more = " ..." if len(self.removed) > 8 else ""
        where = f"entry {self.entry}" if self.entry is not None else "entry"
        return f"{where}, field {self.field!r}: {self.kind} at {self.start}..{self.end}: {cps}{more}"


@dataclass(frozen=True, slots=True)
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

    @property
    def location(self) -> Location:
        return Location(self.offset, self.line, self.column)

    @property
    def end_location(self) -> Location:
        return Location(self.end_offset, self.end_line, self.end_column)
