"""Shared pieces of the scanner: the finding types, character sets, positions and snippets."""

from __future__ import annotations

import codecs
import html
import re
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple
from urllib.parse import unquote

from ..eye import reader as modeleye
from ..eye.backend import encoded_alongside, native_decode_escapes
from ..eye.load_tokens import Tokens
from ..eye.reader import (
    GT_CHARS,
    LT_CHARS,
    PIPE_CHARS,
    SLASH_CHARS,
    visible,
)
from ..types import Severity

#: Longest snippet (in code points, before making it visible).
SNIPPET_MAX = 80
#: Longest run of base64/hex decoded per candidate (bounds memory, not time).
BLOB_MAX = 1 << 20


@dataclass(frozen=True)
class Rule:
    """One scanner rule, declared next to the pass that reports it (ruff's manner): a stable ``id``
    (what tools and suppressions key on), a ``short`` description and the ``help`` text, the default
    ``severity``, GitHub code scanning's ``security_severity`` (0.1-3.9 low, 4.0-6.9 medium, 7.0-8.9
    high, 9.0+ critical: how bad it is when the construct reaches a prompt raw) and the module
    (``family``) that reports it."""

    id: str
    short: str
    help: str
    severity: Severity
    security_severity: float
    family: str


@dataclass(frozen=True)
class Context:
    """What one scan looks for: the reserved envelope names and a team's own control tokens."""

    reserved: tuple[str, ...]
    tokens: Tokens | None = None
    #: What a pass worked out about this text for the passes after it (one scan's, never shared).
    memo: dict[str, tuple[str, tuple[Any, ...]]] = field(default_factory=dict, compare=False, hash=False, repr=False)


class _Raw(NamedTuple):
    """One finding as a pass reports it (a tuple: hostile text can hold hundreds of thousands)."""

    rule: str
    severity: Severity
    message: str
    start: int
    end: int


#: A report as a plain tuple, fields in :class:`_Raw`'s order.
_Plain = tuple[str, Severity, str, int, int]


class _Reports(list[_Raw]):
    """The scanner's own list of raw reports, which also takes plain tuples (:func:`_adder`)."""


def _adder(out: list[_Raw]) -> Callable[[_Plain], None]:
    """How a pass adds a report tuple to ``out``: as it is to the scanner's own list (:class:`_Reports`),
    as a :class:`_Raw` to any other. The garbage collector stops tracking a plain tuple of strings and
    numbers at its first collection; a named tuple stays tracked, and with hundreds of thousands of
    them every full collection walks them all (a third of the time of ``[INST]`` repeated)."""
    if type(out) is _Reports:
        add: Callable[[_Plain], None] = out.append  # type: ignore[assignment]
        return add
    return lambda r: out.append(_Raw._make(r))


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


def _snippet(text: str, start: int, end: int) -> str:
    part = text[start : min(end, start + SNIPPET_MAX)]
    shown = visible(part)
    if len(shown) > 2 * SNIPPET_MAX:
        shown = shown[: 2 * SNIPPET_MAX]
    return shown + ("…" if end - start > len(part) or len(shown) < len(visible(part)) else "")


# A run of ``\\x`` or quoted-printable bytes that is one UTF-8 sequence is one character
# (``\\xef\\xbd\\x9c`` is U+FF5C, read byte by byte as Latin-1 before: a red-team find). Octal only
# as three digits that no hex digit follows: CSS writes ``/`` as ``\\00002f`` (octal first read
# ``\\000`` and ``02f``). Braced forms take leading zeros, as JavaScript's ``\\u{000000007c}`` does.
_ESC_RE = re.compile(
    r"(\\{1,4}x[c-fC-F][0-9a-fA-F](?:\\{1,4}x[89abAB][0-9a-fA-F]){1,3}|=[c-fC-F][0-9a-fA-F](?:=[89abAB][0-9a-fA-F]){1,3})"
    r"|\\{1,4}(?:u([0-9a-fA-F]{4})|u\{0{0,16}([0-9a-fA-F]{1,6})\}|x([0-9a-fA-F]{2})|x\{0{0,16}([0-9a-fA-F]{1,6})\}"
    r"|U([0-9a-fA-F]{8})|([0-7]{3})(?![0-9a-fA-F])|([0-9a-fA-F]{1,6}) ?)"
    r"|%[uU]([0-9a-fA-F]{4})|=([0-9A-Fa-f]{2})|\+(AD[w4]|AC8)-?|\+([A-Za-z0-9+/]{2,16})-"
)
_UTF7 = {"ADw": "<", "AD4": ">", "AC8": "/"}


#: What each escape text decodes to (``_esc_char``): text with escapes repeats a few (roff's
#: ``\\fB``, ``\\fP``), and the groups are looked at once per text. Bounded: cleared past
#: ``_ESC_SEEN_MAX``.
_ESC_SEEN: dict[str, str] = {}
_ESC_SEEN_MAX = 1 << 14


def _esc_char(m: re.Match[str]) -> str:
    key = m.group()
    got = _ESC_SEEN.get(key)
    if got is None:
        if len(_ESC_SEEN) >= _ESC_SEEN_MAX:
            _ESC_SEEN.clear()
        got = _ESC_SEEN[key] = _esc_char_of(m)
    return got


_UTF8_BYTE_RE = re.compile(r"(?<=[x=])[0-9a-fA-F]{2}")


