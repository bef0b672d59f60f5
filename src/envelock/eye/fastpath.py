"""The fast defang: generated regexes over the model's-eye tables; equal to :mod:`envelock._reference`.

The reference (:mod:`envelock._reference`) makes one Python reading per opener.
This implementation decides the common cases in C with two generated regexes
over the same trie of name skeletons:

* ``danger``: openers whose lookahead certainly reads as dangerous (every step
  of the match is a step :func:`envelock.modeleye.read_after` takes, on
  characters whose behaviour was computed from the model's-eye functions);
* ``unsure``: openers whose lookahead reaches something the trie does not model
  (a character reference other than ``&lt;``-forms, a non-ASCII character, a
  possible namespace prefix, a long skip run) at a point where a name could
  still form. Only these get the reference check.

An opener matched by neither is certainly safe. tests/test_fast_defang.py holds
it equal to the reference (hypothesis), and every core test runs over both
(``tests/conftest.py``, fixture ``impl``). Needs Python 3.11 (possessive
quantifiers); :data:`AVAILABLE` says whether it can run.
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache

from . import reader as _me
from . import reference as _reference
from .charsets import char_class, ranges_of, regex_class, regex_class_or_nonascii
from .levels import Level, xml_escape_text
from .load_tokens import Tokens
from .reader import (
    BRACKET_OPENER_PATTERN,
    MAX_LOOKAHEAD,
    MAX_RUN,
    NUMBER,
    OPENER_PATTERN,
    Names,
    atomic_opener,
    exact_rest_pattern,
    is_alpha,
    is_space,
    may_hold_opener,
    names_for,
    readings,
)
from .reference import insert_after, undefang
from .tokens import RESERVED_NAMES
from .unicode_tables import SKIP_RANGES

NAME = "fast"
#: The fast path uses possessive quantifiers (``{0,n}+``), new in Python 3.11.
AVAILABLE = sys.version_info >= (3, 11)
__all__ = ["AVAILABLE", "NAME", "defang", "defang_body", "undefang"]


_LT_REF_BODY = r"(?:lt|LT|\#[xX]0{0,6}3[cC]|\#0{0,6}60);"
#: After ``&``: no character reference can start here, so ``&`` reads as itself.
_AMP_PLAIN = r"(?=[\t\n\f <&;]|\Z)"
_GT_REF_BODY = r"(?:gt|GT|\#[xX]0{0,6}3[eE]|\#0{0,6}62);"
#: The ASCII name characters and separators ``_after_namespace`` reads past (its skipped characters,
#: blanks among them, are added where it is used), then a colon or anything non-ASCII: unsure.
_NS_CHARS = r"A-Za-z0-9_\-.\\"


def _known_chars() -> list[str]:  # pragma: no mutate block
    """Characters outside names whose behaviour the regexes model (ignorables come as ranges)."""
    chars = {chr(c) for c in range(0xA0)} | {chr(c) for c in range(0xA0, 0x3001) if is_space(chr(c)) and _me.is_skip(chr(c))}
    chars |= set(_me.SLASH_CHARS) | set(_me.PIPE_CHARS) | set(_me.GT_CHARS) | set(_me._BANG) | {"\ufffd"}
    chars.discard("&")
    return sorted(c for c in chars if not _me.is_ignorable(c) and ord(c) <= 0xFFFF)


def _lookahead(names: Names, kind: str) -> tuple[str, str]:  # pragma: no mutate block
    """The ``danger`` or ``unsure`` lookaheads (after an opener; after a ``<`` for markup).

    Inside a name only ASCII is modelled; any other character there is
    ``unsure``. Before the name (the skip run after an opener) whitespace,
    ignorables, controls, slashes and their look-alikes are modelled too.
    """
    # Only BMP skipped characters are modelled, so that every class compiles to a
    # constant-time lookup table; astral ones (TAG characters...) are unsure.
    bmp = [(lo, min(hi, 0xFFFF)) for lo, hi in SKIP_RANGES if lo <= 0xFFFF]
    want_d = kind == "danger"
    # A stand-in (``reader.is_stand_in``, or a letter read past, ``reader.is_letter_stand_in``) read
    # past in the lead may start a reserved name (it may
    # stand for its first letters): only the reference models that, so for ``unsure`` it ends the lead
    # (and, being non-ASCII, is then unsure); for ``danger`` reading past it is a step the reference takes.

    def plain(c: str) -> bool:
        return want_d or not (_me.is_stand_in(c) or _me.is_letter_stand_in(c))

    skip_all = char_class(ranges_of(chr(c) for lo, hi in bmp for c in range(lo, hi + 1)))
    skipr = skip_all if want_d else char_class(ranges_of(chr(c) for lo, hi in bmp for c in range(lo, hi + 1) if plain(chr(c))))
    ign = char_class(ranges_of(chr(c) for lo, hi in bmp for c in range(lo, hi + 1) if _me.is_ignorable(chr(c))))
    known = _known_chars()
    ascii_ = [c for c in known if ord(c) < 0x80]
    # What the trie does not model: a non-ASCII character, or an ASCII one an angle reading also reads
    # past (``reader._PASS``: the ASCII quotes since stop 48), which reads as itself or as nothing.
    passed = sorted(c for c in _me._PASS if c < "\x80")
    nonascii = f"(?:[^\\x00-\\x7f]|{regex_class(passed)})" if passed else "[^\\x00-\\x7f]"
    p1 = regex_class((c for c in known if (_me.is_skip(c) or c in _me._SLASH or c in _me._BANG) and plain(c)), skipr)
    gap = regex_class(c for c in ascii_ if _me.is_skip(c))
    gtskip = regex_class((c for c in known if _me.is_skip(c) or c in _me._SLASH), skip_all)
    wi = regex_class((c for c in known if is_space(c) or _me.is_ignorable(c)), ign)

    def skip1(c: str) -> bool:
        return _me.is_skip(c) or c in _me._SLASH or c in _me._BANG

    pipe = regex_class(c for c in known if not skip1(c) and c in _me._PIPE)
    gt = regex_class(c for c in known if not (_me.is_skip(c) or c in _me._SLASH) and c in _me._GT)
    by_part: dict[str, list[str]] = {}
    for c in ascii_:
        if _me.is_skip(c):
            continue
        for part in readings(c):
            by_part.setdefault(part, []).append(c)
    letters = [(p, regex_class(cs)) for p, cs in sorted(by_part.items())]
    letters.append((readings("<")[0], f"&{_LT_REF_BODY}"))
    letters.append((readings("&")[0], f"&{_AMP_PLAIN}"))
    colonish = regex_class(c for c in ascii_ if any(r.endswith(":") for r in readings(c)))

    def live(s: str) -> bool:
        return not names.reserved_match(s) and (names.viable(s) or s in names.tokens)

    # Bound the characters a fast decision reads so that MAX_LOOKAHEAD is never reached.
    depth = 1 + max(len(x) for x in (*names.reserved, *names.tokens))
    budget = MAX_LOOKAHEAD - 1 - (MAX_RUN - 1) - (MAX_RUN + 1)
    run = min(MAX_RUN - 1, budget // depth - 1)
    if run < 1:  # pragma: no cover - names too long for the fast path
        raise ValueError("reserved names too long for the fast path")

    gt_d = f"(?:{gtskip}{{0,{MAX_RUN - 1}}}+(?:{gt}|&{_GT_REF_BODY})|{gtskip}{{{MAX_RUN}}}[\\s\\S])"
    gt_u = f"(?:(?!{gtskip}{{{MAX_RUN}}}){gtskip}{{0,{MAX_RUN - 1}}}+(?:&(?!{_GT_REF_BODY})|{nonascii}))"
    # A namespace prefix is read past only after a letter or digit (``modeleye._stops_reading``).
    # The prefix holds skipped characters too (``<0 x:retrieved_content``: a hypothesis find, the
    # blank made the fast path sure where the reference reads the namespace).
    ns_run = f"(?:[{_NS_CHARS}]|{gap}){{0,{MAX_RUN + 1}}}+(?::|{nonascii})"
    point_u = f"(?:&(?!{_LT_REF_BODY}|{_AMP_PLAIN})|{nonascii}|{colonish}|[A-Za-z0-9]{ns_run})"
    point_first = {"&", *(c for c in ascii_ if any(r.endswith(":") for r in readings(c))), *map(chr, range(0x30, 0x3A))}
    point_first |= {chr(c) for c in (*range(0x41, 0x5B), *range(0x61, 0x7B))} | set(passed)
    first_of = {p: set(cs) for p, cs in by_part.items()}
    first_of.setdefault(readings("<")[0], set()).add("&")
    first_of.setdefault(readings("&")[0], set()).add("&")
    memo: dict[str, str | None] = {}

    def state(s: str) -> str | None:
        if s in memo:
            return memo[s]
        alts: list[str] = [] if want_d else [point_u]
        starts: set[str] = set() if want_d else set(point_first)
        if not want_d and names.viable(s + NUMBER):
            alts.append("[0-9]")  # a placeholder family's number: the reference reads it
            starts |= set("0123456789")
        for p, chars in letters:
            new = s + p
            if names.reserved_match(new):
                if want_d:
                    alts.append(chars)
                    starts |= first_of.get(p, set())
                continue
            if not live(new):
                continue
            nxt: list[str] = []
            if new in names.tokens:
                nxt.append(gt_d if want_d else gt_u)
            if not want_d and new in names._bar_closed:
                # The stem of a ``<NAME|>`` token, then a bar (``reader._bars_then_closer``): the reference
                # decides (``<turn||>``, ``<turn&#124;>``, ``<turn¦>``; stop 50).
                nxt.append(f"{gtskip}{{0,{MAX_RUN - 1}}}+(?:\\||&|{nonascii})")
            if names.viable(new):
                sub = state(new)
                if sub:
                    nxt.append(sub)
            if nxt:
                alts.append(f"{chars}(?:{'|'.join(nxt)})")
                starts |= first_of.get(p, set())
        # One class check before trying the alternatives (each starts with one of ``starts``).
        guard = f"(?={regex_class(starts) if want_d else regex_class_or_nonascii(starts)})"
        if not alts:
            out = None
        elif want_d:
            out = f"{gap}{{0,{run}}}+{guard}(?:{'|'.join(alts)})"
        else:
            out = f"(?:{gap}{{{run + 1}}}|{gap}{{0,{run}}}+{guard}(?:{'|'.join(alts)}))"
        memo[s] = out
        return out

    first = state("") or "(?!)"
    # A bar is a token only when its name closes on its line (``reader.bar_closes``) and is not empty
    # (``reader.empty_bar``): the reference decides every bar (``unsure``), unless a team's own token makes
    # every bar one (``names.empty_bars``).
    named_bar = pipe if names.empty_bars else "(?!)"
    if want_d:
        start = f"{named_bar}|{first}" if names.pipes else first
        exact = _exact_after_lt(names)
        after = f"{exact}{p1}{{{MAX_RUN}}}|{p1}{{0,{MAX_RUN - 1}}}+(?:{start})"
        alpha = regex_class(c for c in known if not (is_space(c) or _me.is_ignorable(c)) and (is_alpha(c) or c in "/!?"))
        mk = f"\\\\*+(?:{wi}{{0,{MAX_RUN - 1}}}+{alpha}|{wi}{{{MAX_RUN}}}[\\s\\S])"
    else:
        first_u = f"(?:{pipe}|{first})" if names.pipes else first
        after = f"(?!{p1}{{{MAX_RUN}}}){p1}{{0,{MAX_RUN - 1}}}+{first_u}"
        mk = f"\\\\*+(?!{wi}{{{MAX_RUN}}}){wi}{{0,{MAX_RUN - 1}}}+{nonascii}"
    return after, mk


def _exact_alternatives(names: Names, first: str) -> str:
    """The exact tokens that start with ``first``, as the rest of the token after any backslashes."""
    rests = names._exact.get(first, ())
    return "|".join(re.escape(r) for r in rests)


def _exact_after_lt(names: Names) -> str:
    """A danger alternative: the opener was a plain ``<`` that starts an exact token (``<NAME>``)."""
    alts = _exact_alternatives(names, "<")
    return f"(?<=<)\\\\*+(?:{alts})|" if alts else ""


def _exact_unsure(names: Names, opener: re.Pattern[str]) -> str:
    """An unsure alternative after any opener: a rest of an exact token whose first character is an
    opener of the family (``opener``), written out or up to an ``&`` (the opener may be a reference for
    that character, ``&lt;NAME>``, or a look-alike, and the rest may go on in references, ``<NAME&gt;``):
    the reference decides (``starts_exact``)."""
    rests = [r for c, rs in names._exact.items() if opener.fullmatch(c) for r in rs]
    return f"\\\\*+(?:{exact_rest_pattern(rests)})" if rests else "(?!)"


@lru_cache(maxsize=32)
def _fast_regex(names: Names, markup: bool) -> re.Pattern[str]:
    """One regex matching every opener that is certainly dangerous or unsure.

    A match with ``lastgroup`` ``None`` is dangerous; ``"u"`` means unsure and ``"q"`` a dangerous
    shape after a raw guillemet, which may be a quoted word (decide both with the reference check).
    """
    after_d, mk_d = _lookahead(names, "danger")
    after_u, mk_u = _lookahead(names, "unsure")
    # The opener exactly as finditer reads it (its reference part atomic; the first
    # character stays a plain class, so the regex engine keeps its first-character scan).
    op = atomic_opener(OPENER_PATTERN)
    # After a raw guillemet (``«``, ``‹``) a token may be a quoted word (``reader.quoted_word``): the
    # reference decides every reading the regexes would call dangerous there.
    quotes = regex_class(_me.QUOTE_OPENERS)
    # (The danger lookahead once, the guillemet told apart after it: it is a third of the compile.)
    exact_u = _exact_unsure(names, _me.OPENER_RE)
    pattern = f"{op}(?:(?={after_d})(?:(?<!{quotes})|(?<={quotes})(?P<q>))|(?={after_u}|{exact_u})(?P<u>))"
    if markup:
        pattern = f"{pattern}|<(?:(?={mk_d})|(?={mk_u})(?P<v>))"
    return re.compile(pattern)


@lru_cache(maxsize=4)
def _bracket_prefilter(names: Names) -> re.Pattern[str]:  # pragma: no mutate block
    """Bracket openers that :func:`read_bracket` must look at (a superset of the dangerous ones).

    After the opener and at most ``MAX_RUN - 1`` skipped ASCII characters or slashes, the
    first :data:`_PREFILTER_DEPTH` letters of a bracket token name through their ASCII
    readings (skipped ASCII characters allowed between them), where any non-ASCII
    character, ``&`` or run of ``MAX_RUN`` skipped characters counts as a possible
    continuation. So ``list[i]`` or ``[x]`` in code needs no Python reading, while
    ``[INST``, ``[ins`` or ``[\u200b`` gets one.
    """
    skip = [chr(c) for c in range(0x80) if _me.is_skip(chr(c))]
    lead = regex_class([*skip, *(c for c in _me.SLASH_CHARS if ord(c) < 0x80)])
    gap = regex_class(skip)
    by_part: dict[str, list[str]] = {}
    for c in map(chr, range(0x80)):
        if c not in skip and c != "&":
            for part in readings(c):
                by_part.setdefault(part, []).append(c)
    unsure = f"[^\\x00-\\x7f]|&|{gap}{{{MAX_RUN}}}"

    def state(prefix: str, depth: int) -> str:
        if depth == 0 or prefix in names.brackets:
            return ""
        alts = [
            f"{regex_class(chars)}(?:{state(prefix + part, depth - 1)})"
            for part, chars in sorted(by_part.items())
            if prefix + part in names._blive
        ]
        if names.viable_bracket(prefix + NUMBER):
            alts.append("[0-9]")  # a placeholder family's number
        if not prefix:
            alts.append(r"\|")  # ``[|NAME|]``
            # An ASCII quote, then anything beyond ASCII (or a reference) within MAX_RUN characters: the
            # reference's quote rule decides (``["“|endofturn|]``, ``["/“|…``, ``["`` + padding; stop 50,
            # red-team finds: a narrower prefilter left ``["/“|endofturn|]``); ``["a", "b"]`` stays here.
            ascii_quotes = regex_class(c for c in _me._ASCII_QUOTE_CHARS)
            alts.append(f"{ascii_quotes}[\\x00-\\x25\\x27-\\x7f]{{0,{MAX_RUN}}}(?:[^\\x00-\\x7f]|&)")
        body = "|".join([unsure, *alts])
        return f"(?:{gap}{{{MAX_RUN}}}|{gap}{{0,{MAX_RUN - 1}}}+(?:{body}))"

    first = state("", _PREFILTER_DEPTH).replace(gap, lead, 2)  # the run before the name may hold slashes
    # An exact token after any bracket opener, written out or in references (``[IMG]``, ``&lsqb;IMG]``,
    # ``[IMG&#93;``): the reference decides.
    guard = f"{_exact_unsure(names, _me.BRACKET_OPENER_RE)}|"
    return re.compile(f"{_me.atomic_opener(BRACKET_OPENER_PATTERN)}(?={guard}{first})")


#: Letters of a bracket token name the prefilter follows before asking the reader.
_PREFILTER_DEPTH = 3


def defang_brackets(text: str, names: Names) -> str:
    """:func:`envelock.eye.reference.defang_brackets` reading only the openers the prefilter finds."""
    return _reference.defang_brackets(text, names, _bracket_prefilter(names))


#: Compiling the regex of one configuration (names, markup) takes seconds: its pattern holds more
#: than a megabyte. The reference makes one Python reading per opener. So a configuration is defanged
#: by the reference until its texts have held this many ``<``, about what the compile costs in
#: readings (``benchmarks/first_call.py`` measures both: ``results/first_call.txt``), then by the
#: regex: a process that defangs a few turns never pays the compile (the README's first command, on
#: Python 3.11+ with no native core, paid it at once before). The two are equal on every input; the
#: tests set it to 0 (``tests/conftest.py``), so every test of this implementation runs the regex.
WARM_OPENERS = 100_000
#: ``<`` seen per configuration still on the reference; the configurations whose regex is in use.
_seen: dict[tuple[Names, bool], int] = {}
_warm: set[tuple[Names, bool]] = set()


def _regex_now(names: Names, markup: bool, text: str) -> bool:
    """Use the regex for ``text`` (see :data:`WARM_OPENERS`)?"""
    key = (names, markup)
    if key in _warm:
        return True
    seen = _seen.get(key, 0) + text.count("<")
    if seen < WARM_OPENERS:
        if len(_seen) >= 64:  # bounded: a process may make up configurations (reserved names, tokens)
            _seen.clear()
        _seen[key] = seen
        return False
    _seen.pop(key, None)
    _warm.add(key)
    return True


def defang(text: str, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None) -> str:
    """:func:`envelock.eye.reference.defang` through the generated regexes; equal on every input."""
    names = names_for(reserved, tokens)
    if not may_hold_opener(text):
        text = _reference.defang_exact(defang_brackets(text, names), names)
        return xml_escape_text(text) if level == "xml" else text
    markup = level != "reserved"
    if not _regex_now(names, markup, text):
        return _reference.defang(text, level, reserved, tokens)
    ends = [
        m.end()
        for m in _fast_regex(names, markup).finditer(text)
        if m.lastgroup is None or _reference.opener_needs_escape(text, m, names, markup)
    ]
    text = insert_after(text, ends)
    text = _reference.defang_exact(defang_brackets(text, names), names)
    if level == "xml":
        text = xml_escape_text(text)
    return text


def defang_body(
    text: str, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None
) -> str:
    """:func:`defang` of a body in its rendered context (``escape.defang_body``)."""
    return _reference.body_context(defang, text, level, reserved, tokens)
