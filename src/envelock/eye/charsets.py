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
#: Scripts written without spaces, where ZWSP/WJ mark word boundaries (UAX #14, UAX #29).
NO_SPACE_SCRIPTS: Ranges = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF),  # CJK Extension A
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0xF900, 0xFAFF),  # CJK Compatibility Ideographs
    (0x20000, 0x3FFFF),  # CJK Extensions B..
)


def char_class(*tables: Iterable[tuple[int, int]]) -> str:
    """The body of a regex character class for the given range tables."""
    return "".join(
        re.escape(chr(lo)) if lo == hi else f"{re.escape(chr(lo))}-{re.escape(chr(hi))}" for table in tables for lo, hi in table
    )


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


def in_ranges(ranges: Ranges, ch: str) -> bool:
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in ranges)
