"""Encoded tags: percent/backslash escapes, ciphers, base64/hex/binary blobs that decode to a tag or token."""

from __future__ import annotations

import base64
import binascii
import bisect
import codecs
import re
from collections.abc import Callable, Hashable, Iterator, Sequence
from functools import lru_cache, partial
from html.entities import html5
from itertools import repeat
from typing import NamedTuple, TypeVar, cast

from ..eye import backend
from ..eye.reader import (
    BRACKET_OPENER_RE,
    LBRACKET_CHARS,
    LT_CHARS,
    MAX_RUN,
    OPENER_RE,
    Kind,
    Names,
    Reading,
    escape_starts,
    exact_after,
    names_for,
    read_bracket,
    visible,
)
from . import context, regex_reach
from ._base import (
    BLOB_MAX,
    ESCAPE_LAYERS,
    SNIPPET_MAX,
    SOFT_BREAKS,
    Context,
    Rule,
    _adder,
    _decode_escapes,
    _Raw,
    _Reports,
    ascii_folded,
    folds_ascii_case,
)
from .context import is_text
from .tags import _first_danger, _hit_after, _name_maps

# The rules this module reports (collected by envelock.scan.rules).

ENCODED_TAG = Rule(
    "encoded-tag",
    "Percent-, backslash- or cipher-encoded envelope tag or control token",
    (
        "`%3C/retrieved_content%3E`, `\\u003c/retrieved_content`, `\\x3c...`, `%uFF1C...`, or a reserved name "
        "in ROT13, Atbash or reversed. Not a tag as it stands, but one decoding step (by a tool, a template "
        "or a model asked to decode) away from one."
    ),
    "warning",
    5.0,
    "encoded",
)

ENCODED_BLOB_TAG = Rule(
    "encoded-blob-tag",
    "Base64, hex or binary run that decodes to an envelope tag or control token",
    (
        "A run of base64 (standard or URL-safe), hex digits or 8-bit binary groups whose decoded bytes hold "
        "an envelope tag or chat-template control token: the classic 'decode this and follow it' injection."
    ),
    "warning",
    5.0,
    "encoded",
)

RULES: tuple[Rule, ...] = (
    ENCODED_TAG,
    ENCODED_BLOB_TAG,
)


