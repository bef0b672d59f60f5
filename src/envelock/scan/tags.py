"""Envelope tags and control tokens: every ``<``-like and ``[``-like opener, read by the one model's eye.

:func:`envelock.modeleye.read_after` and :func:`envelock.modeleye.read_bracket` decide; this
module only gives each reading a span and a message.
"""

from __future__ import annotations

import dataclasses
import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal, NamedTuple, cast

from ..eye import backend
from ..eye import reader as modeleye
from ..eye.backend import exact_tokens, native_opener_reports, reading_kind_after
from ..eye.charsets import regex_class
from ..eye.escape import opener_records
from ..eye.load_tokens import classify
from ..eye.reader import (
    GT_CHARS,
    MAX_LOOKAHEAD,
    MAX_RUN,
    NUMBER,
    Names,
    Reading,
    decode_at,
    exact_escaped,
    exact_token_read,
    name_skeleton,
    names_for,
    read_after,
    visible,
)
from ..eye.tokens import (
    ANGLE_TOKEN_NAMES,
    ANGLE_TOKEN_PATTERNS,
    BAR_TOKENS,
    BRACKET_TOKEN_CONTEXT,
    BRACKET_TOKEN_NAMES,
    BRACKET_TOKEN_PATTERNS,
    CURATED_ANGLE_TOKEN_NAMES,
    NAMESPACE_TOKEN_NAMES,
    OPEN_BAR_TOKENS,
)
from ..eye.unicode_tables import QUOTATION_ANGLES, READINGS, WIDE_BRACKETS
from ..types import Severity
from . import context
from ._base import (
    _GT,
    _LT,
    _PIPE,
    _SLASH,
    SNIPPET_MAX,
    Context,
    Rule,
    _adder,
    _decode_escapes,
    _disguises,
    _Plain,
    _Raw,
    _Reports,
)

# The rules this module reports (collected by envelock.scan.rules).

CLOSE_TAG = Rule(
    "envelope-close-tag",
    "Envelope close tag in retrieved text",
    (
        "The text holds something a model reads as `</retrieved_content>` (or another reserved envelope "
        "name): exact, or disguised by case, whitespace, separators, look-alike characters, invisible "
        "characters or character references. Inside an envelope it would end the envelope early and let the "
        "rest of the text pose as instructions. compose_preface defangs it; a raw copy of this text must "
        "never reach a prompt."
    ),
    "error",
    9.0,
    "tags",
)

OPEN_TAG = Rule(
    "envelope-open-tag",
    "Forged envelope open tag in retrieved text",
    (
        "The text holds something a model reads as `<retrieved_content ...>` (a reserved envelope name "
        'without a slash), possibly with forged attributes such as `provenance="system-config"`. It would '
        "start a fake envelope claiming a higher trust tier."
    ),
    "error",
    8.5,
    "tags",
)

CONTROL_TOKEN = Rule(
    "chat-control-token",
    "Chat-template control token",
    (
        "The text holds a chat-template special token (`<|im_end|>`, `<|eot_id|>`, DeepSeek `<｜…｜>`, "
        "`<start_of_turn>`, `[INST]`, `<</SYS>>`, `</function_results>`, ...). A model, or a template that "
        "splices text without escaping, can take it for a turn boundary. `<s>`/`</s>` are reported as "
        "warnings because they are also HTML strikethrough and type parameters."
    ),
    "error",
    8.0,
    "tags",
)

DEFANGED_TAG = Rule(
    "defanged-tag",
    "Text already in envelock's escaped form",
    (
        "The text holds an opener followed by a backslash before a reserved name or control token "
        "(`<\\/retrieved_content>`, `[\\INST]`): envelock's own escape. Third-party text has no reason to carry "
        "it; it is either a pasted composed preface or an attempt to confuse a naive un-escaper."
    ),
    "warning",
    3.0,
    "tags",
)

PADDED_OPENER = Rule(
    "padded-opener",
    "Opener followed by long padding",
    (
        "An opener (`<`, a look-alike or `&lt;`) is followed by a run of whitespace, invisible characters, "
        "controls, slashes or separators too long for the model's-eye lookahead to follow (32 or more in a "
        "row, or past 256 characters while a reserved name could still form). What a model makes of it cannot "
        "be bounded, so compose_preface escapes the opener (fail closed). Padding is a hiding technique."
    ),
    "warning",
    4.0,
    "tags",
)

RULES: tuple[Rule, ...] = (
    CLOSE_TAG,
    OPEN_TAG,
    CONTROL_TOKEN,
    DEFANGED_TAG,
    PADDED_OPENER,
)


class _Hit(NamedTuple):
    kind: str  # "reserved", "token", "pipe", or "padding" (decoded text only: _padding_hit)
    name: str
    slash: bool
    end: int  # end of the construct in the text (after '>' when there is one)
    closed: bool  # a '>' (or look-alike, or &gt;) ends it


_NameMaps = tuple[Names, dict[str, str], dict[str, str], dict[str, str]]


@lru_cache(maxsize=64)
def _name_maps(ctx: Context) -> _NameMaps:
    names = names_for(ctx.reserved, ctx.tokens)
    res = {modeleye.skeleton(n): n for n in ctx.reserved}
    extra_angle = tuple(ctx.tokens.angle) if ctx.tokens is not None else ()
    extra_bracket = tuple(ctx.tokens.bracket) if ctx.tokens is not None else ()
    angle = (*ANGLE_TOKEN_NAMES, *(p + NUMBER for p in ANGLE_TOKEN_PATTERNS), *extra_angle)
    tok = {name_skeleton(n): n for n in angle}
    tok.update({modeleye.skeleton(n) + ":": n + ":" for n in NAMESPACE_TOKEN_NAMES})
    brk = {name_skeleton(n): n for n in (*BRACKET_TOKEN_NAMES, *(p + NUMBER for p in BRACKET_TOKEN_PATTERNS), *extra_bracket)}
    return names, res, tok, brk


#: A run of characters that ``_tag_end`` reads as themselves and passes: no reference (``&``), opener,
#: closer or new line. Matched in C, not one ``decode_at`` per character.
_TAG_PLAIN_RE = re.compile(f"[^&\n{re.escape(''.join(sorted(_LT | _GT)))}]*")


def _tag_end(text: str, i: int) -> tuple[int, bool]:
    """Extend a tag past its attributes to its '>' (bounded), stopping at a new line or opener."""
    n = len(text)
    lim = min(n, i + MAX_LOOKAHEAD)
    j = i
    while j < lim:
        j = _TAG_PLAIN_RE.match(text, j, lim).end()  # type: ignore[union-attr]  # a starred class always matches
        if j >= lim:
            break
        ch = text[j]
        if ch in _LT or ch == "\n":
            break
        piece, nxt = decode_at(text, j)
        if piece and piece[0] in _GT:  # a reference may decode to nothing (html.unescape("&#1;") == "")
            return nxt, True
        j = nxt
    return i, False


#: A run of characters ``_pipe_token`` reads as themselves and adds to the name (invisible ones are
#: dropped): none is ``&`` (a reference), a bar, a closer, an opener or a blank (``str.isspace``,
#: which is what ``\s`` matches in a ``str`` pattern).
_PLAIN_NAME_RE = re.compile("[^&\\s" + re.escape("".join(sorted(_PIPE | _GT | _LT))) + "]+")


def _letter(ch: str) -> bool:
    """A letter or digit of the generated tables, or a character with a letter reading (``ⓣ``; ``𜳞``,
    a Unicode 16 symbol drawn as a bar and read as ``i``, which ``str.isalnum`` called no letter: the
    interpreter's Unicode is older; stop 49). Not the ASCII bar, which UTS #39 also reads as ``l``."""
    return modeleye.is_alnum(ch) or (ch >= "\x80" and modeleye.reads_as_letter(ch))


