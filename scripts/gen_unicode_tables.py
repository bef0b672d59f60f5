#!/usr/bin/env python3
"""Generate ``src/envelock/unicode_tables.py``: the model's eye, derived from Unicode data.

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
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import anyascii  # type: ignore[import-untyped]
import unicodedata2 as ud  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "src" / "envelock" / "unicode_tables.py"

#: The rules, as regexes over Unicode character names (and the categories they apply to).
RULES = {
    # Skipped like whitespace: every character of these general categories.
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
    "lt_names": (
        r"^(?!.*(?:EQUAL|EQUIVALENT|APPROXIMATE|SIMILAR|ARROW(?!HEAD)|GREATER|VERTICAL|PRESENTATION FORM))"
        r"(?:.*LESS-THAN.*|.*LEFT-POINTING (?:\w+ )?ANGLE.*|.*LEFT (?:\w+ )?ANGLE BRACKET.*"
        r"|MODIFIER LETTER (?:LOW )?LEFT ARROWHEAD|(?:DOUBLE )?PRECEDES)$"
    ),
    "gt_names": (
        r"^(?!.*(?:EQUAL|EQUIVALENT|APPROXIMATE|SIMILAR|ARROW(?!HEAD)|LESS-THAN|VERTICAL|PRESENTATION FORM))"
        r"(?:.*GREATER-THAN.*|.*RIGHT-POINTING (?:\w+ )?ANGLE.*|.*RIGHT (?:\w+ )?ANGLE BRACKET.*"
        r"|MODIFIER LETTER (?:LOW )?RIGHT ARROWHEAD|(?:DOUBLE )?SUCCEEDS)$"
    ),
    "slash_names": (
        r"^(?!.*REVERSE)(?:.*SOLIDUS.*|FRACTION SLASH|DIVISION SLASH"
        r"|BOX DRAWINGS LIGHT DIAGONAL UPPER RIGHT TO LOWER LEFT)$"
    ),
    "bar_names": (
        r"^(?:(?:.* )?VERTICAL (?:LINE|BAR)(?: EXTENSION| WITH QUILL| DELIMITER)?|DIVIDES|.*PASEQ|.*PALOCHKA"
        r"|(?:LEFT |RIGHT )?(?:DOUBLE |TRIPLE |WHITE |LIGHT |MEDIUM |HEAVY )?VERTICAL (?:LINE|BAR)"
        r"|BOX DRAWINGS (?:LIGHT|HEAVY|DOUBLE)(?: (?:DOUBLE|TRIPLE|QUADRUPLE) DASH)? VERTICAL"
        r"|HALFWIDTH FORMS LIGHT VERTICAL|(?:FULLWIDTH )?BROKEN BAR)$"
    ),
    "lbracket_names": r"^(?!PRESENTATION FORM)(?:.*LEFT (?:\w+ )?SQUARE BRACKET.*|LEFT (?:BLACK|WHITE) LENTICULAR BRACKET)$",
    "rbracket_names": r"^(?!PRESENTATION FORM)(?:.*RIGHT (?:\w+ )?SQUARE BRACKET.*|RIGHT (?:BLACK|WHITE) LENTICULAR BRACKET)$",
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
}

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
        self.cps = list(assigned())
        self.skip = self._skip()
        self.readings = self._readings()

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
        if _LETTER_SCRIPT_RE.search(name) and not name.startswith(("TAG ", "COMBINING ")):
            m = _LETTER_NAME_RE.search(name)
            if m:
                found.add(m.group(1).lower())
        t = anyascii.anyascii(c)
        if len(t) == 1 and t.isascii() and t.isalpha():
            found.add(t.lower())
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
            if cp in self.skip:
                continue
            rs = self.char_readings(c)
            if rs and rs != [c]:
                table[cp] = rs
        return table

    def by_name(self, rule: str, target: str, *, cats_ok: Callable[[str], bool] | None = None) -> list[int]:
        """Code points whose name matches ``RULES[rule]``, or that fold or look like ``target``."""
        pat = re.compile(RULES[rule])
        out: set[int] = set()
        for cp in self.cps:
            c = chr(cp)
            if cp in self.skip or cp in self.ign_set:
                continue
            if pat.match(ud.name(c, "")) or fold(c) == target or self.confuse(c) == target:
                out.add(cp)
            elif cats_ok is not None and cats_ok(c) and fold(self.confuse(c)) == target:
                out.add(cp)
        out.discard(ord(target))
        return sorted(out)


def _bar_shaped(c: str) -> bool:
    """Not a letter or digit: a bar-shaped symbol that UTS #39 folds with ``l``."""
    return ud.category(c) not in ("Ll", "Lu", "Lt", "Nd") and ord(c) > 0x7F


