"""Invisible and control characters: TAG smuggling, bidi controls, hidden runs, controls."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence

from ..eye import backend
from ..eye.charsets import (
    BIDI_EMBEDDING_CONTROLS,
    BIDI_MARKS,
    BYTE_ORDER_MARK,
    C1_CONTROLS,
    CANCEL_TAG,
    GRAPHEME_JOINER,
    HANGUL_FILLERS,
    JOINERS,
    JOINING_SCRIPTS,
    MONGOLIAN_VARIATION_SELECTORS,
    SNEAKY_BITS,
    SOFT_HYPHEN,
    TAG_CHARACTERS,
    TAG_SPEC_CHARACTERS,
    VARIATION_SELECTORS,
    WORD_BOUNDARY_INVISIBLES,
    XML_IMPOSSIBLE,
    char_class,
    in_ranges,
)
from ..eye.reader import (
    visible,
)
from ..eye.unicode_tables import (
    ALNUM_RANGES,
    DEFAULT_IGNORABLE_RANGES,
    HANGUL_RANGES,
    HEBREW_RANGES,
    INTERLEAVE_RANGES,
    MARK_RANGES,
    RGI_EMOJI_TAG_SEQUENCES,
)
from ._base import Context, Rule, _in, _Raw
from .tags import _first_danger

# The rules this module reports (collected by envelock.scan.rules).

TAG_SMUGGLING = Rule(
    "tag-smuggling",
    "Unicode TAG characters (ASCII smuggling)",
    (
        "Characters U+E0000..U+E007F mirror ASCII invisibly; some models read them. The message shows the "
        "hidden ASCII. Error when the hidden text is itself an envelope tag or control token. RGI emoji flag "
        "sequences (England, Scotland, Wales) are not reported; other well-formed emoji tag sequences are a "
        "note."
    ),
    "warning",
    6.5,
    "hidden",
)

BIDI_CONTROL = Rule(
    "bidi-control",
    "Bidirectional override/embedding/isolate control",
    (
        "U+202A..U+202E and U+2066..U+2069 reorder how text is displayed (Trojan Source, CVE-2021-42574), so "
        "a reviewer sees something other than what the model reads. The marks LRM/RLM/ALM are not reported."
    ),
    "warning",
    5.0,
    "hidden",
)

INVISIBLE_IN_WORD = Rule(
    "invisible-in-word",
    "Invisible character inside a word",
    (
        "A default-ignorable character (zero-width space, word joiner, invisible operator, filler, ...) sits "
        "between two letters or digits, where it can split a keyword for filters while a model still reads "
        "the word. Not reported: ZWJ/ZWNJ in scripts that use them (Arabic/Persian, Syriac, Indic, Sinhala, "
        "Myanmar, Khmer, Mongolian, Tibetan), ZWSP/WJ in scripts written without spaces (Thai, Lao, Khmer, "
        "Myanmar, CJK), a single variation selector (a variation sequence), CGJ in Hebrew, Hangul fillers in "
        "Hangul, emoji ZWJ sequences, LRM/RLM/ALM. A soft hyphen inside a word is a note."
    ),
    "warning",
    4.0,
    "hidden",
)

INVISIBLE_RUN = Rule(
    "invisible-run",
    "Run of invisible characters (hidden payload)",
    (
        "Four or more default-ignorable characters in a row carry data no reader sees: variation-selector "
        "byte smuggling, 'Sneaky Bits' (U+2062/U+2064 as binary), or padding. The message shows the decoded "
        "text when it decodes. Error when the decoded text is an envelope tag or control token."
    ),
    "warning",
    6.0,
    "hidden",
)

CONTROL_CHARACTER = Rule(
    "control-character",
    "C0/C1 control character or lone surrogate",
    (
        "Control characters other than TAB, LF, CR and FF (ESC sequences that hide text in terminals, NUL, "
        "backspace, NEL) and unpaired surrogates have no place in retrieved prose. compose_preface replaces "
        "them with U+FFFD."
    ),
    "warning",
    4.0,
    "hidden",
)

RULES: tuple[Rule, ...] = (
    TAG_SMUGGLING,
    BIDI_CONTROL,
    INVISIBLE_IN_WORD,
    INVISIBLE_RUN,
    CONTROL_CHARACTER,
)

_BIDI_CLASS = char_class(BIDI_EMBEDDING_CONTROLS)
((_TAG_LO, _TAG_HI),) = TAG_CHARACTERS


def _ignorables_without_tag_bidi_marks() -> tuple[tuple[int, int], ...]:
    skip = {cp for lo, hi in (*BIDI_EMBEDDING_CONTROLS, *TAG_CHARACTERS) for cp in range(lo, hi + 1)}
    skip |= set(BIDI_MARKS)
    parts: list[tuple[int, int]] = []
    for lo, hi in DEFAULT_IGNORABLE_RANGES:
        start: int | None = None
        for cp in range(lo, hi + 2):
            inside = cp <= hi and cp not in skip
            if inside and start is None:
                start = cp
            elif not inside and start is not None:
                parts.append((start, cp - 1))
                start = None
    return tuple(parts)


_HIDDEN_RANGES = _ignorables_without_tag_bidi_marks()
_HIDDEN_CLASS = char_class(_HIDDEN_RANGES)
#: The shortest run reported on its own (``_LONG_RUN_RE``'s matches: the maximal runs this long).
_LONG_RUN = 4
_LONG_RUN_RE = re.compile(f"[{_HIDDEN_CLASS}]{{{_LONG_RUN},}}")
_ANY_RUN_RE = re.compile(f"[{_HIDDEN_CLASS}]+")
_SHORT_RUN_RE = re.compile(f"[{_HIDDEN_CLASS}]{{1,3}}")
#: A letter, digit or mark (generated tables): what a word is made of.
_WORD_RANGES = (*ALNUM_RANGES, *MARK_RANGES)
_WORD_CLASS = char_class(_WORD_RANGES)
#: A word holding invisible runs of at most three characters: a word character, then (run, word
#: character) once or more. Found in one regex pass, so a long such word is one match. The repetition
#: ends the pattern, so making it possessive (Python 3.11's ``++``) changes no match: a greedy loop
#: that nothing follows never backtracks into an earlier iteration. It spares ``re`` a backtracking
#: record per iteration, which made a 2 MB word of ``a`` + U+200B cost 0.35 s instead of 0.02 s.
_IN_WORD_PATTERN = f"[{_WORD_CLASS}](?:[{_HIDDEN_CLASS}]{{1,3}}[{_WORD_CLASS}])" + ("++" if sys.version_info >= (3, 11) else "+")
#: Compiled on first use (:func:`_in_word_re`; the module's ``__getattr__`` for a reader from outside):
#: compiling its classes of every letter was 13 ms of each import, a worker's or a CLI run's start, and
#: only the Python reference (:func:`_python_words`) matches with it.
_IN_WORD_RE: re.Pattern[str]


def _in_word_re() -> re.Pattern[str]:
    """``_IN_WORD_RE``, compiled once (a test may have set it)."""
    found: re.Pattern[str] | None = globals().get("_IN_WORD_RE")
    if found is None:
        found = globals()["_IN_WORD_RE"] = re.compile(_IN_WORD_PATTERN)
    return found


def __getattr__(name: str) -> re.Pattern[str]:
    if name == "_IN_WORD_RE":
        return _in_word_re()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_JOINERS = frozenset(map(chr, JOINERS))
_WORD_BOUNDARY = frozenset(map(chr, WORD_BOUNDARY_INVISIBLES))
_HANGUL_FILLERS = frozenset(map(chr, HANGUL_FILLERS))
_CGJ, _SHY, _BOM = chr(GRAPHEME_JOINER), chr(SOFT_HYPHEN), chr(BYTE_ORDER_MARK)
#: A character that may make an invisible one legitimate next to it (a joining, no-space, Hebrew or
#: Hangul letter, a variation selector, CGJ, a soft hyphen): such a word is read run by run.
_LEGITIMATE_NEXT_TO = (
    JOINING_SCRIPTS,
    INTERLEAVE_RANGES,
    HEBREW_RANGES,
    HANGUL_RANGES,
    VARIATION_SELECTORS,
    MONGOLIAN_VARIATION_SELECTORS,
)
_MAY_BE_LEGITIMATE_RE = re.compile(f"[{char_class(*_LEGITIMATE_NEXT_TO)}{re.escape(_CGJ)}{re.escape(_SHY)}]")
_TAG_RUN_RE = re.compile(f"[{char_class(TAG_CHARACTERS)}]+")
_BIDI_RUN_RE = re.compile(f"[{_BIDI_CLASS}]+")
#: XML-impossible characters (except FORM FEED, a page break in text files) and C1 controls.
_NO_FORM_FEED = tuple((lo, 0x0B) if (lo, hi) == (0x0B, 0x0C) else (lo, hi) for lo, hi in XML_IMPOSSIBLE)
_CONTROL_RANGES = (*_NO_FORM_FEED, *C1_CONTROLS)
_CONTROL_RUN_RE = re.compile(f"[{char_class(_CONTROL_RANGES)}]+")
_RGI_TAG_SEQUENCES = frozenset(RGI_EMOJI_TAG_SEQUENCES)
_BLACK_FLAG = "\U0001f3f4"
_WELL_FORMED_TAG_SPEC_RE = re.compile(f"[{char_class(TAG_SPEC_CHARACTERS)}]{{1,32}}{re.escape(chr(CANCEL_TAG))}")


_ASCII = "".join(map(chr, range(128)))
#: No ASCII character is a TAG character, a bidi control or a default-ignorable one (checked here,
#: from the generated tables): on ASCII text (``str.isascii`` is one fast pass) those passes find nothing.
_NONE_IN_ASCII = not any(rx.search(_ASCII) for rx in (_TAG_RUN_RE, _BIDI_RUN_RE, _ANY_RUN_RE))
#: Whether an ASCII character can make an invisible one legitimate (none does; checked from the tables).
_LEGITIMATE_IN_ASCII = _MAY_BE_LEGITIMATE_RE.search(_ASCII) is not None


#: The character classes of this module's passes, in :func:`_present`'s order: every match of a pass
#: holds a character of its class (TAG runs; bidi runs; invisible runs and words with invisible runs;
#: control runs), so where the class does not occur the pass finds nothing.
_CLASSES = [list(TAG_CHARACTERS), list(BIDI_EMBEDDING_CONTROLS), list(_HIDDEN_RANGES), list(_CONTROL_RANGES)]
_TAGS, _BIDI, _HIDDEN, _CONTROLS = range(4)


def _present(text: str, ctx: Context, which: int) -> bool:
    """May a character of class ``which`` occur in ``text``? One native pass finds all four classes,
    once per scan (kept in ``ctx``); without the native core, or for text it cannot read, every
    class may occur and each pass runs as before."""
    seen = ctx.memo.get("hidden-classes")
    if seen is None or seen[0] is not text:  # kept for this very text only
        seen = ctx.memo["hidden-classes"] = (text, tuple(backend.native_classes_present(text, _CLASSES) or (True,) * 4))
    return bool(seen[1][which])


def _is_variation_selector(ch: str) -> bool:
    return in_ranges(VARIATION_SELECTORS, ch) or in_ranges(MONGOLIAN_VARIATION_SELECTORS, ch)


def _decode_tag_chars(run: str) -> str:
    out: list[str] = []
    for c in run:
        v = ord(c) - _TAG_LO
        out.append(chr(v) if 0x20 <= v < 0x7F or v in (0x09, 0x0A, 0x0D) else f"U+{ord(c):04X}")
    return "".join(out)


def _scan_tags(text: str, ctx: Context, out: list[_Raw]) -> None:
    if (_NONE_IN_ASCII and text.isascii()) or not _present(text, ctx, _TAGS):
        return
    for s, e in _runs(text, TAG_CHARACTERS, _TAG_RUN_RE):
        run = text[s:e]
        if s > 0 and text[s - 1] == _BLACK_FLAG:
            if text[s - 1 : e] in _RGI_TAG_SEQUENCES:
                continue
            if _WELL_FORMED_TAG_SPEC_RE.fullmatch(run):
                out.append(_Raw(TAG_SMUGGLING.id, "note", f"emoji tag sequence {_decode_tag_chars(run)!r} is not RGI", s - 1, e))
                continue
        hidden = _decode_tag_chars(run)
        danger = _first_danger(hidden, ctx)
        shown = visible(hidden[:160]) + ("…" if len(hidden) > 160 else "")
        if danger:
            out.append(_Raw(TAG_SMUGGLING.id, "error", f"TAG characters hide {danger!r}: {shown!r}", s, e))
        else:
            out.append(_Raw(TAG_SMUGGLING.id, "warning", f"TAG characters hide ASCII text: {shown!r}", s, e))


def _scan_bidi(text: str, ctx: Context, out: list[_Raw]) -> None:
    if (_NONE_IN_ASCII and text.isascii()) or not _present(text, ctx, _BIDI):
        return
    for s, e in _runs(text, BIDI_EMBEDDING_CONTROLS, _BIDI_RUN_RE):
        cps = " ".join(f"U+{ord(c):04X}" for c in text[s : min(e, s + 8)])
        out.append(_Raw(BIDI_CONTROL.id, "warning", f"bidirectional control {cps} reorders displayed text", s, e))


def _decode_hidden(run: str) -> str | None:
    """Decode variation-selector bytes or Sneaky Bits; ``None`` when the run is neither."""
    if all(in_ranges(VARIATION_SELECTORS, c) for c in run):
        data = bytes(ord(c) - 0xFE00 if ord(c) <= 0xFE0F else ord(c) - 0xE0100 + 16 for c in run)
        return data.decode("utf-8", "replace")
    zero, one = map(chr, SNEAKY_BITS)
    bits = [c for c in run if c in (zero, one)]
    if len(bits) >= 8 and all(c in (zero, one, "\u200b") for c in run):
        # Sneaky Bits: INVISIBLE TIMES = 0, INVISIBLE PLUS = 1, ZWSP = space.
        words = run.split("\u200b")
        chars: list[str] = []
        for w in words:
            bitstr = "".join("1" if c == one else "0" for c in w)
            chars.extend(chr(int(bitstr[k : k + 8], 2)) for k in range(0, len(bitstr) - 7, 8))
            chars.append(" ")
        return "".join(chars).rstrip(" ")
    return None


def _scan_hidden(text: str, ctx: Context, out: list[_Raw]) -> None:
    if (_NONE_IN_ASCII and text.isascii()) or not _present(text, ctx, _HIDDEN):
        return
    runs = _native_runs(text, _HIDDEN_RANGES)
    long_runs = [r for r in runs if r[1] - r[0] >= _LONG_RUN] if runs is not None else _long_runs(text)
    for s, e in long_runs:
        run = text[s:e]
        decoded = _decode_hidden(run)
        if decoded is not None:
            danger = _first_danger(decoded, ctx)
            shown = visible(decoded[:160])
            if danger:
                msg = f"{len(run)} invisible characters hide {danger!r}: {shown!r}"
                out.append(_Raw(INVISIBLE_RUN.id, "error", msg, s, e))
            else:
                out.append(_Raw(INVISIBLE_RUN.id, "warning", f"{len(run)} invisible characters hide text: {shown!r}", s, e))
        else:
            out.append(_Raw(INVISIBLE_RUN.id, "warning", f"run of {len(run)} invisible characters", s, e))
    for start, end in _words_with_invisibles(text, runs):
        word = text[start:end]
        parts = _invisibles_of(word)
        if parts is None:
            # Many kinds of invisible character: the word is read character by character.
            if _MAY_BE_LEGITIMATE_RE.search(word):
                _runs_in_word(text, start, end, out)
                continue
            count = _SHORT_RUN_RE.subn("", word)[1]
            kinds = sorted(c for c in set(word) if _SHORT_RUN_RE.fullmatch(c))
        else:
            kinds, rest = parts
            in_rest = (_LEGITIMATE_IN_ASCII or not rest.isascii()) and _MAY_BE_LEGITIMATE_RE.search(rest) is not None
            if in_rest or any(_MAY_BE_LEGITIMATE_RE.match(c) for c in kinds):
                _runs_in_word(text, start, end, out)
                continue
            count = _count_runs(word, kinds)
        # No script or character that makes an invisible character legitimate: every run of the word
        # is reported, as one finding (a word of 10,000 letters joined by U+200B is one word).
        if count == 1:
            found = _SHORT_RUN_RE.search(word)
            assert found is not None
            msg = f"invisible {' '.join(f'U+{ord(c):04X}' for c in found.group())} inside a word"
        else:
            msg = f"{count} invisible runs ({' '.join(f'U+{ord(c):04X}' for c in kinds[:8])}) inside a word"
        out.append(_Raw(INVISIBLE_IN_WORD.id, "warning", msg, start + 1, end - 1))


#: Most kinds of invisible character :func:`_invisibles_of` takes out of a word one by one (one
#: ``str.replace`` over the word each, so a word costs at most this many passes).
_MAX_KINDS = 8


def _invisibles_of(word: str) -> tuple[list[str], str] | None:
    """The invisible characters of a word (sorted, distinct) and the word without them, or ``None``
    when it holds more than :data:`_MAX_KINDS` kinds. Each kind is found by a search and removed by
    ``str.replace`` (C loops over the word), not by a Python step per character: a 2 MB word of
    letters joined by U+200B holds one kind. ``str.isascii`` is constant time, and no invisible
    character is ASCII (``_NONE_IN_ASCII``), so an ASCII rest holds no more of them."""
    kinds: list[str] = []
    rest = word
    while not (_NONE_IN_ASCII and rest.isascii()):
        run = _ANY_RUN_RE.search(rest)
        if run is None:
            break
        if len(kinds) == _MAX_KINDS:
            return None
        kinds.append(run.group()[0])
        rest = rest.replace(kinds[-1], "")
    return sorted(kinds), rest


def _count_runs(word: str, kinds: list[str]) -> int:
    """The runs of invisible characters in a word of :func:`_words_with_invisibles` (each of one to
    three characters, between two word characters), counted with ``str.count``: every kind written as
    the first, a run of ``L`` of them holds ``L`` characters, ``L // 2`` pairs and ``L // 3`` triples
    (non-overlapping counts, and no pair or triple spans two runs), and ``L - L // 2 - L // 3`` is 1
    for ``L`` of 1, 2 and 3."""
    one = kinds[0]
    for other in kinds[1:]:
        word = word.replace(other, one)
    return word.count(one) - word.count(one * 2) - word.count(one * 3)


#: The native walk gives the runs where there is at most one in this many characters; denser runs
#: (a word of letters joined by U+200B: a run every second character) cost more as a list of spans
#: than the regexes' own loops (the benchmark's ``scan-zwsp`` class).
_NATIVE_RUNS_EVERY = 64


def _native_runs(text: str, ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """The maximal runs of characters in ``ranges`` in one native walk (``_native.class_runs``), or
    ``None`` where runs are dense or the core is not in use: the caller then runs its regex. (A
    ``[class]+`` regex over the whole text took 2 to 3.6 times a whole scan's time on source with
    one U+200B, U+202E or TAG character.)"""
    return backend.native_class_runs(text, ranges, len(text) // _NATIVE_RUNS_EVERY + 16)


def _long_runs(text: str) -> list[tuple[int, int]]:
    """The runs of :data:`_LONG_RUN` or more invisible characters where the runs of any length are too
    dense for a list of them (a word of letters joined by U+200B): in one native walk (at most one in
    ``_LONG_RUN`` characters, so no limit), else ``_LONG_RUN_RE``, whose search tries every short run."""
    runs = backend.native_class_runs(text, _HIDDEN_RANGES, None, _LONG_RUN)
    return runs if runs is not None else [m.span() for m in _LONG_RUN_RE.finditer(text)]


def _runs(text: str, ranges: Sequence[tuple[int, int]], regex: re.Pattern[str]) -> list[tuple[int, int]]:
    """The maximal runs of characters in ``ranges`` (``regex``, a ``[class]+`` of the same ranges, finds
    the same): :func:`_native_runs`, else the regex."""
    runs = _native_runs(text, ranges)
    return runs if runs is not None else [m.span() for m in regex.finditer(text)]


def _words_with_invisibles(text: str, runs: Iterable[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    """The spans of every word holding short invisible runs (``_IN_WORD_RE`` at the character before
    a run that is not inside the word before): in one native walk (``_native.words_with_runs``; a run
    with no word character before it then costs one look, not a regex search and match: the
    benchmark's ``adv-ignorables``), else :func:`_python_words`."""
    found = backend.native_words_with_runs(text, _HIDDEN_RANGES, _WORD_RANGES)
    return found if found is not None else _python_words(text, runs)


def _python_words(text: str, runs: Iterable[tuple[int, int]] | None = None) -> list[tuple[int, int]]:
    """:func:`_words_with_invisibles` in Python, its reference: found from the invisible runs (rare)
    rather than from every letter: the next run, then the word around it, then on after that word.
    ``runs``: the maximal runs (:func:`_native_runs`), else each is searched for from the end of the
    word before (a word ends with a letter, so the first run at or after its end is a whole one: the
    runs of ``runs`` a search from there would find)."""
    out: list[tuple[int, int]] = []
    pos = 0
    if runs is not None:
        for start, _ in runs:
            if start < pos:
                continue  # inside the word before
            word = _in_word_re().match(text, start - 1) if start > 0 else None
            if word is not None:
                out.append(word.span())
                pos = word.end()
        return out
    while True:
        run = _ANY_RUN_RE.search(text, pos)
        if run is None:
            return out
        word = _in_word_re().match(text, run.start() - 1) if run.start() > 0 else None
        if word is None:
            pos = run.end()
        else:
            out.append(word.span())
            pos = word.end()


def _runs_in_word(text: str, start: int, end: int, out: list[_Raw]) -> None:
    """The runs of a word one by one, with the exceptions that make an invisible character legitimate."""
    for m in _SHORT_RUN_RE.finditer(text, start, end):
        s, e = m.start(), m.end()
        run = m.group()
        if s == 0 and run == _BOM:
            continue
        # A variation selector is a mark, so it can end a word and its run: at the end of the text
        # nothing follows (a space stands for that: no script makes the run legitimate).
        prev, nxt = text[s - 1], (text[e] if e < len(text) else " ")
        kinds = set(run)
        if kinds <= _JOINERS and (_in(JOINING_SCRIPTS, prev) or _in(JOINING_SCRIPTS, nxt)):
            continue
        if kinds <= _WORD_BOUNDARY and (_in(INTERLEAVE_RANGES, prev) or _in(INTERLEAVE_RANGES, nxt)):
            continue
        if len(run) == 1 and _is_variation_selector(run):
            continue
        if kinds == {_CGJ} and (_in(HEBREW_RANGES, prev) or _in(HEBREW_RANGES, nxt)):
            continue
        if kinds <= _HANGUL_FILLERS and (_in(HANGUL_RANGES, prev) or _in(HANGUL_RANGES, nxt)):
            continue
        cps = " ".join(f"U+{ord(c):04X}" for c in run)
        if kinds == {_SHY}:
            out.append(_Raw(INVISIBLE_IN_WORD.id, "note", f"soft hyphen {cps} inside a word", s, e))
        else:
            out.append(_Raw(INVISIBLE_IN_WORD.id, "warning", f"invisible {cps} inside a word", s, e))


def _scan_controls(text: str, ctx: Context, out: list[_Raw]) -> None:
    if not _present(text, ctx, _CONTROLS):
        return
    for s, e in _runs(text, _CONTROL_RANGES, _CONTROL_RUN_RE):
        cps = " ".join(f"U+{ord(c):04X}" for c in text[s : min(e, s + 8)])
        first = text[s]
        what = (
            "lone surrogate"
            if "\ud800" <= first <= "\udfff"
            else "noncharacter"
            if first in "\ufffe\uffff"
            else "control character"
        )
        out.append(_Raw(CONTROL_CHARACTER.id, "warning", f"{what} {cps}", s, e))
