#!/usr/bin/env python3
"""Generate ``src/envelock/eye/unicode_tables.py``: the model's eye, derived from Unicode data.

Inputs (read, never copied):

* ``../shared/unicode/DerivedCoreProperties.txt`` (Unicode 17.0): ``Default_Ignorable_Code_Point``;
* ``../shared/unicode/confusables.txt`` (UTS #39, 17.0): look-alike prototypes;
* ``../shared/unicode/emoji-sequences.txt``: the RGI emoji tag sequences;
* ``unicodedata2`` (pinned to 17.0.x, a generator-only dependency): names, general
  categories, NFKC/NFD and case folding of every assigned code point, so the tables do
  not depend on the Unicode version of the interpreter that runs the generator;
* ``anyascii`` (pinned, ISC): transliterations, used only where the result is one ASCII
  letter (a Cyrillic ``р`` *sounds* like ``r`` while UTS #39 says it *looks* like ``p``:
  the reader gets both).

What it derives, for every assigned code point (rules in :data:`RULES`, also written into
the generated module's docstring):

* ``SKIP_RANGES``: what the model's eye reads past like whitespace (blanks, marks,
  format and control characters, default-ignorables, dash and connector punctuation,
  and characters that fold or look like ``-``, ``_``, ``.``, a space or nothing);
* ``READINGS``: for each character that a reader may take for a letter or digit, every
  ASCII string it may read as (NFKC and case folding, UTS #39 before and after case
  folding, the base letter of a decomposition, the letter a Unicode name spells,
  a one-letter transliteration); ``I``, ``l`` and ``|`` are one shape;
* the opener, closer, slash, bar, bracket and quote sets from names, NFKC and UTS #39.

Usage::

    python scripts/gen_unicode_tables.py [--shared ../shared] [--check]

``--check`` exits 1 if the committed module differs from what would be generated (the
test suite runs it when ``../shared`` is present).
"""

from __future__ import annotations

import argparse
import bisect
import re
import sys
from collections.abc import Callable, Iterable
from functools import cached_property
from pathlib import Path

import anyascii  # type: ignore[import-untyped]
import unicodedata2 as ud  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "envelock" / "eye" / "unicode_tables.py"
#: The same tables for the native core (``rust/envelock-core``), written by :func:`rust_module`.
RUST_OUT = ROOT / "rust" / "envelock-core" / "src" / "tables.rs"

#: The named vertical strokes whose confusable classes are bars (bar_classes rule): the dandas, the
#: Kangxi radical LINE, the CJK Strokes block's S (shu, the vertical stroke; H is the horizontal one),
#: the epigraphic I longa (an I drawn taller than the line), the vertical presentation forms of a
#: dash or a low line (drawn as a vertical stroke: U+FE31's siblings), the vertical box lines and the
#: one-eighth blocks at the left or right edge (a red-team find of stop 50: ``‹︳im_end︳>``, ``<turn⎸>``),
#: the Hangzhou numeral one (drawn as ``丨``, stop 51); the other scripts' dandas: the shads (Tibetan,
#: Phags-pa, Zanabazar, Soyombo, Marchen), the Myanmar sections, the Ol Chiki mucaad, the Meetei Mayek
#: cheikhan and cheikhei, the Kayah Li shya (a ninth red-team round, stop 51: ``<\u0f0dim_end\u0f0d>``).
_BAR_CLASS_NAMES = (
    r"^(?:(?:.* )?(?:DOUBLE |TRIPLE )?DANDA|KANGXI RADICAL LINE|CJK STROKE S|.* LETTER I LONGA|HANGZHOU NUMERAL ONE"
    r"|.* SHAD|MYANMAR SIGN (?:LITTLE )?SECTION|OL CHIKI PUNCTUATION (?:DOUBLE )?MUCAAD|MEETEI MAYEK CHEIKH(?:AN|EI)"
    r"|KAYAH LI SIGN SHYA"
    r"|PRESENTATION FORM FOR VERTICAL (?:EM DASH|EN DASH|LOW LINE|WAVY LOW LINE)"
    r"|(?:LEFT|RIGHT) VERTICAL BOX LINE|(?:LEFT|RIGHT) ONE EIGHTH BLOCK)$"
)
#: The middle dots whose confusable classes are separators (separator_classes rule).
_MIDDLE_DOT_NAMES = r"^(?:.* )?MIDDLE DOT$"