_PIPE_STOPS = _PIPE | _GT | _LT
#: The first characters after ``<|`` on which _pipe_token gives up at once: a closer or an opener. A
#: bar is read past there (``<||im_end|>``, stop 49: the defang escaped it, the scanner was silent).
_PIPE_FIRST_STOPS = _GT | _LT
#: The bars read past before a bar token's name: no letter or number drawn as a bar (``<|Ⅰm_end|>``
#: reads on), in one regex step (``<`` and 63 bars repeated would be 63 Python steps per opener).
_LEAD_BAR_SET = frozenset(c for c in _PIPE if not _letter(c))
_LEAD_BARS_RE = re.compile(regex_class(_LEAD_BAR_SET) + "*")
#: The plain form ``NAME|>`` (printable ASCII name, then ``|>`` at once), which the loop of
#: ``_pipe_token`` reads exactly as written: matched in one step. The name holds no reference
#: (``&``), no bar, closer or opener, no blank and no invisible character; the bar must lie inside
#: the 64-character window, so the name has at most 63 characters; and ``>`` right after the bar
#: ends the token (it is not a character the closer search skips).
_ASCII_NAME = "".join(
    c for c in map(chr, range(0x21, 0x7F)) if c not in _PIPE_STOPS and c != "&" and not modeleye.is_ignorable(c)
)
_SIMPLE_PIPE_RE = (
    re.compile(f"([{re.escape(_ASCII_NAME)}]{{1,63}})\\|>")
    if "|" in _PIPE and ">" in _GT and not modeleye.can_skip(">") and ">" not in _SLASH
    else None
)


#: An ASCII letter or digit (``str.isalnum`` of an ASCII character).
_ASCII_ALNUM_RE = re.compile("[A-Za-z0-9]")
#: The names of the bar tokens of the tables that hold no letter or digit (``<|"|>``, an added token).
_UNLETTERED_BAR_NAMES = frozenset(
    t[2:-2] for t in BAR_TOKENS if t.startswith("<|") and t.endswith("|>") and not any(c.isalnum() for c in t[2:-2])
)


def _named(word: str) -> bool:
    """Does a bar shape's name make it a token to report: a letter or digit, a symbol with a letter
    reading (``<|ⓘⓜ_ⓔⓝⓓ|>``: the defang escapes it, stop 49), or a token's own name (``<|"|>``)?
    ``<|-|>`` and ``<|___|>`` are not."""
    if word.isascii():
        return _ASCII_ALNUM_RE.search(word) is not None or word in _UNLETTERED_BAR_NAMES
    return any(modeleye.is_alnum(c) or modeleye.letter_symbol(c) for c in word) or word in _UNLETTERED_BAR_NAMES


def _pipe_closer(text: str, i: int, end: int) -> int:
    """:func:`~envelock.eye.reader.closer_after` for ``>`` after a bar token's closing bar, past the quotes
    an angle reading reads past as well: the defang escapes ``<|im_end|'>`` and ``<“|im_end|”>`` (the bar
    shape closes), so the scanner reports them (stop 48: the quote before ``>`` hid the token). More bars
    are read past too, between blanks or not: ``<|im_end||>``, ``<|im_end|&#124;>``, ``<|im_end| |>``
    (stop 49). The bound is ``closer_after``'s: :data:`MAX_RUN` pieces read past is a closer (fail closed)."""
    j, run = i, 0
    while j < end and run < MAX_RUN:
        piece, nxt = decode_at(text, j)
        if all(c in modeleye._QUOTE_PASS or c in _PIPE or c in _SLASH or modeleye.can_skip(c) for c in piece):
            run += 1
            j = nxt
            continue
        return nxt if piece[0] in GT_CHARS else -1
    return j if j < len(text) and run >= MAX_RUN else -1


def _bar_listed(word: str) -> bool:
    """Is ``word`` (a bar shape's name) the name of a ``<|NAME|>`` token of the tables, as the eye reads it?"""
    return bool(word) and modeleye.skeleton(word) in _BAR_SKELETONS


#: The skeletons of the names of the tables' ``<|NAME|>`` tokens.
_BAR_SKELETONS = frozenset(modeleye.skeleton(name) for kind, name in map(classify, BAR_TOKENS) if kind == "bar") - {""}


def _pipe_token(text: str, i: int, slash: bool) -> _Hit | None:
    """``name|>`` from ``i`` (just after the opening bar; bars and ``>`` may be look-alikes or references)."""
    simple = _SIMPLE_PIPE_RE.match(text, i) if _SIMPLE_PIPE_RE is not None else None
    if simple is not None:
        word = simple.group(1)
        return _Hit("pipe", f"<|{word}|>", slash, simple.end(), True) if _named(word) else None
    n = len(text)
    # The defang's lookahead (stop 50, a red-team find: a bound of 64 characters, 12 ``&shy;``, hid
    # ``<|im_end|>``); reached, it is a token when the name read so far names one (fail closed).
    lim = min(n, i + MAX_LOOKAHEAD)
    j = _LEAD_BARS_RE.match(text, i, lim).end()  # type: ignore[union-attr]  # a starred class always matches
    name: list[str] = []
    while j < lim:
        run = _PLAIN_NAME_RE.match(text, j, lim)
        if run is not None:
            # Characters that are not references, bars, closers, openers or blanks are read one by one
            # as themselves (each piece is the character): take the whole run at once.
            word = run.group()
            shown = word if word.isascii() else "".join(c for c in word if not modeleye.is_ignorable(c))
            if shown:  # an invisible character adds nothing: ``<|\u200b|im_end|>`` has a doubled bar still
                name.append(shown)
            j = run.end()
            continue
        piece, nxt = decode_at(text, j)
        if not piece:
            # A reference to nothing (``&#1;``, a noncharacter) is read past as the defang reads it
            # (stop 50, a red-team find: ``<|im_end&#1;|>`` silenced the scanner).
            j = nxt
            continue
        ch = piece[:1]
        if ch in _PIPE:
            gt = _pipe_closer(text, nxt, n)  # bounded by its MAX_RUN pieces (a reference is several characters)
            word = "".join(name)
            if gt >= 0 and _named(word):
                return _Hit("pipe", f"<|{word}|>", slash, gt, True)
            if not name and not _letter(ch):
                j = nxt  # a bar written as a reference before the name, read past as the plain ones are
                continue
            if not _letter(ch):
                # A listed token's name and its bar, then more before a closer on the line
                # (``<|im_end|x>``, ``<|im_end|\u00c0>``): the bar shape closes, so the defang escapes
                # it, and the token's name and both bars are there (stop 51, a red-team round: no finding
                # at all). Listed names only: ``x <| y || z >`` is code.
                close = modeleye.bar_close_end(text, nxt, lim) if gt < 0 and _bar_listed(word) else -1
                return _Hit("pipe", f"<|{word}|>", slash, close, True) if close >= 0 else None
            # A letter or number drawn as a bar (``Ⅰ``, ``ǀ``, ``丨``) with no closer after it is a letter
            # of the name (``<|Ⅰm_end|>``), as the eye reads it; a bar that is no letter ends the shape.
        if ch and ch in _GT:
            # ``<|NAME>``: Gemma 4 opens a block this way (``<|turn>``, ``<|tool_call>``).
            word = "".join(name)
            return _Hit("pipe", f"<|{word}>", slash, nxt, True) if _named(word) else None
        if ch in _LT:
            return None
        # Blanks are read past, as the eye reads them (``<| im_end |>``); _describe_hit grades a
        # spaced name a warning, since ``f <| g x > y`` is also F# or Elm code.
        if not modeleye.is_ignorable(ch) and not ch.isspace():  # invisible characters are not shown; '_' and '-' are
            name.append(piece)
        j = nxt
    word = "".join(name)
    if j < n and _named(word):
        return _Hit("pipe", f"<|{word}|>", slash, j, False)  # a bound reached first: fail closed
    return None