def generate(shared: Path) -> str:
    t = Tables(shared)
    lt = t.by_name("lt_names", "<")
    gt = t.by_name("gt_names", ">")
    slash = t.by_name("slash_names", "/")
    bar = sorted(set(t.by_name("bar_names", "|")) | {cp for cp in t.cps if cp not in t.skip and _bar_shaped(chr(cp))
                                                      and t.confuse(chr(cp)) in ("l", "|", "ll")})
    lbr = t.by_name("lbracket_names", "[")
    rbr = t.by_name("rbracket_names", "]")
    quote = sorted(set(t.by_name("quote_names", '"')) | set(t.by_name("quote_names", "'"))
                   | {cp for cp in t.cps if t.confuse(chr(cp)) in ("''", "'") and cp not in t.skip})
    quote = [cp for cp in quote if cp > 0x7F and cp not in set(lt) | set(gt)]  # ASCII: the fixed escapes of the format
    sets = {"LT": lt, "GT": gt, "SLASH": slash, "BAR": bar, "LBRACKET": lbr, "RBRACKET": rbr}
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

    # UTS #39 confusables whose prototype folds to printable ASCII (kept as data for tests).
    to_ascii: dict[int, str] = {}
    for src, proto in t.conf.items():
        target = fold(proto)
        if target and all(0x20 < ord(c) < 0x7F for c in target) and chr(src) != target:
            to_ascii[src] = target

    def fmt_ranges(rs: list[tuple[int, int]]) -> str:
        return "".join(f"    (0x{lo:04X}, 0x{hi:04X}),\n" for lo, hi in rs).rstrip("\n")

    def fmt_cps(cps: list[int]) -> str:
        return "".join(f"    0x{cp:04X},  # {ud.name(chr(cp), '?')}\n" for cp in cps).rstrip("\n")

    cats = {cp: ud.category(chr(cp)) for cp in t.cps}
    alpha = [cp for cp, c in cats.items() if c[0] == "L"]
    alnum = [cp for cp, c in cats.items() if c[0] in "LN"]
    # Python's str.isspace: bidirectional class WS, B or S, or category Zs.
    space = [cp for cp, c in cats.items() if c == "Zs" or ud.bidirectional(chr(cp)) in ("WS", "B", "S")]

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
        "#: Read past like whitespace (ranges, inclusive): Default_Ignorable_Code_Point, categories",
        f"#: {RULES['skip_categories']}, the skip_names rule, separators ``-_.\\\\``, U+FFFD, and what",
        "#: folds (NFKC) or looks (UTS #39) like those only.",
        "SKIP_RANGES: tuple[tuple[int, int], ...] = (",
        fmt_ranges(to_ranges(t.skip)),
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
        "#: A character not listed (and not skipped) reads as itself.",
        "READINGS: dict[int, tuple[str, ...]] = {",
        "".join(f"    0x{cp:04X}: {tuple(rs)!r},\n" for cp, rs in sorted(readings.items())).rstrip("\n"),
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
        "#: Characters a reader may take for '|' (bar_names rule, NFKC, UTS #39 symbols folding to 'l').",
        "PIPE_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(bar),
        ")",
        "",
        "#: Characters a reader may take for '[' (lbracket_names rule, NFKC, UTS #39).",
        "LBRACKET_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(lbr),
        ")",
        "",
        "#: Characters a reader may take for ']' (rbracket_names rule, NFKC, UTS #39).",
        "RBRACKET_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(rbr),
        ")",
        "",
        "#: Characters a reader may take for a quote ending an attribute value (quote_names rule, NFKC, UTS #39).",
        "QUOTE_LOOKALIKES: tuple[int, ...] = (",
        fmt_cps(quote),
        ")",
        "",
        "#: RGI emoji tag sequences (flags): the only place TAG characters are kept.",
        "RGI_EMOJI_TAG_SEQUENCES: tuple[str, ...] = (",
        "".join('    "' + "".join(f"\\U{ord(c):08X}" for c in seq) + '",\n' for seq in t.tags).rstrip("\n"),
        ")",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    text = generate(args.shared)
    if args.check:
        current = OUT.read_text(encoding="utf-8") if OUT.exists() else ""
        if current != text:
            print(f"{OUT} is stale; run scripts/gen_unicode_tables.py", file=sys.stderr)
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