#: The rules, as regexes over Unicode character names (and the categories they apply to).
RULES = {
    # What the eye reads past (SKIP_RANGES): by exclusion, so that a character with no rule keeps a
    # reading alive instead of ending it (fail closed). Applied by skip_set().
    "skip_by_exclusion": (
        "ASCII: whitespace, controls and - _ . \\ only. Every other code point (assigned or not, private"
        " use, surrogates) except the structural sets (openers, closers, slashes, bars, brackets, quotes,"
        " !/? look-alikes) and letters/numbers (L* but Lm, N*): read past. One with a reading (READINGS)"
        " keeps both: skipped or that letter. A letter in the narrow blank set, or whose UTS #39 prototype"
        " is only skipped characters, is skipped too"
    ),
    # The narrow blank set (what renders as nothing, a space, a mark or a separator): what a reading
    # strips, what the structural rules and the marker rules leave out. Every character of these
    # general categories ...
    "skip_categories": "Zs Zl Zp Cc Cf Mn Mc Me Pd Pc",
    # ... and these names: blanks that are not Default_Ignorable, horizontal lines.
    "skip_names": (
        r"^(?:BRAILLE PATTERN BLANK|IDEOGRAPHIC HALF FILL SPACE|.* GAP FILLER(?:-\d)?|.* SPACE FILLER"
        r"|EGYPTIAN HIEROGLYPH (?:FULL|HALF) BLANK|MUSICAL SYMBOL NULL NOTEHEAD"
        r"|BOX DRAWINGS (?:LIGHT|HEAVY|DOUBLE)(?: (?:DOUBLE|TRIPLE|QUADRUPLE) DASH)? HORIZONTAL"
        r"|BOX DRAWINGS (?:LIGHT|HEAVY) (?:LEFT|RIGHT)|HORIZONTAL LINE EXTENSION|HORIZONTAL SCAN LINE-\d"
        r"|MODIFIER LETTER (?:LOW )?MACRON|MODIFIER LETTER (?:LOW )?(?:MINUS SIGN|EN DASH)|OVERLINE"
        r"|.*LOW LINE|.*HYPHEN.*|.* DASH)$"
    ),
    # '<' look-alikes: a left-pointing angle drawn alone (compound relations such as
    # LESS-THAN OR EQUAL TO read as mathematics and are left out).
    # (Drawn as '<' whatever else the name says: '><' opens, '<' with a stroke, a left triangle
    # notehead; a ninth red-team round, stop 51.)
    "lt_names": (
        r"^(?:GREATER-THAN BESIDE LESS-THAN|SMALLER THAN|MUSICAL SYMBOL TRIANGLE NOTEHEAD LEFT (?:WHITE|BLACK))$|"
        r"^(?!.*(?:EQUAL|EQUIVALENT|APPROXIMATE|SIMILAR|ARROW(?!HEAD)|GREATER|VERTICAL|PRESENTATION FORM))"
        r"(?:.*LESS-THAN.*|.*LEFT-POINTING (?:\w+ )?ANGLE.*|.*LEFT (?:\w+ )?ANGLE BRACKET.*"
        r"|MODIFIER LETTER (?:LOW )?LEFT ARROWHEAD|(?:DOUBLE )?PRECEDES(?: UNDER RELATION)?"
        r"|.*LEFT-POINTING (?:\w+ ){0,2}(?:TRIANGLE|POINTER)(?: CENTRED)?|(?:NOT )?NORMAL SUBGROUP OF"
        r"|LARGE LEFT TRIANGLE OPERATOR|LEFTWARDS TRIANGLE ARROWHEAD|(?:.* )?LEFTWARDS EQUILATERAL ARROWHEAD)$"
    ),
    # (A bar beside a right triangle draws '|>': its closer ends a bar token, `<|im_end\u29d0`.)
    "gt_names": (
        r"^(?:LARGER THAN|VERTICAL BAR BESIDE RIGHT TRIANGLE|MUSICAL SYMBOL TRIANGLE NOTEHEAD RIGHT (?:WHITE|BLACK))$|"
        r"^(?!.*(?:EQUAL|EQUIVALENT|APPROXIMATE|SIMILAR|ARROW(?!HEAD)|LESS-THAN|VERTICAL|PRESENTATION FORM))"
        r"(?:.*GREATER-THAN.*|.*RIGHT-POINTING (?:\w+ )?ANGLE.*|.*RIGHT (?:\w+ )?ANGLE BRACKET.*"
        r"|MODIFIER LETTER (?:LOW )?RIGHT ARROWHEAD|(?:DOUBLE )?SUCCEEDS(?: UNDER RELATION)?"
        r"|.*RIGHT-POINTING (?:\w+ ){0,2}(?:TRIANGLE|POINTER)(?: CENTRED)?|(?:DOES NOT )?CONTAINS? AS NORMAL SUBGROUP"
        r"|LARGE RIGHT TRIANGLE OPERATOR|RIGHTWARDS TRIANGLE ARROWHEAD|(?:.* )?RIGHTWARDS EQUILATERAL ARROWHEAD)$"
    ),
    "slash_names": (
        r"^(?!.*REVERSE)(?:.*SOLIDUS.*|FRACTION SLASH|DIVISION SLASH"
        r"|BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT)$"
    ),
    # A vertical stroke drawn alone, or with a dot, circle, tick marks or a stroke across it: the
    # musical barlines, the tally marks for one, the one-eighth blocks drawn as a thin vertical line,
    # the triple bars of mathematics (stop 51, a red-team round: `<\U0001FB70im_start\U0001FB70>`);
    # the ancient numerals one and the counting rod one (a stroke), the box-drawing lines of mixed
    # weight and the quarter blocks at an edge, the Aegean word separator line (a ninth round).
    "bar_names": (
        r"^(?:(?:.* )?VERTICAL (?:LINE|BAR)(?: EXTENSION| WITH QUILL| DELIMITER)?|DIVIDES|.*PASEQ|.*PALOCHKA"
        r"|(?:LEFT |RIGHT )?(?:DOUBLE |TRIPLE |WHITE |LIGHT |MEDIUM |HEAVY )?VERTICAL (?:LINE|BAR)"
        r"|BOX DRAWINGS (?:LIGHT|HEAVY|DOUBLE)(?: (?:DOUBLE|TRIPLE|QUADRUPLE) DASH)? VERTICAL"
        r"|HALFWIDTH FORMS LIGHT VERTICAL|(?:FULLWIDTH )?BROKEN BAR"
        r"|.* BARLINE|(?:IDEOGRAPHIC )?TALLY MARK ONE|VERTICAL ONE EIGHTH BLOCK-\d|.* TWO VERTICAL BARS(?: WITH DOTS)?"
        r"|(?:LARGE )?TRIPLE VERTICAL BAR (?:BINARY RELATION|OPERATOR)|(?:TRIPLE )?VERTICAL BAR WITH HORIZONTAL STROKE"
        r"|(?:(?:LOWER|UPPER) HALF )?VERTICAL LINE WITH (?:MIDDLE DOT|CIRCLE (?:ABOVE|BELOW)|\w+ TICK MARKS)"
        r"|.* NUMBER ONE|COUNTING ROD UNIT DIGIT ONE|BOX DRAWINGS (?:LIGHT|HEAVY) UP AND (?:LIGHT|HEAVY) DOWN"
        r"|(?:LEFT|RIGHT) ONE QUARTER BLOCK|.* WORD SEPARATOR LINE)$"
    ),
    "lbracket_names": r"^(?!PRESENTATION FORM)(?:.*LEFT (?:\w+ )?SQUARE BRACKET.*|LEFT (?:BLACK|WHITE) LENTICULAR BRACKET)$",
    "rbracket_names": r"^(?!PRESENTATION FORM)(?:.*RIGHT (?:\w+ )?SQUARE BRACKET.*|RIGHT (?:BLACK|WHITE) LENTICULAR BRACKET)$",
    # Every other bracket shape: a reader takes a tortoise-shell, corner, ceiling or half bracket for
    # '[' as readily as a square one. Applied by bracket_categories().
    "bracket_categories": (
        "every non-ASCII code point of general category Ps (for '[') or Pe (for ']'), and of Pi or Pf named"
        " LEFT ... BRACKET (for '[') or RIGHT ... BRACKET (for ']'), except one whose NFKC"
        " is an ASCII character other than [ ] (fullwidth and small parentheses and braces read as ( ) { },"
        " which are not brackets of a token) and one already in another structural set (it keeps that role)"
    ),
    # The corners drawn as the top or bottom half of a square bracket (U+231C TOP LEFT CORNER is the
    # half bracket U+2E22 drawn as a symbol; stop 51, a red-team round: ``\u231cINST\u231d``).
    "lcorner_names": r"^(?:LARGE TYPE PIECE )?(?:TOP|BOTTOM|UPPER|LOWER) LEFT CORNER(?: WITH DOT)?$",
    "rcorner_names": r"^(?:LARGE TYPE PIECE )?(?:TOP|BOTTOM|UPPER|LOWER) RIGHT CORNER(?: WITH DOT)?$",
    # The transitive UTS #39 classes (applied by ConfusableClasses): two characters are in one class
    # when one is the other's one-character prototype, or is listed between them in the comment of the
    # entry ("# →｜→"), or is its one-character NFKC (except <vertical> presentation forms, which NFKC
    # gives as the horizontal character they are drawn rotated from). ASCII letters and digits join
    # no classes (every l-shaped letter shares the prototype l: that is a letter, not a stroke).
    "confusable_classes": (
        "prototype, intermediate (comment) and NFKC (not <vertical>) links, taken transitively; ASCII letters"
        " and digits are not traversed"
    ),
    # Bars by class: the class of '|', and every class holding a character named as a vertical stroke.
    # A letter in such a class keeps its letter readings (the bar role applies right after an opener).
    "bar_classes": (
        f"the confusable classes of '|' and of every character named {_BAR_CLASS_NAMES}, beyond ASCII;"
        " not in another structural set (they are taken out of the narrow blank set: a vertical em dash is a bar)"
    ),
    # Letters shaped like a name separator: a letter or number in the confusable class of an ASCII name
    # separator (- _ .) or of a middle dot (punctuation named MIDDLE DOT) may also be read past, as
    # the separator it looks like (both readings).
    "separator_classes": (
        f"categories L* N* in the confusable class of - _ . or of a P* character named {_MIDDLE_DOT_NAMES}:"
        " '' added to the readings"
    ),
    # A number of any script with a digit value (Numeric_Type Decimal or Digit) reads as that digit,
    # so that a placeholder family's number can be written in any script (<SPECIAL_١٢>).
    "digit_values": "categories N* with a digit value: that ASCII digit (0 as o, 1 as l) added to the readings",
    # A symbol standing for a letter (° for o, © for c, € for e): a character the eye reads past
    # deletes the letter it replaces from the skeleton. Inside a reserved envelope name (not a
    # control token), one such character may also stand for any one letter of the name (the
    # reader's stand-in rule). What may stand in: a visible character read past (no blank, nothing
    # invisible, no mark that sits on the letter before).
    "stand_ins": (
        "every non-ASCII code point of SKIP_RANGES, every non-ASCII structural look-alike but a '<' one"
        " that is no letter or number (closers, slashes, bars, brackets, '!'/'?', quotes: an angle reading"
        " reads past them too), and every non-ASCII code point that is no letter or number with '' among"
        " its READINGS (read past or as a letter), except Python's whitespace, Default_Ignorable_Code_Point"
        " and categories Zs Zl Zp Cc Cf Cs Mn"
    ),
    # Fail closed on letters the eye has no fitting reading for (the reader's letter stand-in rule,
    # reader.is_letter_stand_in, from ALNUM_RANGES and the opener sets; no table of its own): inside a
    # reserved envelope name such a letter may be read as the character the name needs there.
    "letter_stand_ins": (
        "every non-ASCII code point of ALNUM_RANGES (L* N*) that is not an opener, also one read past or with"
        " a structural role (it keeps both readings): inside a reserved envelope name (not a control token)"
        " it may stand for any one character of the name, a separator position included (each once), any"
        " number of times; the name must be whole, end there (no L* N* follows) and hold a printable ASCII"
        " character (a word all in another script is that script's word); ASCII matches by its readings"
    ),
    # Multi-letter look-alikes: an ASCII letter whose UTS #39 prototype is a sequence of ASCII letters
    # (m -> rn in confusables.txt 17.0) has that prototype as its primary reading, so the sequence reads
    # as the letter in every name. No other ASCII letter maps to ASCII letters (d -> cl, w -> vv are
    # not in the data).
    "multi_letter_lookalikes": (
        "an ASCII letter whose confusables.txt prototype is two or more ASCII letters: that prototype is its"
        " skeleton reading (the sequence reads as the letter)"
    ),
    # '!' and '?' look-alikes (``<!name``, ``<?name`` read as tags): the mark alone, not compounds.
    "bang_names": r"^(?:(?:FULLWIDTH|SMALL|INVERTED|HEAVY|WHITE) )?(?:EXCLAMATION|QUESTION) MARK(?: ORNAMENT)?$",
    "quote_names": (
        r"^(?!TAG )(?:.*QUOTATION MARK.*|.*APOSTROPHE"
        r"|(?:MODIFIER LETTER )?(?:REVERSED )?(?:DOUBLE |TRIPLE |QUADRUPLE )?PRIME)$"
    ),
    # A letter spelled by a name: LATIN ... LETTER [modifiers] X [WITH ...], MATHEMATICAL ...
    # CAPITAL X, REGIONAL INDICATOR SYMBOL LETTER X, NEGATIVE SQUARED LATIN CAPITAL LETTER X...
    "letter_names": r"(?:LETTER|CAPITAL|SMALL)(?: (?!WITH\b)[A-Z]+)*? ([A-Z])(?= WITH | |$)",
    "letter_scripts": (
        r"LATIN|MATHEMATICAL|REGIONAL INDICATOR|DOUBLE-STRUCK|SCRIPT|BLACK-LETTER|FULLWIDTH|MODIFIER LETTER|CYRILLIC|GREEK"
    ),
    # What datamarking treats as a blank between words: by the same exclusion, every character the
    # eye reads past (so an attacker cannot join words with one and leave them unmarked), except what
    # attaches to a neighbour (marks, joiners, variation selectors, modifier letters and symbols,
    # emoji modifiers, TAG characters, bidi marks, the soft hyphen). The turn's marker is never one.
    "blanks": (
        "Python's whitespace, and every non-ASCII code point of SKIP_RANGES except categories L* N* Mn Mc Me"
        " Sk Cs, U+00AD, U+061C, U+200C..U+200F and U+E0000..U+E007F"
    ),
    # Character references for openers and '&' layers (references(); html.unescape's WHATWG rules).
    "references": (
        "every HTML5 named reference (legacy names with or without ';', except where the text goes on"
        " into a longer name) and numeric reference (Windows-1252 for 0x80..0x9F) whose value is one"
        " opener followed only by skipped characters"
    ),
    # Letters of scripts written without spaces between words (UAX #14 classes ID and SA, from
    # names and widths): between two of them, interleaving may insert a marker.
    "interleave_letters": (
        r"category L* and (East_Asian_Width W/F, not HANGUL) or name ^(?:THAI|LAO|MYANMAR|KHMER|TAI THAM"
        r"|TAI LE|NEW TAI LUE|TAI VIET|AHOM) "
    ),
    # What an explicit marker may be (spotlight.marker_problem decides with this table, so that every
    # interpreter accepts the same markers whatever its own Unicode version).
    "marker_allowed": (
        "non-ASCII; categories P* S* Lm; not in the narrow blank set, read as a letter, in a structural set or"
        " BANG_CHARACTERS, or an interleave letter; neither NFKC nor the UTS #39 prototype holds an ASCII"
        " letter, digit or one of <>&\"'\\/|[]!?:;#=`"
    ),
    # Datamarking markers a composer may pick per turn (not a regex: the rule in words, applied
    # by ``Tables.marker_candidates``): one visible symbol that no reader takes for anything else.
    "marker_candidates": (
        "categories So Sm; U+00A1..U+27FF (the general symbol blocks, at most 3 UTF-8 bytes); bidi class ON;"
        " East_Asian_Width not W/F; not mirrored; no decomposition (NFD and NFKC are the character);"
        " not a source or a one-character prototype in confusables.txt; not the first code point of an"
        " emoji sequence; not in the narrow blank set, read as a letter, or in any structural set"
    ),
}