def _hit(text: str, reading: Reading, ctx: Context) -> _Hit | None:
    """The construct a reading found, with the span a finding shows (``None`` for padding)."""
    return _hit_of(text, reading.kind, reading.name, reading.slash, reading.end, ctx)


def _hit_of(text: str, kind: str, name: str, slash: bool, end: int, ctx: Context, maps: _NameMaps | None = None) -> _Hit | None:
    """:func:`_hit` of a reading given by its fields; ``maps``: ``_name_maps(ctx)`` when the caller has
    it (a describer calls this once per record: hashing ``ctx`` again costs a microsecond each)."""
    if kind == "bar":
        # ``<|`` without a closing ``|>`` is not reported: an F#/Elm pipe operator (a deliberate exception).
        return _pipe_token(text, end, slash)
    if kind == "reserved":
        close, closed = _tag_end(text, end)
        return _Hit("reserved", (maps or _name_maps(ctx))[1].get(name, name), slash, close if closed else end, closed)
    if kind == "token":
        return _Hit("token", (maps or _name_maps(ctx))[2].get(name, name), slash, end, True)
    return None  # (the name maps are not looked up for a reading of neither: hashing ctx costs a microsecond)


@lru_cache(maxsize=64)
def _unpiped(names: Names) -> Names:
    """``names`` without the bar shape: a bar is read as any other character."""
    return dataclasses.replace(names, pipes=False)


def _unpiped_reading(text: str, pos: int, names: Names, bar_end: int | None = None, slash: bool = False) -> Reading | None:
    """A bar opener that is no token (no ``|>`` closes it) read again with its bar read as any other
    character: the reserved name or token the eye also spells there, else ``None``. A bar look-alike
    is also a separator to the eye, so ``<¦retrieved¦content>`` and ``<¦¦retrieved_content>`` are
    envelope tags: the defang escapes them (its reading is not none), so the scanner reports them
    (a red-team find: the bar shape hid the tag). A ``padding`` reading (the lookahead gave up on
    what follows the bar, ``<￤retrieved`` + 80 NULs + ``content>``, a second red-team find) is
    returned too: the defang escapes it, and :func:`_padding_finding` reports it.

    ``bar_end``: where the bar ends. The ASCII bar reads as the letter ``l`` here (UTS #39), where a
    model sees a separator as for its look-alikes: the name after the bar is read for the reserved
    names alone (``</|retrieved_content>`` is a close tag, with the bar reading's ``slash``; stop 50, a
    red-team find: it was graded as a ``<|NAME>`` warning, and the ``｜`` form as a tag)."""
    r = read_after(text, pos, _unpiped(names))
    if r.kind in ("reserved", "token", "padding"):
        return r
    if bar_end is not None:
        after = read_after(text, _past_bars(text, bar_end), _reserved_only(names))
        if after.kind == "reserved":
            return Reading("reserved", after.name, slash or after.slash, after.end)
    return None


def _past_bars(text: str, i: int) -> int:
    """Past the bars (look-alikes and references too) from ``i``, and what the lead reads past between
    them, within the lookahead: ``</||retrieved_content>``, ``</|\u200b|retrieved_content>``."""
    return _past_lead(text, i, min(len(text), i + MAX_LOOKAHEAD), bars=True)


_LEAD_PASS = modeleye._BANG | modeleye._PASS


@lru_cache(maxsize=64)
def _reserved_only(names: Names) -> Names:
    """``names`` with no token and no bar shape (a bar is read as the letter or separator it looks
    like): the reserved name a token reading may have been read inside of."""
    return dataclasses.replace(names, tokens=(), namespaces=(), quotable=(), pipes=False)


#: The most letters one character (or reference) reads as (``㎣``: five).
_MAX_READING = max(len(r) for rs in READINGS.values() for r in rs)
#: A character that ends a reading (an opener, or ``&``, which may spell one).
_READING_STOP_RE = re.compile(regex_class(modeleye._OPENER_CHARS | {"&"}))


