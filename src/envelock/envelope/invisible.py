"""Invisible text and characters XML cannot carry: removal and replacement, always reported.

* Invisible text: Unicode TAG characters U+E0000..U+E007F ("ASCII smuggling"),
  except inside an RGI emoji tag sequence (the flags of England, Scotland and
  Wales), and bidi embedding/override/isolate controls U+202A..U+202E,
  U+2066..U+2069 (Trojan Source). Policy ``invisible``: ``"strip"`` (default),
  ``"keep"`` or ``"reject"``.
* Characters XML 1.0 cannot carry: C0 controls other than TAB, LF, CR; U+FFFE;
  U+FFFF; surrogates (a Python ``str`` can hold them only unpaired). Policy
  ``controls``: ``"replace"`` with U+FFFD (default) or ``"reject"``.

Every removal and replacement is returned as a :class:`Transformation`.

The regexes here are the reference. When the native core is in use
(:func:`envelock.eye.backend.native_sanitize_events`, which decides), :func:`sanitize` and
:func:`first_problems` find the same runs in one native pass and only build the result here;
for a text the core cannot take (a lone surrogate) the backend answers ``None`` and the
reference runs.
"""

from __future__ import annotations

import re
from typing import Literal

from ..errors import InvalidEntry
from ..eye import backend
from ..eye.backend import Span
from ..eye.charsets import BIDI_EMBEDDING_CONTROLS, TAG_CHARACTERS, XML_IMPOSSIBLE, char_class
from ..eye.unicode_tables import RGI_EMOJI_TAG_SEQUENCES
from ..types import Transformation

InvisiblePolicy = Literal["strip", "keep", "reject"]
ControlsPolicy = Literal["replace", "reject"]
INVISIBLE_POLICIES = ("strip", "keep", "reject")
CONTROLS_POLICIES = ("replace", "reject")

_RGI_ALT = "|".join(re.escape(s) for s in RGI_EMOJI_TAG_SEQUENCES)
INVISIBLE_CLASS = char_class(TAG_CHARACTERS, BIDI_EMBEDDING_CONTROLS)
INVISIBLE_RE = re.compile(f"({_RGI_ALT})|([{INVISIBLE_CLASS}]+)")
#: Characters XML 1.0 cannot carry at all.
XML_IMPOSSIBLE_CLASS = char_class(XML_IMPOSSIBLE)
XML_IMPOSSIBLE_RE = re.compile(f"[{XML_IMPOSSIBLE_CLASS}]+")
HAS_INVISIBLE_RE = re.compile(f"[{INVISIBLE_CLASS}]")


#: The C0 controls XML cannot carry (the only XML-impossible characters in ASCII text).
_ASCII_IMPOSSIBLE = tuple(chr(c) for lo, hi in XML_IMPOSSIBLE for c in range(lo, hi + 1) if c < 0x80)


def has_xml_impossible(text: str) -> bool:
    """Does ``text`` hold a character XML 1.0 cannot carry? (ASCII text: 29 memchr scans, no regex.)"""
    if text.isascii():
        return any(c in text for c in _ASCII_IMPOSSIBLE)
    return XML_IMPOSSIBLE_RE.search(text) is not None


def has_invisible(text: str) -> bool:
    """Does ``text`` hold a TAG or bidi control character? (Never in ASCII text.)"""
    return not text.isascii() and HAS_INVISIBLE_RE.search(text) is not None


def first_strippable(text: str) -> re.Match[str] | None:
    """The first run of invisible text that ``invisible="strip"`` would remove, if any."""
    if not has_invisible(text):
        return None
    return next((m for m in INVISIBLE_RE.finditer(text) if m.group(2)), None)


def first_problems(text: str, *, invisible: bool = True) -> tuple[Span | None, Span | None]:
    """The first run of characters XML 1.0 cannot carry and (with ``invisible``) the first run of
    invisible text ``invisible="strip"`` would remove, each ``None`` when there is none."""
    found = backend.native_sanitize_events(text, True)
    if found is not None:
        bad, hidden = found
        return (bad[0] if bad else None), (hidden[0] if hidden and invisible else None)
    m = XML_IMPOSSIBLE_RE.search(text) if has_xml_impossible(text) else None
    h = first_strippable(text) if invisible else None
    return (m.span() if m else None), (h.span() if h else None)