#: ASCII the model's eye reads in a tag or reference (openers, closers, slashes, bars, brackets,
#: quotes, ``!?``, ``&#;``, ``:``, ``=``, backtick) and every letter and digit: no marker may fold
#: (NFKC) or look (UTS #39) like one (rule ``marker_allowed``).
MARKER_REFUSED_ASCII = "<>&\"'\\/|[]!?:;#=`abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

_SKIP_NAME_RE = re.compile(RULES["skip_names"])
_LETTER_NAME_RE = re.compile(RULES["letter_names"])
_LETTER_SCRIPT_RE = re.compile(RULES["letter_scripts"])
_SKIP_CATS = frozenset(RULES["skip_categories"].split())
_READING_RE = re.compile(r"[a-z0-9:]{1,4}")
#: What ``-``, ``_``, ``.`` and ``\`` read as inside a name: nothing (separators).
_SEPARATOR_CHARS = "-_.\\"
#: ASCII primaries (UTS #39 on ASCII): the letters names are written in.
_ASCII_PRIMARY = {"m": "rn", "0": "o", "1": "l"}


def parse_ranges(path: Path, prop: str) -> list[tuple[int, int]]:
    cps: set[int] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        field, name = (p.strip() for p in line.split(";")[:2])
        if name != prop:
            continue
        lo, _, hi = field.partition("..")
        cps.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return to_ranges(cps)


