"""The model's eye: how a reader that is not a parser sees a run of text.

An LLM does not tokenise markup. It will take ``</ retrieved-content>``,
``\uff1c/RETRI\u0395VED_CONTENT\uff1e``, ``externaI_content`` with a capital I, a
strike-through mark on every letter, an em dash or a SentencePiece ``▁`` for the underscore,
or a braille blank between ``<`` and ``/`` for a close tag. This module decides, for the text
right after an *opener*, what a reader sees there: nothing, an envelope tag, a chat-template
control token, or padding too long to follow.

Every character table comes from Unicode data through the committed generator
(:mod:`envelock.eye.unicode_tables`, ``scripts/gen_unicode_tables.py``), and it fails closed by
construction: the eye reads past every character it has no rule for.

* In ASCII, whitespace, controls and ``- _ . \\`` are read past; every other character reads as
  itself (``"<%s>" % tag`` is not ``<s>``).
* Beyond ASCII, every code point is read past (``SKIP_RANGES``: marks, symbols, punctuation,
  separators, format characters, unassigned and private-use code points) except the letters and
  numbers and the structural look-alikes (openers, closers, slashes, bars, brackets, quotes);
  a mark or symbol with a letter reading keeps both readings, skipped or that letter
  (``READINGS`` holds ``""`` for it: the Telugu anusvara reads as ``o`` or as nothing).
* A letter has a set of **readings** (``READINGS``): every ASCII string a reader may take it
  for, or else itself. The name is followed as a set of live skeletons (a small NFA over the
  reserved names and tokens), so ``р`` (looks like ``p``, sounds like ``r``) and ``I``/``l``/``|``
  (one shape) match either way.
* Character references are decoded as ``html.unescape`` decodes them (the WHATWG rules: any number
  of leading zeros and digits), and the references that open a tag are the generated
  ``LT_REFERENCES``/``LT_NUMERIC``.
* A bar right after the opener is a chat-template token when the shape closes on its line
  (:func:`bar_closes`: ``<|NAME|>``, ``<|NAME>``), or when a bound is reached first.
* Inside a reserved envelope name one visible character the eye reads past may also stand for
  any one letter of the name (the stand-in rule, ``STAND_IN_RANGES``: ``</retrieved_c\u00b0ntent>``).
* Inside an angle reading a non-ASCII structural look-alike that is not a ``<`` one, and an ASCII
  quote, is also read past (``_PASS``: ``</retrieved\ufe31content>``, ``<"/retrieved_content">``),
  except a bar right after the opener (a token).

The check is a bounded lookahead: at most :data:`MAX_RUN` skipped characters in a row and at
most :data:`MAX_LOOKAHEAD` characters in all. When a bound is reached while the text could still
turn into a reserved name, the answer is "dangerous" (fail closed). A reading also ends at the
next opener (which is read on its own), so the work per opener is bounded by the distance to
the next one and every scan is linear in the input.
"""

from __future__ import annotations

import bisect
import html
import html.entities
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import product
from typing import Literal

from .charsets import char_class, one_of, ranges_of, regex_class, run_of
from .levels import XML_AMP_REFERENCE, XML_LT_REFERENCE
from .load_tokens import Tokens, classify
from .tokens import (
    ANGLE_TOKEN_NAMES,
    ANGLE_TOKEN_PATTERNS,
    BRACKET_TOKEN_NAMES,
    BRACKET_TOKEN_PATTERNS,
    DOUBLED_ANGLE_NAMES,
    EXACT_TOKENS,
    NAMESPACE_TOKEN_NAMES,
    RESERVED_NAMES,
)
from .unicode_tables import (
    ALNUM_RANGES,
    ALPHA_RANGES,
    AMP_NUMERIC,
    AMP_REFERENCES,
    ASCII_QUOTES,
    ATTACH_RANGES,
    BANG_CHARACTERS,
    DEFAULT_IGNORABLE_RANGES,
    GT_LOOKALIKES,
    LBRACKET_LOOKALIKES,
    LBRACKET_NUMERIC,
    LBRACKET_REFERENCES,
    LT_LOOKALIKES,
    LT_NUMERIC,
    LT_REFERENCES,
    MARK_RANGES,
    PIPE_LOOKALIKES,
    QUOTATION_ANGLES,
    QUOTE_LOOKALIKES,
    RBRACKET_LOOKALIKES,
    READINGS,
    SKIP_RANGES,
    SLASH_LOOKALIKES,
    SPACE_RANGES,
    STAND_IN_RANGES,
)

#: Longest run of skipped characters (whitespace, ignorables, marks, slashes,
#: separators) the lookahead follows before failing closed.
MAX_RUN = 32
#: Most characters the lookahead examines after one opener.
MAX_LOOKAHEAD = 256


IGNORABLE_CLASS = char_class(DEFAULT_IGNORABLE_RANGES)
IGNORABLE_RE = re.compile(f"[{IGNORABLE_CLASS}]")
LT_CHARS = "<" + "".join(chr(c) for c in LT_LOOKALIKES)
GT_CHARS = ">" + "".join(chr(c) for c in GT_LOOKALIKES)
SLASH_CHARS = "/" + "".join(chr(c) for c in SLASH_LOOKALIKES)
PIPE_CHARS = "|" + "".join(chr(c) for c in PIPE_LOOKALIKES)
LBRACKET_CHARS = "[" + "".join(chr(c) for c in LBRACKET_LOOKALIKES)
RBRACKET_CHARS = "]" + "".join(chr(c) for c in RBRACKET_LOOKALIKES)

_IGNORABLE = frozenset(chr(cp) for lo, hi in DEFAULT_IGNORABLE_RANGES for cp in range(lo, hi + 1))
_READ: dict[str, tuple[str, ...]] = {chr(cp): rs for cp, rs in READINGS.items()}
#: Characters with a letter reading that may also be read past (``""`` among their readings).
_EITHER = frozenset(c for c, rs in _READ.items() if "" in rs)
_GT = frozenset(GT_CHARS)
_SLASH = frozenset(SLASH_CHARS)
_PIPE = frozenset(PIPE_CHARS)
_RBRACKET = frozenset(RBRACKET_CHARS)
#: Opener characters: a reading ends at one (some are letters too, e.g. U+1438 CANADIAN SYLLABICS PA).
_OPENER_CHARS = frozenset(LT_CHARS + LBRACKET_CHARS)
#: ``<!name`` and ``<?name`` read as tags too (declarations, processing instructions).
_BANG = frozenset(chr(c) for c in BANG_CHARACTERS)
#: Non-ASCII structural look-alikes that an angle reading also reads past (both readings): a
#: character drawn as a bracket, a bar, a closer, a slash, ``!``/``?`` or a quote between the letters
#: of a name stands for the separator it looks like (``</retrieved\ufe31content>``,
#: ``</retrieved\u300ccontent>``, ``</retrieved\u2019content>``), as it did while it had no role. The
#: quotes were left out until stop 42 (a red-team find: ``</retrieved\u2019content>``,
#: ``<\u201c|im_end|>`` and ``<start_of\u2019turn>`` were left as they are). Not the ``<`` look-alikes
#: (each starts a reading of its own, and a reading ends at the next one: the work per opener stays
#: bounded by the text up to it); in the lead, not the bars (a bar right after the opener is a token).
#: The ASCII quotes of the same generated class (``"``, ``'``, the backtick) too, since stop 48 (a
#: red-team find: ``<"/retrieved_content">``, ``<'|im_end|'>`` and ``<&quot;/retrieved_content&quot;>``
#: were left as they are): in an angle reading only (``["INST"]`` is a list, not a token).
_QUOTES = "".join(chr(c) for c in QUOTE_LOOKALIKES)
_ASCII_QUOTE_CHARS = frozenset(chr(c) for c in ASCII_QUOTES)
_PASS = (
    frozenset(
        c for c in GT_CHARS + SLASH_CHARS + PIPE_CHARS + LBRACKET_CHARS + RBRACKET_CHARS + "".join(_BANG) + _QUOTES if c >= "\x80"
    )
    - frozenset(LT_CHARS)
    | _ASCII_QUOTE_CHARS
)
#: The quotes of ``_PASS`` (ASCII and look-alikes): they read as nothing in a bar shape's name too, so
#: ``<'|'>`` and ``<“|”>`` are the empty bar (``empty_bar``), as ``<|>`` is (BNF: ``'<'|'>'``).
_QUOTE_PASS = frozenset(_QUOTES) | _ASCII_QUOTE_CHARS
_LT_ONE = frozenset(LT_CHARS)
#: ``lt;`` and ``amp;``: what follows the ``&`` of the references the XML text escape writes.
_LT_TAIL = XML_LT_REFERENCE[1:]
_AMP_TAIL = XML_AMP_REFERENCE[1:]


def quoted_opener(text: str, pos: int) -> bool:
    """Is the opener ending at ``pos`` a quoted character: the same ASCII quote right before it and
    right after it (``'<'``, ``"<"``)? Then it reads as none: a grammar's ``'<' | '>'``, C's
    ``c == '<' || c == '>'`` (the quote after it is read past since stop 48, and the bar after that
    would open a token). ``'<'/retrieved_content>`` is a quoted ``<`` too, as every reading after an
    ASCII quote was until stop 48. The opener is one character, or ``&lt;`` behind any number of
    ``amp;`` layers: what the XML text escape makes of a ``<`` (once per round), so a quoted ``<``
    stays quoted at ``xml`` (``'&lt;'``). Any other reference is never one (fail closed)."""
    q = text[pos : pos + 1]
    if q not in _ASCII_QUOTE_CHARS or pos < 2:
        return False
    if text[pos - 1] in _LT_ONE:
        start = pos - 1
    elif text.endswith(_LT_TAIL, 0, pos):
        start = pos - len(_LT_TAIL)
        while text.endswith(_AMP_TAIL, 0, start):
            start -= len(_AMP_TAIL)
        if not text.endswith("&", 0, start):
            return False
        start -= 1
    else:
        return False
    return start >= 1 and text[start - 1] == q


