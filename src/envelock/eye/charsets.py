"""Hand-curated character tables (the generated ones are in :mod:`envelock.unicode_tables`).

Each table cites its source. Code-point ranges are inclusive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

Ranges = tuple[tuple[int, int], ...]

#: Unicode TAG characters (Tags block, U+E0000..U+E007F): invisible ASCII, used for
#: "ASCII smuggling"; legitimate only inside emoji tag sequences (UTS #51, Annex C).
TAG_CHARACTERS: Ranges = ((0xE0000, 0xE007F),)
#: The tag_spec characters of an emoji tag sequence (TAG DIGIT ZERO..NINE, TAG LATIN SMALL
#: LETTER A..Z) and its terminator CANCEL TAG (UTS #51, ED-14c).
TAG_SPEC_CHARACTERS: Ranges = ((0xE0030, 0xE0039), (0xE0061, 0xE007A))
CANCEL_TAG = 0xE007F
#: Explicit directional embeddings, overrides and isolates (UAX #9, section 2; "Trojan
#: Source", CVE-2021-42574). Stripped by default.
BIDI_EMBEDDING_CONTROLS: Ranges = ((0x202A, 0x202E), (0x2066, 0x2069))
#: Implicit directional marks (LRM, RLM, ALM; UAX #9 section 2.6): legitimate in
#: right-to-left text, kept.
BIDI_MARKS: tuple[int, ...] = (0x200E, 0x200F, 0x061C)
#: Variation selectors (Unicode Standard section 23.4: VS1..VS16, VS17..VS256) and the
#: Mongolian free variation selectors (section 13.5).
VARIATION_SELECTORS: Ranges = ((0xFE00, 0xFE0F), (0xE0100, 0xE01EF))
MONGOLIAN_VARIATION_SELECTORS: Ranges = ((0x180B, 0x180D), (0x180F, 0x180F))
#: INVISIBLE TIMES and INVISIBLE PLUS: the 0 and 1 of "Sneaky Bits" (Rehberger, 2025).
SNEAKY_BITS: tuple[int, int] = (0x2062, 0x2064)
#: Characters XML 1.0 cannot carry at all (XML 1.0 section 2.2, production [2] Char):
#: C0 controls other than TAB, LF, CR; surrogates; U+FFFE, U+FFFF.
XML_IMPOSSIBLE: Ranges = ((0x00, 0x08), (0x0B, 0x0C), (0x0E, 0x1F), (0xD800, 0xDFFF), (0xFFFE, 0xFFFF))
#: C1 controls and DEL: legal XML text, reported by the scanner.
C1_CONTROLS: Ranges = ((0x7F, 0x9F),)
#: Scripts that use ZWJ/ZWNJ for shaping (Unicode Standard sections 9-13, 23.2): ZWJ/ZWNJ
#: next to their letters are not hiding anything.
JOINING_SCRIPTS: Ranges = (
    (0x0600, 0x08FF),  # Arabic, Syriac, Arabic Supplement, Thaana, N'Ko, Samaritan, Mandaic, Arabic Extended
    (0x0900, 0x0DFF),  # Devanagari .. Sinhala
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x18AF),  # Khmer, Mongolian
    (0xA8E0, 0xA8FF),  # Devanagari Extended
    (0xFB50, 0xFDFF),  # Arabic Presentation Forms-A
    (0xFE70, 0xFEFF),  # Arabic Presentation Forms-B
    (0x10A00, 0x10A5F),  # Kharoshthi
    (0x11000, 0x11DFF),  # Brahmi and other Indic scripts
)
#: ZERO WIDTH NON-JOINER and ZERO WIDTH JOINER (Unicode Standard section 23.2): shaping, legitimate
#: next to the letters of the joining scripts.
JOINERS: tuple[int, int] = (0x200C, 0x200D)
#: ZERO WIDTH SPACE and WORD JOINER (UAX #14): word boundaries, legitimate between the letters of
#: scripts written without spaces (the generated ``INTERLEAVE_RANGES``).
WORD_BOUNDARY_INVISIBLES: tuple[int, int] = (0x200B, 0x2060)
#: COMBINING GRAPHEME JOINER (section 23.2): legitimate in Hebrew.
GRAPHEME_JOINER = 0x034F
#: The Hangul fillers (section 3.12, 18.6): legitimate next to Hangul.
HANGUL_FILLERS: tuple[int, ...] = (0x115F, 0x1160, 0x3164, 0xFFA0)
#: SOFT HYPHEN (section 23.2): a hyphenation point; inside a word only a note.
SOFT_HYPHEN = 0x00AD
#: ZERO WIDTH NO-BREAK SPACE as a byte order mark: legitimate at offset 0.
BYTE_ORDER_MARK = 0xFEFF


def char_class(*tables: Iterable[tuple[int, int]]) -> str:
    """The body of a regex character class for the given range tables."""
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for table in tables for lo, hi in table
    )


def one_of(*tables: Iterable[tuple[int, int]], part: str = "all") -> str:
    """A regex that matches one character of the given range tables, fast for a large table.

    ``re`` tests a character against a class of more than the Basic Multilingual Plane range by
    range: ``[SKIP_RANGES]`` (1,411 ranges) was a linear walk per character. The BMP part of the
    tables is a class of its own (``re`` makes it a bitmap), and the part in each further plane is
    tried only for a character of that plane. ``part``: ``"bmp"`` or ``"astral"`` for one side only."""
    ranges = sorted(r for table in tables for r in table)
    planes = []
    for plane in range(1, 17):
        lo, hi = plane << 16, (plane << 16) | 0xFFFF
        inside = _clipped(ranges, lo, hi)
        if inside:
            planes.append(f"(?=[{char_class(((lo, hi),))}])[{char_class(inside)}]")
    bmp = _clipped(ranges, 0, 0xFFFF)
    # A BMP character the class does not hold fails at the one astral guard, not at each plane's.
    branches = [f"[{char_class(bmp)}]"] if bmp and part != "astral" else []
    if planes and part != "bmp":
        branches.append(f"(?=[\U00010000-\U0010ffff])(?:{'|'.join(planes)})")
    return f"(?:{'|'.join(branches)})" if branches else "(?!)"


def run_of(*tables: Iterable[tuple[int, int]]) -> str:
    """A regex that matches a run (maybe empty) of characters of the tables: :func:`one_of`, with a
    run of BMP characters taken in one step (``re`` repeats a bare class in C, a group per character)."""
    return f"(?:{one_of(*tables, part='bmp')}+|{one_of(*tables, part='astral')})*"


def _clipped(ranges: Iterable[tuple[int, int]], lo: int, hi: int) -> Ranges:
    """The parts of ``ranges`` between ``lo`` and ``hi``."""
    return tuple((max(a, lo), min(b, hi)) for a, b in ranges if a <= hi and b >= lo)


def ranges_of(chars: Iterable[str]) -> Ranges:
    """The code points of ``chars`` as sorted, merged inclusive ranges."""
    out: list[tuple[int, int]] = []
    for cp in sorted({ord(c) for c in chars}):
        if out and cp == out[-1][1] + 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return tuple(out)


def regex_class(chars: Iterable[str], extra: str = "") -> str:
    """A regex character class for ``chars`` (written as ranges, so it compiles fast) plus the
    class body ``extra``; a class that matches nothing when both are empty."""
    body = char_class(ranges_of(chars)) + extra
    return f"[{body}]" if body else "(?!)"


def regex_class_or_nonascii(chars: Iterable[str]) -> str:
    """A regex character class for ``chars`` and every non-ASCII character, written as the negation of
    the ASCII characters left out: ``re``'s charset optimiser walks every BMP code point of a positive
    range, so ``[a\x80-\U0010ffff]`` costs 3 ms to compile and ``[^\x00-`b-\x7f]`` 0.04 ms (the fast
    path's regex holds about 1,400 such classes)."""
    have = set(chars)
    out = [chr(c) for c in range(0x80) if chr(c) not in have]
    return f"[^{char_class(ranges_of(out))}]" if out else "(?s:.)"


def in_ranges(ranges: Ranges, ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in ranges)