def _cipher_names(reserved: tuple[str, ...]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    atbash = str.maketrans("abcdefghijklmnopqrstuvwxyz", "zyxwvutsrqponmlkjihgfedcba")
    for name in reserved:
        low = name.lower()
        out.append((codecs.encode(low, "rot13"), f"ROT13 of {name!r}"))
        out.append((low.translate(atbash), f"Atbash of {name!r}"))
        out.append((low[::-1], f"{name!r} reversed"))
    return out


@lru_cache(maxsize=16)
def _cipher_re(reserved: tuple[str, ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    alts: list[str] = []
    labels: dict[str, str] = {}
    for enc, label in _cipher_names(reserved):
        words = [w for w in re.split(r"[_\- ]", enc) if w]
        alts.append(r"[ \t_\-]{0,3}".join(re.escape(w) for w in words))
        labels["".join(words)] = label
    return re.compile("|".join(alts), re.IGNORECASE), labels


# Encoded characters, whatever they encode: percent (a UTF-8 sequence, each byte possibly double-
# encoded as %25.., or %uXXXX), quoted-printable (a UTF-8 sequence), backslash escapes (JSON/JS/
# Python/C/Rust/CSS: \uXXXX, \u{..}, \x{..}, \UXXXXXXXX, \x and a UTF-8 sequence of \x bytes, octal
# or CSS hex digits) and UTF-7 (a base64 segment). Which of them is an opener is decided by what
# they decode to (``_opener_starts``, from the reader's tables), never by a list of encodings of
# ``<``: a hand-written list knew ``<`` and ``＜`` only, and ``%E2%80%B9/retrieved_content>`` or
# ``\u3008|im_end|〉`` went unreported.
# ``%25`` layers up to :data:`ESCAPE_LAYERS` in all (a bound: the windowed passes need one).
_PCT = rf"%(?:25){{0,{ESCAPE_LAYERS - 1}}}"
_HEX2 = "[0-9a-fA-F]{2}"


def _utf8_run(prefix: str, last: str) -> str:
    """One UTF-8 sequence of ``prefix``-escaped bytes (a lone or stray byte as itself). A continuation
    byte right after another escaped byte of the same kind (``last``: a regex for what comes between
    the two bytes' digits, the prefix without its repeats) is part of that byte's sequence, as a
    decoder reads it, not a candidate of its own: a run of one escaped look-alike (``%E2%80%B9…``)
    would otherwise cost a Python step per byte."""
    cont = f"{prefix}[89abAB][0-9a-fA-F]"
    after_byte = f"(?<![89a-fA-F][0-9a-fA-F]{last})"
    return (
        rf"(?:[c-dC-D][0-9a-fA-F]{cont}|[eE][0-9a-fA-F](?:{cont}){{2}}|[fF][0-7](?:{cont}){{3}}"
        rf"|[0-7c-fC-F][0-9a-fA-F]|{after_byte}[89abAB][0-9a-fA-F])"
    )


_BACKSLASH_X = r"\\{1,4}x"
_BACKSLASH_X_ONE = r"\\x"
#: The characters an escape starts with: an escaped character that decodes to one of them is the
#: first layer of another escape (``%5Cu003c`` is ``\\u003c``).
_INTRODUCERS = frozenset("%\\=+")
#: The HTML named references for them (from the HTML5 table: ``percnt``, ``bsol``, ``equals``, ``plus``).
_INTRODUCER_NAMES = tuple(sorted({k.rstrip(";") for k, v in html5.items() if v in _INTRODUCERS}, key=lambda k: (-len(k), k)))
if not _INTRODUCER_NAMES:
    raise ImportError("the HTML5 table names none of % \\ = +")  # pragma: no cover


def _numeric_introducers(base: int, width: int) -> str:
    """The digits of a numeric reference (at most ``width`` of them, in ``base`` 16 or 10) whose value
    is an introducer's code point: what the reference pattern's greedy ``{1,width}`` digits read as
    one. A reference to any other character decodes to no introducer, and a reference counts only
    as a layer (its opener is the openers pass's), so it is no candidate: ``&#x3c;`` repeated then
    costs the engine a failed attempt each, not a match object and a look-up each."""
    digit = "[0-9a-fA-F]" if base == 16 else "[0-9]"
    by_length: dict[int, list[str]] = {}
    for c in sorted(_INTRODUCERS):
        shown = f"{ord(c):x}" if base == 16 else str(ord(c))
        by_length.setdefault(len(shown), []).append("".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in shown))
    # Zeros, the value, then either all ``width`` digits read (the prefix before them, ``&#x`` or
    # ``&#``, is no digit) or no digit after (more would be read into the value).
    read_whole = f"(?:(?<={digit}{{{width}}})|(?!{digit}))"
    return "|".join(f"0{{0,{width - n}}}(?:{'|'.join(values)}){read_whole}" for n, values in sorted(by_length.items()))


#: The schemes, each starting with its own literal character (``%``, ``=``, ``\\``, ``+``).
_SCHEMES = (
    rf"(?P<pct>{_PCT}(?:[uU](?P<pu>[0-9a-fA-F]{{4}})|{_utf8_run(_PCT, '%')}))",
    rf"(?P<qp>={_utf8_run('=', '=')})",
    r"\\\\{0,3}(?:u(?P<u>[dD][89abAB][0-9a-fA-F]{2}\\{1,4}u[dD][c-fC-F][0-9a-fA-F]{2}|[0-9a-fA-F]{4})"
    r"|u\{(?P<ub>[0-9a-fA-F]{1,6})\}|x\{(?P<xb>[0-9a-fA-F]{1,6})\}"
    rf"|U(?P<U>[0-9a-fA-F]{{8}})|(?P<x>x{_utf8_run(_BACKSLASH_X, _BACKSLASH_X_ONE)})|(?P<digits>[0-9a-fA-F]{{1,6}})(?P<sp> ?))",
    r"\+(?P<utf7>[A-Za-z0-9+/]{2,16})-?",
    # An HTML reference for an escape's first character (``&#37;3C``, ``&bsol;u003c``): a second layer.
    rf"(?P<ref>&(?:#[xX](?P<rx>{_numeric_introducers(16, 6)})|#(?P<rd>{_numeric_introducers(10, 7)})"
    rf"|(?P<rn>{'|'.join(_INTRODUCER_NAMES)}));?)",
)
_ENC_OPENER_RE = re.compile("|".join(_SCHEMES))


#: What the first characters of a match of each scheme (in ``_SCHEMES``' order) must be: its
#: introducer, then a character of the second set, then (when the third is not empty) one of the
#: third. Read off the regexes themselves (``regex_reach.starts``); ``None`` when one cannot be read
#: (the passes then search the whole text). ``tests/scan/test_regex_reach.py`` holds the reading.
_SCHEME_STARTS = regex_reach.all_starts(_SCHEMES)


class _Candidates:
    """``_ENC_OPENER_RE.finditer`` without the escapes that ``copies`` copies of themselves follow, as
    one pass per scheme merged by start.

    A regex that starts with a literal character is searched for it by the engine's own fast loop (a
    ``\\{1,4}`` or a leading lookahead is not: three to sixty times slower on source code). The merge
    is what one combined ``finditer`` finds: a match of one scheme holds none of the other schemes'
    first characters (a percent match only ``%``, hex digits and ``u``; quoted-printable ``=`` and
    hex; a backslash escape ``\\``, hex, ``u x U { }`` and one space; UTF-7 ``+``, base64 letters,
    ``/`` and ``-``; a reference ``&``, ``#``, letters, digits and ``;``), so no match starts inside
    another's, and each scheme's own pass keeps its matches apart as ``finditer`` does
    (``tests/scan/test_scan_encoded_openers.py`` holds the two equal).

    In a run of one escape repeated (``%3C%3C%3C…``, hostile text) only the last ``copies`` can start
    anything: an opener followed by an opener reads nothing, and no exact token starts with more than
    ``copies`` of one character (the caller's bound, from the tokens). The engine drops the others in
    its own loop (a negative lookahead with a backreference), not a Python step each.

    With the native core, each pass searches only windows around the places its scheme can start
    (``_SCHEME_STARTS``, found by ``_native.scheme_starts``): even the engine's literal loop is a
    pass over the text per scheme, five in all, where escapes are rare. A window runs from a start to
    ``margin`` past the last start near it, ``margin`` bounding what an attempt there reads (its match,
    ``copies`` copies of it for the lookahead, one character more; the lookbehind of a UTF-8
    continuation byte reads the text before the window, which ``finditer(text, pos)`` sees). An
    attempt at a place no scheme start is matches nothing, and windows are further apart than a
    match is long, so each window's ``finditer`` finds just what the whole pass finds there
    (``tests/scan/test_scan_encoded_starts.py``, with controls that drop a start or shrink the
    margin). The windows together are at most the text long."""

    def __init__(self, schemes: tuple[str, ...], copies: int) -> None:
        self.copies = copies
        self.passes = tuple(re.compile(f"(?P<esc{k}>{p})(?!(?:(?P=esc{k})){{{copies}}})") for k, p in enumerate(schemes))
        widths = [regex_reach.max_width(p) for p in schemes]
        self.margins = tuple((w + 1) * (copies + 1) for w in widths if w is not None) if None not in widths else None

    def finditer(self, text: str, loud: str | None = None) -> Iterator[re.Match[str]]:
        """The matches; with ``loud`` (:func:`_loud`), on the native core, without the quiet escapes
        (``core::escapes::quiet_at``: a fixed shape that decodes to none of ``loud``, whose verdict is
        :data:`_NOTHING`), which most escapes in source code are (``\\x00``, ``\\d``, ``=Fa``). The
        native search also leaves out every escape of a fixed shape followed by ``copies`` copies of
        itself (``core::escapes::repeated_at``): the regex has no match there."""
        limit = len(text) // _WINDOWED_EVERY if _WINDOWED_EVERY else len(text)  # 0: windows however dense
        starts = None
        if self.margins is not None and _SCHEME_STARTS is not None:
            starts = backend.native_scheme_starts(text, _SCHEME_STARTS, limit, loud, self.copies)
        if starts is not None and not any(s is None or s for s in starts):
            return iter(())  # no scheme starts anywhere: every window search would find nothing
        if starts is None or self.margins is None:
            found = [ms for ms in (list(p.finditer(text)) for p in self.passes) if ms]
        else:
            found = [ms for ms in (_pass(p, text, s, w) for p, s, w in zip(self.passes, starts, self.margins, strict=True)) if ms]
        if len(found) == 1:
            return iter(found[0])
        return iter(sorted((m for ms in found for m in ms), key=re.Match.start))


#: A pass searches windows when its starts are at most one in this many characters: a window costs
#: a Python step, and where escapes are dense (roff's ``\\fB`` in man pages, one in 40 characters)
#: the engine's one pass over the text costs less (2 MB of them: 20 ms windowed, 14 ms whole).
_WINDOWED_EVERY = 1024


def _pass(pattern: re.Pattern[str], text: str, starts: list[int] | None, margin: int) -> list[re.Match[str]]:
    """One scheme's matches: in windows around its starts, or by one pass over the text where the
    starts are too dense for windows to pay (``None``: more than one in ``_WINDOWED_EVERY``
    characters, the native search stopped there)."""
    if starts is None:
        return list(pattern.finditer(text))
    return _in_windows(pattern, text, starts, margin)


def _in_windows(pattern: re.Pattern[str], text: str, starts: list[int], margin: int) -> list[re.Match[str]]:
    """``pattern.finditer(text)`` where every match starts at one of ``starts`` (sorted) and an attempt
    reads at most ``margin`` characters: the starts closer than ``margin`` to the one before make one
    window, whose matches are those that start at most at its last start. The engine is handed
    another ``margin`` of text past the window's end so that every attempt inside it reads all it
    would in the whole text: an escape the native search left out (it has no match in the whole
    text: ``core::escapes::repeated_at``, ``quiet_at``) may lie inside a window, and its repeat
    lookahead, cut off by the window's end, would match."""
    out: list[re.Match[str]] = []
    n, k = len(text), 0
    while k < len(starts):
        first = last = starts[k]
        k += 1
        while k < len(starts) and starts[k] <= last + margin:
            last = starts[k]
            k += 1
        for m in pattern.finditer(text, first, min(n, last + 2 * margin)):
            if m.start() > last:
                break
            out.append(m)
    return out


@lru_cache(maxsize=8)
def _candidates(copies: int) -> _Candidates:
    return _Candidates(_SCHEMES, copies)


_ENC_CANDIDATE_RE = _candidates(2)


def _opener_starts(ctx: Context) -> frozenset[str]:
    """Every character a tag or token can start with: an angle or bracket opener or look-alike, the
    ``&`` of a reference, the first character of an exact token (the reader's own tables)."""
    return names_for(ctx.reserved, ctx.tokens).escape_starts()


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def _once(cache: dict[K, V], key: K, judge: Callable[[K], V]) -> V:
    """``judge(key)``, worked out once per key within one scan. Hostile text repeats one construct
    (a base64 ``<x></x>`` the sift must keep was read by the eye at every copy, 0.5 MB/s; so was
    the window after each ``%3C`` of ``%3C%7C`` repeated, 0.4 MB/s). Every cache here is keyed by
    runs or windows of the text that do not overlap, so its keys hold at most the text."""
    if key in cache:
        return cache[key]
    value = cache[key] = judge(key)
    return value


@lru_cache(maxsize=16)
def _loud(starts: frozenset[str]) -> str | None:
    """The characters an escape must decode to for this pass to act on it (``starts``, from
    :func:`_opener_starts`, and the introducers: :func:`_verdict`), for the native starts search to
    leave the quiet escapes out; ``None`` (no escape left out) when one is a lone surrogate (a team
    token's first character), which cannot cross into the core."""
    loud = "".join(sorted(starts | _INTRODUCERS))
    return None if any("\ud800" <= c <= "\udfff" for c in loud) else loud


def _code_point(v: int) -> str:
    return chr(v) if 0 < v <= 0x10FFFF and not 0xD800 <= v <= 0xDFFF else ""


def _bytes_read(data: bytes) -> set[str]:
    """The first character of escaped bytes, read as UTF-8 and (one byte) as Latin-1."""
    out = {data.decode("utf-8", "replace")[:1]}
    if len(data) == 1:
        out.add(chr(data[0]))
    return out


def _decodings(m: re.Match[str]) -> set[str]:
    """What an escape can decode to (fail closed: every reading of an ambiguous one): one character,
    or for a UTF-7 segment all it holds."""
    # The groups that took part (of the one scheme that matched: _Candidates runs one pass per scheme).
    g = {k: v for k, v in m.groupdict().items() if v is not None}
    if "pu" in g:
        return {_code_point(int(g["pu"], 16))}
    if "pct" in g:
        return _bytes_read(bytes.fromhex(re.sub(r"%(?:25)*", "", g["pct"])))
    if "qp" in g:
        return _bytes_read(bytes.fromhex(g["qp"].replace("=", "")))
    if "x" in g:
        return _bytes_read(bytes.fromhex(re.sub(r"\\+x|^x", "", g["x"])))
    if "utf7" in g:
        try:
            return {codecs.decode(f"+{g['utf7']}-".encode("ascii"), "utf-7")}
        except UnicodeDecodeError:
            return set()
    if "ref" in g:
        if "rn" in g:
            return {html5[g["rn"] + ";"]}
        return {_code_point(int(g["rx"], 16) if "rx" in g else int(g["rd"]))}
    if "u" in g and len(g["u"]) > 4:
        # A surrogate pair (JSON's form of a character above U+FFFF).
        hi, lo = int(g["u"][:4], 16), int(g["u"][-4:], 16)
        return {chr(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))}
    for key in ("u", "ub", "xb", "U"):
        if key in g:
            return {_code_point(int(g[key], 16))}
    digits = g["digits"]
    # CSS hex digits, or (C, Python, JS) one to three octal digits.
    out = {_code_point(int(digits, 16))}
    for k in (1, 2, 3):
        if k <= len(digits) and all(c in "01234567" for c in digits[:k]):
            out.add(_code_point(int(digits[:k], 8)))
    return out


#: What each escape text decodes to, for each set of start characters: (the decodings that start a
#: tag or token, whether one is an escape's first character). Bounded: cleared past _SEEN_MAX.
_SEEN: dict[frozenset[str], dict[str, tuple[tuple[str, ...], bool, bool]]] = {}
_SEEN_MAX = 1 << 16


_GROUP = re.Match.group
#: The verdict of an escape that decodes to nothing a tag, a token or another escape starts with.
_NOTHING: tuple[tuple[str, ...], bool, bool] = ((), False, False)


def _verdict(m: re.Match[str], starts: frozenset[str]) -> tuple[tuple[str, ...], bool, bool]:
    """What an escape decodes to that starts a tag or token, whether it decodes to another escape's
    first character (``_NOTHING`` when neither), and whether it ends the window of an encoded opener
    before it (:func:`_cuts`)."""
    decoded = _decodings(m)
    # An HTML reference counts only as a layer: one for an opener is the openers pass's.
    direct = () if m.groupdict().get("ref") is not None else tuple(sorted(d for d in decoded if d[:1] in starts))
    layer = any(d[:1] in _INTRODUCERS for d in decoded)
    return (direct, layer, _cuts(decoded)) if direct or layer else _NOTHING


def _cuts(decoded: set[str]) -> bool:
    """Does an escape with these readings end the window of an encoded opener before it? Only when every
    reading but a control is an opener itself (whose reading starts there). Not an escape that may also be a
    letter (CSS ``\\74 `` is ``t``, as octal ``<``: ``%3C/re\\74 rieved_content>``), nor the ``&`` of an
    encoded reference, which the window's decoding reads whole (``%3C/%26%23114%3Betrieved_content>``):
    either would end the window inside the name (red-team finds)."""
    cut_at = _window_cut_at()
    # A C0 control (or nothing) is the reading of a short octal prefix (``\\3`` of CSS ``\\3c ``):
    # not a character a reading could go on with, so it does not keep the window open.
    readings = [d for d in decoded if d[:1] >= " "]
    return bool(readings) and all(d[:1] in cut_at for d in readings)


@lru_cache(maxsize=1)
def _window_cut_at() -> frozenset[str]:
    """The angle and bracket openers and look-alikes (an escape point's characters but ``&``)."""
    return escape_starts() - {"&"}


def _scan_encoded(text: str, ctx: Context, out: list[_Raw]) -> None:
    names = _name_maps(ctx)[0]
    plan = _escape_plan(text, ctx, names)
    if plan is not None:
        _scan_escapes(text, plan, ctx, names, out)
    _scan_raw_openers(text, ctx, names, out)
    cre, labels = _cipher_re(ctx.reserved)
    for m in _cipher_matches(text, cre, ctx):
        key = re.sub(r"[ \t_\-]", "", m.group()).lower()
        out.append(_Raw(ENCODED_TAG.id, "warning", f"{labels.get(key, 'encoded reserved name')}", m.start(), m.end()))


#: The raw characters a window after an encoded opener reads (a reserved name's escapes fit).
_WINDOW = 192
#: What stands for the text past a window that its bound cut off: padding (``MAX_RUN`` + 1 characters
#: the eye skips). A reading still in its lead at the bound then gives up on padding and is reported
#: (fail closed: ``\u003c`` + 80 ``\u0000`` + ``retrieved_content`` put the name past the window).
_UNREAD = "\x00" * (MAX_RUN + 1)
#: Raw characters enough for one escape of an escape (three rounds: ``&amp;#92;u003c``, ``%255Cu003c``),
#: and how many first characters of them one scan keeps.
_LAYERED_MAX = 24
_FIRSTS_MAX = 4096


def _bounded(raw: str) -> str:
    """A window its bound cut off, decoded, then read on as padding (``_UNREAD``). The bound may cut an
    escape (``&#92;u0063`` as ``&#``): from the last escape or reference that may be unfinished, the
    window's end is dropped, for the padding to stand for it too."""
    tail = max(raw.rfind(c, max(0, len(raw) - _LAYERED_MAX)) for c in _ESCAPE_STARTS)
    return _decode_escapes(raw if tail < 0 else raw[:tail]) + _UNREAD


#: The characters an escape or a reference starts with.
_ESCAPE_STARTS = (*_INTRODUCERS, "&")


def _window_ends(found: list[tuple[int, bool, bool]], n: int) -> list[int]:
    """Where the window after each encoded character (its start, whether it is an opener, and whether
    it :func:`_cuts`) ends, in a text of ``n`` characters (an exact token's first character ends
    none: its token is followed on its own).

    A reading stops at an opener, so a window ends at the next encoded one (a ``<`` stands for it)
    and one right in front of another (``%3C%3C``) reads nothing. The window of an opener under every
    reading (:func:`_cuts`) runs on over an encoded ``&`` (its reference is decoded with the window)
    and over an escape that may also be a letter, up to the next such opener; the window of any other
    ends at the next opener of either kind. So the windows of each kind do not overlap: every
    character is decoded at most twice however dense they are (with ``%26`` + a letter repeated,
    windows that all ran on to the next cutting opener decoded each character 60 times)."""
    ends = [n] * len(found)
    following, following_any = n, n
    for k in range(len(found) - 1, -1, -1):
        start, is_opener, cuts = found[k]
        ends[k] = following if cuts else following_any
        if is_opener:
            following_any = start
        if cuts:
            following = start
    return ends


class EscapePlan(NamedTuple):
    """What the encoded pass acts on in one text: its escapes read and grouped. Computed by the
    native core in one pass (``_native.escape_plan``) or by :func:`_escape_plan_reference`, held
    equal by ``tests/scan/test_scan_encoded_plan.py``."""

    #: The exact tokens whose first character is encoded and no opener (``>`` of ``>>TITLE<<``), its
    #: other characters raw or encoded (:func:`_encoded_exact`): the escape's start, the token's end,
    #: the token.
    exact: list[tuple[int, int, str]]
    #: One per distinct window after an encoded opener, in the order of its first occurrence: what
    #: the opener decodes to, the window's raw text, its cut (above 0 when its bound cut it, below 0
    #: when the next opener did, 0 when both at once), and every occurrence's start and the end of
    #: its finding should the window read as a tag or token (:func:`_finding_end`), flattened.
    windows: list[tuple[tuple[str, ...], str, int, Sequence[int]]]
    #: The starts of escapes of an escape's first character (``%5Cu003c``): :func:`_scan_layered`.
    layered: list[int]


def _escape_plan(text: str, ctx: Context, names: Names) -> EscapePlan | None:
    """The plan of ``text`` (``None``: no escape acts): natively when the core is in use and can take
    the text and this scan's tables, else by the reference."""
    starts = _opener_starts(ctx)
    copies = _exact_copies(names.exact)
    inputs = _plan_inputs(starts)
    if inputs is not None and not _has_surrogate(names.exact):
        got = backend.native_escape_plan(text, *inputs, copies, _WINDOW, list(names.exact))
        if got is not None:
            return EscapePlan(*got)
    finder = _ENC_CANDIDATE_RE if copies == 2 else _candidates(copies)
    ms = list(finder.finditer(text, _loud(starts)))
    return _escape_plan_reference(text, ms, starts, names.exact) if ms else None  # most texts hold no escape at all


@lru_cache(maxsize=16)
def _has_surrogate(exact: tuple[str, ...]) -> bool:
    """Does a (team's) exact token hold a lone surrogate, which cannot cross into the core?"""
    return any(map(_holds_lone_surrogate, exact))


@lru_cache(maxsize=16)
def _exact_next(exact: tuple[str, ...]) -> dict[str, frozenset[str]]:
    """For each proper prefix of an exact token, the characters the raw text after it may start with
    for :func:`_encoded_exact` to read on: a token's next character, or an escape's introducer (an
    encoded character; the backslash after a first character is read past)."""
    nexts: dict[str, set[str]] = {}
    for t in exact:
        for k in range(1, len(t)):
            nexts.setdefault(t[:k], set()).add(t[k])
    return {p: frozenset(c | _INTRODUCERS) for p, c in nexts.items()}


def _may_go_on(text: str, e: int, firsts: tuple[str, ...], exact: tuple[str, ...]) -> bool:
    """Can :func:`_encoded_exact` read a token from an escape ending at ``e`` that reads as one of
    ``firsts``? Only where a reading is a token, or a prefix of one that the next character may go
    on (:func:`_exact_next`): a necessary condition, so an escape followed by anything else is left
    out of the plan (``%3E`` of ``%3Cs%3E`` repeated was a Python step each), in both plans."""
    whole = _exact_prefixes(exact)[0]
    nexts = _exact_next(exact)
    return any(o in whole or (e < len(text) and text[e] in nexts.get(o, ())) for o in firsts)


@lru_cache(maxsize=16)
def _plan_inputs(starts: frozenset[str]) -> tuple[str, str, str, str, list[tuple[str, str]]] | None:
    """The tables the native plan is computed with: the start characters, the openers (an escape
    point's characters), those that cut a window, the introducers, and the HTML names of the
    introducers with their characters; ``None`` when a start character is a lone surrogate (a team
    token's), which cannot cross into the core."""
    if _holds_lone_surrogate("".join(starts)):
        return None
    ordered = "".join(sorted(starts))
    names = [(name, html5[name + ";"]) for name in _INTRODUCER_NAMES]
    return ordered, "".join(sorted(escape_starts())), "".join(sorted(_window_cut_at())), "".join(sorted(_INTRODUCERS)), names


def _escape_plan_reference(
    text: str, ms: list[re.Match[str]], starts: frozenset[str], exact_tokens: tuple[str, ...]
) -> EscapePlan:
    """The plan of the escapes ``ms`` (the candidates' matches, in order): which decode to the start of
    a tag or token (an exact token's first character only where it may go on, :func:`_may_go_on`),
    which to another escape's first character, and the windows after the openers."""
    n = len(text)
    openers = escape_starts()
    # The encoded characters that can start a tag or token (start, end, what they decode to), in
    # order; a decision is made once per distinct escape (hostile text repeats one).
    # Kept between scans with the same start characters (a batch repeats the same escapes).
    seen = _SEEN.setdefault(starts, {})
    # (start, end, what it decodes to, whether that holds an opener, whether it ends a window), in order.
    found: list[tuple[int, int, tuple[str, ...], bool, bool]] = []
    layered: list[int] = []
    # Dense escapes repeat a few texts (roff's ``\\fB``): each match is looked up by its text in C
    # (``map``), a decision is made per new text, and only the matches that decide something are
    # visited in Python.
    keys = list(map(_GROUP, ms))
    fresh = set(keys).difference(seen)
    if fresh:
        if len(seen) + len(fresh) > _SEEN_MAX:
            seen.clear()
            fresh = set(keys)
        for key, m in dict(zip(keys, ms, strict=True)).items():
            if key in fresh:
                seen[key] = _verdict(m, starts)
    verdicts = list(map(seen.__getitem__, keys))
    # Whether each distinct decoding holds an opener, asked once (hostile text repeats a few).
    opener_in: dict[tuple[str, ...], bool] = {}
    for k in [k for k, v in enumerate(verdicts) if v is not _NOTHING]:
        direct, layer, cuts = verdicts[k]
        if direct:
            is_opener = opener_in.get(direct)
            if is_opener is None:
                is_opener = opener_in[direct] = any(d[0] in openers for d in direct)
            m = ms[k]
            found.append((m.start(), m.end(), direct, is_opener, cuts))
        elif layer:
            layered.append(ms[k].start())
    # (A CSS escape's one trailing space is part of it: ``\3c /x`` is ``</x``.)
    nxt = _window_ends([(s, is_opener, cuts) for s, _, _, is_opener, cuts in found], n)
    exact: list[tuple[int, int, str]] = []
    # By decodings, raw text and cut; the raw text of a text with a lone surrogate as the eye reads it
    # (its surrogate view: every surrogate, and VIEW_CHAR, one character), so windows that differ only
    # in which surrogate they hold are read once, as the core's plan over the view has them. Each
    # group keeps its first window's raw text.
    viewed = not text.isascii() and _holds_lone_surrogate(text)
    raws: dict[tuple[tuple[str, ...], str, int], str] = {}
    windows: dict[tuple[tuple[str, ...], str, int], list[int]] = {}
    tokens = _exact_prefixes(exact_tokens)
    # What each escape a token is followed through decodes to, by its text and last group (_once):
    # ``%3Cs%3E`` repeated asks for the same few again and again.
    decoded: dict[tuple[str, int | None], frozenset[str]] = {}
    for k, (s, e, opens, is_opener, _) in enumerate(found):
        if not is_opener:
            # The first character of an exact token alone (``>`` of ``>>TITLE<<``, ``]`` of ``]~b]``):
            # the token is followed one decoded character at a time, as long as it can go on.
            if _may_go_on(text, e, opens, exact_tokens):
                token = _encoded_exact(text, e, opens, tokens, decoded)
                if token is not None:
                    exact.append((s, token[1], token[0]))
            continue
        cut = nxt[k]
        if cut == e or (e < n and text[e] == "<"):
            continue
        bound = s + _WINDOW
        raw = text[e : min(bound, cut)]
        group = (opens, backend.surrogate_view(raw)[0] if viewed else raw, (cut > bound) - (cut < bound))
        raws.setdefault(group, raw)
        windows.setdefault(group, []).extend((s, _finding_end(text, s, e)))
    return EscapePlan(exact, [(g[0], raws[g], g[2], occ) for g, occ in windows.items()], layered)


def _holds_lone_surrogate(text: str) -> bool:
    """Does ``text`` hold a lone surrogate (one pass of CPython's UTF-8 encoder)?"""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _finding_end(text: str, s: int, e: int) -> int:
    """Where a finding over the encoded opener at ``s:e`` ends: the raw text up to the first blank
    after it (a CSS escape's one trailing space left out), ``_WINDOW`` characters at most."""
    if text[e - 1] == " ":
        e -= 1
    return _word_end(text, e, min(len(text), s + _WINDOW))


def _scan_escapes(text: str, plan: EscapePlan, ctx: Context, names: Names, out: list[_Raw]) -> None:
    """Report the escapes of ``plan`` that decode to the start of a tag or token."""
    add = _adder(out)
    for s, end, token in plan.exact:
        add((ENCODED_TAG.id, "warning", f"encoded form of {visible(token)!r}", s, end))
    for opens, raw, cut, occ in plan.windows:
        # What the window reads, once per distinct window (hostile text repeats one).
        rest = _bounded(raw) if cut > 0 else _decode_escapes(raw) + ("<" if cut < 0 else "")
        danger = next((w for w in (_encoded_danger(first + rest, ctx, names) for first in opens) if w is not None), None)
        if danger is None:
            continue
        # One report per occurrence, made in C (hostile text repeats a window hundreds of thousands of times).
        reports = zip(repeat(ENCODED_TAG.id), repeat("warning"), repeat(f"encoded form of {danger!r}"), occ[::2], occ[1::2])
        if type(out) is _Reports:
            out.extend(reports)  # type: ignore[arg-type]
        else:
            out.extend(map(_Raw._make, reports))
    _scan_layered(text, plan.layered, ctx, names, out)


#: Where an escape may start for the raw-opener windows: every scheme's start, and a quoted-printable
#: soft line break (``=`` and a newline), which ``_decode_escapes`` removes and no scheme matches
#: (``<|im_=\\nend|>`` was no finding: its only escape started no window).
_RAW_STARTS = None if _SCHEME_STARTS is None else (*_SCHEME_STARTS, ("=", "".join(sorted({b[1] for b in SOFT_BREAKS})), ""))


#: One distinct window after raw openers: its span (the first opener's) and every opener with it.
RawWindow = tuple[int, int, list[int]]


def _raw_windows(text: str) -> list[RawWindow]:
    """The windows of the raw openers (either family: ``<``, ``[``, a look-alike, a reference for one)
    whose reading may pass over an escape, one ``(start, end, starts)`` per distinct window text, in
    the order of its first opener. An opener's window runs to the next opener, or just past the first
    ASCII closer after it (``>`` after an angle opener, ``]`` after a bracket one), or ``_WINDOW``
    characters from its start, whichever comes first; it counts when the start of an escape of any
    scheme lies in it after the opener. The eye reads past no opener and no ASCII closer (neither is
    skippable nor a ``_PASS`` look-alike), so an escape after one cannot change the reading. One
    native pass (``_native.openers_with_escapes``), else :func:`_raw_windows_reference`."""
    if _RAW_STARTS is not None:
        found = backend.native_openers_with_escapes(text, _RAW_STARTS, _WINDOW)
        if found is not None:
            return found
    return _raw_windows_reference(text, _RAW_STARTS)


def _raw_windows_reference(text: str, schemes: tuple[tuple[str, str, str], ...] | None) -> list[RawWindow]:
    """The reference of :func:`_raw_windows`: the escapes' starts (``schemes``, or any escape's first
    character when they could not be read) and the openers' regexes, in Python."""
    escapes = sorted(m.start() for r in _scheme_start_res(schemes) for m in r.finditer(text))
    if not escapes:
        return []
    openers = sorted((*m.span(), r is OPENER_RE) for r in (OPENER_RE, BRACKET_OPENER_RE) for m in r.finditer(text))
    windows: dict[str, RawWindow] = {}
    for i, (a, e, angle) in enumerate(openers):
        nxt = openers[i + 1][0] if i + 1 < len(openers) else len(text)
        closer = text.find(">" if angle else "]", e, nxt)
        end = min(nxt if closer < 0 else closer + 1, a + _WINDOW)
        k = bisect.bisect_left(escapes, e)
        if k < len(escapes) and escapes[k] < end:
            windows.setdefault(text[a:end], (a, end, []))[2].append(a)
    return list(windows.values())


@lru_cache(maxsize=4)
def _scheme_start_res(schemes: tuple[tuple[str, str, str], ...] | None) -> tuple[re.Pattern[str], ...]:
    """One regex per scheme whose matches start where it can (its introducer, a lookahead for the
    next characters: every start, as ``core::escapes::scheme_starts`` finds them)."""
    if schemes is None:
        return (re.compile("[" + "".join(map(re.escape, _ESCAPE_STARTS)) + "]"),)

    def one_of(chars: str) -> str:
        return "[" + "".join(map(re.escape, sorted(chars))) + "]"

    return tuple(re.compile(f"{re.escape(i)}(?={one_of(s2)}{one_of(s3) if s3 else ''})") for i, s2, s3 in schemes)


def _scan_raw_openers(text: str, ctx: Context, names: Names, out: list[_Raw]) -> None:
    """A raw opener whose reading an escape after it completes: ``<%2Fretrieved_content>``,
    ``[INST%5D``, ``<\\u007cim_end|>``, ``&lt;|im_end|%3E``, ``<retrieved%5Fcontent>`` (red-team
    finds: the escapes pass starts only at an encoded opener). The window after each such opener, up to
    the next opener, an ASCII closer or ``_WINDOW`` (:func:`_raw_windows`), is decoded and read; it is
    reported when the decoded reading is a tag or token and the raw one is not (the tags family
    reports that one). Linear: the windows do not overlap, and each distinct one is read once."""
    windows = _raw_windows(text)
    if not windows:
        return
    n = len(text)
    # Each distinct window (hostile text repeats one hundreds of thousands of times), decoded, with
    # what it reads as decoded and as it stands; a window its bound may have cut is read on as padding.
    reads: list[tuple[RawWindow, int, str, str]] = []
    cut = [(w, _opener_end(text[w[0] : w[1]])) for w in windows]
    raws = [text[a + e : end] for (a, end, _), e in cut]
    for ((a, end, starts), e), raw, plain in zip(cut, raws, _decoded_all(raws), strict=True):
        window = text[a:end]
        opener = window[:e]
        if plain == raw:
            continue  # no escape decoded: the tags family reads this one as it stands
        # A ``<`` stands for what ended the window (the next opener, or past a closer: the reading
        # stops there).
        bounded = len(window) >= _WINDOW
        reads.append(
            (
                (a, end, starts),
                e,
                opener + (_bounded(raw) if bounded else plain + "<"),
                opener + raw + (_UNREAD if bounded else "<"),
            )
        )
    may = _may_read([r[2] for r in reads], ctx)
    reads = [r for r, m in zip(reads, may, strict=True) if m]
    # Each text is read by the native reader in one call when it is in use (the Python reader's
    # step per character was 64% of the time on ``[INST%5D`` + a counter, every window distinct).
    found = [(r, d) for r, d in zip(reads, _dangers([r[2] for r in reads], ctx, names), strict=True) if d is not None]
    raw_dangers = _dangers([r[3] for r, _ in found], ctx, names)
    for ((_, _, starts), e, _, _), danger in (f for f, r in zip(found, raw_dangers, strict=True) if r is None):
        # (one that reads as a tag as it stands is the tags family's to report)
        # Only the openers of a window that reads as a tag are visited.
        message = f"encoded form of {danger!r}"
        out.extend(_Raw(ENCODED_TAG.id, "warning", message, s, _word_end(text, s + e, min(n, s + _WINDOW))) for s in starts)


#: What stands between windows decoded in one call (:func:`_decoded_all`): a private-use character,
#: which no escape, reference or UTF-7 run reads as part of itself.
_APART = "\ue000"


def _decoded_all(raws: list[str]) -> list[str]:
    """``[_decode_escapes(r) for r in raws]``, in one call over them joined by :data:`_APART` (a call
    per window costs its rounds' setup each: man pages' ``[\\fB…]`` give a thousand windows per 2 MB).
    No escape reads across the separator, and a decoding that is done is left as it is by more
    rounds; a text that holds the separator, or decodes to one, is decoded one window at a time."""
    if len(raws) < 2 or any(_APART in r for r in raws):
        return [_decode_escapes(r) for r in raws]
    parts = _decode_escapes(_APART.join(raws)).split(_APART)
    return parts if len(parts) == len(raws) else [_decode_escapes(r) for r in raws]


def _may_read(texts: list[str], ctx: Context) -> list[bool]:
    """Which of ``texts`` (each starting with an opener) :func:`_encoded_danger` may find a tag or
    token in, screened in one native pass over all of them: one whose opener the native reader reads
    as none (no tag, token, bar or padding) and that starts no exact token cannot (``_hit_after`` of a
    reading of none is none). All of them without the native core (or with a team's tokens)."""
    if not texts:
        return []
    joined = "".join(texts)
    found = backend.native_openers(joined, ctx.reserved, ctx.tokens)
    exact = backend.native_exact_tokens(joined, ctx.reserved, ctx.tokens)
    if found is None or exact is None:
        return [True] * len(texts)
    # Each text ends in an opener (``<``) or in more padding than the eye reads past: no reading at
    # one text's opener reaches into the next.
    read = {start for start, *_ in found} | {start for start, _ in exact}
    out: list[bool] = []
    at = 0
    for t in texts:
        out.append(at in read)
        at += len(t)
    return out


def _opener_end(window: str) -> int:
    """Where the opener a raw window starts with ends (every window starts with one)."""
    m = OPENER_RE.match(window) or BRACKET_OPENER_RE.match(window)
    return 0 if m is None else m.end()


_BLANK_RE = re.compile(r"\s")


def _word_end(text: str, e: int, lim: int) -> int:
    """The first blank (``str.isspace``, which is what ``\\s`` matches in a ``str`` pattern) in
    ``text[e:lim]``, else ``lim``: where a finding over an encoded tag ends (one search in C, not a
    loop per character: dense escapes give a finding every seven characters)."""
    if e >= lim:
        return e
    m = _BLANK_RE.search(text, e, lim)
    return lim if m is None else m.start()


def _scan_layered(text: str, layered: list[int], ctx: Context, names: Names, out: list[_Raw]) -> None:
    """Escapes of an escape's first character (``%5Cu003c``, ``&#37;3C``): a window from each that
    decodes to an opener (or another start of a tag or token), up to the next one (the next opener,
    for an opener's), decoded in up to three rounds (``_decode_escapes``), is read for a tag or token
    it starts with. The escapes of other characters do not end a window:
    ``%5Cu003c%5Cu0072etrieved_content>`` spells the name with them. Linear: each character is
    decoded in two windows at most (an opener's and another head's), and in the first characters of
    the escapes that start within ``_LAYERED_MAX`` before it, worked out once per distinct text
    (``tests/scan/test_scan_encoded_padding.py`` counts the decoded characters on dense escapes of
    escapes)."""
    if not layered:
        return
    n = len(text)
    starts = _opener_starts(ctx)
    # What each escape's text decodes to first, by that text: hostile text repeats one. Its keys
    # overlap (an escape is shorter than _LAYERED_MAX), so the cache is bounded, not the text.
    first: dict[str, str] = {}

    def first_of(raw: str) -> str:
        c = first.get(raw)
        if c is None:
            c = _decode_escapes(raw)[:1]
            if len(first) < _FIRSTS_MAX:
                first[raw] = c
        return c

    heads = [(s, c) for s in layered if (c := first_of(text[s : s + _LAYERED_MAX])) in starts]
    # By the window's text (_once).
    read: dict[tuple[str, bool], str | None] = {}

    def read_window(window: tuple[str, bool]) -> str | None:
        raw, bounded = window
        return _encoded_danger(_bounded(raw) if bounded else _decode_escapes(raw), ctx, names)

    # An opener's window ends at the next opener only: a closer or an ``&`` is read inside it
    # (``%5Cu003c|im_end|%5Cu003e`` was no finding: its own closer cut it). Any other head's window
    # ends at the next head. Neither kind's windows overlap each other: each character is read twice
    # at most.
    cuts = [n] * len(heads)
    following = [n, n]  # the next opener head, the next head
    for k in range(len(heads) - 1, -1, -1):
        s, c = heads[k]
        opener = c in _LAYER_OPENERS
        cuts[k] = following[0] if opener else following[1]
        following = [s if opener else following[0], s]
    for (s, _), cut in zip(heads, cuts, strict=True):
        end = min(s + _WINDOW, cut)
        danger = _once(read, (text[s:end], cut > s + _WINDOW), read_window)
        if danger is not None:
            e = _word_end(text, s, end)
            out.append(_Raw(ENCODED_TAG.id, "warning", f"encoded form of {danger!r}", s, e))


#: The heads of layered windows that only another of them ends: the openers of both families.
_LAYER_OPENERS = frozenset(LT_CHARS) | frozenset(LBRACKET_CHARS)


@lru_cache(maxsize=16)
def _exact_copies(exact: tuple[str, ...]) -> int:
    """How many copies of one character an exact token starts with, at most (at least 2): a run of an
    escape longer than that starts nothing before its last copies (:class:`_Candidates`)."""
    return max(2, *(len(t) - len(t.lstrip(t[0])) for t in exact)) if exact else 2


@lru_cache(maxsize=16)
def _exact_prefixes(exact: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The exact tokens and every prefix of one."""
    return frozenset(exact), frozenset(t[:k] for t in exact for k in range(1, len(t) + 1))


def _decodings_of(m: re.Match[str], _key: object) -> frozenset[str]:
    return frozenset(_decodings(m))


def _encoded_exact(
    text: str,
    e: int,
    firsts: tuple[str, ...],
    tokens: tuple[frozenset[str], frozenset[str]],
    decoded: dict[tuple[str, int | None], frozenset[str]],
) -> tuple[str, int] | None:
    """An exact token whose first character is encoded (ending at ``e``), its other characters raw or
    encoded: the token read and its raw end, else ``None``. Every way of reading the text is followed
    (a ``%`` as itself or as an escape) while it is a prefix of a token, so the work is bounded by the
    longest token; backslashes right after the first character are read past, as the eye does.
    ``decoded``: the scan's decodings of escapes, by text (:func:`_once`)."""
    whole, prefixes = tokens
    n = len(text)
    states = {(c, e) for c in firsts if c in prefixes}
    while states:
        # Several tokens read at one step: the one that ends first (then the least), as the core has it.
        done = min(((i, p) for p, i in states if p in whole), default=None)
        if done is not None:
            return done[1], done[0]
        grown: set[tuple[str, int]] = set()
        for p, i in states:
            if i >= n:
                continue
            if len(p) == 1 and text[i] == "\\":
                grown.add((p, i + 1))
            steps = {(text[i], i + 1)}
            if text[i] in "%\\=+" and (m := _ENC_OPENER_RE.match(text, i)) is not None:
                readings = _once(decoded, (m.group(), m.lastindex), partial(_decodings_of, m))
                steps |= {(c, m.end()) for c in readings if c}
            grown |= {(p + c, j) for c, j in steps if p + c in prefixes}
        states = grown
    return None


def _dangers(texts: list[str], ctx: Context, names: Names) -> list[str | None]:
    """``[_encoded_danger(t, ctx, names) for t in texts]``, with the openers at the start of each
    read by the native reader in one call (``_native.openers_many``) when it is in use; else (and for
    a reading it does not give where the Python reader's opener ends) by the Python reader. The
    native fuzz harness holds the two readers equal at every position;
    ``tests/scan/test_scan_encoded_native_readings.py`` holds this equal to the reference."""
    many = backend.native_openers_many(texts, ctx.reserved, ctx.tokens)
    if many is None:
        return [_encoded_danger(t, ctx, names) for t in texts]
    return [_encoded_danger(t, ctx, names, _readings_at_start(recs)) for t, recs in zip(texts, many, strict=True)]


#: The native readings of the openers a text starts with, by family and opener end (the native pass
#: lists only the openers read as something: any other reads as none).
_AtStart = dict[tuple[str, int], Reading]


def _readings_at_start(records: list[backend.NativeOpener]) -> _AtStart:
    out: _AtStart = {}
    for start, end, kind, name, slash, rend, family in records:
        if start > 0:
            break  # in order of start
        out[family, end] = Reading(cast(Kind, kind), name, slash, rend)
    return out


def _native_reading(at_start: _AtStart | None, family: str, end: int) -> Reading | None:
    """The reading of the opener of ``family`` ending at ``end`` (none when the native pass lists
    none there), or ``None`` without native readings (the Python reader reads it)."""
    if at_start is None:
        return None
    got = at_start.get((family, end))
    if got is None and any(f == family for f, _ in at_start):
        return None  # an opener the native pass ends elsewhere: the reference reads it
    return got if got is not None else _NO_READING


_NO_READING = Reading("none")


def _encoded_danger(decoded: str, ctx: Context, names: Names, at_start: _AtStart | None = None) -> str | None:
    """The tag or token the decoded text starts with (an angle reading, a bracket token or an exact
    token), described; else ``None``. ``at_start``: the native readings of its openers
    (:func:`_dangers`)."""
    om = OPENER_RE.match(decoded)
    if om:
        hit = _hit_after(decoded, om.end(), names, ctx, _native_reading(at_start, "angle", om.end()))
        if hit is not None:
            return visible(decoded[: hit.end][:SNIPPET_MAX])
    bm = BRACKET_OPENER_RE.match(decoded)
    if bm:
        got = _native_reading(at_start, "bracket", bm.end())
        r = read_bracket(decoded, bm.end(), names) if got is None else got
        # Padding the eye gives up on fails closed, as after an angle opener (``_hit_after``) and as
        # the tags family reports it in plain text: ``[`` + 33 ``%00`` + ``INST]`` was no finding.
        if r.kind in ("token", "bar") or (
            r.kind == "padding" and not context.layout_padding(decoded, bm.end(), r.end, names, bracket=True)
        ):
            return visible(decoded[: r.end][:SNIPPET_MAX])
    end = exact_after(decoded, 0, names)
    if end >= 0:
        return visible(decoded[:end][:SNIPPET_MAX])
    return None


@lru_cache(maxsize=16)
def _cipher_firsts(reserved: tuple[str, ...]) -> tuple[str, ...]:
    """The first word of each cipher name (where ``_cipher_matches`` tries the regex), sorted."""
    return tuple(sorted({re.split(r"[_\- ]", enc)[0] for enc, _ in _cipher_names(reserved)}))


def _cipher_matches(text: str, cre: re.Pattern[str], ctx: Context) -> list[re.Match[str]]:
    """The cipher regex's matches, tried only where a first word occurs (``str.find`` on the lowered
    text, whose offsets are the text's), not at every position."""
    folds = folds_ascii_case(text, ctx)
    firsts = _cipher_firsts(ctx.reserved)
    found: dict[int, re.Match[str]] = {}
    # One native pass finds the same offsets (every occurrence of a first word, ASCII
    # case-insensitively: what ``find`` on the lowered text finds here); the loop is the reference.
    # Where a character folds to ASCII it reads the folded text (same offsets): a match of the regex
    # starts at a first word there (``ascii_folded``), and the regex still decides on ``text``.
    starts = backend.native_ascii_word_starts(ascii_folded(text, ctx), firsts)
    if starts is None and folds:
        return list(cre.finditer(text))
    if starts is not None:
        found = {i: m for i in starts if (m := cre.match(text, i))}
    else:
        lowered = text.lower()
        for first in firsts:
            i = lowered.find(first)
            while i >= 0:
                m = cre.match(text, i)
                if m and i not in found:
                    found[i] = m
                i = lowered.find(first, i + 1)
    # finditer's matches do not overlap: keep the leftmost, then the next one after its end.
    out: list[re.Match[str]] = []
    end = -1
    for i in sorted(found):
        if i >= end:
            out.append(found[i])
            end = found[i].end()
    return out


#: The shortest runs decoded: eight base64 characters are six bytes (``[INST]`` is ``W0lOU1Rd``,
#: ``<|im_end|>`` fourteen and its padding), twelve hex digits six bytes. Shorter ones hold no tag
#: or token worth a warning; the native sift is handed the same numbers.
B64_MIN, HEX_MIN = 8, 12
#: A base64 run: a whole run of base64 characters (``B64_MIN`` or more), then its padding. No
#: lookbehind is needed: a match can only start where the one before ended (at a character outside
#: the run) or where a shorter run failed, so it is always a whole run.
_B64_RE = re.compile(rf"[A-Za-z0-9+/\-_]{{{B64_MIN},}}={{0,2}}")
#: A whole run of ``HEX_MIN`` or more hex digits (same reasoning); its even-length prefix is decoded
#: (the pairs a ``(?<!hex)(?:hex{2}){6,}`` match would take, in a third of the time).
_HEX_RE = re.compile(rf"[0-9a-fA-F]{{{HEX_MIN},}}")
if HEX_MIN < B64_MIN:
    raise ImportError("a hex run must be long enough to lie inside a base64 run")  # pragma: no cover
_BIN_RE = re.compile(r"[01]{8}(?:[ \t]{1,2}[01]{8}){3,}")


def _binary_matches(text: str) -> list[re.Match[str]]:
    """``_BIN_RE.finditer(text)``, tried only where a match may start when the native core is in
    use: the eight digits before a blank that ends a run of eight or more (a match starts with
    them), each tried with ``match`` unless inside the previous match, which is what ``finditer``
    finds. Else the regex over the whole text (one pass)."""
    starts = backend.native_binary_group_starts(text)
    if starts is None:
        return list(_BIN_RE.finditer(text))
    out: list[re.Match[str]] = []
    end = -1
    for p in starts:
        if p >= end and (m := _BIN_RE.match(text, p)) is not None:
            out.append(m)
            end = m.end()
    return out


def _b64_candidates(run: str) -> list[bytes]:
    body = run.rstrip("=")[:BLOB_MAX]
    alt = "-" in body or "_" in body
    if alt and ("+" in body or "/" in body):
        return []
    out: list[bytes] = []
    for shift in range(4):
        chunk = body[shift:]
        rest = len(chunk) % 4
        # The last group too (padded as it would be): a tag that ends the run is in it.
        chunk = chunk[: len(chunk) - rest] if rest == 1 else chunk + "=" * ((4 - rest) % 4)
        if len(chunk) < 8:
            continue
        try:
            out.append(base64.b64decode(chunk, altchars=b"-_" if alt else None, validate=True))
        except (binascii.Error, ValueError):
            continue
    return out


def blob_triggers(ctx: Context) -> tuple[bytes, ...]:
    """What decoded bytes must hold for :func:`_blob_danger` to read them further: the UTF-8 of every
    character a match of :func:`~envelock.scan.tags._first_danger` can start with (an angle or bracket
    opener or look-alike, the ``&`` of a reference, the first character of an exact token), from the
    reader's own tables. The native sift (``_native.blob_runs``) is handed the same tuple."""
    return _triggers(_opener_starts(ctx))


@lru_cache(maxsize=16)
def _triggers(chars: frozenset[str]) -> tuple[bytes, ...]:
    if "\ufffd" in chars:
        # A decoding's undecodable bytes read as U+FFFD: every decoding would have to be read.
        return (b"",)
    # A lone surrogate (a team's token may start with one) is in no UTF-8 decoding.
    return tuple(sorted(c.encode() for c in chars if not 0xD800 <= ord(c) <= 0xDFFF))


@lru_cache(maxsize=16)
def _hex_marks(triggers: tuple[bytes, ...]) -> tuple[str, ...]:
    """The hex of each trigger's first byte: a hex run decodes to a trigger only if it holds one
    (``""`` when every decoding is read)."""
    return tuple(sorted({t[:1].hex() for t in triggers}))


@lru_cache(maxsize=16)
def _trigger_re(triggers: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """One search for any of ``triggers`` (longest first; an empty one matches everywhere)."""
    return re.compile(b"|".join(re.escape(t) for t in sorted(triggers, key=len, reverse=True)))


def _blob_danger(data: bytes, ctx: Context) -> str | None:
    triggers = blob_triggers(ctx)
    # The core's bucketed search, else the regex (an alternation of byte strings: ~25 MB/s on a long
    # decoding that holds none, and base64 at the wrong shift decodes to one).
    holds = backend.native_blob_holds(data, triggers, B64_MIN, HEX_MIN)
    if not (holds if holds is not None else _trigger_re(triggers).search(data) is not None):
        return None
    if not is_text(data):
        return None  # random bytes (a hash, an identifier that happens to be base64) hold no message
    return _first_danger(data.decode("utf-8", "replace"), ctx)


def _scan_blobs(text: str, ctx: Context, out: list[_Raw]) -> None:
    # Hex digits are base64 characters, so every run of HEX_MIN or more hex digits lies inside a base64
    # run (and a run that reaches the base64 run's end is whole in the text too): the hex runs are
    # looked for only inside base64 runs that hold the hex of a trigger's first byte, not in a
    # second pass over the text.
    # The native core sifts the runs first: it drops only runs this loop would report nothing from
    # (no hex opener inside, no decoding holding a byte _blob_danger looks for).
    hex_runs: list[re.Match[str]] = []
    triggers = blob_triggers(ctx)
    marks = _hex_marks(triggers)
    runs = backend.native_blob_runs(text, triggers, B64_MIN, HEX_MIN)

    # Each distinct run, hex run and group sequence is judged once (_once).
    def judge_b64(run: str) -> tuple[bool, str | None]:
        """Whether the run holds the hex of a trigger's first byte, and what it decodes to."""
        low = run.lower()
        marked = any(h in low for h in marks)
        if run.isdigit():
            return marked, None
        return marked, next((d for d in (_blob_danger(c, ctx) for c in _b64_candidates(run)) if d), None)

    def judge_hex(hexrun: str) -> str | None:
        low = hexrun.lower()
        return _blob_danger(bytes.fromhex(hexrun[:BLOB_MAX]), ctx) if any(h in low for h in marks) else None

    def judge_groups(key: str) -> str | None:
        return _blob_danger(bytes(int(g, 2) for g in key.split()[: BLOB_MAX // 8]), ctx)

    spans = runs if runs is not None else [m.span() for m in _B64_RE.finditer(text)]
    texts = [text[start:end] for start, end in spans]
    # Judged per distinct run first: hostile text repeats one run (a base64 `<x></x>`) hundreds of
    # thousands of times, and then only a run with something to report is visited.
    b64 = {run: judge_b64(run) for run in dict.fromkeys(texts)}
    if any(marked or danger for marked, danger in b64.values()):
        for (start, end), run in zip(spans, texts, strict=True):
            marked, danger = b64[run]
            if marked:
                hex_runs.extend(_HEX_RE.finditer(text, start, start + len(run.rstrip("="))))
            if danger:
                out.append(_Raw(ENCODED_BLOB_TAG.id, "warning", f"base64 run decodes to {danger!r}", start, end))
    hexes: dict[str, str | None] = {}
    for m in hex_runs:
        hexrun = m.group()
        if len(hexrun) % 2:
            hexrun = hexrun[:-1]
        danger = _once(hexes, hexrun, judge_hex)
        if danger:
            out.append(_Raw(ENCODED_BLOB_TAG.id, "warning", f"hex run decodes to {danger!r}", m.start(), m.start() + len(hexrun)))
    groups: dict[str, str | None] = {}
    for m in _binary_matches(text):
        danger = _once(groups, m.group(), judge_groups)
        if danger:
            out.append(_Raw(ENCODED_BLOB_TAG.id, "warning", f"binary groups decode to {danger!r}", m.start(), m.end()))