def check_policies(invisible: str, controls: str) -> None:
    if invisible not in INVISIBLE_POLICIES:
        raise ValueError(f"invisible must be one of {INVISIBLE_POLICIES}; got {invisible!r}")
    if controls not in CONTROLS_POLICIES:
        raise ValueError(f"controls must be one of {CONTROLS_POLICIES}; got {controls!r}")


def handle_invisible(text: str, policy: str, *, index: int | None, field: str) -> tuple[str, list[Transformation]]:
    """Apply the ``invisible`` policy to ``text``; return the new text and what changed."""
    if policy == "keep" or not has_invisible(text):
        return text, []
    out: list[str] = []
    changes: list[Transformation] = []
    last = 0
    for m in INVISIBLE_RE.finditer(text):
        if m.group(1):
            continue
        if policy == "reject":
            raise InvalidEntry(
                f"invisible character U+{ord(m.group(2)[0]):04X} at offset {m.start()} (TAG or bidi control; invisible='reject')",
                index=index,
                field=field,
            )
        out.append(text[last : m.start()])
        changes.append(Transformation(index, field, "stripped-invisible", m.start(), m.end(), m.group(2)))
        last = m.end()
    if not changes:
        return text, []
    out.append(text[last:])
    return "".join(out), changes


def handle_controls(text: str, policy: str, *, index: int | None, field: str) -> tuple[str, list[Transformation]]:
    """Apply the ``controls`` policy; return the new text and what changed."""
    if not has_xml_impossible(text):
        return text, []
    first = XML_IMPOSSIBLE_RE.search(text)
    assert first is not None  # has_xml_impossible said so
    if policy == "reject":
        raise InvalidEntry(
            f"character U+{ord(first.group()[0]):04X} at offset {first.start()} cannot be carried by XML 1.0 (controls='reject')",
            index=index,
            field=field,
        )
    changes = [
        Transformation(index, field, "replaced-control", m.start(), m.end(), m.group()) for m in XML_IMPOSSIBLE_RE.finditer(text)
    ]
    return XML_IMPOSSIBLE_RE.sub(lambda m: "\ufffd" * len(m.group()), text), changes


def sanitize(text: str, *, invisible: str, controls: str, index: int | None, field: str) -> tuple[str, list[Transformation]]:
    """Controls first (offsets refer to the original), then invisible text."""
    found = backend.native_sanitize_events(text)
    if found is not None:
        return _apply(text, *found, invisible=invisible, controls=controls, index=index, field=field)
    text, changes = handle_controls(text, controls, index=index, field=field)
    text, more = handle_invisible(text, invisible, index=index, field=field)
    return text, changes + more


def _splice(text: str, spans: list[Span], fill: str) -> str:
    """``text`` with each span replaced by ``fill`` repeated to its length (``""``: removed)."""
    out: list[str] = []
    last = 0
    for start, end in spans:
        out.append(text[last:start])
        out.append(fill * (end - start))
        last = end
    out.append(text[last:])
    return "".join(out)


def _apply(
    text: str, bad: list[Span], hidden: list[Span], *, invisible: str, controls: str, index: int | None, field: str
) -> tuple[str, list[Transformation]]:
    """:func:`sanitize` from the runs it acts on: what :func:`handle_controls` then
    :func:`handle_invisible` do. The replacement keeps every length and neither set holds U+FFFD,
    so the invisible runs of the replaced text are those of the original."""
    changes: list[Transformation] = []
    if bad:
        if controls == "reject":
            start = bad[0][0]
            raise InvalidEntry(
                f"character U+{ord(text[start]):04X} at offset {start} cannot be carried by XML 1.0 (controls='reject')",
                index=index,
                field=field,
            )
        changes = [Transformation(index, field, "replaced-control", s, e, text[s:e]) for s, e in bad]
        text = _splice(text, bad, "\ufffd")
    if invisible == "keep" or not hidden:
        return text, changes
    if invisible == "reject":
        start = hidden[0][0]
        raise InvalidEntry(
            f"invisible character U+{ord(text[start]):04X} at offset {start} (TAG or bidi control; invisible='reject')",
            index=index,
            field=field,
        )
    changes += [Transformation(index, field, "stripped-invisible", s, e, text[s:e]) for s, e in hidden]
    return _splice(text, hidden, ""), changes