#: The separators of a name (also in the generated skip set); ``_after_namespace`` reads past them.
_SEPARATORS = frozenset("_-.\\")
#: The guillemets (generated ``QUOTATION_ANGLES``: the angle look-alikes of categories Pi and Pf) that
#: open a reading (``«``, ``‹``) and that close one (``»``, ``›``): typographic quotation marks.
QUOTE_OPENERS = frozenset(chr(c) for c in QUOTATION_ANGLES if chr(c) in LT_CHARS)
QUOTE_CLOSERS = frozenset(chr(c) for c in QUOTATION_ANGLES if chr(c) in GT_CHARS)
#: Characters that are never part of a quoted plain word: the structural look-alikes (some are letters,
#: such as U+1438 CANADIAN SYLLABICS PA, an opener, or U+01C0 LATIN LETTER DENTAL CLICK, a bar).
_STRUCTURAL = frozenset(LT_CHARS + GT_CHARS + SLASH_CHARS + PIPE_CHARS + LBRACKET_CHARS + RBRACKET_CHARS)

#: Most ``&amp;`` layers an opener may carry (``&amp;amp;lt;`` has two).
MAX_AMP_LAYERS = 16
#: An upper bound on the length of one opener token *without its digit runs*: a numeric reference
#: takes any number of digits (``html.unescape`` and the WHATWG tokenizer read ``&#0000…060;`` with
#: any number of leading zeros), so only the rest of it is bounded (:func:`reference_run_start`).
MAX_OPENER_LEN = 2 + (MAX_AMP_LAYERS + 1) * 12 + 32
#: Significant digits beyond which a numeric reference is certainly above U+10FFFF (``&#x``: 8 hex
#: digits, 9 decimal ones): its value is U+FFFD whatever the digits, so they are not converted.
_BIG_DIGITS = 8

_HTML5 = html.entities.html5


RefTable = tuple[tuple[str, bool, tuple[str, ...]], ...]


def _numeric(codes: tuple[int, ...], hexa: bool) -> str:
    """A numeric reference body (after ``&#``) for one of ``codes``: any number of leading zeros (as
    ``html.unescape`` reads them), the number, no further digit, an optional ``;``. Linear: after the
    zeros every alternative starts with a non-zero digit, so giving a zero back fails at once."""
    if hexa:
        alts = "|".join(f"{c:x}" for c in codes)
        return rf"[xX]0*(?i:{alts})(?![0-9a-fA-F]);?"
    alts = "|".join(str(c) for c in codes)
    return rf"0*(?:{alts})(?![0-9]);?"


def _named(refs: RefTable) -> str:
    """The named references of a generated table (longest first): ``name;``, or for a legacy name
    also ``name`` without ``;`` unless the text goes on into a longer name (its exclusions)."""
    alts = []
    for name, legacy, exclusions in refs:
        if not legacy:
            alts.append(f"{re.escape(name)};")
        elif exclusions:
            alts.append(f"{re.escape(name)}(?:;|(?!{'|'.join(re.escape(x) for x in exclusions)}))")
        else:
            alts.append(f"{re.escape(name)};?")
    return "|".join(alts)


def _ref_pattern(refs: RefTable, numeric: tuple[int, ...]) -> str:
    """A character reference that ``html.unescape`` decodes to a character of the family, with any
    ``&`` layers in front (``&amp;lt;``, ``&#38;lt;``, ``&amplt;``: up to :data:`MAX_AMP_LAYERS`)."""
    amp = f"(?:{_named(AMP_REFERENCES)}|#{_numeric(AMP_NUMERIC, False)}|#{_numeric(AMP_NUMERIC, True)})"
    return rf"&{amp}{{0,{MAX_AMP_LAYERS}}}(?:{_named(refs)}|#{_numeric(numeric, False)}|#{_numeric(numeric, True)})"


def _opener_pattern(chars: str, ref: str) -> str:
    """One of ``chars``, or ``ref`` (a reference pattern starting with ``&``).

    Written as one character class first (``[<＜…&]``) and the rest of a reference
    after an ``&``, so that the regex engine finds candidates with its fast
    first-character scan instead of trying an alternation at every position.
    """
    if not ref.startswith("&"):
        raise ValueError("a reference pattern starts with '&'")
    return f"(?:{regex_class(chars + '&')}(?:(?<=&){ref[1:]}|(?<!&)))"


def atomic_opener(pattern: str) -> str:
    """An opener pattern whose reference part is an atomic group (Python 3.11+).

    Inside a larger regex (``opener(?=lookahead)``) the engine could otherwise
    backtrack into another tokenization of the same text (``&lt`` instead of
    ``&ltcc;``) to satisfy the lookahead; atomic, it keeps the one
    ``OPENER_RE.finditer`` finds, so every implementation judges the same openers.
    """
    return pattern.replace("(?:(?<=&)", "(?>(?<=&)", 1)


LT_REF_PATTERN = _ref_pattern(LT_REFERENCES, LT_NUMERIC)
#: Any opener: ``<``, a look-alike, or a character reference for one.
OPENER_PATTERN = _opener_pattern(LT_CHARS, LT_REF_PATTERN)
OPENER_RE = re.compile(OPENER_PATTERN)
#: Any bracket opener: ``[``, a look-alike (``［``, ``⟦``...), or a reference for one (``&#91;``, ``&lsqb;``).
BRACKET_OPENER_PATTERN = _opener_pattern(LBRACKET_CHARS, _ref_pattern(LBRACKET_REFERENCES, LBRACKET_NUMERIC))
BRACKET_OPENER_RE = re.compile(BRACKET_OPENER_PATTERN)

#: The body of a character reference (after its ``&``) exactly as ``html.unescape`` finds one:
#: numeric with any number of digits, or a name of up to 32 characters; ``;`` optional.
_REF_BODY_RE = re.compile(r"#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[^\t\n\f <&#;]{1,32};?")
#: The characters a reference holds after its ``&`` that make it long (digits, ``#``, ``x``, ``;``,
#: and the letters of the names of its ``&`` layers and final reference): see :func:`reference_run_start`.
_REF_RUN = "#;0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


class _RangeSet:
    """Membership in a generated range table (bisect; an implementation of any language can do the same)."""

    def __init__(self, ranges: tuple[tuple[int, int], ...]) -> None:
        self.lo = [lo for lo, _ in ranges]
        self.hi = [hi for _, hi in ranges]

    def __contains__(self, ch: str) -> bool:
        cp = ord(ch)
        k = bisect.bisect_right(self.lo, cp) - 1
        return k >= 0 and cp <= self.hi[k]


_ALPHA = _RangeSet(ALPHA_RANGES)
_ALNUM = _RangeSet(ALNUM_RANGES)
_MARK = _RangeSet(MARK_RANGES)
_SPACE = _RangeSet(SPACE_RANGES)


def is_alpha(ch: str) -> bool:
    """A letter (category L*, Unicode 17 from the generated table, not the interpreter's data)."""
    return ch in _ALPHA


def is_alnum(ch: str) -> bool:
    """A letter or number (L*, N*; generated)."""
    return ch in _ALNUM


def is_mark(ch: str) -> bool:
    """A mark (M*; generated, Unicode 17: the interpreter's ``unicodedata`` may be older and call a
    newer mark unassigned)."""
    return ch in _MARK


def is_space(ch: str) -> bool:
    """Whitespace as ``str.isspace`` defines it, from the generated table."""
    return ch in _SPACE


def is_ignorable(ch: str) -> bool:
    """True for a Default_Ignorable_Code_Point (zero-width, TAG, bidi, VS...)."""
    return ch in _IGNORABLE


class _Skip:
    """Membership in ``SKIP_RANGES`` (almost every code point: the table is ranges, not a set)."""

    def __init__(self) -> None:
        self._ranges = _RangeSet(SKIP_RANGES)
        self._ascii = frozenset(chr(c) for c in range(0x80) if chr(c) in self._ranges)

    def __contains__(self, ch: str) -> bool:
        if ch < "\x80":
            return ch in self._ascii
        return ch in self._ranges


_SKIP = _Skip()
_STAND_IN = _RangeSet(STAND_IN_RANGES)


_ATTACHES = _RangeSet(ATTACH_RANGES)


def attaches(piece: str) -> bool:
    """Is ``piece`` only what attaches to the letter before it (generated ``ATTACH_RANGES``: marks,
    format characters, default-ignorables, emoji modifiers)? A letter
    stand-in name reads past these anywhere: ``</retrieved_co\u0418\u0306tent>`` (the decomposed
    form of ``\u0419``) and ``</\u042fETRI\u200bEVED_CONTENT>`` read as the name their composed
    and unbroken forms do (red-team finds of stop 43)."""
    return bool(piece) and all(c >= "\x80" and c in _ATTACHES for c in piece)