def _name_room(text: str, pos: int, names: Names) -> bool:
    """May a reserved name be read from ``pos``: do the characters before the next opener number at
    least the shortest name's letters over the most one character reads as? (Only the grade of a
    token already reported as an error depends on it: ``<ⓢ>`` repeated read each opener again.)"""
    need = -(-min(map(len, names.reserved), default=1) // _MAX_READING)
    return _READING_STOP_RE.search(text, pos, pos + need) is None


def _spelled_in_symbols(text: str, pos: int, end: int) -> bool:
    """Does the reading from ``pos`` to ``end`` pass a symbol with a letter reading (``ⓒ``, ``ᵗ``),
    which it may have read as nothing?"""
    span = text[pos:end]
    return not span.isascii() and any(modeleye.letter_symbol(c) for c in span)


def _hit_after(text: str, pos: int, names: Names, ctx: Context, reading: Reading | None = None) -> _Hit | None:
    """The tag or token the eye reads after an opener ending at ``pos`` (:func:`_hit`; ``reading``:
    ``read_after(text, pos, names)`` when the caller has it), a bar opener that is no token read again
    with the bar shape off (:func:`_unpiped_reading`), or the envelope tag after padding the lookahead
    gave up on (:func:`_padded_hit`); else ``None``. The passes over decoded text use it (their
    openers are not records of the native loop)."""
    r = read_after(text, pos, names) if reading is None else reading
    hit = _hit(text, r, ctx)
    if hit is None and r.kind == "bar" and (u := _unpiped_reading(text, pos, names, r.end, r.slash)) is not None:
        r = u
        hit = _hit(text, u, ctx)
    if r.kind == "padding":
        return _padding_hit(text, pos, r.end, ctx)
    return hit


def _padding_hit(text: str, end: int, reading_end: int, ctx: Context) -> _Hit | None:
    """What a pass over decoded text reports for an opener ending at ``end`` that the lookahead gave
    up on (at ``reading_end``): the envelope tag after the padding (:func:`_padded_hit`), else the
    padding itself (kind ``padding``, up to where the eye gave up), unless it is code layout
    (:func:`envelock.scan.context.layout_padding`). Fail closed, as for an opener in the text itself
    (:func:`_padding_finding`): ``%3C`` + 80 ``%00`` + ``retrieved_content%3E`` hid its tag from the
    encoded passes, whose window ends inside the padding."""
    hit = _padded_hit(text, end, ctx)
    if hit is None and (token := _padded_token(text, end, ctx)) is not None:
        hit = token[1]
    if hit is not None or context.layout_padding(text, end, reading_end, _name_maps(ctx)[0]):
        return hit
    return _Hit("padding", "", False, reading_end, False)


@lru_cache(maxsize=2)
def _lead_re(stop_at_bars: bool = False) -> re.Pattern[str]:
    return modeleye.read_past_re(_SLASH | (_LEAD_PASS - _PIPE if stop_at_bars else _LEAD_PASS))


def _padded_hit(text: str, end: int, ctx: Context) -> _Hit | None:
    """The envelope tag after the padding that follows an opener ending at ``end`` (the lookahead gave
    up on it), when a reserved name follows the padding; else ``None``."""
    names, res_map, _, _ = _name_maps(ctx)
    stop = min(len(text), end + MAX_LOOKAHEAD)
    # The lead the eye reads past (_past_lead): skipped characters, slashes, ``!``/``?``, the non-ASCII
    # structural look-alikes (bars too: after a bar opener that is no token, a bar look-alike is read as
    # one), and references to them (``<`` + 33 ``&#8203;`` + ``retrieved_content>`` was a padding warning).
    first = _past_lead(text, end, stop)
    # The skeleton of the rest of the window in one call (native, or two C passes), cheaper than one
    # Python step per character up to the name.
    skel = backend.skeleton(text[first:stop])
    for r in names.reserved:
        if skel.startswith(r):
            letter = first + modeleye.first_alnum(text[first:stop])
            slash = not _SLASH.isdisjoint(text[end:letter])
            close, closed = _tag_end(text, letter)
            return _Hit("reserved", res_map.get(r, r), slash, max(close, letter), closed)
    return None


def _past_lead(text: str, i: int, stop: int, *, bars: bool = False, stop_at_bars: bool = False) -> int:
    """Past what the eye's lead reads past from ``i`` (before ``stop``): skipped characters, slashes,
    ``!``/``?``, the non-ASCII structural look-alikes, and references to them (``&#8203;``); with
    ``bars``, every bar too (the ASCII one and references to one); with ``stop_at_bars``, no bar. Runs
    are regex matches (``<`` and 62 bars, repeated, is no Python step per bar)."""
    lead = _lead_re(stop_at_bars)
    while i < stop:
        j = lead.match(text, _LEAD_BARS_RE.match(text, i, stop).end() if bars else i, stop).end()  # type: ignore[union-attr]
        if j < stop and text[j] == "&":
            piece, nxt = decode_at(text, j)
            if nxt <= stop and (not piece or (bars and piece[0] in _PIPE) or lead.fullmatch(piece) is not None):
                j = nxt
        if j == i:
            break
        i = j
    return i


def _padded_token(text: str, end: int, ctx: Context) -> tuple[int, _Hit] | None:
    """The control token after the padding that follows an opener ending at ``end`` (the lookahead gave
    up on it): where its name starts, and the token (a ``<NAME>`` token or a named bar shape) as the eye
    reads it from there; else ``None``. A model that reads past blanks and invisible characters reads
    ``<`` + 40 U+2800 + ``start_of_turn>`` as the token (stop 50, a red-team find: a warning only)."""
    stop = min(len(text), end + MAX_LOOKAHEAD)
    # Up to a bar (a look-alike too: ``<`` + padding + ``¦im_end¦>``, a red-team find), read as a bar here.
    first = _past_lead(text, end, stop, stop_at_bars=True)
    # The next opener ends a reading; else the kind is asked first, natively when the core is in use.
    if first >= stop or text[first] in modeleye._OPENER_CHARS:
        return None
    names = _name_maps(ctx)[0]
    if backend.reading_kind_near(text, first, ctx.reserved, ctx.tokens, names) not in ("token", "bar"):
        return None
    r = read_after(text, first, names)
    if r.kind not in ("token", "bar"):
        return None
    slash = r.slash or not _SLASH.isdisjoint(text[end:first])
    if r.kind == "bar":
        # The envelope name after the bar (``</`` + padding + ``|retrieved_content>``), as after a bar
        # opener (_unpiped_reading): a tag, not a ``<|NAME>`` warning (stop 50, a red-team find).
        u = _unpiped_reading(text, first, names, r.end, slash)
        if u is not None and u.kind == "reserved" and (tag := _hit_of(text, "reserved", u.name, u.slash, u.end, ctx)):
            return first, tag
    hit = _hit_of(text, r.kind, r.name, slash, r.end, ctx)
    return None if hit is None or hit.kind == "padding" else (first, hit)


def _padding_finding(text: str, start: int, end: int, reading_end: int, ctx: Context) -> _Raw:
    """A finding for an opener the lookahead gave up on: an envelope tag if a reserved name
    follows the padding (an ``error``, :func:`_padded_hit`), else the padding itself (a ``warning``;
    a ``note`` when it is code layout, :func:`envelock.scan.context.layout_padding`)."""
    hit = _padded_hit(text, end, ctx)
    if hit is not None:
        rule = "envelope-close-tag" if hit.slash else "envelope-open-tag"
        what = "close" if hit.slash else "open"
        return _Raw(rule, "error", f"envelope {what} tag for {hit.name!r} (disguised by padding)", start, hit.end)
    token = _padded_token(text, end, ctx)
    if token is not None:
        # Graded as the token is where it stands (``<s>`` a warning, ``<start_of_turn>`` an error).
        rule, message, severity = _describe_hit(text, token[0], token[1], ctx)
        return _Raw(rule, severity, f"{message} (disguised by padding)", start, token[1].end)
    names = _name_maps(ctx)[0]
    stop = min(len(text), end + MAX_LOOKAHEAD)
    if context.layout_padding(text, end, reading_end, names):
        return _Raw("padded-opener", "note", "opener followed by code layout the eye reads past", start, stop)
    return _Raw("padded-opener", "warning", "opener followed by padding too long to read past", start, stop)


# Describing what was found


_ATTR_RE = re.compile(r"(provenance|source|origin)[ \t]{0,4}=[ \t]{0,4}\\?[\"']?([^\"'\\\s>]{1,64})", re.IGNORECASE)


def _describe_hit(text: str, start: int, hit: _Hit, ctx: Context) -> tuple[str, str, Severity]:
    """(rule, message, severity) for a hit that starts at ``start``."""
    snippet = text[start : hit.end]
    if hit.kind == "reserved":
        if hit.slash:
            canonical = f"</{hit.name}>"
            return (
                "envelope-close-tag",
                f"envelope close tag for {hit.name!r}{_disguises(snippet, canonical)}",
                "error",
            )
        canonical = f"<{hit.name}>"
        forged = ""
        attrs = _ATTR_RE.search(snippet)
        if attrs:
            forged = f", forging {attrs.group(1).lower()}={attrs.group(2)!r}"
        # Only the opener and the name can be disguised: the attributes are the tag's own text
        # (a composed preface's fetched_at="...Z" is not "disguised by case").
        head = f"<{hit.name}"
        exact = snippet.startswith(head) and snippet[len(head) : len(head) + 1] in ("", " ", "\t", "\n", "\r", ">", "/")
        name_part = (snippet[: attrs.start()] if attrs else snippet).rstrip()
        disguise = "" if exact else _disguises(name_part, canonical)
        return ("envelope-open-tag", f"forged envelope open tag for {hit.name!r}{forged}{disguise}", "error")
    if hit.kind == "pipe":
        # ASCII blanks only: F# and Elm code is laid out with them; another blank inside a token shape
        # (``<|im_end\u2028|>``, ``<|turn\u00a0>``) is a disguise (stop 50).
        if any(c in " \t" for c in snippet):
            return (
                "chat-control-token",
                f"{visible(snippet)} reads as the control-token shape {visible(hit.name)} with blanks inside (the"
                " defang escapes it; '<|' with spaces is also an F# or Elm pipe operator)",
                "warning",
            )
        # A name in letter symbols (``<|ⓔⓝⓓ>``) is no regex alternation or operator: an error (stop 49).
        if (
            not hit.name.endswith("|>")
            and not _open_bar_listed(hit.name, ctx)
            and not _spelled_in_symbols(hit.name, 0, len(hit.name))
        ):
            return (
                "chat-control-token",
                f"{visible(hit.name)} has the shape of a Gemma 4 block opener (<|turn>), but '<|', a word and '>' is"
                " also a regex alternation or an operator",
                "warning",
            )
        word = hit.name[2:-2] if hit.name.endswith("|>") else hit.name[2:-1]
        if _name_letters(word) > _longest_bar_name(ctx):
            # Read to its closer (or to the lookahead) since stop 50: escaped binary in a C string
            # (``<|cq\252\360c…|>``) is no token; longer than every token's name, it is a warning.
            return (
                "chat-control-token",
                f"{visible(hit.name)[:60]} has a bar token's shape with a name longer than any token's (the defang escapes it)",
                "warning",
            )
        return "chat-control-token", f"chat-template control token {visible(hit.name)}", "error"
    token = f"<{'/' if hit.slash else ''}{hit.name}>"
    if hit.name == "s" and not hit.slash and context.regex_group_or_arrow(text, start, hit.end):
        return "chat-control-token", f"{visible(snippet)} read as {token} in a regex group or an arrow: ordinary code", "note"
    if hit.name == "s":
        return (
            "chat-control-token",
            f"{token} is the Llama 2 BOS/EOS token (also HTML strikethrough or a type parameter)",
            "warning",
        )
    if _guillemet_quoted(snippet):
        return "chat-control-token", f"{visible(snippet)} quotes a word with guillemets (a model may read {token})", "warning"
    if _placeholder_shaped(hit.name, ctx):
        return (
            "chat-control-token",
            f"{visible(snippet)} reads as the control token {token}, but a plain word in angle brackets is also how"
            " documentation writes a placeholder",
            "warning",
        )
    return "chat-control-token", f"chat-template control token {token}{_disguises(snippet, token)}", "error"


def _name_letters(name: str) -> int:
    """The letters and digits of a name's skeleton (quotes, slashes and other punctuation the eye may
    read past do not count: ``<|im_end`` + 23 quotes + ``|>`` is no longer name; a red-team find)."""
    return sum(1 for c in modeleye.skeleton(name) if c.isalnum())


@lru_cache(maxsize=64)
def _longest_bar_name(ctx: Context) -> int:
    """The most letters and digits in a bar token's name (its skeleton), in the tables or the team's tokens."""
    own = ctx.tokens.bars if ctx.tokens is not None else ()
    return max(_name_letters(classify(t)[1]) for t in (*BAR_TOKENS, *own))


def _open_bar_listed(name: str, ctx: Context) -> bool:
    """A ``<|NAME>`` token (no closing bar) that a tokenizer lists, also as the eye reads its name
    (``<|ⓣⓤⓡⓝ>`` is ``<|turn>``, stop 49), or that the team loaded."""
    listed = name.lower() in _OPEN_BARS or modeleye.skeleton(name[2:-1]) in _OPEN_BAR_SKELETONS
    if not listed and any(c in modeleye._QUOTE_PASS for c in name):
        # The quotes an angle reading reads past (``<|turn">``, ``<|“turn”>``: stop 50, a red-team find;
        # ``<|turn">`` is what an origin ``web:x <|turn`` looked like before stop 49's attribute fix).
        bare = "".join(c for c in name if c not in modeleye._QUOTE_PASS)
        listed = bare.lower() in _OPEN_BARS or modeleye.skeleton(bare[2:-1]) in _OPEN_BAR_SKELETONS
    return listed or (ctx.tokens is not None and name in ctx.tokens.bars)


_OPEN_BARS = frozenset(t.lower() for t in OPEN_BAR_TOKENS)
_OPEN_BAR_SKELETONS = frozenset(modeleye.skeleton(t[2:-1]) for t in OPEN_BAR_TOKENS) - {""}


#: Angle token names measured as chat tokens on real text (the curated list), whatever their shape.
_CURATED = frozenset(n.lower() for n in CURATED_ANGLE_TOKEN_NAMES if n != "s")


def _placeholder_shaped(name: str, ctx: Context) -> bool:
    """A generated angle token whose name is a plain word (letters and digits only, no ``_ - | :``):
    ``<filename>``, ``<unk>``, ``<AI>`` are how man pages and usage strings write placeholders, so the
    scanner reports them as warnings (the defang escapes them all the same). A curated name, or a
    token the team loaded (``tokens=``), stays an error."""
    if not name.isalnum() or name.lower() in _CURATED:
        return False
    return ctx.tokens is None or name not in ctx.tokens.angle


def _first_danger(text: str, ctx: Context) -> str | None:
    """The first envelope tag or control token in (decoded) ``text``, described; else ``None``.

    The openers are read in one native pass when the core is in use (:func:`opener_records`): a
    decoded blob may be a megabyte of ``<|`` (hex ``3c7c``). A bar opener that is no token is read
    again with the bar shape off (:func:`_unpiped_reading`), once per distinct text after it: the
    two readings of one depend on the ``_QUIET_WINDOW`` characters after the opener when no
    reference (``&``) is among them (a reference's body may reach further). An opener the lookahead
    gave up on is asked :func:`_padding_hit` once per distinct ``_PADDING_WINDOW`` after it, alike
    (:func:`_looked_past`)."""
    names = _name_maps(ctx)[0]
    n = len(text)
    # The bar and padding openers whose second look found nothing, by what that look depends on.
    quiet: set[tuple[str, str, int, bool]] = set()
    looked_past = _looked_past()
    for start, end, kind, name, slash, rend in opener_records(text, ctx.reserved, "angle", ctx.tokens):
        if end < n and text[end] == "\\":
            continue
        if kind not in looked_past:
            hit = _hit_of(text, kind, name, slash, rend, ctx)
        else:
            key = (kind, text[end : end + looked_past[kind]], rend - end, slash)
            if key in quiet:
                continue
            looked = Reading("bar" if kind == "bar" else "padding", name, slash, rend)
            hit = _hit_after(text, end, names, ctx, looked)
            if hit is None and "&" not in key[1] and len(quiet) < _QUIET_MAX:
                quiet.add(key)
        if hit is not None:
            return visible(text[start : hit.end][:SNIPPET_MAX])
    for start, end, kind, _, _, rend in opener_records(text, ctx.reserved, "bracket", ctx.tokens):
        if kind in ("token", "bar") and text[end : end + 1] != "\\":
            return visible(text[start:rend][:SNIPPET_MAX])
    for start, end in exact_tokens(text, ctx.reserved, ctx.tokens):
        if not exact_escaped(text, start):
            return visible(text[start:end][:SNIPPET_MAX])
    return None


#: How far after a bar opener its two readings and its bar shape may look (the lookahead, and an
#: opener's worth more for the last piece), and how many quiet windows one call keeps.
_QUIET_WINDOW = MAX_LOOKAHEAD + modeleye.MAX_OPENER_LEN + 1
_QUIET_MAX = 4096
#: How far after an opener the lookahead gave up on its answer may look when it is none: the
#: lookahead, and a reading that starts inside it (``context.layout_padding``).
_PADDING_WINDOW = 2 * MAX_LOOKAHEAD + modeleye.MAX_OPENER_LEN + 1


def _looked_past() -> dict[str, int]:
    """The readings ``_first_danger`` looks past (:func:`_hit_after`: a bar opener read again with the
    bar shape off, an opener the lookahead gave up on), and how many characters after the opener
    that look depends on when no reference is among them (read when called: tests shorten them)."""
    return {"bar": _QUIET_WINDOW, "padding": _PADDING_WINDOW}


#: What a pass tells the native record loop about one record (``_native.opener_reports``): the end of
#: the text its reports depend on besides the reading (``None``: the text around it decides, or the
#: end of the text), and the reports.
_Described = tuple[int | None, list[_Plain]]
_Describe = Callable[[int, int, str, str, bool, int], _Described]


def _records(text: str, ctx: Context, family: Literal["angle", "bracket"], describe: _Describe, out: list[_Raw]) -> None:
    """Every ``family`` record through ``describe``, its reports added to ``out``: in one native loop
    that reuses an answer for every record with the same reading and the same text up to where the
    answer depends (hostile text repeats one construct), else one call per record (the reference)."""
    add = _adder(out)
    got = native_opener_reports(text, ctx.reserved, family, ctx.tokens, describe)
    if got is not None:
        if type(out) is _Reports:
            out.extend(got)  # type: ignore[arg-type]  # plain tuples: see _adder
        else:
            for r in got:
                add(cast(_Plain, r))
        return
    for record in opener_records(text, ctx.reserved, family, ctx.tokens):
        for r in describe(*record)[1]:
            add(r)


def _scan_openers(text: str, ctx: Context, out: list[_Raw]) -> None:
    """Every opener the model's eye reads as a tag or token (what the defang escapes) is a finding."""
    _records(text, ctx, "angle", _angle_describer(text, ctx), out)


#: The reading kinds whose hit (:func:`_hit_of`) is read off the text; any other kind has none.
_TEXT_HITS = frozenset({"bar", "reserved", "token"})

#: The most escaped-slash verdicts one scan keeps (each key holds up to ~130 characters of the text).
_SLASHES_MAX = 4096
_REREADS_MAX = 512


def _angle_describer(text: str, ctx: Context) -> _Describe:
    """The reports of one angle record (:data:`_Describe`), and how far into the text they depend."""
    maps = _name_maps(ctx)
    names = maps[0]
    n = len(text)
    # (snippet, hit, context) -> (rule, message, severity): a description depends on the hit and its
    # text only, and for a ``<s>`` on whether it is a regex group or an arrow (_describe_hit), and
    # hostile text repeats one construct many times.
    described: dict[tuple[str, str, str, bool, bool, bool], tuple[str, str, Severity]] = {}
    pipes: dict[tuple[str, bool], tuple[str, str, Severity] | tuple[()]] = {}
    # The plain ``NAME|>`` after a bar (``<|im_end|>``), hostile text's commonest token: its report is
    # worked out once per (span, slash, opener length), which decide it (_plain_pipe_report).
    plain: dict[tuple[str, bool, int], tuple[str, Severity, str] | tuple[()] | None] = {}
    # (opener, raw window) -> does the escaped slash there stand before a reserved name or token?
    slashes: dict[tuple[str, str], bool] = {}
    # (window, offset) -> the reserved-only reading of a token spelled in letter symbols (``lettered``).
    rereads: dict[tuple[str, int], tuple[str, str, bool, int]] = {}
    simple_pipe = _SIMPLE_PIPE_RE.match if _SIMPLE_PIPE_RE is not None else None

    def describe(start: int, end: int, kind: str, name: str, slash: bool, rend: int) -> _Described:
        if kind == "token" and _spelled_in_symbols(text, end, rend):
            return lettered(start, end, name, slash, rend)
        got = piped(start, end, kind, name, slash, rend)
        if kind != "bar" or any(r[1] == "error" for r in got[1]) or (end < n and text[end] == "\\"):
            return got
        # A bar that opens no token (or a token shape reported as a warning only): the eye may still
        # spell a name with the bar read as a letter or separator (_unpiped_reading), reported in its
        # place. That reading depends on the opener and the MAX_LOOKAHEAD + 1 characters after it (after
        # the bar, for the reserved reading past the bar), so the native loop reuses the answer only where
        # the text is the same that far (no memo here: its key would cost that window per record).
        wide = max(end, rend) + MAX_LOOKAHEAD + 1
        u = _unpiped_reading(text, end, names, rend, slash)
        if u is not None and u.kind == "padding":
            # Padding past the bar: an envelope tag after it replaces the bar's reports. The padding
            # itself (a warning, or a layout note) is reported only after a bar look-alike where the
            # bar reported nothing: an ASCII ``<|`` (or ``&verbar;``) before blanks or a rule of dashes
            # is the F#/Elm pipe operator or ASCII art (the deliberate exception of _hit_of).
            pad = _padding_finding(text, start, end, u.end, ctx)
            if pad[1] == "error" or not (got[1] or text[end:rend].isascii()):
                return None, [pad]
            return None, got[1]
        if u is not None and u.kind == "token" and _spelled_in_symbols(text, end, u.end):
            return lettered(start, end, u.name, u.slash, u.end)
        hit = None if u is None else _hit_of(text, u.kind, u.name, u.slash, u.end, ctx, maps)
        if u is None or hit is None:
            return (None if got[0] is None or wide >= n else max(got[0], wide)), got[1]
        until = max(wide, hit.end) if _settled(text, hit, u.end) else None
        return (until if until is not None and until < n else None), [described_hit(start, end, hit)]

    def lettered(start: int, end: int, name: str, slash: bool, rend: int) -> _Described:
        # The reading took letter symbols for nothing to form a short token first (``</co>`` inside
        # ``</ⓡⓔⓣⓡⓘⓔⓥⓔⓓ_ⓒⓞⓝⓣⓔⓝⓣ>``): the envelope tag the same letters spell is reported in its place,
        # and a token is an error whatever its name (stop 49: a warning let the gate pass).
        room = _name_room(text, end, names)
        if len(rereads) >= _REREADS_MAX:
            rereads.clear()  # its keys are windows of about 1,300 characters: a few megabytes at most
        again = modeleye._NONE
        if room:
            again = backend.read_reserved_only(text, start, end, ctx.reserved, _reserved_only(names), rereads)
        # The second reading depends on the text up to the end of its window (and on the character before
        # the opener where a quote follows it: ``'<'``), so the native loop may reuse the answer there.
        hi = backend.reread_window(text, start, end)[1]
        window = hi if hi < n and text[end : end + 1] not in modeleye._ASCII_QUOTE_CHARS else None
        if again.kind == "reserved" and (hit := _hit_of(text, "reserved", again.name, again.slash, again.end, ctx, maps)):
            settled = window is not None and hit.closed and "&" not in text[again.end : hit.end]
            return (max(window, hit.end) if settled and window is not None else None), [described_hit(start, end, hit)]
        got = piped(start, end, "token", name, slash, rend)
        why = "(written in letter symbols: a disguise)"
        until = max(got[0], window) if got[0] is not None and window is not None else None
        return until, [r if r[1] == "error" else (r[0], "error", f"{r[2]} {why}", r[3], r[4]) for r in got[1]]

    def described_hit(start: int, end: int, hit: _Hit) -> _Plain:
        near = hit.name == "s" and not hit.slash and context.regex_group_or_arrow(text, start, hit.end)
        key = (text[start : hit.end], hit.kind, hit.name, hit.slash, hit.closed, near)
        got = described.get(key)
        if got is None:
            got = described[key] = _describe_hit(text, start, hit, ctx)
        rule, message, severity = got
        return (rule, severity, message, start, max(hit.end, end))

    def piped(start: int, end: int, kind: str, name: str, slash: bool, rend: int) -> _Described:
        if kind == "bar" and simple_pipe is not None:
            if rend >= n or text[rend] in _PIPE_FIRST_STOPS:
                if end >= n or text[end] != "\\":
                    # _pipe_token gives up on its first character: a bare ``<|`` (a pipe operator)
                    return (None if rend >= n or end >= n else max(rend, end) + 1), []
            elif text[rend].isspace():
                pass  # a blank after the bar: _pipe_token reads past it (below)
            else:
                simple = simple_pipe(text, rend)
                if simple is not None:
                    stop = simple.end()
                    plain_key = (text[start:stop], slash, end - start)
                    got = plain.get(plain_key, _UNKNOWN)
                    if got is _UNKNOWN:
                        got = plain[plain_key] = _plain_pipe_report(text, start, end, simple, slash, ctx) if end < stop else None
                    if got is not None:
                        # The report depends on the span, the slash and the opener's length alone.
                        return stop, ([(got[0], got[1], got[2], start, stop)] if got else [])
        escaped = end < n and text[end] == "\\"
        if escaped:
            k = end
            while k < n and k - end < MAX_RUN and text[k] == "\\":
                k += 1
            hit = _hit_of(text, kind, name, slash, rend, ctx, maps)
            if hit is None:
                # A backslash-escaped slash: <\u002f... (read after its own opener: «\ s\ » is a quoted word)
                # The verdict depends on the opener and the raw window alone; code repeats its
                # escaped slashes (``/<\/?[a-z]+>/``), so it is worked out once per (opener, window).
                opener = text[start:end]
                raw = text[end : k + 128]
                found = slashes.get((opener, raw))
                if found is None:
                    window = opener + _decode_escapes(raw)
                    found = reading_kind_after(window, len(opener), ctx.reserved, ctx.tokens, names) in ("reserved", "token")
                    if len(slashes) < _SLASHES_MAX:
                        slashes[(opener, raw)] = found
                # The verdict and its report depend on text[start : k + 128] alone (with the kind, whose
                # hit is none without reading the text), so the native loop may reuse them where that
                # much text follows.
                until = k + 128 if kind not in _TEXT_HITS and k + 128 <= n else None
                if found:
                    return until, [(DEFANGED_TAG.id, "warning", "escaped slash before a reserved name", start, min(n, k + 16))]
                return until, []
            what = "an envelope tag" if hit.kind == "reserved" else "a control token"
            return None, [(DEFANGED_TAG.id, "warning", f"already-escaped form of {what} ({hit.name!r})", start, hit.end)]
        if kind == "none":
            return (end + 1 if end < n else None), []  # the character after the opener is not a backslash
        if kind == "padding":
            return None, [_padding_finding(text, start, end, rend, ctx)]
        if kind == "bar":
            if rend >= n or text[rend] in _PIPE_FIRST_STOPS:
                return None, []  # _pipe_token gives up on its first character: a bare ``<|`` (a pipe operator)
            simple = _SIMPLE_PIPE_RE.match(text, rend) if _SIMPLE_PIPE_RE is not None else None
            if simple is not None:
                # The plain ``NAME|>`` of _pipe_token, described once per spelling (the pipe's
                # description depends on its name only).
                stop = simple.end()
                spelled = (text[start:stop], slash)
                pipe = pipes.get(spelled)
                if pipe is None:
                    word = simple.group(1)
                    hit = _Hit("pipe", f"<|{word}|>", slash, stop, True)
                    pipe = pipes[spelled] = _describe_hit(text, start, hit, ctx) if _named(word) else ()
                return None, ([(pipe[0], pipe[2], pipe[1], start, max(stop, end))] if pipe else [])
        hit = _hit_of(text, kind, name, slash, rend, ctx, maps)
        if hit is None:
            return None, []  # a bare ``<|`` (see _hit)
        report = described_hit(start, end, hit)
        # (and on the character after the opener, not a backslash)
        return (max(hit.end, end + 1) if end < n and _settled(text, hit, rend) else None), [report]

    return describe


def _settled(text: str, hit: _Hit, reading_end: int) -> bool:
    """Does ``hit``'s report depend on the text up to its end alone? A token's depends on its span; a
    closed reserved tag's, or a bar shape's (``<|im_end|>``, ``<|turn>``: _pipe_token reads no
    further than its closer), on the text up to its '>' when no reference is read on the way
    (decode_at reads a reference's body, which may look further). A ``<s>`` looks around it
    (_describe_hit)."""
    if hit.name == "s":
        return False
    return hit.kind == "token" or (hit.kind in ("reserved", "pipe") and hit.closed and "&" not in text[reading_end : hit.end])


def _plain_pipe_report(
    text: str, start: int, end: int, simple: re.Match[str], slash: bool, ctx: Context
) -> tuple[str, Severity, str] | tuple[()] | None:
    """What :func:`_scan_openers` reports for a bar opener whose ``NAME|>`` is plain (``simple``, a match
    of ``_SIMPLE_PIPE_RE`` at the reading's end, past the opener's ``end``): a report, ``()`` for none, or
    ``None`` when the text after the span decides (an escaped opener without a letter or digit in the
    name, read by the escaped-slash check). It depends on the span ``text[start:simple.end()]``, the
    slash and the opener's length alone."""
    word = simple.group(1)
    stop = simple.end()
    hit = _Hit("pipe", f"<|{word}|>", slash, stop, True)
    if text[end] == "\\":
        if not _named(word):
            return None
        return DEFANGED_TAG.id, "warning", f"already-escaped form of a control token ({hit.name!r})"
    if not _named(word):
        return ()
    rule, message, severity = _describe_hit(text, start, hit, ctx)
    return rule, severity, message


def _scan_brackets(text: str, ctx: Context, out: list[_Raw]) -> None:
    """``[NAME]`` control tokens through the same eye (:func:`envelock.modeleye.read_bracket`).

    Severity, for precision on code (``list[Mark]``, ``[args]``, ``[inst]``): an error
    when written exactly as the model family writes it (``[INST]``, ``[/INST]``,
    ``[gMASK]``) or disguised (look-alikes, references, invisible characters); a
    warning when only ASCII case or spacing differs, and for a token of
    :data:`~envelock.tokens.BRACKET_TOKEN_CONTEXT` outside its context. An
    already-escaped one (``[\\INST]``) is a warning. The defang escapes all of them.
    """
    _records(text, ctx, "bracket", _bracket_describer(text, ctx), out)


def _bracket_describer(text: str, ctx: Context) -> _Describe:
    """The reports of one bracket record (:data:`_Describe`), and how far into the text they depend."""
    names, _, _, brk = _name_maps(ctx)
    n = len(text)
    # Hostile text repeats one token many times: a record's report is worked out once per (span, kind,
    # name read, slash, opener length), which decide it (the opener's backslash is inside the span),
    # unless it also depends on the text around the span (padding, a token with a context): None.
    known: dict[tuple[str, str, str, bool, int], tuple[str, Severity, str] | None] = {}
    # (span, name, slash, in context) -> (rule, severity, message), for the tokens that have a context.
    described: dict[tuple[str, str, bool, bool], tuple[str, Severity, str]] = {}

    def describe(start: int, end: int, kind: str, rname: str, slash: bool, rend: int) -> _Described:
        if kind == "none":
            return end, []
        span = text[start:rend]
        key = (span, kind, rname, slash, end - start)
        got = known.get(key, _UNKNOWN)
        if got is _UNKNOWN:
            got = known[key] = _bracket_report(span, kind, brk.get(rname, rname), slash, end - start) if end < rend else None
        if got is not None:
            return rend, [(got[0], got[1], got[2], start, rend)]
        if kind == "padding":
            # A token after the padding (``[`` + 40 U+2800 + ``INST]``, stop 50): graded as where it stands.
            first = _past_lead(text, end, min(n, end + MAX_LOOKAHEAD), stop_at_bars=True)
            padded = modeleye.read_bracket(text, first, names) if first < n else modeleye._NONE
            if padded.kind == "token":
                tname = brk.get(padded.name, padded.name)
                padded_span = text[first - 1 : padded.end]
                rule, severity, message = _describe_bracket(padded_span, tname, slash or padded.slash, True, None)
                return None, [(rule, severity, f"{message} (disguised by padding)", start, padded.end)]
            if padded.kind == "bar":
                shown = visible(text[first - 1 : padded.end])
                msg = f"chat-template control token {shown} (a bracket-bar token, disguised by padding)"
                return None, [(CONTROL_TOKEN.id, "error", msg, start, padded.end)]
            layout = context.layout_padding(text, end, rend, names, bracket=True)
            what = "code layout the eye reads past" if layout else "padding too long to read past"
            return None, [(PADDED_OPENER.id, "note" if layout else "warning", f"bracket followed by {what}", start, rend)]
        escaped = end < n and text[end] == "\\"
        if kind == "bar":
            if escaped:
                return None, [(DEFANGED_TAG.id, "warning", f"already-escaped form of control token {visible(span)}", start, rend)]
            msg = f"chat-template control token {visible(span)} (a bracket-bar token: EXAONE, BlueLM)"
            return None, [(CONTROL_TOKEN.id, "error", msg, start, rend)]
        name = brk.get(rname, rname)
        if escaped:
            token = f"[{'/' if slash else ''}{name}]"
            return None, [(DEFANGED_TAG.id, "warning", f"already-escaped form of control token {token}", start, rend)]
        after = BRACKET_TOKEN_CONTEXT.get(name)
        in_context = after is None or text[rend : rend + 8].lstrip().startswith(after)
        dkey = (span, name, slash, in_context)
        report = described.get(dkey)
        if report is None:
            report = described[dkey] = _describe_bracket(span, name, slash, in_context, after)
        return None, [(report[0], report[1], report[2], start, rend)]

    return describe


#: A cache miss (``None`` is a cached answer: work the record out in full).
_UNKNOWN: Any = object()


def _bracket_report(span: str, kind: str, name: str, slash: bool, opener: int) -> tuple[str, Severity, str] | None:
    """The report of a bracket record that depends on its span alone (``span[opener]`` is the
    character after the opener), or ``None`` when the text around it decides (padding, a token
    read differently in its template's context)."""
    escaped = span[opener] == "\\"
    if kind == "bar":
        if escaped:
            return DEFANGED_TAG.id, "warning", f"already-escaped form of control token {visible(span)}"
        return CONTROL_TOKEN.id, "error", f"chat-template control token {visible(span)} (a bracket-bar token: EXAONE, BlueLM)"
    if kind != "token":
        return None
    if escaped:
        return DEFANGED_TAG.id, "warning", f"already-escaped form of control token [{'/' if slash else ''}{name}]"
    if name in BRACKET_TOKEN_CONTEXT:
        return None
    rule, severity, message = _describe_bracket(span, name, slash, True, None)
    return rule, severity, message


def _describe_bracket(span: str, name: str, slash: bool, in_context: bool, after: str | None) -> tuple[str, Severity, str]:
    """(rule, severity, message) of a ``[NAME]`` token spelled ``span`` (see :func:`_scan_brackets`)."""
    token = f"[{'/' if slash else ''}{name}]"
    # CJK text quotes and labels a word with its own wide brackets (「Think」と言った, 【Think】): such a
    # pair is graded as the ASCII pair would be (stop 51, a red-team find: an error where ``[Think]`` is
    # a warning); the defang escapes both alike, and a disguise inside still counts.
    graded = _ascii_bracketed(span)
    if name.endswith("#") and re.fullmatch(re.escape(token[:-2]) + "[0-9]+]", graded):
        token = graded  # a placeholder family written as its tokenizer writes it: [control_8]
    if _disguised(graded) or (graded == token and in_context):
        return CONTROL_TOKEN.id, "error", f"chat-template control token {token}{_disguises(span, token)}"
    why = "differs only in case or spacing" if graded != token else f"not followed by {after!r} as in its template"
    return CONTROL_TOKEN.id, "warning", f"{span} reads as control token {token} ({why}; also ordinary code or help text)"


def _disguised(span: str) -> bool:
    """Does a bracket token's span hold a disguise: a reference, an invisible character, a combining
    mark (``[I\u0336NST]``: drawn over a letter, read past; from the generated table, so a mark newer
    than the interpreter's ``unicodedata`` counts too: ``[I\u1ad0NST]``, stop 49), or a non-ASCII character read as a letter
    or bracket? Visible punctuation the eye reads past (the ``…`` of ``[ARGS…]`` in help text) is not
    one: that is spacing, a warning at most."""
    if "&" in span:
        return True
    # Any other non-ASCII character but punctuation is one too: a blank (``[IN\u2800ST]``, ``[\u3000INST]``,
    # NBSP; stop 50, a red-team find: graded as ASCII spacing), a symbol the eye reads past.
    return any(
        c > "\x7f"
        and (
            modeleye.is_ignorable(c)
            or modeleye.is_mark(c)
            or c in _BRACKETS
            or any(modeleye.readings(c))
            or not unicodedata.category(c).startswith("P")
        )
        for c in span
    )


_BRACKETS = frozenset(modeleye.LBRACKET_CHARS + modeleye.RBRACKET_CHARS)
#: The generated WIDE_BRACKETS (East Asian punctuation: 「」『』【】〔〕 and the fullwidth forms), by side.
_WIDE_LBRACKETS = frozenset(chr(c) for c in WIDE_BRACKETS) & frozenset(modeleye.LBRACKET_CHARS)
_WIDE_RBRACKETS = frozenset(chr(c) for c in WIDE_BRACKETS) & frozenset(modeleye.RBRACKET_CHARS)


def _ascii_bracketed(span: str) -> str:
    """``span`` with a wide bracket pair around it written as ASCII ``[`` ``]``, else ``span``."""
    if len(span) >= 2 and span[0] in _WIDE_LBRACKETS and span[-1] in _WIDE_RBRACKETS:
        return "[" + span[1:-1] + "]"
    return span


def _scan_exact(text: str, ctx: Context, out: list[_Raw]) -> None:
    """Tokens a tokenizer matches exactly and the eye does not read (``>>TITLE<<``, ``]~b]``, ``｜DSML｜``,
    ``<NAME>``, ``[IMG]``): what the defang escapes exactly, reported exactly. A token with no opener is
    an error; one whose name is an ordinary word (``<NAME>``, ``[IMG]``, also help text and markup) a
    warning; its escaped form (``>\\>TITLE<<``) a warning."""
    names = _name_maps(ctx)[0]
    if not names.exact:
        return
    for i, end in exact_tokens(text, ctx.reserved, ctx.tokens):
        token, j = exact_token_read(text, i, end)
        written = text[i:j] + text[j:end].lstrip("\\")
        shown = visible(token) + ("" if written == token else " (written with character references)")
        if exact_escaped(text, i):
            out.append(_Raw(DEFANGED_TAG.id, "warning", f"already-escaped form of control token {shown}", i, end))
        elif (token[0] in _LT or token[0] in _BRACKETS) and (ctx.tokens is None or token not in ctx.tokens.strings):
            # (A token the team loaded stays an error: its shape is theirs to know, as in _placeholder_shaped.)
            msg = f"{shown} is a control token of a real tokenizer (matched exactly; also an ordinary word)"
            out.append(_Raw(CONTROL_TOKEN.id, "warning", msg, i, end))
        else:
            msg = f"chat-template control token {shown} (matched exactly by the tokenizers that define it)"
            out.append(_Raw(CONTROL_TOKEN.id, "error", msg, i, end))


_QUOTATION_ANGLES = frozenset(chr(c) for c in QUOTATION_ANGLES)


def _guillemet_quoted(snippet: str) -> bool:
    """Is a token spelled as a word quoted with guillemets and blanks, as French and other prose
    quote (``« tool_call »``, ``‹ start_of_turn ›``)? Written exactly (``<tool_call>``) or disguised
    otherwise, it is not. (A quoted plain word, ``« system »``, is no reading at all:
    :func:`envelock.eye.reader.quoted_word`.)"""
    return (
        len(snippet) >= 4
        and snippet[0] in _QUOTATION_ANGLES
        and snippet[-1] in _QUOTATION_ANGLES
        and (snippet[1].isspace() or snippet[-2].isspace())
    )