def to_ranges(cps: Iterable[int]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for cp in sorted(set(cps)):
        if out and cp == out[-1][1] + 1:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def parse_confusables(path: Path) -> dict[int, str]:
    table: dict[int, str] = {}
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        src, dst = (p.strip() for p in line.split(";")[:2])
        table[int(src, 16)] = "".join(chr(int(x, 16)) for x in dst.split())
    return table


def parse_confusable_links(path: Path) -> list[tuple[int, int]]:
    """The links of the ``confusable_classes`` rule found in confusables.txt: a source and its
    one-character prototype, and a source and every one-character intermediate its comment lists
    (``FE31 ; 2502 ; MA # ( ︱ → │ ) ... # →｜→``: ︱ was mapped to │ through ｜)."""
    links: list[tuple[int, int]] = []
    for line in path.read_text(encoding="utf-8-sig").splitlines():
        body, _, comment = line.partition("#")
        body = body.strip()
        if not body:
            continue
        src_field, dst_field = (p.strip() for p in body.split(";")[:2])
        src = int(src_field, 16)
        dst = [int(x, 16) for x in dst_field.split()]
        if len(dst) == 1:
            links.append((src, dst[0]))
        chain = comment.rpartition("#")[2] if "#" in comment else ""
        for part in re.findall(r"→([^→]+)→", chain):
            part = part.strip("\u200e\u200f \t")
            if len(part) == 1:
                links.append((src, ord(part)))
    return links


def parse_version(path: Path) -> str:
    head = path.read_text(encoding="utf-8-sig")[:3000]
    m = re.search(r"Version: ([0-9.]+)", head) or re.search(r"-(\d+\.\d+\.\d+)\.txt", head)
    return m.group(1) if m else "unknown"


def parse_tag_sequences(path: Path) -> list[str]:
    seqs = []
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        cps, kind = (p.strip() for p in line.split(";")[:2])
        if kind == "RGI_Emoji_Tag_Sequence":
            seqs.append("".join(chr(int(x, 16)) for x in cps.split()))
    return sorted(seqs)


def parse_emoji_starts(path: Path) -> set[int]:
    """The first code point of every sequence (or range) in emoji-sequences.txt."""
    out: set[int] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        first = line.split(";", 1)[0].split()[0]
        lo, _, hi = first.partition("..")
        out.update(range(int(lo, 16), int(hi or lo, 16) + 1))
    return out


def parse_emoji_modifiers(path: Path) -> set[int]:
    """The modifiers of every RGI_Emoji_Modifier_Sequence in emoji-sequences.txt (the skin tones)."""
    out: set[int] = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line and line.split(";")[1].strip() == "RGI_Emoji_Modifier_Sequence":
            out.add(int(line.split(";", 1)[0].split()[-1], 16))
    return out


def fold(s: str) -> str:
    return ud.normalize("NFKC", ud.normalize("NFKC", s).casefold())


def assigned() -> Iterable[int]:
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        if ud.category(chr(cp)) != "Cn":
            yield cp


class Tables:
    def __init__(self, shared: Path) -> None:
        udir = shared / "unicode"
        self.ign = parse_ranges(udir / "DerivedCoreProperties.txt", "Default_Ignorable_Code_Point")
        self.ign_set = {cp for lo, hi in self.ign for cp in range(lo, hi + 1)}
        self.conf = parse_confusables(udir / "confusables.txt")
        self.version = parse_version(udir / "confusables.txt")
        self.dcp_version = parse_version(udir / "DerivedCoreProperties.txt")
        self.tags = parse_tag_sequences(udir / "emoji-sequences.txt")
        self.emoji_starts = parse_emoji_starts(udir / "emoji-sequences.txt")
        self.emoji_modifiers = parse_emoji_modifiers(udir / "emoji-sequences.txt")
        self.cps = list(assigned())
        # What renders as nothing, a space, a mark or a separator (the narrow set the structural
        # rules exclude, and what a reading strips); the eye's skip set is wider (see skip_set).
        self.classes = self._confusable_classes(parse_confusable_links(udir / "confusables.txt"))
        # Characters drawn as a vertical stroke (bar_classes rule): bars, not blanks, even where their
        # category is dash punctuation (U+FE31 PRESENTATION FORM FOR VERTICAL EM DASH).
        self.bar_class = self._bar_class()
        self.skip = self._skip() - self.bar_class
        self.readings = self._readings()

    def _confusable_classes(self, links: list[tuple[int, int]]) -> dict[int, int]:
        """The ``confusable_classes`` rule: each code point's class (a representative), by union-find."""
        parent: dict[int, int] = {}

        def find(x: int) -> int:
            root = x
            while parent.get(root, root) != root:
                root = parent[root]
            while parent.get(x, x) != root:
                parent[x], x = root, parent[x]
            return root

        def link(a: int, b: int) -> None:
            if any(x < 0x80 and chr(x).isalnum() for x in (a, b)):
                return  # ASCII letters and digits join no classes
            parent.setdefault(a, a)
            parent.setdefault(b, b)
            ra, rb = find(a), find(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)

        for a, b in links:
            link(a, b)
        for cp in self.cps:
            c = chr(cp)
            n = ud.normalize("NFKC", c)
            if len(n) == 1 and n != c and not ud.decomposition(c).startswith("<vertical>"):
                link(cp, ord(n))
        return {cp: find(cp) for cp in list(parent)}

    def confusable_class(self, cp: int) -> set[int]:
        """Every code point in the confusable class of ``cp`` (itself alone when it has none)."""
        root = self.classes.get(cp)
        if root is None:
            return {cp}
        return {x for x, r in self.classes.items() if r == root}

    def classes_of(self, seeds: Iterable[int]) -> set[int]:
        """The union of the confusable classes of ``seeds``."""
        roots = {self.classes.get(cp, -1 - cp) for cp in seeds}
        return {x for x, r in self.classes.items() if r in roots} | set(seeds)

    def _bar_class(self) -> set[int]:
        """The ``bar_classes`` rule: non-ASCII members of the class of '|' and of the named strokes."""
        pat = re.compile(_BAR_CLASS_NAMES)
        seeds = {0x7C} | {cp for cp in self.cps if pat.match(ud.name(chr(cp), ""))}
        return {cp for cp in self.classes_of(seeds) if cp > 0x7F}

    def separator_letters(self) -> set[int]:
        """The ``separator_classes`` rule: letters and numbers shaped like a name separator."""
        pat = re.compile(_MIDDLE_DOT_NAMES)
        seeds = {ord(c) for c in "-_."} | {
            cp for cp in self.cps if ud.category(chr(cp))[0] == "P" and pat.match(ud.name(chr(cp), ""))
        }
        return {cp for cp in self.classes_of(seeds) if cp > 0x7F and ud.category(chr(cp))[0] in "LN"}

    def confuse(self, s: str) -> str:
        return "".join(self.conf.get(ord(c), c) for c in s)

    def _is_skip_char(self, c: str) -> bool:
        cp = ord(c)
        return (
            cp in self.ign_set
            or ud.category(c) in _SKIP_CATS
            or c in _SEPARATOR_CHARS
            or c == "\ufffd"
            or bool(_SKIP_NAME_RE.match(ud.name(c, "")))
        )

    def _skip(self) -> set[int]:
        skip = {cp for cp in self.cps if self._is_skip_char(chr(cp))}

        def only_skips(s: str) -> bool:
            return bool(s) and all(ord(c) in skip or c in _SEPARATOR_CHARS for c in s)

        for cp in self.cps:
            c = chr(cp)
            if cp in skip or c.isalnum() or ud.category(c)[0] in "LN":
                continue
            # Folds (NFKC) or looks (UTS #39) like separators or blanks only: U+2017 DOUBLE LOW
            # LINE (NFKC: space + combining double low line), U+2212 MINUS SIGN (UTS #39: '-').
            if only_skips(fold(c)) or only_skips(fold(self.confuse(c))):
                skip.add(cp)
        return skip

    def strip(self, s: str) -> str:
        return "".join(c for c in s if ord(c) not in self.skip and c not in _SEPARATOR_CHARS)

    def canon(self, s: str) -> str:
        return "".join(_ASCII_PRIMARY.get(c, c) for c in s)

    def primary(self, c: str) -> str | None:
        """The reading of the 0.1 skeleton: NFKC + casefold, UTS #39, NFKC + casefold."""
        r = self.strip(fold(self.confuse(fold(c))))
        return self.canon(r) if _READING_RE.fullmatch(r) else None

    def char_readings(self, c: str) -> list[str]:
        found: set[str] = set()
        nfd = ud.normalize("NFD", c)
        base = "".join(x for x in nfd if ud.category(x)[0] != "M") or c
        for b in {c, base}:
            for x in {b, fold(b), b.lower(), b.upper()}:
                for y in {x, self.confuse(x), fold(self.confuse(x)), self.confuse(fold(x))}:
                    found.add(self.strip(fold(y)))
        name = ud.name(c, "")
        if _LETTER_SCRIPT_RE.search(name):  # also COMBINING and TAG letters: a reader may see the letter
            m = _LETTER_NAME_RE.search(name)
            if m:
                found.add(m.group(1).lower())
        t = anyascii.anyascii(c)
        if len(t) == 1 and t.isascii() and t.isalpha():
            found.add(t.lower())
        digit = ud.digit(c, None)
        if digit is not None and ud.category(c)[0] == "N":  # digit_values rule
            found.add(str(digit))
        out = {self.canon(r) for r in found if _READING_RE.fullmatch(r)}
        if "l" in out or ("i" in out and c in "I|"):
            out |= {"l", "i"}  # I, l and | are one shape
        prim = self.primary(c)
        ordered = sorted(out - {prim} if prim else out)
        return [prim, *ordered] if prim in out else ordered

    def _readings(self) -> dict[int, list[str]]:
        table: dict[int, list[str]] = {}
        for cp in self.cps:
            c = chr(cp)
            rs = self.char_readings(c)
            if rs and rs != [c]:
                table[cp] = rs
        return table

    @cached_property
    def _named(self) -> list[tuple[int, str, str, str, str, str]]:
        # by_name runs ten times over every code point: its name, fold and prototype are computed once
        return [(cp, c, ud.name(c, ""), fold(c), p, fold(p)) for cp in self.cps for c in (chr(cp),) for p in (self.confuse(c),)]

    def by_name(self, rule: str, target: str, *, cats_ok: Callable[[str], bool] | None = None) -> list[int]:
        """Code points whose name matches ``RULES[rule]``, or that fold or look like ``target``: NFKC
        gives it, or the UTS #39 prototype is ``target`` once or repeated (``⨠`` is ``>>``, ``⋘``
        ``<<<``: a reader takes the first for the closer it is drawn as)."""
        pat = re.compile(RULES[rule])
        out: set[int] = set()
        for cp, c, name, folded, proto, folded_proto in self._named:
            if cp in self.skip or cp in self.ign_set:
                continue
            if pat.match(name) or folded == target or (proto and proto == target * len(proto)):
                out.add(cp)
            elif cats_ok is not None and cats_ok(c) and folded_proto == target:
                out.add(cp)
        out.discard(ord(target))
        return sorted(out)


    def bracket_categories(self, category: str, target: str, taken: set[int]) -> set[int]:
        """The ``bracket_categories`` rule for ``category`` (Ps or Pe)."""
        # Pi and Pf name no direction of their own (a quote opens either way): their brackets by name.
        side = re.compile(r"^LEFT .*BRACKET$" if category == "Ps" else r"^RIGHT .*BRACKET$")
        out = set()
        for cp in self.cps:
            c = chr(cp)
            cat = ud.category(c)
            if cp < 0x80 or cp in taken or cp in self.skip:
                continue
            if cat != category and not (cat in ("Pi", "Pf") and side.match(ud.name(c, ""))):
                continue
            n = ud.normalize("NFKC", c)
            if len(n) == 1 and ord(n) < 0x80 and n != target:
                continue
            out.add(cp)
        return out

    def blanks(self, space: list[int], eye_skip: set[int]) -> list[int]:
        """The ``blanks`` rule (see :data:`RULES`), with Python's whitespace ``space``."""
        attached = {0x00AD, 0x061C, *range(0x200C, 0x2010), *range(0xE0000, 0xE0080)}
        cats = {"Mn", "Mc", "Me", "Sk", "Cs"}
        read_past = {
            cp
            for cp in eye_skip
            if cp >= 0x80 and cp not in attached and ud.category(chr(cp)) not in cats and ud.category(chr(cp))[0] not in "LN"
        }
        return sorted(set(space) | read_past)

    def interleave_letters(self) -> list[int]:
        """The ``interleave_letters`` rule (see :data:`RULES`)."""
        sa = re.compile(r"^(?:THAI|LAO|MYANMAR|KHMER|TAI THAM|TAI LE|NEW TAI LUE|TAI VIET|AHOM) ")
        out = []
        for cp in self.cps:
            c = chr(cp)
            if ud.category(c)[0] != "L":
                continue
            name = ud.name(c, "")
            if (ud.east_asian_width(c) in ("W", "F") and not name.startswith("HANGUL")) or sa.match(name):
                out.append(cp)
        return out

    def marker_candidates(self, structural: set[int]) -> list[int]:
        """The ``marker_candidates`` rule (see :data:`RULES`)."""
        prototypes = {ord(p) for p in self.conf.values() if len(p) == 1}
        out = []
        for cp in self.cps:
            c = chr(cp)
            if not 0xA1 <= cp <= 0x27FF or ud.category(c) not in ("So", "Sm"):
                continue
            if cp in self.skip or cp in self.readings or cp in structural or cp in self.emoji_starts:
                continue
            if cp in self.conf or cp in prototypes or ud.normalize("NFD", c) != c or ud.normalize("NFKC", c) != c:
                continue
            if ud.bidirectional(c) != "ON" or ud.east_asian_width(c) in ("W", "F") or ud.mirrored(c):
                continue
            out.append(cp)
        return out


def skip_set(t: Tables, structural: set[int], readings: dict[int, list[str]]) -> tuple[set[int], dict[int, list[str]]]:
    """The ``skip_by_exclusion`` rule: the eye's skip set and its readings (see :data:`RULES`).

    ASCII keeps its explicit rules (whitespace, controls and ``- _ . \\`` are skipped; every other
    ASCII character reads as itself or its letter). Every other code point, assigned or not, is
    read past unless it is structural or a letter or number: a character the eye has no rule for
    keeps a reading alive instead of ending it. A mark, symbol, punctuation, format character or
    modifier letter with a reading keeps both: skipped, or read as that letter (``""`` among its
    readings). A letter or number is read as its readings or as itself, except the blank letters of
    the narrow set (``HANGUL FILLER``) and letters whose UTS #39 prototype is only skipped characters.
    """
    skip: set[int] = set()
    out = dict(readings)
    separators = t.separator_letters()
    for cp in range(0x80):
        if cp in t.skip:
            skip.add(cp)
    for cp in range(0x80, 0x110000):
        if cp in structural:
            continue
        c = chr(cp)
        cat = ud.category(c)
        if cat[0] in "LN" and cat != "Lm":
            proto = t.conf.get(cp, "")
            skippable_proto = proto and all(ord(x) in t.skip or (ord(x) >= 0x80 and _skippable(x, structural)) for x in proto)
            if cp in t.skip or (cp not in out and skippable_proto):
                skip.add(cp)
                out.pop(cp, None)
            elif cp in separators:  # separator_classes rule: also read past, as the separator it looks like
                own = out.get(cp, [c])
                out[cp] = own if "" in own else [*own, ""]
            continue
        if cp in out:
            out[cp] = [*out[cp], ""]
        else:
            skip.add(cp)
    return skip, out


def stand_ins(
    t: Tables, eye_skip: set[int], space: set[int], passed: set[int], readings: dict[int, list[str]]
) -> list[int]:
    """The ``stand_ins`` rule: what may stand for one letter of a reserved envelope name. ``passed``:
    the structural look-alikes an angle reading also reads past (``reader._PASS``); ``readings``: the
    eye's, where a symbol read past or as a letter (``""`` among its readings: U+2297 CIRCLED TIMES
    reads as ``x`` or nothing) is read past too, so it may stand in as well (stop 51, a red-team round:
    ``</retrieved_c\u2297ntent>`` passed while ``c\u2295ntent`` was escaped)."""
    refused = {"Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Mn"}
    symbols = {cp for cp in passed if ud.category(chr(cp))[0] not in "LN"}
    either = {cp for cp, rs in readings.items() if "" in rs and ud.category(chr(cp))[0] not in "LN"}
    return sorted(
        cp
        for cp in eye_skip | symbols | either
        if cp > 0x7F and cp not in space and cp not in t.ign_set and ud.category(chr(cp)) not in refused
    )


def references(chars: str, eye_skip: set[int]) -> tuple[list[tuple[str, bool, tuple[str, ...]]], list[int]]:
    """The ``references`` rule: every character reference that decodes, as ``html.unescape`` (the
    WHATWG rules) decodes it, to one of ``chars`` followed only by skipped characters.

    Named: ``(name, legacy, exclusions)``, longest first. A legacy name (one the HTML5 table lists
    without ``;``) is read with or without ``;``, except where the text goes on into a longer name
    (``exclusions``: ``&ltimes;`` is U+22C9, not ``<`` + ``imes;``). Numeric: the code points, and
    the numbers 0x80..0x9F that map through Windows-1252 onto one of ``chars`` (``&#139;`` is U+2039).
    """
    import html
    import html.entities

    html5 = html.entities.html5

    def wanted(value: str) -> bool:
        return bool(value) and value[0] in chars and all(ord(c) in eye_skip for c in value[1:])

    named: list[tuple[str, bool, tuple[str, ...]]] = []
    for key, value in html5.items():
        if not wanted(value):
            continue
        if key.endswith(";"):
            if key[:-1] not in html5:
                named.append((key[:-1], False, ()))
        else:
            longer = {k[len(key) :] for k in html5 if k.startswith(key) and k not in (key, key + ";")}
            # A longer legacy name wins as a prefix of any text; a longer name with ';' only when whole.
            named.append((key, True, tuple(sorted(longer, key=lambda x: (-len(x), x)))))
    named.sort(key=lambda r: (-len(r[0]), r[0]))
    invalid = html._invalid_charrefs  # type: ignore[attr-defined]
    numeric = sorted({ord(c) for c in chars} | {n for n, v in invalid.items() if 0x80 <= n <= 0x9F and wanted(v)})
    return named, numeric


def _skippable(c: str, structural: set[int]) -> bool:
    """Is ``c`` (a non-ASCII prototype character) a mark, symbol, punctuation, separator or other
    character the eye reads past? (Not a modifier letter: U+4E00's prototype is U+30FC.)"""
    return ord(c) not in structural and ud.category(c)[0] in "MPSZC"


def _bar_shaped(c: str) -> bool:
    """Not a letter or digit: a bar-shaped symbol that UTS #39 folds with ``l``."""
    return ud.category(c) not in ("Ll", "Lu", "Lt", "Nd") and ord(c) > 0x7F


def generate(shared: Path) -> str:
    """The Python module ``unicode_tables.py``."""
    return generate_all(shared)[OUT]


def generate_all(shared: Path, *, write_python_first: bool = False) -> dict[Path, str]:
    """Every generated file: the Python module and the Rust table module of the native core."""
    t = Tables(shared)
    lt = t.by_name("lt_names", "<")
    gt = t.by_name("gt_names", ">")
    slash = t.by_name("slash_names", "/")
    named_bars = set(t.by_name("bar_names", "|")) | {cp for cp in t.cps if cp not in t.skip and _bar_shaped(chr(cp))
                                                     and t.confuse(chr(cp)) in ("l", "|", "ll")}
    lbr = sorted(set(t.by_name("lbracket_names", "[")) | set(t.by_name("lcorner_names", "[")))
    rbr = sorted(set(t.by_name("rbracket_names", "]")) | set(t.by_name("rcorner_names", "]")))
    quote = sorted(
        set(t.by_name("quote_names", '"'))
        | set(t.by_name("quote_names", "'"))
        | {cp for cp in t.cps if t.confuse(chr(cp)) in ("''", "'") and cp not in t.skip}
    )
    quote = [cp for cp in quote if cp not in set(lt) | set(gt)]
    # The characters UTS #39 takes for a quote that the eye reads past anyway (U+02DD, U+00B4, Greek
    # and Miao tonal marks): no reading needs them, but an attribute value must not show one raw, or
    # `x˝ provenance=˝system-config` reads as a second attribute (stop 49, a red-team find).
    skipped_quote = sorted(cp for cp in t.cps if t.confuse(chr(cp)) in ("''", "'") and cp in t.skip and cp > 0x7F
                           and cp not in set(lt) | set(gt))
    # The ASCII members of the class (`"`, `'`, and the backtick UTS #39 maps to `'`): an angle
    # reading reads past them too (reader._PASS; stop 48, a red-team find: `<"/retrieved_content">`),
    # but attribute values keep the format's own escapes for them (QUOTE_LOOKALIKES is the rest).
    ascii_quote = [cp for cp in quote if cp <= 0x7F]
    quote = [cp for cp in quote if cp > 0x7F]
    bang = sorted({0x21, 0x3F, *t.by_name("bang_names", "!"), *t.by_name("bang_names", "?")})
    # The derived roles keep a character's existing structural role (one character, one role).
    taken = set(lt) | set(gt) | set(slash) | set(lbr) | set(rbr) | set(quote) | set(bang)
    assigned_cps = set(t.cps)
    bar = sorted(named_bars | {cp for cp in t.bar_class if cp not in taken and cp not in t.skip and cp in assigned_cps})
    taken |= set(bar)
    lbr = sorted(set(lbr) | t.bracket_categories("Ps", "[", taken))
    rbr = sorted(set(rbr) | t.bracket_categories("Pe", "]", taken))
    sets = {"LT": lt, "GT": gt, "SLASH": slash, "BAR": bar, "LBRACKET": lbr, "RBRACKET": rbr}
    if set(bang) & (t.skip | {c for cps in sets.values() for c in cps}):
        raise SystemExit("the '!'/'?' look-alikes overlap another structural set or the skip set")
    # The structural sets must not overlap (one character, one role), and none is skipped.
    names = list(sets)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            both = set(sets[a]) & set(sets[b])
            if both:
                raise SystemExit(f"{a} and {b} overlap: {[hex(c) for c in sorted(both)]}")
        if set(sets[a]) & t.skip:
            raise SystemExit(f"{a} overlaps the skip set")
    readings = {cp: rs for cp, rs in t.readings.items() if cp not in set(lt) | set(gt) | set(lbr) | set(rbr) | set(slash)}
    structural = {c for cps in sets.values() for c in cps} | set(quote) | set(bang)
    markers = t.marker_candidates(structural)
    eye_skip, eye_readings = skip_set(t, structural, readings)

    # UTS #39 confusables whose prototype folds to printable ASCII (kept as data for tests).
    to_ascii: dict[int, str] = {}
    for src, proto in t.conf.items():
        target = fold(proto)
        if target and all(0x20 < ord(c) < 0x7F for c in target) and chr(src) != target:
            to_ascii[src] = target
    interleave = set(t.interleave_letters())
    eye_ascii = set(MARKER_REFUSED_ASCII)
    allowed = [
        cp
        for cp in t.cps
        if cp > 0x7F
        and (ud.category(chr(cp))[0] in "PS" or ud.category(chr(cp)) == "Lm")
        and cp not in t.skip
        and cp not in readings
        and cp not in structural
        and cp not in interleave
        and not set(ud.normalize("NFKC", chr(cp)) + to_ascii.get(cp, "")) & eye_ascii
    ]
    if not set(markers) <= set(allowed):
        raise SystemExit("a marker candidate is not an allowed marker")

    def fmt_ranges(rs: list[tuple[int, int]]) -> str:
        return "".join(f"    (0x{lo:04X}, 0x{hi:04X}),\n" for lo, hi in rs).rstrip("\n")

    def fmt_cps(cps: list[int]) -> str:
        return "".join(f"    0x{cp:04X},  # {ud.name(chr(cp), '?')}\n" for cp in cps).rstrip("\n")

    cats = {cp: ud.category(chr(cp)) for cp in t.cps}
    alpha = [cp for cp, c in cats.items() if c[0] == "L"]
    alnum = [cp for cp, c in cats.items() if c[0] in "LN"]
    # Python's str.isspace: bidirectional class WS, B or S, or category Zs.
    space = [cp for cp, c in cats.items() if c == "Zs" or ud.bidirectional(chr(cp)) in ("WS", "B", "S")]
    blank = t.blanks(space, eye_skip)
    # Read past inside an angle reading (reader._PASS): every non-ASCII structural look-alike but a '<' one.
    passed = {cp for cps in (gt, slash, bar, lbr, rbr, bang, quote) for cp in cps if cp > 0x7F} - set(lt)
    stand_in = stand_ins(t, eye_skip, set(space), passed, eye_readings)
    # What attaches to the letter before it (a letter stand-in name reads past it anywhere): marks,
    # format characters, default-ignorables and the emoji modifiers (skin tones); and a lone
    # surrogate (nothing a reader sees: fail closed, and the backend's stand-in for one, a format
    # character, must read as it does).
    attach = sorted(
        {cp for cp, c in cats.items() if cp >= 0x80 and (c[0] == "M" or c == "Cf")}
        | t.ign_set
        | t.emoji_modifiers
        | set(range(0xD800, 0xE000))
    )
    if set(blank) & set(t.interleave_letters()):
        raise SystemExit("a blank is also an interleave letter")

    rules_doc = "".join(f"* ``{k}``: ``{v}``\n" for k, v in RULES.items())
    lines = [
        'r"""Unicode tables for the model\'s eye. GENERATED by scripts/gen_unicode_tables.py: do not edit.',
        "",
        f"Sources: confusables.txt (UTS #39) version {t.version}; DerivedCoreProperties.txt version",
        f"{t.dcp_version}; emoji-sequences.txt; character names, categories, NFKC/NFD and case folding",
        f"from unicodedata2 (Unicode {ud.unidata_version}); one-letter transliterations from anyascii",
        f"{getattr(anyascii, '__version__', '')}. Unicode data (c) Unicode, Inc., used under the Unicode terms of use.",
        "",
        "Rules (regexes over character names; see the generator's docstring):",
        "",
        rules_doc.rstrip("\n"),
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f'UNICODE_VERSION = "{t.version}"',
        "",
        "#: Default_Ignorable_Code_Point ranges (inclusive).",
        "DEFAULT_IGNORABLE_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(t.ign),
        ")",
        "",
        "#: What the eye reads past (ranges, inclusive; the skip_by_exclusion rule): in ASCII whitespace,",
        "#: controls and ``-_.\\\\``; beyond ASCII every code point that is not structural, not a letter or",
        '#: number and has no reading (a character with a reading keeps ``""`` among its READINGS).',
        "SKIP_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(eye_skip)),
        ")",
        "",
        "#: What may stand for one letter of a reserved envelope name (stand_ins rule; ranges, inclusive): a",
        "#: visible character the eye reads past (``</retrieved_c\\u00b0ntent>``, DEGREE SIGN for o).",
        "STAND_IN_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(stand_in)),
        ")",
        "",
        "#: Letters (general category L*), as ranges: what starts markup after '<' (``str.isalpha`` of Unicode 17).",
        "ALPHA_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(alpha)),
        ")",
        "",
        "#: Letters and numbers (L*, N*): name characters of a namespace prefix (``str.isalnum`` of Unicode 17).",
        "ALNUM_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(alnum)),
        ")",
        "",
        "#: Whitespace as ``str.isspace`` defines it (bidirectional class WS, B, S, or category Zs).",
        "SPACE_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(space)),
        ")",
        "",
        "#: What a reader may take a character for, as ASCII strings over ``[a-z0-9:]`` (first: the",
        "#: primary reading, NFKC + casefold + UTS #39; ``m`` reads ``rn``, ``0`` ``o``, ``1`` ``l``).",
        '#: A character not listed (and not skipped) reads as itself; ``""`` among the readings: it may also be',
        "#: read past (a mark, symbol or punctuation with a letter reading).",
        "READINGS: dict[int, tuple[str, ...]] = {",
        "".join(f"    0x{cp:04X}: {tuple(rs)!r},\n" for cp, rs in sorted(eye_readings.items())).rstrip("\n"),
        "}",
        "",
        "#: UTS #39 confusables whose prototype folds (NFKC, casefold) to printable ASCII.",
        "CONFUSABLE_TO_ASCII: dict[int, str] = {",
        "".join(f"    0x{k:04X}: {v!r},\n" for k, v in sorted(to_ascii.items())).rstrip("\n"),
        "}",
        "",
        "#: Characters a reader may take for '<' (lt_names rule, NFKC, UTS #39).",
        "LT_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(lt),
        ")",
        "",
        "#: Characters a reader may take for '>' (gt_names rule, NFKC, UTS #39).",
        "GT_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(gt),
        ")",
        "",
        "#: Characters a reader may take for '/' (slash_names rule, NFKC, UTS #39).",
        "SLASH_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(slash),
        ")",
        "",
        "#: Characters a reader may take for '|' (bar_names rule, NFKC, UTS #39 symbols folding to 'l', bar_classes rule).",
        "PIPE_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(bar),
        ")",
        "",
        "#: Characters a reader may take for '[' (lbracket_names rule, NFKC, UTS #39, bracket_categories rule).",
        "LBRACKET_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(lbr),
        ")",
        "",
        "#: Characters a reader may take for ']' (rbracket_names rule, NFKC, UTS #39, bracket_categories rule).",
        "RBRACKET_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(rbr),
        ")",
        "",
        "#: '!' and '?' and what a reader may take for them (bang_names rule, NFKC, UTS #39): read past after an opener.",
        "BANG_CHARACTERS: tuple[int, ...] = (",
        fmt_cps(bang),
        ")",
        "",
        "#: Characters a reader may take for a quote ending an attribute value (quote_names rule, NFKC, UTS #39).",
        "QUOTE_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(quote),
        ")",
        "",
        "#: Characters UTS #39 takes for a quote that the eye reads past (so not in QUOTE_LOOKALIKES): attribute",
        "#: values write them as references too.",
        "SKIPPED_QUOTES: tuple[int, ...] = (",
        fmt_cps(skipped_quote),
        ")",
        "",
        "#: The ASCII characters of the same quote class (quote_names rule, UTS #39): an angle reading reads past",
        "#: them as it reads past the look-alikes (reader._PASS); attribute values keep the format's escapes for them.",
        "ASCII_QUOTES: tuple[int, ...] = (",
        fmt_cps(ascii_quote),
        ")",
        "",
        "#: Marks (general category M*): word characters for the scanner's invisible-in-word rule.",
        "MARK_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(cp for cp, c in cats.items() if c[0] == "M")),
        ")",
        "",
        "#: What attaches to the letter before it, beyond ASCII: marks (M*), format characters (Cf),",
        "#: Default_Ignorable_Code_Point, the emoji modifiers of emoji-sequences.txt and lone surrogates.",
        "#: A letter stand-in name reads past these anywhere (``reader.attaches``).",
        "ATTACH_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(attach)),
        ")",
        "",
        "#: Hebrew (character names starting HEBREW): CGJ is legitimate there.",
        "HEBREW_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(cp for cp in t.cps if ud.name(chr(cp), "").startswith("HEBREW "))),
        ")",
        "",
        "#: Hangul (character names starting HANGUL): the Hangul fillers are legitimate next to it.",
        "HANGUL_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(cp for cp in t.cps if ud.name(chr(cp), "").startswith("HANGUL"))),
        ")",
        "",
        "#: The angle look-alikes that are quotation marks (categories Pi, Pf: guillemets): ``« word »`` quotes a",
        "#: word: a plain-word token quoted so is no reading (reader.quoted_word), and the scanner reports a structural",
        "#: one spelled so as a warning (the defang escapes it).",
        "QUOTATION_ANGLES: tuple[int, ...] = (",
        fmt_cps(sorted(cp for cp in (*lt, *gt) if ud.category(chr(cp)) in ("Pi", "Pf"))),
        ")",
        "",
        "#: The bracket look-alikes East Asian text writes as its own punctuation (East_Asian_Width W or F:",
        "#: 「」『』【】〔〕 and the fullwidth forms): the scanner grades a word between a pair of them as between",
        "#: ASCII brackets (the defang escapes both alike).",
        "WIDE_BRACKETS: tuple[int, ...] = (",
        fmt_cps(sorted(cp for cp in (*lbr, *rbr) if ud.east_asian_width(chr(cp)) in ("W", "F"))),
        ")",
        "",
        "#: Blanks between words for datamarking (blanks rule).",
        "BLANK_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(blank)),
        ")",
        "",
        "#: Letters of scripts written without spaces (interleave_letters rule): where interleaving may",
        "#: insert a marker between two characters.",
        "INTERLEAVE_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(t.interleave_letters())),
        ")",
        "",
        "#: ASCII no marker may fold or look like (marker_allowed rule).",
        f"MARKER_REFUSED_ASCII = {MARKER_REFUSED_ASCII!r}",
        "",
        "#: What an explicit datamarking marker may be (marker_allowed rule; spotlight.marker_problem).",
        "MARKER_ALLOWED_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(allowed)),
        ")",
        "",
        "#: Datamarking markers a composer may choose per turn (marker_candidates rule): visible symbols",
        "#: that no reader of the model's eye takes for a letter, a blank or a structural character.",
        "MARKER_CANDIDATES: tuple[int, ...] = (",
        fmt_cps(markers),
        ")",
        "",
        "#: RGI emoji tag sequences (flags): the only place TAG characters are kept.",
        "RGI_EMOJI_TAG_SEQUENCES: tuple[str, ...] = (",
        "".join('    "' + "".join(f"\\U{ord(c):08X}" for c in seq) + '",\n' for seq in t.tags).rstrip("\n"),
        ")",
        "",
    ]
    lt_chars = "<" + "".join(chr(c) for c in lt)
    lbr_chars = "[" + "".join(chr(c) for c in lbr)
    refs = {"LT": references(lt_chars, eye_skip), "LBRACKET": references(lbr_chars, eye_skip), "AMP": references("&", eye_skip)}
    for key, (named, numeric) in refs.items():
        lines += [
            f"#: Named references that decode to {'an opener' if key != 'AMP' else chr(38)} ({key}; references rule):",
            "#: (name, legacy: also without ';', exclusions: continuations that make a longer name).",
            f"{key}_REFERENCES: tuple[tuple[str, bool, tuple[str, ...]], ...] = (",
            "".join(f"    {r!r},\n" for r in named).rstrip("\n"),
            ")",
            "",
            f"#: Numbers whose numeric reference decodes to one ({key}).",
            f"{key}_NUMERIC: tuple[int, ...] = ({', '.join(f'0x{n:X}' for n in numeric)},)",
            "",
        ]
    python = "\n".join(lines)
    view = surrogate_view_char(python)
    python += "\n".join(
        [
            "",
            "#: What a lone surrogate is written as for the native core (``backend.surrogate_view``): the first",
            "#: code point every character table here and in ``charsets`` holds as it holds U+D800, but",
            f"#: {', '.join(sorted(VIEW_MAY_DIFFER))} (the generator's ``surrogate_view_char``).",
            f"SURROGATE_VIEW = 0x{view:04X}",
            "",
        ]
    )
    if write_python_first and (not OUT.exists() or OUT.read_text(encoding="utf-8") != python):
        # The Rust module reads bounds and names from the envelock package, which imports the
        # Python tables: a new table must exist before that import.
        OUT.write_text(python, encoding="utf-8")
    sets_rs = {"LT": lt, "GT": gt, "SLASH": slash, "PIPE": bar, "LBRACKET": lbr, "RBRACKET": rbr}
    cats_rs: dict[str, list[int]] = {
        "ALPHA": alpha,
        "ALNUM": alnum,
        "SPACE": space,
        "INTERLEAVE": t.interleave_letters(),
        "BLANK": blank,
        "STAND_IN": stand_in,
        "ATTACH": attach,
    }
    rust = rust_module(t, sets_rs, eye_readings, cats_rs, bang, (quote, ascii_quote), eye_skip, refs)
    return {OUT: python, RUST_OUT: rust}


#: The tables a lone surrogate's stand-in may differ from a surrogate in: the surrogates' own (the
#: backend merges their runs back) and spotlight's whitespace, which neither the eye nor the scanner reads.
VIEW_MAY_DIFFER = {"XML_IMPOSSIBLE", "BLANK_RANGES"}
#: Generated constants that hold names or numbers, not characters.
_NOT_CHARACTER_TABLES = {"UNICODE_VERSION", "LT_REFERENCES", "LBRACKET_REFERENCES", "AMP_REFERENCES", "SURROGATE_VIEW"}


def _in_spans(spans: list[tuple[int, int]]) -> Callable[[int], bool]:
    """Membership in a union of inclusive ``(lo, hi)`` spans, by bisection over the merged runs (the
    surrogate-view search asks it of every code point, for every table)."""
    runs: list[list[int]] = []
    for lo, hi in sorted(spans):
        if runs and lo <= runs[-1][1] + 1:
            runs[-1][1] = max(runs[-1][1], hi)
        else:
            runs.append([lo, hi])
    los = [lo for lo, _ in runs]

    def inside(cp: int) -> bool:
        i = bisect.bisect_right(los, cp) - 1
        return i >= 0 and cp <= runs[i][1]

    return inside


def _reads(name: str, table: object) -> Callable[[int], object]:
    """What a character table says of a code point: ``False`` when it does not hold it, else ``True``
    or the value it maps it to. A table of a shape not read here stops the generator (none is passed over)."""
    if isinstance(table, int) and not isinstance(table, bool):
        return lambda cp: cp == table  # one code point (charsets.SOFT_HYPHEN)
    if isinstance(table, str):
        chars = set(table)
        return lambda cp: chr(cp) in chars
    if isinstance(table, dict):
        return lambda cp: table.get(cp, table.get(chr(cp), False))
    if isinstance(table, (tuple, list, frozenset, set)):
        items = list(table)
        if all(isinstance(x, int) and not isinstance(x, bool) for x in items):
            held = set(items)
            return lambda cp: cp in held
        if all(isinstance(x, str) for x in items):
            chars = {c for x in items for c in x}  # characters, or sequences of them
            return lambda cp: chr(cp) in chars
        if all(isinstance(x, tuple) and len(x) == 2 and all(isinstance(y, int) for y in x) for x in items):
            return _in_spans(items)
    raise SystemExit(f"{name}: a character table of a shape surrogate_view_char does not read")


def surrogate_view_char(python: str) -> int:
    """The first code point (beyond ASCII) that every character table of the generated module
    ``python`` and of ``envelock.eye.charsets`` holds as it holds a lone surrogate (U+D800 to U+DFFF
    alike), but :data:`VIEW_MAY_DIFFER`: what the backend writes a surrogate as, one code point for
    one, so that the native core reads the text as the eye reads the surrogate
    (``tests/scan/test_scan_surrogates.py`` compares every table again, and every predicate of the reader)."""
    from envelock.eye import charsets

    generated: dict[str, object] = {}
    exec(compile(python, str(OUT), "exec"), generated)  # the tables as they are being written
    tables = [
        _reads(name, table)
        for module in (generated, vars(charsets))
        for name, table in module.items()
        if name.isupper() and name not in _NOT_CHARACTER_TABLES | VIEW_MAY_DIFFER
    ]
    surrogate = [read(0xD800) for read in tables]
    if any([read(cp) for read in tables] != surrogate for cp in range(0xD801, 0xE000)):
        raise SystemExit("the surrogates are not all held alike: no one stand-in reads as each")
    for cp in range(0x80, 0x110000):
        if not 0xD800 <= cp <= 0xDFFF and all(read(cp) == said for read, said in zip(tables, surrogate, strict=True)):
            return cp
    raise SystemExit("no code point is held as a surrogate is: the backend has nothing to write one as")


def _rs_str(s: str) -> str:
    """A Rust string literal (non-ASCII and controls as ``\\u{...}``)."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif 0x20 <= ord(c) < 0x7F:
            out.append(c)
        else:
            out.append(f"\\u{{{ord(c):x}}}")
    return '"' + "".join(out) + '"'


def _rs_ranges(name: str, doc: str, rs: list[tuple[int, int]]) -> list[str]:
    body = "".join(f"    (0x{lo:04X}, 0x{hi:04X}),\n" for lo, hi in rs)
    return [f"/// {doc}", f"pub static {name}: &[(u32, u32)] = &[\n{body}];", ""]


def _rs_cps(name: str, doc: str, cps: Iterable[int]) -> list[str]:
    body = "".join(f"    0x{cp:04X}, // {ud.name(chr(cp), '?')}\n" for cp in sorted(set(cps)))
    return [f"/// {doc}", f"pub static {name}: &[u32] = &[\n{body}];", ""]


def _rs_strs(name: str, doc: str, items: Iterable[str]) -> list[str]:
    body = "".join(f"    {_rs_str(x)},\n" for x in items)
    return [f"/// {doc}", f"pub static {name}: &[&str] = &[\n{body}];", ""]


def rust_module(
    t: Tables,
    sets: dict[str, list[int]],
    readings: dict[int, list[str]],
    cats: dict[str, list[int]],
    bang: list[int],
    quotes: tuple[list[int], list[int]],
    eye_skip: set[int],
    refs: dict[str, tuple[list[tuple[str, bool, tuple[str, ...]]], list[int]]],
) -> str:
    """``rust/envelock-core/src/tables.rs``: the same tables as ``unicode_tables.py``, plus the data the
    Python reader takes from the interpreter (``html.entities.html5``, ``html.unescape``'s invalid
    code points) and from :mod:`envelock.eye.reader` / :mod:`envelock.eye.tokens` (bounds, ``!?`` look-alikes,
    default names), so that both implementations read the same data."""
    import html
    import html.entities

    sys.path.insert(0, str(ROOT / "src"))
    from envelock.eye import charsets
    from envelock.eye import reader as modeleye
    from envelock.eye import tokens as tokens

    html5 = html.entities.html5
    out = [
        "//! Unicode and HTML tables of the model's eye. GENERATED by scripts/gen_unicode_tables.py: do not edit.",
        "//!",
        f"//! The same data as src/envelock/eye/unicode_tables.py (Unicode {ud.unidata_version}, UTS #39 {t.version}),",
        "//! plus Python's html.entities.html5 and html.unescape tables, the reader's bounds from",
        "//! envelock.eye.reader, the default names from envelock.eye.tokens and the sanitize sets",
        "//! from envelock.eye.charsets.",
        "//! Unicode data (c) Unicode, Inc., used under the Unicode terms of use.",
        "",
        f"pub const UNICODE_VERSION: &str = {_rs_str(t.version)};",
        f"pub const MAX_RUN: usize = {modeleye.MAX_RUN};",
        f"pub const MAX_LOOKAHEAD: usize = {modeleye.MAX_LOOKAHEAD};",
        f"pub const MAX_AMP_LAYERS: usize = {modeleye.MAX_AMP_LAYERS};",
        f"pub const MAX_OPENER_LEN: usize = {modeleye.MAX_OPENER_LEN};",
        f"pub const LEGACY_MAX: usize = {modeleye._LEGACY_MAX};",
        "",
    ]
    out += _rs_ranges("DEFAULT_IGNORABLE_RANGES", "Default_Ignorable_Code_Point.", t.ign)
    out += _rs_ranges("SKIP_RANGES", "Read past (unicode_tables.SKIP_RANGES).", to_ranges(eye_skip))
    for k, cps in cats.items():
        out += _rs_ranges(f"{k}_RANGES", f"unicode_tables.{k}_RANGES.", to_ranges(cps))
    for k, cps in sets.items():
        base = {"LT": "<", "GT": ">", "SLASH": "/", "PIPE": "|", "LBRACKET": "[", "RBRACKET": "]"}[k]
        out += _rs_cps(k, f"{base!r} and its look-alikes (unicode_tables.{k}_LOOKALIKES), sorted.", [ord(base), *cps])
    seps = map(ord, modeleye._SEPARATORS)
    out += _rs_cps("BANG", "'!', '?' and their look-alikes (unicode_tables.BANG_CHARACTERS), sorted.", bang)
    quote, ascii_quote = quotes
    out += _rs_cps("QUOTE", "The quote look-alikes (unicode_tables.QUOTE_LOOKALIKES), sorted.", quote)
    out += _rs_cps("ASCII_QUOTE", "The ASCII quotes of the same class (unicode_tables.ASCII_QUOTES), sorted.", ascii_quote)
    out += _rs_cps("SEPARATORS", "Name separators a namespace prefix may hold (modeleye._SEPARATORS).", seps)
    keys = sorted(readings)
    out += [
        "/// Code points with readings (unicode_tables.READINGS), sorted; the readings are in READING_VALUES.",
        "pub static READING_KEYS: &[u32] = &[",
        "".join(f"    0x{cp:04X},\n" for cp in keys) + "];",
        "",
        "/// The readings of READING_KEYS[i], primary first.",
        "pub static READING_VALUES: &[&[&str]] = &[",
        "".join("    &[" + ", ".join(_rs_str(r) for r in readings[cp]) + "],\n" for cp in keys) + "];",
        "",
    ]
    ents = sorted(html5.items(), key=lambda kv: kv[0].encode())
    out += [
        "/// html.entities.html5 (name, value), sorted by the UTF-8 bytes of the name.",
        "pub static HTML5: &[(&str, &str)] = &[",
        "".join(f"    ({_rs_str(k)}, {_rs_str(v)}),\n" for k, v in ents) + "];",
        "",
    ]
    for key, (named, numeric) in refs.items():
        body = "".join(
            f"    ({_rs_str(n)}, {'true' if legacy else 'false'}, &[{', '.join(_rs_str(x) for x in excl)}]),\n"
            for n, legacy, excl in named
        )
        out += [
            f"/// unicode_tables.{key}_REFERENCES: (name, legacy, exclusions), longest first.",
            f"pub static {key}_REFERENCES: &[(&str, bool, &[&str])] = &[\n{body}];",
            "",
            f"/// unicode_tables.{key}_NUMERIC, sorted.",
            f"pub static {key}_NUMERIC: &[u32] = &[{', '.join(f'0x{n:X}' for n in numeric)}];",
            "",
        ]
    inv = html._invalid_charrefs  # type: ignore[attr-defined]
    out += [
        "/// html._invalid_charrefs: numeric references html.unescape maps to another character.",
        "pub static INVALID_CHARREFS: &[(u32, u32)] = &[",
        "".join(f"    (0x{k:X}, 0x{ord(v):X}),\n" for k, v in sorted(inv.items())) + "];",
        "",
    ]
    out += [
        "/// html._invalid_codepoints: numeric references html.unescape drops.",
        "pub static INVALID_CODEPOINTS: &[u32] = &[",
        "".join(f"    0x{c:X},\n" for c in sorted(html._invalid_codepoints)) + "];",  # type: ignore[attr-defined]
        "",
    ]
    # The sanitize pass (envelope/invisible.py): what compose strips and replaces.
    out += _rs_ranges("TAG_CHARACTER_RANGES", "envelock.eye.charsets.TAG_CHARACTERS.", list(charsets.TAG_CHARACTERS))
    out += _rs_ranges(
        "BIDI_EMBEDDING_RANGES", "envelock.eye.charsets.BIDI_EMBEDDING_CONTROLS.", list(charsets.BIDI_EMBEDDING_CONTROLS)
    )
    out += _rs_ranges("XML_IMPOSSIBLE_RANGES", "envelock.eye.charsets.XML_IMPOSSIBLE.", list(charsets.XML_IMPOSSIBLE))
    out += _rs_strs(
        "RGI_EMOJI_TAG_SEQUENCES",
        "unicode_tables.RGI_EMOJI_TAG_SEQUENCES (emoji-sequences.txt), in the same order (the regex alternation's).",
        t.tags,
    )
    out += _rs_strs("RESERVED_NAMES", "envelock.eye.tokens.RESERVED_NAMES.", tokens.RESERVED_NAMES)
    out += _rs_strs("ANGLE_TOKEN_NAMES", "envelock.eye.tokens.ANGLE_TOKEN_NAMES.", tokens.ANGLE_TOKEN_NAMES)
    out += _rs_strs("BRACKET_TOKEN_NAMES", "envelock.eye.tokens.BRACKET_TOKEN_NAMES.", tokens.BRACKET_TOKEN_NAMES)
    out += _rs_strs(
        "ANGLE_TOKEN_PATTERNS",
        "envelock.eye.tokens.ANGLE_TOKEN_PATTERNS (a name prefix + any number).",
        tokens.ANGLE_TOKEN_PATTERNS,
    )
    out += _rs_strs("BRACKET_TOKEN_PATTERNS", "envelock.eye.tokens.BRACKET_TOKEN_PATTERNS.", tokens.BRACKET_TOKEN_PATTERNS)
    out += _rs_strs("NAMESPACE_TOKEN_NAMES", "envelock.eye.tokens.NAMESPACE_TOKEN_NAMES.", tokens.NAMESPACE_TOKEN_NAMES)
    out += _rs_strs("EXACT_TOKENS", "envelock.eye.tokens.EXACT_TOKENS (matched exactly).", tokens.EXACT_TOKENS)
    out += _rs_cps(
        "QUOTE_OPENERS", "The guillemets that open a reading (reader.QUOTE_OPENERS), sorted.", map(ord, modeleye.QUOTE_OPENERS)
    )
    out += _rs_cps(
        "QUOTE_CLOSERS", "The guillemets that close one (reader.QUOTE_CLOSERS), sorted.", map(ord, modeleye.QUOTE_CLOSERS)
    )
    out += _rs_strs(
        "QUOTABLE_ANGLE_TOKEN_NAMES",
        "reader.quotable_angle_names(): plain-word <NAME> tokens, not read as one when quoted with guillemets.",
        modeleye.quotable_angle_names(),
    )
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    files = generate_all(args.shared, write_python_first=not args.check)
    if args.check:
        stale = [p for p, text in files.items() if (p.read_text(encoding="utf-8") if p.exists() else "") != text]
        for p in stale:
            print(f"{p} is stale; run scripts/gen_unicode_tables.py", file=sys.stderr)
        return 1 if stale else 0
    for p, text in files.items():
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