def is_stand_in(ch: str) -> bool:
    """May ``ch`` stand for one letter of a reserved envelope name (generated ``STAND_IN_RANGES``: a
    visible character the eye reads past, such as U+00B0 DEGREE SIGN for ``o``)?"""
    return ch >= "\x80" and ch in _STAND_IN


def is_skip(ch: str) -> bool:
    """Does the model's eye read past ``ch`` (generated ``SKIP_RANGES``: no letter reading at all)?"""
    return ch in _SKIP


def letter_symbol(ch: str) -> bool:
    """Is ``ch`` a symbol or mark with a letter reading that may also be read past (``ⓣ``, ``ᵗ``,
    ``🇹``: generated, ``""`` among its readings)? It may be a letter of a name."""
    return ch in _EITHER


def reads_as_letter(ch: str) -> bool:
    """Is ``ch`` a letter or number, or a character the eye may read as one (``ⓣ``, ``𜳞``: a reading
    that starts with a letter or digit)?"""
    return is_alnum(ch) or any(r[:1].isalnum() for r in readings(ch))


def can_skip(ch: str) -> bool:
    """May the eye read past ``ch``: always (:func:`is_skip`), or as one of its readings (a mark or
    symbol with a letter reading, such as U+0C02 TELUGU SIGN ANUSVARA, read as ``o`` or as nothing)."""
    return ch in _SKIP or ch in _EITHER


_is_skip = is_skip


_LT_OTHERS = tuple(LT_CHARS[1:])
_LBRACKET_OTHERS = tuple(LBRACKET_CHARS[1:])


def may_hold_opener(text: str) -> bool:
    """False when ``text`` holds no angle opener at all (a few memchr-speed scans)."""
    if "<" in text or "&" in text:
        return True
    return not text.isascii() and any(c in text for c in _LT_OTHERS)


def may_hold_bracket(text: str) -> bool:
    """False when ``text`` holds no bracket opener at all."""
    if "[" in text or "&" in text:
        return True
    return not text.isascii() and any(c in text for c in _LBRACKET_OTHERS)


def readings(ch: str) -> tuple[str, ...]:
    """Every string a reader may take ``ch`` for: ``("",)`` when skipped, else the generated
    readings (primary first; ``""`` last for a character that may also be read past), else ``ch``
    itself."""
    found = _READ.get(ch)
    if found is not None:
        return found
    if ch in _SKIP:
        return ("",)
    return (ch,)


def char_skeleton(ch: str) -> str:
    """The primary reading of one character (the 0.1 skeleton: NFKC, casefold, UTS #39, separators dropped)."""
    return readings(ch)[0]


def skeleton(text: str) -> str:
    """Skeleton of a string: the primary reading of each character (how names are stored).

    ``"".join(char_skeleton(c) for c in text)``, in two C passes: the characters read past are
    removed (no character with generated readings is one), then each other character is replaced
    by its primary reading. The scanner takes the skeleton of a 256-character window per padded
    opener; one Python step per character made ``<`` + 40 NBSP + a tag the slowest of the red team's
    shapes (``benchmarks/results/scan_shapes_red_team.txt``)."""
    bmp, astral = _skip_runs()
    kept = bmp.sub("", text)
    if not kept.isascii() and _ASTRAL.search(kept):
        kept = astral.sub("", kept)
    return kept.translate(_primary_table(_READ))


#: Any character beyond the Basic Multilingual Plane.
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


@lru_cache(maxsize=1)
def _skip_runs() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """The runs of characters read past, in the BMP and beyond it: two regexes, so the first is a bare
    class that ``re`` searches in C (one alternation made ``skeleton`` a Python-speed step per letter)."""
    return re.compile(f"{one_of(SKIP_RANGES, part='bmp')}+"), re.compile(f"{one_of(SKIP_RANGES, part='astral')}+")


#: The ``str.translate`` table of the last readings table seen, and that table: made again for another
#: (a test's broken reader replaces ``_READ``).
_PRIMARY: list[tuple[dict[str, tuple[str, ...]], dict[int, str]]] = []


def _primary_table(read: dict[str, tuple[str, ...]]) -> dict[int, str]:
    """Each character with generated readings mapped to its primary reading."""
    if not _PRIMARY or _PRIMARY[0][0] is not read:
        _PRIMARY[:] = [(read, {ord(c): rs[0] for c, rs in read.items()})]
    return _PRIMARY[0][1]


@lru_cache(maxsize=8)
def read_past_re(more: frozenset[str]) -> re.Pattern[str]:
    """A run (maybe empty) of characters the eye reads past (:func:`is_skip`, the generated
    ``SKIP_RANGES``) or of ``more``: one regex, so the scanner reads a 256-character window in C.
    One Python step per character of every window made ``<`` + 40 NBSP repeated a slow shape (a
    red-team find of stop 48)."""
    return re.compile(run_of(SKIP_RANGES, ranges_of(more)))


def first_alnum(text: str) -> int:
    """The index of the first letter or number in ``text`` (:func:`is_alnum`), or ``len(text)``."""
    bmp, astral = _alnum_res()
    found = bmp.search(text)
    end = found.start() if found else len(text)
    if not text.isascii() and _ASTRAL.search(text, 0, end):
        found = astral.search(text, 0, end)
        end = found.start() if found else end
    return end