def _esc_char_of(m: re.Match[str]) -> str:
    if m.group(1):
        data = bytes.fromhex("".join(_UTF8_BYTE_RE.findall(m.group(1))))
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return data.decode("latin-1")  # no UTF-8 sequence: each byte as before
    if m.group(11):
        return _UTF7[m.group(11)]
    if m.group(12):
        # A UTF-7 segment closed by ``-`` (``+AF8-`` is ``_``), decoded whole.
        try:
            return codecs.decode(f"+{m.group(12)}-".encode("ascii"), "utf-7")
        except UnicodeDecodeError:
            return m.group()
    for g, base in ((2, 16), (3, 16), (4, 16), (5, 16), (6, 16), (7, 8), (8, 16), (9, 16), (10, 16)):
        v = m.group(g)
        if v is not None:
            cp = int(v, base)
            # NUL too (fail closed): ``\u0000`` left as it was hid a tag behind NUL padding.
            if 0 <= cp <= 0x10FFFF and not 0xD800 <= cp <= 0xDFFF:
                return chr(cp)
            return m.group()
    return m.group()


#: How many layers of escaping the scanner reads: rounds of :func:`_decode_escapes` (an escape of an
#: escape, ``%25253C``) and ``%25`` layers on an encoded opener (``encoded._PCT``). Double and triple
#: encoding are what proxies and logs write; eight is more than any honest text, and each round that
#: changes a window shortens it, so the work stays linear. Deeper layers are an open find.
ESCAPE_LAYERS = 8


#: Quoted-printable soft line breaks (``=`` ending an encoded line), removed by :func:`_decode_escapes`;
#: longest first.
SOFT_BREAKS = ("=\r\n", "=\n")


def _decode_escapes(window: str) -> str:
    """``window`` with its escapes decoded, in up to :data:`ESCAPE_LAYERS` rounds (an escape of an escape): HTML
    references, quoted-printable soft line breaks, backslash, ``%uXXXX``, quoted-printable and UTF-7
    forms (``_ESC_RE``), then percent-encoded UTF-8. In the native core when it is in use (a hot spot:
    roff's ``\\fB`` reads as a CSS escape), held equal to :func:`_decode_escapes_reference`
    (``tests/scan/test_decode_escapes_native.py``)."""
    got = native_decode_escapes(window, ESCAPE_LAYERS)
    return _decode_escapes_reference(window) if got is None else got


def _decode_escapes_reference(window: str) -> str:
    """:func:`_decode_escapes` in Python: the reference, and what a text the native core cannot take
    (a lone surrogate, in the text or in its answer) is decoded by."""
    for _ in range(ESCAPE_LAYERS):
        plain = html.unescape(window) if "&" in window else window
        if "=" in plain:
            for soft in SOFT_BREAKS:
                plain = plain.replace(soft, "")
        new = unquote(_ESC_RE.sub(_esc_char, plain), errors="replace")
        if new == window:
            break
        window = new
    return window


@lru_cache(maxsize=1)
def ascii_case_folds() -> tuple[str, ...]:
    """The characters outside ASCII that ``re.IGNORECASE`` takes for an ASCII letter (KELVIN SIGN,
    LATIN SMALL LETTER LONG S, DOTLESS I, CAPITAL I WITH DOT ABOVE), asked of ``re`` itself over the
    BMP (no character above it folds to ASCII)."""
    # One search over the BMP: a fullmatch per character cost four times as much, once per process.
    return tuple(re.compile("[a-z]", re.IGNORECASE).findall("".join(map(chr, range(0x80, 0x10000)))))


@lru_cache(maxsize=1)
def _ascii_folding() -> dict[int, int]:
    """Each of :func:`ascii_case_folds` mapped to the ASCII letter ``re.IGNORECASE`` takes it for (asked
    of ``re``: U+212A KELVIN SIGN to ``k``, U+017F to ``s``, U+0130 and U+0131 to ``i``)."""
    return {ord(c): ord(next(a for a in string.ascii_lowercase if re.fullmatch(a, c, re.IGNORECASE))) for c in ascii_case_folds()}


def ascii_folded(text: str, ctx: Context | None = None) -> str:
    """``text`` with each character ``re.IGNORECASE`` folds to an ASCII letter written as that letter:
    one character for one, so every offset stays. An ASCII-folding pass (the native walks) reads in it
    what the case-insensitive regexes read in ``text``: for them each such character and its letter
    match the same pattern items (letters, classes and escapes alike), which
    ``tests/scan/test_scan_native_text.py`` checks against the regexes on ``text``. Kept in ``ctx``
    for this very text."""
    if not folds_ascii_case(text, ctx):
        return text
    seen = ctx.memo.get("ascii-folded") if ctx is not None else None
    if seen is None or seen[0] is not text:
        folded = text
        for c, a in _ascii_folding().items():  # str.replace searches in C; translate maps each character
            folded = folded.replace(chr(c), chr(a))
        seen = (text, (folded,))
        if ctx is not None:
            encoded_alongside(folded)  # the scan's three native passes over it read one UTF-8 copy
            ctx.memo["ascii-folded"] = seen
    return str(seen[1][0])


def folds_ascii_case(text: str, ctx: Context | None = None) -> bool:
    """Does ``text`` hold one of :func:`ascii_case_folds`? Where it does, an ASCII-only case-insensitive
    search (``str.lower``'s offsets, the native passes) is no guide to what a case-insensitive regex
    finds: the passes then read :func:`ascii_folded` instead. Asked once per scan (kept in ``ctx``)."""
    seen = ctx.memo.get("ascii-folds") if ctx is not None else None
    if seen is None or seen[0] is not text:  # kept for this very text only
        seen = (text, (not text.isascii() and any(c in text for c in ascii_case_folds()),))
        if ctx is not None:
            ctx.memo["ascii-folds"] = seen
    return bool(seen[1][0])