@lru_cache(maxsize=1)
def _alnum_res() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A letter or number in the BMP, and beyond it: a bare class is searched in C (see ``_skip_runs``)."""
    return re.compile(one_of(ALNUM_RANGES, part="bmp")), re.compile(one_of(ALNUM_RANGES, part="astral"))


def _piece_readings(piece: str) -> tuple[str, ...]:
    if len(piece) == 1:
        return readings(piece)
    combos = {"".join(p) for p in product(*(readings(c) for c in piece[:4]))}
    return tuple(sorted(combos))[:16]


def _prefixes(names: Iterable[str]) -> frozenset[str]:
    return frozenset(n[:k] for n in names for k in range(len(n) + 1))


#: What a digit reads as in a skeleton (``0`` is ``o``, ``1`` is ``l``): a placeholder number.
_DIGIT_READINGS = frozenset("ol23456789")
#: A placeholder family's number in a stored skeleton (``special#``: ``<SPECIAL_123>``).
NUMBER = "#"
#: The mark of a live skeleton in which a stand-in (:func:`is_stand_in`) took the place of a letter:
#: a reading never holds it (controls are read past), so such a state only grows along reserved names.
STOOD_IN = "\x00"
#: The mark of a live skeleton in which letters the eye has no fitting reading for stood in for
#: characters of a reserved envelope name (:func:`is_letter_stand_in`, the letter stand-in rule). Its
#: spelling keeps the separators that a letter took the place of (``_``), so each separator position
#: is taken at most once and the name keeps its length.
LETTERED = "\x01"
#: How a separator a letter stood for is spelled in a :data:`LETTERED` state.
SEPARATOR = "_"


def _spellings(name: str) -> tuple[str, set[str]]:
    """The skeleton of a reserved name and its separator positions (the skeleton prefixes after which the
    name has a character the eye reads past, such as ``_``, with letters both before and after)."""
    skel, seps = "", set()
    for c in name:
        r = char_skeleton(c)
        if not r and skel:
            seps.add(skel)
        skel += r
    seps.discard(skel)
    return skel, seps


def _with_separators(skel: str, seps: set[str]) -> list[str]:
    """Every spelling of ``skel`` with or without :data:`SEPARATOR` at each separator position."""
    out = [""]
    for k, c in enumerate(skel):
        if skel[:k] in seps:
            out = [*out, *(o + SEPARATOR for o in out)]
        out = [o + c for o in out]
    return out


@dataclass(frozen=True)
class Names:
    """What the lookahead looks for, as skeletons: reserved names (a prefix match), ``<NAME>`` tokens
    (whole, then ``>``; a skeleton ending in ``#`` is a placeholder family, any number), namespace
    tokens (``dsml:``, dangerous at the colon), ``[NAME]`` tokens, the tokens escaped exactly as a
    tokenizer matches them (``exact``: not skeletons), the ``<NAME>`` tokens that are plain words
    (``quotable``: not read as a token when quoted with guillemets, :func:`quoted_word`), and whether
    the bar shape with an empty name is a token (``empty_bars``: a team's own ``<|>``; no built-in
    token is, so :func:`empty_bar` is no token otherwise)."""

    reserved: tuple[str, ...]
    tokens: tuple[str, ...]
    pipes: bool = True
    brackets: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    exact: tuple[str, ...] = ()
    quotable: tuple[str, ...] = ()
    empty_bars: bool = False
    #: The reserved names as written (their separator positions: the letter stand-in rule); default ``reserved``.
    spelled: tuple[str, ...] = ()
    #: ``<NAME|>`` tokens (Gemma 4's block closers ``<turn|>``, ``<channel|>``): (the skeleton of the name
    #: before its bar, the token's skeleton). After the name, any bar (a look-alike, a reference, doubled)
    #: and then ``>`` is the token (:func:`_bars_then_closer`; stop 50, a red-team find: ``<turn||>`` and
    #: ``<turn¦>`` passed, read as ``turnll`` and ``turn¦``).
    bar_closed: tuple[tuple[str, str], ...] = ()
    _live: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())
    _blive: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())
    _tokens: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())
    _brackets: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())
    _namespaces: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())
    _quotable: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())
    _exact: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False, hash=False, default_factory=dict)
    _stand: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False, hash=False, default_factory=dict)
    _letter: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False, hash=False, default_factory=dict)
    _hold: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())
    _bar_closed: dict[str, str] = field(init=False, repr=False, compare=False, hash=False, default_factory=dict)
    #: Every whole spelling of a reserved name (the letter stand-in rule's accepting states).
    _spellings: frozenset[str] = field(init=False, repr=False, compare=False, hash=False, default=frozenset())
    #: :meth:`exact_finder`'s regexes by ``chars`` (verify asks for one per body).
    _finders: dict[str | None, re.Pattern[str]] = field(init=False, repr=False, compare=False, hash=False, default_factory=dict)

    def __post_init__(self) -> None:
        reserved_prefixes = _prefixes(self.reserved)
        stood = frozenset(STOOD_IN + p for p in reserved_prefixes if p)
        object.__setattr__(self, "_live", _prefixes((*self.reserved, *self.tokens, *self.namespaces)) | stood)
        # For each reserved prefix, the letters a stand-in may be read as there (code point order).
        stand: dict[str, set[str]] = {}
        for p in reserved_prefixes:
            if p:
                stand.setdefault(p[:-1], set()).add(p[-1])
        object.__setattr__(self, "_stand", {p: tuple(sorted(cs)) for p, cs in stand.items()})
        # The letter stand-in rule: every spelling of a reserved name with or without each separator.
        spellings: set[str] = set()
        holds: set[str] = set()
        for name in self.spelled or self.reserved:
            skel, seps = _spellings(name)
            spellings.update(_with_separators(skel, seps))
            holds |= seps
        lprefixes = _prefixes(spellings)
        letter: dict[str, set[str]] = {}
        for p in lprefixes:
            if p:
                letter.setdefault(p[:-1], set()).add(p[-1])
        object.__setattr__(self, "_letter", {p: tuple(sorted(cs)) for p, cs in letter.items()})
        object.__setattr__(self, "_hold", frozenset(p for p in lprefixes if p in holds or p.endswith(SEPARATOR)))
        object.__setattr__(self, "_spellings", frozenset(spellings))
        object.__setattr__(self, "_live", self._live | frozenset(LETTERED + p for p in lprefixes if p))
        object.__setattr__(self, "_blive", _prefixes(self.brackets))
        object.__setattr__(self, "_tokens", frozenset(self.tokens))
        object.__setattr__(self, "_brackets", frozenset(self.brackets))
        object.__setattr__(self, "_namespaces", frozenset(self.namespaces))
        object.__setattr__(self, "_quotable", frozenset(self.quotable) & self._tokens)
        object.__setattr__(self, "_bar_closed", {stem: tok for stem, tok in self.bar_closed if tok in self._tokens})
        by_first: dict[str, list[str]] = {}
        for tok in self.exact:
            by_first.setdefault(tok[0], []).append(tok[1:])
        exact = {c: tuple(sorted(set(rests), key=lambda r: (-len(r), r))) for c, rests in by_first.items()}
        object.__setattr__(self, "_exact", exact)

    def viable(self, skel: str) -> bool:
        """Could ``skel`` still grow into a reserved name or a token?"""
        return skel in self._live

    def viable_bracket(self, skel: str) -> bool:
        """Could ``skel`` still grow into a ``[NAME]`` token?"""
        return skel in self._blive

    def reserved_match(self, skel: str) -> str | None:
        """The reserved skeleton ``skel`` starts with, if any (a stand-in state's mark aside); for a
        :data:`LETTERED` state the reserved skeleton it spells whole (its separators aside): a whole
        spelling, so a letter standing for the separator before a longer name's rest
        (``retrieved_content_`` of ``retrieved_content_hygiene``) does not make it the shorter name
        (the Russian man page's ``«fork: невозможно выделить память»`` read as one)."""
        if skel.startswith(LETTERED):
            if skel[1:] not in self._spellings:
                return None
            whole = skel[1:].replace(SEPARATOR, "")
            return whole if whole in self.reserved else None
        if skel.startswith(STOOD_IN):
            skel = skel[1:]
        for r in self.reserved:
            if skel.startswith(r):
                return r
        return None

    def exact_starts(self) -> str:
        """The first characters of the exact tokens (the escape points of :func:`exact_after`)."""
        return "".join(sorted(self._exact))

    def escape_starts(self) -> frozenset[str]:
        """Every character an escape point can be (an angle or bracket opener or look-alike, the ``&``
        of a reference, the first character of an exact token): a text holding none has no escape
        point, so :func:`~envelock.eye.escape.defang` and ``undefang`` below ``xml`` leave it as it is."""
        return escape_starts(self.exact_starts())

    def exact_finder(self, chars: str | None = None) -> re.Pattern[str]:
        """A regex whose matches are the places an exact token may start (:func:`exact_tokens` asks
        :func:`exact_after` at each), restricted to tokens whose first character is in ``chars``
        (default: all), so tokens that overlap are all found. A match is one character: a token's first
        character followed (past backslashes, as :func:`exact_after` reads) by a rest of it written
        out, or by the start of that rest up to an ``&`` (the rest may go on in references); or an
        ``&`` that may begin a reference (for the first character). Matches nothing without tokens."""
        found = self._finders.get(chars)
        if found is None:
            starts = self.exact_starts() if chars is None else "".join(c for c in self.exact_starts() if c in chars)
            found = self._finders[chars] = _exact_finder(tuple((c, self._exact[c]) for c in starts))
        return found


@lru_cache(maxsize=64)
def _exact_finder(by_first: tuple[tuple[str, tuple[str, ...]], ...]) -> re.Pattern[str]:
    # Each alternative starts with its first character, consumed, and looks ahead for the rest: the
    # regex engine then skips to the next possible first character in its own loop (a prefix set),
    # which a pattern that starts with a lookahead does not allow (five times slower on [INST] runs).
    alts = [f"{re.escape(c)}(?=\\\\*(?:{exact_rest_pattern(rests)}))" for c, rests in by_first]
    if alts:
        alts.append(_REFERENCE_START)
    return re.compile("|".join(alts) if alts else "(?!)")


def exact_rest_pattern(rests: Iterable[str]) -> str:
    """Alternatives matching where one of ``rests`` may follow an exact token's first piece: the rest
    written out, or its start up to an ``&`` (:func:`exact_after` may read it on through references)."""
    alts = {re.escape(r) for r in rests} | {re.escape(r[:k]) + "&" for r in rests for k in range(len(r))}
    return "|".join(sorted(alts, key=lambda a: (-len(a), a)))


#: Where a character reference may start (``_decode_body``: a name or ``#``).
_REFERENCE_START = "&(?=[#A-Za-z])"


def name_skeleton(name: str) -> str:
    """The stored skeleton of a token name (``SPECIAL_#`` -> ``special#``)."""
    head, hash_, tail = name.partition(NUMBER)
    return skeleton(head) + (NUMBER + skeleton(tail) if hash_ else "")


def _plain_word(name: str) -> bool:
    """Letters and digits only (generated ``ALNUM_RANGES``), none of them structural."""
    return bool(name) and all(is_alnum(c) and c not in _STRUCTURAL for c in name)


@lru_cache(maxsize=1)
def quotable_angle_names() -> tuple[str, ...]:
    """The built-in ``<NAME>`` tokens whose name is a *plain word*, so that a guillemet pair around it
    (``«s»``, ``« PR »``, ``‹AI›``) is a quotation, not the token (:func:`quoted_word`).

    From the token tables, by shape: a name of letters and digits only (no ``_ - | : /``, no
    placeholder number), whose skeleton no other kind of name shares (``TOOLCALL`` folds to
    ``tool_call``, which has a separator: neither is quotable), and that no tokenizer or template
    writes between doubled angles (``<<SYS>>``: ``«`` is a doubled angle, so ``«SYS»`` is that
    token's own shape; :data:`~envelock.eye.tokens.DOUBLED_ANGLE_NAMES`). Everything else (multi-part
    names such as ``start_of_turn``, Gemma 4's ``turn|``, namespaces, placeholder families, every bar
    and bracket shape and every reserved envelope name) is structural and read after a guillemet as
    after ``<``. The native core reads this list from its generated tables.
    """
    structural = {name_skeleton(n) for n in ANGLE_TOKEN_NAMES if not _plain_word(n)}
    structural |= {name_skeleton(p + NUMBER) for p in ANGLE_TOKEN_PATTERNS}
    structural |= {skeleton(n) for n in (*DOUBLED_ANGLE_NAMES, *NAMESPACE_TOKEN_NAMES)}
    return tuple(n for n in ANGLE_TOKEN_NAMES if _plain_word(n) and skeleton(n) not in structural)


def quoted_word(text: str, pos: int, close: int) -> bool:
    """Is the construct from the opener ending at ``pos`` to the closer ending at ``close`` a plain word
    quoted with a guillemet pair: the opener is a raw ``«`` or ``‹`` (:data:`QUOTE_OPENERS`), the closer
    a raw ``»`` or ``›`` (:data:`QUOTE_CLOSERS`; a character reference for either is not a quotation),
    and every character between them a letter or digit that is not structural, whitespace, or ``\\``
    (roff writes ``«\\ s\\ »``; and the defang's own backslash after the opener must not change the
    answer)? Only a :func:`quotable_angle_names` token is read past this way (see :func:`read_after`)."""
    if pos < 1 or close - 1 <= pos or text[pos - 1] not in QUOTE_OPENERS or text[close - 1] not in QUOTE_CLOSERS:
        return False
    return all((is_alnum(c) and c not in _STRUCTURAL) or c == "\\" or is_space(c) for c in text[pos : close - 1])


@lru_cache(maxsize=16)
def escape_starts(exact_starts: str = "") -> frozenset[str]:
    """The angle and bracket openers and look-alikes, ``&``, and ``exact_starts`` (the first characters
    of a set of exact tokens): :meth:`Names.escape_starts` of names whose exact tokens start so."""
    return frozenset(LT_CHARS) | frozenset(LBRACKET_CHARS) | {"&"} | frozenset(exact_starts)


@lru_cache(maxsize=64)
def names_for(reserved: tuple[str, ...] = RESERVED_NAMES, extra: Tokens | None = None) -> Names:
    """Skeleton tables for a set of reserved names, with the built-in chat tokens and ``extra`` ones
    (a team's own tokenizer, :func:`envelock.eye.load_tokens.load_tokens`)."""
    if any(not skeleton(n) for n in reserved):
        raise ValueError("a reserved name has an empty skeleton")
    angle = [*ANGLE_TOKEN_NAMES, *(p + NUMBER for p in ANGLE_TOKEN_PATTERNS)]
    bracket = [*BRACKET_TOKEN_NAMES, *(p + NUMBER for p in BRACKET_TOKEN_PATTERNS)]
    exact = list(EXACT_TOKENS)
    if extra is not None:
        angle += extra.angle
        bracket += extra.bracket
        exact += extra.literal
    skels = tuple(sorted({skeleton(n) for n in reserved}))
    tokens = tuple(sorted({name_skeleton(t) for t in angle} - {""}))
    brackets = tuple(sorted({name_skeleton(t) for t in bracket} - {""}))
    namespaces = tuple(sorted({skeleton(n) + ":" for n in NAMESPACE_TOKEN_NAMES}))
    # A team's own tokens are never read as quotations: their shape is theirs to know.
    own = {name_skeleton(t) for t in extra.angle} if extra is not None else set()
    quotable = tuple(sorted({skeleton(n) for n in quotable_angle_names()} - own))
    # A team's bar token with no name (``<|>``, or ``<|`` itself, which a tokenizer finds inside ``<|>``).
    empty_bars = extra is not None and any(all(can_skip(c) or c in _SLASH for c in classify(t)[1]) for t in extra.bars)
    spelled = tuple(sorted(set(reserved)))
    return Names(
        skels, tokens, True, brackets, namespaces, tuple(sorted(set(exact))), quotable, empty_bars, spelled, bar_closed(angle)
    )


def bar_closed(angle: list[str]) -> tuple[tuple[str, str], ...]:
    """(stem, token) skeletons of the ``<NAME|>`` tokens among ``angle`` (:attr:`Names.bar_closed`): a
    name ending in a bar, whose stem's skeleton is a prefix of the token's (so a live state)."""
    out: set[tuple[str, str]] = set()
    for t in angle:
        if t and t[-1] in _PIPE:
            stem, tok = name_skeleton(t.rstrip(PIPE_CHARS)), name_skeleton(t)
            if stem and tok.startswith(stem) and tok != stem:
                out.add((stem, tok))
    return tuple(sorted(out))


#: The longest legacy (no ``;``) entity name.
_LEGACY_MAX = max(len(n) for n in _HTML5 if not n.endswith(";"))


def _decode_at(text: str, i: int) -> tuple[str, int]:
    """The text at ``i``: one character, or one character reference decoded as ``html.unescape`` would.

    Only the reference itself is consumed: for a legacy reference without ``;``
    (``&LTfoo``, ``&ampx``) that is the longest known entity name, as in
    ``html.unescape``, and the characters after it are read one by one. A
    reference that decodes to ``&`` (``&amp;``, ``&#38;``, ``&AMP``) followed by
    the body of another reference is read as that one too, up to
    :data:`MAX_AMP_LAYERS` layers (``&amp;gt;`` reads as ``>``), as the openers are.
    A numeric reference takes all its digits (any number of leading zeros); the work is
    linear in the characters consumed.
    """
    if text[i] != "&":
        return text[i], i + 1
    found = _decode_body(text, i + 1)
    if found is None:
        return "&", i + 1
    piece, nxt = found
    layers = 0
    while piece == "&" and layers < MAX_AMP_LAYERS and nxt < len(text):
        inner = _decode_body(text, nxt)
        if inner is None:
            break
        piece, nxt = inner
        layers += 1
    return piece, nxt


def _numeric_value(digits: str, hexa: bool) -> str:
    """What ``html.unescape`` gives ``&#digits;`` (``&#xdigits;``), without converting a long run:
    leading zeros are dropped, and more than :data:`_BIG_DIGITS` significant digits is above U+10FFFF."""
    significant = digits.lstrip("0") or "0"
    if len(significant) > _BIG_DIGITS:
        significant = "1" + "0" * _BIG_DIGITS  # above U+10FFFF in both bases: U+FFFD, as html.unescape
    return html.unescape(f"&#{'x' if hexa else ''}{significant};")


def _decode_body(text: str, j: int) -> tuple[str, int] | None:
    """The reference whose body starts at ``j`` (after an ``&``, in the text or from a layer), decoded;
    None when no reference starts there (the ``&`` reads as itself)."""
    m = _REF_BODY_RE.match(text, j)
    if not m:
        return None
    ref = m.group()
    if ref[0] == "#":
        hexa = ref[1] in "xX"
        return _numeric_value(ref[2 if hexa else 1 :].rstrip(";"), hexa), m.end()
    if ref in _HTML5:
        return _HTML5[ref], m.end()
    for k in range(min(len(ref), _LEGACY_MAX), 1, -1):
        if ref[:k] in _HTML5:
            return _HTML5[ref[:k]], j + k
    return None


def reference_run_start(text: str, start: int) -> int:
    """Where a character reference covering ``start`` may begin: ``start`` moved back over the
    characters a reference holds after its ``&`` (:data:`_REF_RUN`), and onto that ``&``. A window
    of the text from there holds the ``&`` of every reference that reaches into it, however long its
    digit runs (the body context uses it to decide whether an opener's reading can reach the end)."""
    k = len(text[:start].rstrip(_REF_RUN))
    return k - 1 if k > 0 and text[k - 1] == "&" else k


def decode_at(text: str, i: int) -> tuple[str, int]:
    """The piece of text at ``i`` as the model's eye reads it (see :func:`_decode_at`)."""
    return _decode_at(text, i)


Kind = Literal["none", "reserved", "token", "bar", "padding"]


@dataclass(frozen=True)
class Reading:
    """What the model's eye sees after one opener.

    ``kind``: ``"none"`` (nothing dangerous), ``"reserved"`` (an envelope name),
    ``"token"`` (a ``<NAME>`` or ``[NAME]`` control token, ``>``/``]`` included),
    ``"bar"`` (a ``<|`` chat-template token opening) or ``"padding"`` (a bound was
    reached while a name could still form: fail closed). ``name`` is the skeleton
    matched; ``slash`` says a slash was read past first (a close tag); ``end`` is
    where the reading stopped in the text.
    """

    kind: Kind
    name: str = ""
    slash: bool = False
    end: int = 0

    def __bool__(self) -> bool:
        return self.kind != "none"

    @property
    def fail_closed(self) -> bool:
        return self.kind == "padding"


_NONE = Reading("none")


Accept = Callable[[str, int], "Reading | None"]


def _lead_piece(piece: str, bang: bool) -> bool:
    """May the lead (before the name) read past ``piece``: every character skippable, a slash, or
    (after an angle opener) ``!``/``?`` or a structural look-alike that is not a bar (``_PASS``)? A
    reference decoding to nothing is skipped too."""
    return all(can_skip(c) or c in _SLASH or (bang and (c in _BANG or (c in _PASS and c not in _PIPE))) for c in piece)


def _angle_parts(piece: str) -> tuple[str, ...]:
    """The readings of a piece in an angle reading: a ``_PASS`` character also reads as nothing
    (``""`` after its own readings), also inside a reference for several code points (``&nGt;`` is
    U+226B U+20D2: read as the two characters are; it ended the reading until stop 42)."""
    if not any(c in _PASS for c in piece[:4]):
        return _piece_readings(piece) if piece else ("",)
    if len(piece) == 1:
        return _pass_readings(piece)
    combos = {"".join(p) for p in product(*(_pass_readings(c) for c in piece[:4]))}
    return tuple(sorted(combos))[:16]


def _pass_readings(c: str) -> tuple[str, ...]:
    rs = readings(c)
    return (*rs, "") if c in _PASS and "" not in rs else rs


def _lead(
    text: str,
    pos: int,
    end: int,
    bang: bool,
    accept: Accept,
    live: frozenset[str],
    slash_box: list[bool],
    stand: dict[str, tuple[str, ...]] | None = None,
    letter: dict[str, tuple[str, ...]] | None = None,
    hold: frozenset[str] | None = None,
) -> tuple[int, int, dict[str, None], Reading | None, str, int]:
    """Phase 1: read past skipped characters, slashes (and ``!``/``?``).

    A character that may also be read as a letter (a mark or symbol with a reading) both continues
    the lead and starts a name: those name states are kept in ``pending``. Returns (index of the
    first piece the lead does not read past, run, pending states, a reading already decided, that
    piece, the index after it); the slash seen is written into ``slash_box``.
    """
    i, run = pos, 0
    pending: dict[str, None] = {}
    n = len(text)
    while True:
        if i >= end:
            done = _NONE if i >= n else Reading("padding", "", slash_box[0], i)
            return i, run, pending, done, "", i
        piece, nxt = _decode_at(text, i)
        if not _lead_piece(piece, bang):
            return i, run, pending, None, piece, nxt
        slash_box[0] = slash_box[0] or any(c in _SLASH for c in piece)
        parts = _angle_parts(piece) if bang else _piece_readings(piece) if piece else ("",)
        advanced = False
        base = {"": None, **pending}
        if pending or any(parts):
            hit, new, advanced = _step(base, parts, nxt, accept, live, None if attaches(piece) else hold)
            if hit is not None:
                return nxt, run, pending, hit, piece, nxt
            new.pop("", None)
            pending = new
        if stand:
            hit, stood = _stand_in(base, piece, nxt, accept, stand)
            if hit is not None:
                return nxt, run, pending, hit, piece, nxt
            for k in stood:
                pending.setdefault(k, None)
        if letter:
            hit, lettered = _letter_in(base, piece, nxt, accept, letter)
            if hit is not None:
                return nxt, run, pending, hit, piece, nxt
            for k in lettered:
                pending.setdefault(k, None)
        i = nxt
        run = _run_after(run, advanced, parts)
        if run >= MAX_RUN:
            return i, run, pending, Reading("padding", "", slash_box[0], i), "", i


def _run_after(run: int, advanced: bool, parts: tuple[str, ...] | list[str]) -> int:
    """The run of characters read past in a row, after a piece with readings ``parts``. It starts
    again only where a name advanced and no reading of the piece reads it past: a mark or symbol with
    a letter reading (``ˠ`` is ``g``, ``y`` or nothing) both starts a name and is read past by the
    readings that skip it, and the run is the longest of any reading's (one shared count, never less
    than a live reading's). Otherwise ``<ˠ`` + 31 blanks was padding for one set of names and not
    for another, which also had a ``g`` name (a fuzzing find)."""
    return 0 if advanced and "" not in parts else run + 1


def read_after(text: str, pos: int, names: Names) -> Reading:
    """The model's-eye reading of the text at ``pos`` (just after an ``<``-opener).

    Reads past everything skippable (whitespace, marks, symbols, punctuation, separators, controls,
    unassigned code points), ``!``, ``?`` and slashes (also written as character references); then a
    bar or look-alike bar opens a chat-template token, and a name whose readings reach a reserved
    name, or equal a ``<NAME>`` token followed by ``>``, or a namespace token (``<dsml:``), is
    dangerous. Namespace prefixes (``ns:retrieved_content``) are read past; the next opener ends
    the reading.
    """
    if quoted_opener(text, pos):
        return _NONE
    n = len(text)
    end = min(n, pos + MAX_LOOKAHEAD)
    slash_box = [False]
    quote = pos > 0 and text[pos - 1] in QUOTE_OPENERS

    def accept(t: str, i: int) -> Reading | None:
        r = names.reserved_match(t)
        if t.startswith(LETTERED):
            # Letters stood in: the whole name, ending there (no letter or digit follows) and mixing them
            # with ASCII (a word written all in another script is that script's word); never a token.
            whole = r is not None and word_ends(text, i) and mixes_ascii(text, name_from[0], i)
            return Reading("reserved", r, slash_box[0], i) if r is not None and whole else None
        if r is not None:
            return Reading("reserved", r, slash_box[0], i)
        if t in names._namespaces:
            return Reading("token", t, slash_box[0], i)
        if t in names._tokens:
            gt = closer_after(text, i, end, _GT)
            if gt >= 0 and not (quote and t in names._quotable and quoted_word(text, pos, gt)):
                return Reading("token", t, slash_box[0], gt)
        if t in names._bar_closed:
            gt = _bars_then_closer(text, i, end)
            if gt >= 0:
                return Reading("token", names._bar_closed[t], slash_box[0], gt)
        return None

    live = names._live
    stand = names._stand
    hold = names._hold
    name_from = [n]
    i, run, pending, done, piece, nxt = _lead(text, pos, end, True, accept, live, slash_box, stand, names._letter, hold)
    if done is not None:
        return done
    name_from[0] = i
    slash = slash_box[0]
    if names.pipes and piece and piece[0] in _PIPE:
        if names.empty_bars or (not empty_bar(text, nxt, end) and bar_closes(text, nxt, end)):
            return Reading("bar", "", slash, nxt)
    # An empty bar (``<|>``, ``«|»``) is no token, nor a bar whose name never closes on its line
    # (``< |f|/10``); the bar is read on like any other character (a letter reading).
    states: dict[str, None] = {"": None, **pending}  # live skeletons, in insertion order (deterministic)
    run = 0
    while True:
        i = nxt
        parts = _angle_parts(piece)
        if not any(parts):
            # A letter stand-in state reads past nothing but at a separator position of its name, or
            # what attaches to its letter.
            if not attaches(piece):
                states = {s: None for s in states if not s.startswith(LETTERED) or s[1:] in hold}
            if not states:
                return _NONE
            hit, stood = _stand_in(states, piece, i, accept, stand)
            if hit is not None:
                return hit
            if stood:
                states = {**states, **stood}
            run += 1
            if run >= MAX_RUN:
                return Reading("padding", "", slash, i)
        else:
            hit, new, advanced = _step(states, parts, i, accept, live, None if attaches(piece) else hold)
            if hit is not None:
                return hit
            hit, lettered = _letter_in(states, piece, i, accept, names._letter)
            if hit is not None:
                return hit
            if lettered:
                new = {**new, **lettered}
                advanced = True
            # A stand-in with readings of its own (a structural look-alike read past, ``_PASS``:
            # ``</retrieved_c\u2019ntent>``) may stand for a letter too, as one that reads as nothing.
            hit, stood = _stand_in(states, piece, i, accept, stand)
            if hit is not None:
                return hit
            if stood:
                new = {**new, **stood}
                advanced = True
            if new:
                states = new
                run = _run_after(run, advanced, parts)
                if run >= MAX_RUN:
                    return Reading("padding", "", slash, i)
            elif any(p.endswith(":") for p in parts):
                # The name died. A namespace prefix (``ns:retrieved_content``) is read past, once per colon.
                states, run = {"": None}, 0
            elif _stops_reading(piece):
                return _NONE
            else:
                after = _after_namespace(text, i, end)
                if after < 0:
                    return _NONE
                states, run, i = {"": None}, 0, after
        if i >= end:
            break
        piece, nxt = _decode_at(text, i)
    # The lookahead budget ran out (or the text ended) while a name was forming.
    return Reading("padding", "", slash, i) if i < n else _NONE


def dangerous_after(text: str, pos: int, names: Names) -> bool:
    """Does the text at ``pos`` (just after an opener) start a dangerous construct? (:func:`read_after` is not none.)"""
    return read_after(text, pos, names).kind != "none"


def read_bracket(text: str, pos: int, names: Names) -> Reading:
    """The reading after a bracket opener (``[``, ``［``, ``⟦``, ``&lsqb;``...): a ``[NAME]`` token, a
    ``[|NAME|]`` bar token, or none.

    The same eye as :func:`read_after`: skipped characters and slashes first, then the name
    through its readings, then a ``]`` or look-alike past skipped characters. A run of
    :data:`MAX_RUN` skipped characters fails closed unless it is plain ASCII whitespace (layout:
    an indented JSON array or code block is not a token).
    """
    n = len(text)
    end = min(n, pos + MAX_LOOKAHEAD)
    slash_box = [False]

    def accept(t: str, i: int) -> Reading | None:
        if t in names._brackets:
            close = closer_after(text, i, end, _RBRACKET)
            if close >= 0:
                return Reading("token", t, slash_box[0], close)
        return None

    live = names._blive
    i, run, pending, done, piece, nxt = _lead(text, pos, end, False, accept, live, slash_box)
    if done is not None and done.kind != "none":
        if done.kind == "padding":
            blank = text[pos : done.end].isascii() and not text[pos : done.end].strip()
            return _NONE if blank else done
        return done
    if done is not None:
        return done
    slash = slash_box[0]
    if piece and piece[0] in _QUOTE_PASS and nxt < end:
        # Quote look-alikes before the bar (``[“|endofturn|”]``, ``[““|endofturn|]``) are read past, as
        # in an angle reading; only there, and only with something beyond ASCII among them (a look-alike,
        # a quote the eye reads past, an invisible character): ``d["INST"]`` and ``["|a|"]`` are code,
        # ``["“|endofturn|]``, ``["˝|endofturn|]`` are not. What the lead reads past is read past too
        # (``[“\u200b|endofturn|]``, ``[“/|endofturn|]``, ``[“"|endofturn|]``: stop 50, red-team finds);
        # MAX_RUN such pieces in a row are padding (fail closed: ``[“`` + 250 ZWSP, ``["`` + 40 ZWSP),
        # unless all plain ASCII (``["`` and a run of blanks is code).
        seen = any(c > "\x7f" for c in piece)
        after, after_end = _decode_at(text, nxt)
        quoted_slash = slash
        passed = 0
        while (not after or after[0] in _QUOTE_PASS or _lead_piece(after, False)) and after_end < end:
            passed += 1
            if passed >= MAX_RUN:
                if seen:
                    return Reading("padding", "", quoted_slash, after_end)
                after = ""
                break
            seen = seen or any(c > "\x7f" for c in after)
            quoted_slash = quoted_slash or any(c in _SLASH for c in after)
            after, after_end = _decode_at(text, after_end)
        if seen and after and after[0] in _PIPE:
            bar = _bracket_bar(text, after_end, end, quoted_slash)
            if bar:
                return bar
    if piece and piece[0] in _PIPE:
        bar = _bracket_bar(text, nxt, end, slash)
        if bar:
            return bar
        # Not ``[|NAME|]``: the bar-shaped character may still be a letter of a name (``[ߊRGS]``).
    states: dict[str, None] = {"": None, **pending}
    run = 0
    while True:
        i = nxt
        parts = _piece_readings(piece) if piece else ("",)
        if not any(parts):
            run += 1
            if run >= MAX_RUN:
                return Reading("padding", "", slash, i)
        else:
            hit, new, advanced = _step(states, parts, i, accept, live)
            if hit is not None:
                return hit
            if not new:
                return _NONE
            states = new
            run = _run_after(run, advanced, parts)
            if run >= MAX_RUN:
                return Reading("padding", "", slash, i)
        if i >= end:
            break
        piece, nxt = _decode_at(text, i)
    return Reading("padding", "", slash, i) if i < n and states else _NONE


def empty_bar(text: str, i: int, end: int) -> bool:
    """After the bar that follows an opener (at ``i``): is the next piece, past fewer than :data:`MAX_RUN`
    skippable characters and slashes, a closer (``>``, a look-alike or a reference to one)? Then the bar
    shape has an empty name (``<|>``, ``« | »``, ``(<=|>=|<|>)``), and no tokenizer has a token spelled so
    (``tests/eye/test_quotation.py`` checks the tables). A quote reads as nothing here as elsewhere in an
    angle reading (``_QUOTE_PASS``: ``'<'|'>'`` in a grammar). Padding too long to follow, the end of the
    lookahead or anything else is not empty: the bar reading stands (fail closed)."""
    run = 0
    while i < end and run < MAX_RUN:
        piece, nxt = _decode_at(text, i)
        # Only what is always read past: a symbol with a letter reading (``_EITHER``: ``ⓣ``, ``ᵗ``)
        # may be a letter of the name (``<|ⓣⓤⓡⓝ>`` is Gemma's ``<|turn>``, a red-team find of stop 49).
        if all(c in _SKIP or c in _SLASH or c in _QUOTE_PASS for c in piece):
            run += 1
            i = nxt
            continue
        return piece[0] in _GT
    return False


#: Line breaks: a bar token's name never holds one. LF and CR only: no tokenizer and no chat template
#: breaks a line at U+2028, U+2029, NEL, VT, FF or the information separators, and code does not lay
#: out a ``< |x|`` with them (stop 50, red-team finds: ``<|im_end\u2028|>``, ``<|im_end\x1c|>`` passed).
_LINE_BREAKS = frozenset("\n\r")


def bar_closes(text: str, i: int, end: int) -> bool:
    """After the bar that follows an opener (at ``i``), does the bar shape close: its name (any
    characters) reaches a closer (``>``, a look-alike or a reference to one: ``<|im_end|>``,
    ``<|turn>``, ``<｜/table>｜``) before a line break, the next opener or the end of the text?
    Every chat-template bar token is ``<|NAME|>`` or ``<|NAME>`` on one line, so a bar that does not
    close there is text (``error < |f|/10**extra + 0.5``, ``x <|y|`` in a regex or a table). A
    bound reached first (:data:`MAX_RUN` skipped characters in a row, the end of the lookahead) is a
    token: fail closed."""
    return bar_close_end(text, i, end) >= 0


def bar_close_end(text: str, i: int, end: int) -> int:
    """:func:`bar_closes` as a position: just after the closer, or where a bound was reached (fail
    closed); ``-1`` when the shape does not close (the scanner's span of ``<|im_end|x>``)."""
    run = 0
    n = len(text)
    while i < end:
        piece, nxt = _decode_at(text, i)
        if not piece or all(can_skip(c) or c in _SLASH for c in piece):
            if piece and piece[0] in _LINE_BREAKS:
                return -1
            run += 1
            if run >= MAX_RUN:
                return nxt
        elif piece[0] in _GT:
            return nxt
        elif piece[0] in _OPENER_CHARS or piece[0] in _LINE_BREAKS:
            return -1
        else:
            run = 0
        i = nxt
    return i if i < n else -1


def _bracket_bar(text: str, i: int, end: int, slash: bool) -> Reading:
    """After ``[`` and a bar: ``NAME|]`` (EXAONE ``[|endofturn|]``, BlueLM ``[|Human|]``): a name of
    letters and digits (skipped characters allowed), a bar, then ``]``. ``[||]`` and ``[| 1; 2 |]``
    (OCaml arrays) are not tokens.

    As in the angle shape (stop 49, a red-team round): bars before the name are read past
    (``[||endofturn|]``); a bar that is a letter (``ⅼ``, ``ǀ``, ``丨``) and does not close is a
    letter of the name (``[|tooⅼ|]``); and more bars and quotes may stand before the ``]``
    (``[|endofturn||]``, ``[|endofturn|"]``: :func:`_bracket_bar_close`)."""
    named = False
    # Quotes read past in the name: ASCII ones count only beside a look-alike (``[|“endofturn”"|]``,
    # ``[|"“endofturn”|]``); with ASCII quotes alone it is code (``[| "a" |]``, an OCaml array).
    curly = plain_quote = False
    while i < end:
        piece, nxt = _decode_at(text, i)
        if piece and piece[0] in _PIPE:
            if named and (curly or not plain_quote):
                close = _bracket_bar_close(text, nxt, end)
                if close >= 0:
                    return Reading("bar", "", slash, close)
            if is_alnum(piece[0]) and piece[0] not in _OPENER_CHARS:
                named = True  # a bar-shaped letter that does not close
            elif named:
                return _NONE
            i = nxt
            continue
        if piece and (is_alnum(piece[0]) or piece[0] in _EITHER) and piece[0] not in _OPENER_CHARS:
            named = True  # a symbol with a letter reading names it too (``[|ⓔⓝⓓⓞⓕⓣⓤⓡⓝ|]``)
        elif all(can_skip(c) or c in _QUOTE_PASS or c in _SLASH for c in piece):
            # A quote (``[|“endofturn|]``) or a slash (``[|/endofturn|]``, stop 50) reads past.
            curly = curly or any(c in _QUOTES for c in piece)
            plain_quote = plain_quote or any(c in _ASCII_QUOTE_CHARS for c in piece)
        else:
            return _NONE
        i = nxt
    return _NONE


def _bracket_bar_close(text: str, i: int, end: int) -> int:
    """:func:`closer_after` for the ``]`` after a bracket bar's closing bar, past more bars (a letter
    drawn as one too: ``[|endofturn|ǀ]``) and quotes; ``i`` when the run is too long to follow (fail
    closed); else -1."""
    run = 0
    while i < end and run < MAX_RUN:
        piece, nxt = _decode_at(text, i)
        if all(can_skip(c) or c in _SLASH or c in _QUOTE_PASS or c in _PIPE for c in piece):
            run += 1
            i = nxt
            continue
        return nxt if piece[0] in _RBRACKET else -1
    return i if i < len(text) and run >= MAX_RUN else -1


def _step(
    states: dict[str, None],
    parts: tuple[str, ...],
    i: int,
    accept: Accept,
    live: frozenset[str],
    hold: frozenset[str] | None = None,
) -> tuple[Reading | None, dict[str, None], bool]:
    """One piece of a forming name, for both readers: extend every live skeleton by every reading of
    the piece (in order); the first that ``accept`` takes is the reading, else the extensions still in
    ``live`` are the new states, and whether one of them came from a non-empty reading (progress).
    A :data:`LETTERED` state takes an empty reading only where its name may have a separator (``hold``).

    A reading made of digits also extends a placeholder family: ``s`` becomes ``s#`` when ``s#`` is
    live (``special`` -> ``special#``), and ``s#`` stays ``s#`` (more digits)."""
    new: dict[str, None] = {}
    advanced = False
    for s in states:
        for p in parts:
            if not p and hold is not None and s.startswith(LETTERED) and s[1:] not in hold:
                continue
            t = s + p
            hit = accept(t, i)
            if hit is not None:
                return hit, new, True
            if t in live:
                new[t] = None
                advanced = advanced or bool(p)
            if p and all(c in _DIGIT_READINGS for c in p):
                d = s if s.endswith(NUMBER) else s + NUMBER
                if d in live:
                    hit = accept(d, i)
                    if hit is not None:
                        return hit, new, True
                    new[d] = None
                    advanced = True
    return None, new, advanced


def _stand_in(
    states: dict[str, None], piece: str, i: int, accept: Accept, stand: dict[str, tuple[str, ...]]
) -> tuple[Reading | None, dict[str, None]]:
    """The stand-in rule, after the piece's own readings: inside a reserved envelope name, one
    character the eye reads past (``piece``, when :func:`is_stand_in`) may also stand for any one
    letter of the name (``</retrieved_c\u00b0ntent>``). Every live state without a stand-in yet
    (in order) grows by each letter a reserved name has there (code point order); the first that
    ``accept`` takes is the reading, else the new states (marked :data:`STOOD_IN`)."""
    new: dict[str, None] = {}
    # One stand-in, or (a reference for two code points: ``&caps;``) one followed by what attaches
    # to it, as the two written out read.
    if not stand or not piece or not is_stand_in(piece[0]) or (len(piece) > 1 and not attaches(piece[1:])):
        return None, new
    for s in states:
        if s.startswith(STOOD_IN):
            continue
        for c in stand.get(s, ()):
            t = STOOD_IN + s + c
            hit = accept(t, i)
            if hit is not None:
                return hit, new
            new[t] = None
    return None, new


def is_letter_stand_in(ch: str) -> bool:
    """May ``ch`` stand for any one character of a reserved envelope name (the letter stand-in rule):
    a letter or number beyond ASCII (generated ``ALNUM_RANGES``) that is not an opener. The eye's
    readings of a letter are what it knows; a letter it has no fitting reading for may be read as
    the letter the name needs there (``</\u042fETRIEVED_CONTENT>``, a fancy-text alphabet)."""
    return len(ch) == 1 and ch >= "\x80" and ch in _ALNUM and ch not in _OPENER_CHARS


def mixes_ascii(text: str, start: int, i: int) -> bool:
    """Does the name from ``start`` up to ``i`` hold a printable ASCII character (not whitespace)?"""
    return any("!" <= c <= "~" for c in text[start:i])


def word_ends(text: str, i: int) -> bool:
    """Does the word end at ``i`` (the end of the text, or no letter or digit there)?"""
    return i >= len(text) or not is_alnum(text[i])


def _letter_in(
    states: dict[str, None], piece: str, i: int, accept: Accept, letter: dict[str, tuple[str, ...]]
) -> tuple[Reading | None, dict[str, None]]:
    """The letter stand-in rule, after the piece's own readings: inside a reserved envelope name a
    letter the eye has no fitting reading for (:func:`is_letter_stand_in`) may stand for any one
    character of the name, a separator position included, any number of times. Every live state
    not marked :data:`STOOD_IN` (in order) grows by each character a spelling of a reserved name has
    there (code point order, the separator ``_`` first); the first that ``accept`` takes is the
    reading, else the new states (marked :data:`LETTERED`)."""
    new: dict[str, None] = {}
    if not letter or not is_letter_stand_in(piece):
        return None, new
    for s in states:
        if s.startswith(STOOD_IN):
            continue
        base = s[1:] if s.startswith(LETTERED) else s
        for c in letter.get(base, ()):
            t = LETTERED + base + c
            hit = accept(t, i)
            if hit is not None:
                return hit, new
            new[t] = None
    return None, new


def _stops_reading(piece: str) -> bool:
    """Does a piece that ends the name also end the reading? Anything but a letter or digit
    does (a structural character, ASCII punctuation, the next opener, which is read on its own); so
    a reading never runs past the next opener and the work per opener is bounded by the text up to it."""
    return not piece or piece[0] in _OPENER_CHARS or not is_alnum(piece[0])


def _after_namespace(text: str, i: int, end: int) -> int:
    """If a name prefix continues from ``i`` and ends in a colon, the index after the colon; else -1.
    The prefix holds letters, digits, separators and skipped characters (at most :data:`MAX_RUN`)."""
    k = i
    while k < end and k - i < MAX_RUN:
        c = text[k]
        if not ((is_alnum(c) and c not in _OPENER_CHARS) or c in _SEPARATORS or c in _SKIP):
            break
        k += 1
    return k + 1 if k < end and ":" in readings(text[k]) else -1


def closer_after(text: str, i: int, end: int, closers: frozenset[str] | str) -> int:
    """End of the closer (``>``/``]``, a look-alike or a reference to one) that follows ``i`` past
    skippable characters and slashes; ``i`` itself when the run is too long to follow (fail closed); else -1."""
    run = 0
    while i < end and run < MAX_RUN:
        piece, nxt = _decode_at(text, i)
        if all(can_skip(c) or c in _SLASH for c in piece):
            run += 1
            i = nxt
            continue
        return nxt if piece[0] in closers else -1
    return i if i < len(text) and run >= MAX_RUN else -1


def _bars_then_closer(text: str, i: int, end: int) -> int:
    """After a ``<NAME|>`` token's name (at ``i``): a bar (a look-alike or a reference), then ``>`` past
    more bars, quotes, slashes and skippable characters (as after a bar token's closing bar:
    ``<turn||>``, ``<turn&#124;'>``); skippable characters and slashes may stand before the bar too
    (``<turn │ >``). ``i`` when that run is too long to follow after a bar (fail closed); else -1."""
    run = 0
    bar = False
    while i < end and run < MAX_RUN:
        piece, nxt = _decode_at(text, i)
        if piece and piece[0] in _PIPE:
            bar = True
        elif not all(can_skip(c) or c in _SLASH or (bar and c in _QUOTE_PASS) for c in piece):
            return nxt if bar and piece[0] in _GT else -1
        run += 1
        i = nxt
    return i if bar and i < len(text) and run >= MAX_RUN else -1


def exact_after(text: str, i: int, names: Names) -> int:
    """The end of an exact token (``<NAME>``, ``>>TITLE<<``, ``]~b]``...) whose first character is at
    ``i``, past any backslashes after that character (so the escape ``\\`` does not change the
    answer); -1 when none starts there. Tokenizers match these exactly, so the match is exact; the
    eye reads a character reference as its character here as everywhere (``&gt;&gt;TITLE&lt;&lt;``,
    ``]~b&#93;``, ``&lt;NAME>``: :func:`_decode_at`), so a token written with references counts too.
    The first character is one piece (a character or a reference for exactly that character)."""
    if i >= len(text):
        return -1
    first, j = _decode_at(text, i)
    rests = names._exact.get(first)
    if not rests:
        return -1
    n = len(text)
    while j < n and text[j] == "\\":
        j += 1
    nxt = text[j : j + 1]
    # The first ``&`` within the longest rest's length (rests come longest first), and the piece it
    # begins, each found once: a rest is read through references only from there, after the
    # characters before it written out (the core asks in the same order, ``reader::exact_rest``).
    amp, at_amp = -2, ("", 0)
    for rest in rests:
        # A rest begins as it is written, or with a reference: else its first piece is another character.
        if rest and rest[:1] != nxt and nxt != "&":
            continue
        if text.startswith(rest, j):
            return j + len(rest)
        if amp == -2:
            amp = text.find("&", j, j + len(rests[0]))
            at_amp = _decode_at(text, amp) if amp >= 0 else ("", 0)
        k = amp - j
        piece, after = at_amp
        if 0 <= k < len(rest) and piece and text.startswith(rest[:k], j) and rest.startswith(piece, k):
            end = _reads_as(text, after, rest[k + len(piece) :])
            if end >= 0:
                return end
    return -1


def _reads_as(text: str, j: int, rest: str) -> int:
    """Where the text from ``j`` ends that reads (:func:`_decode_at`, piece by piece) as ``rest``
    exactly; -1 when it does not (a piece that runs past the rest does not)."""
    k, n = 0, len(text)
    while k < len(rest):
        if j >= n:
            return -1
        piece, j = _decode_at(text, j)
        if not piece or not rest.startswith(piece, k):
            return -1
        k += len(piece)
    return j


def exact_tokens(text: str, names: Names) -> list[tuple[int, int]]:
    """``(start, end)`` of every exact token of ``text``, written out or with references, in order
    (tokens that overlap are all found): :func:`exact_after` at every place :meth:`Names.exact_finder`
    finds. The reference of ``_native.exact_tokens``."""
    if not names._exact:
        return []
    found = ((m.start(), exact_after(text, m.start(), names)) for m in names.exact_finder().finditer(text))
    return [(s, e) for s, e in found if e >= 0]


def exact_token_read(text: str, start: int, end: int) -> tuple[str, int]:
    """The exact token from ``start`` to ``end`` (:func:`exact_tokens`) as the eye reads it (its
    references decoded, the backslashes after its first piece left out), and the end of that piece."""
    first, j = _decode_at(text, start)
    after = j
    while j < end and text[j] == "\\":
        j += 1
    parts = [first]
    while j < end:
        piece, j = _decode_at(text, j)
        parts.append(piece)
    return "".join(parts), after


def first_piece_end(text: str, i: int) -> int:
    """Where the first piece at ``i`` (a character, or a reference: :func:`_decode_at`) ends: where an
    exact token's escape goes."""
    return _decode_at(text, i)[1]


def exact_escaped(text: str, start: int) -> bool:
    """Is the exact token at ``start`` escaped (a ``\\`` right after its first piece)?"""
    end = first_piece_end(text, start)
    return text[end : end + 1] == "\\"


def reserved_tag_count(text: str, names: Names | None = None) -> int:
    """How many envelope tags (open or close, reserved names only) a model's eye sees.

    Counts openers not followed by ``\\`` whose lookahead reaches a reserved
    name. Chat tokens are not counted (see :func:`read_after`).
    """
    names = names or names_for()
    only_reserved = Names(names.reserved, (), pipes=False, spelled=names.spelled)
    count = 0
    for m in OPENER_RE.finditer(text):
        end = m.end()
        if end < len(text) and text[end] == "\\":
            continue
        if dangerous_after(text, end, only_reserved):
            count += 1
    return count


def visible(text: str) -> str:
    """``text`` with invisible, control and ignorable characters shown as ``U+XXXX``."""
    if text.isascii() and text.isprintable():
        return text  # nothing to show: every ignorable is beyond ASCII (a report's snippet, usually)
    return "".join(c if (c.isprintable() and c not in _IGNORABLE) or c == " " else f"U+{ord(c):04X}" for c in text)
