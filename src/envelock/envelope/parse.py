"""The strict grammar of a composed preface, and its exact inverse.

::

    preface  := "" | envelope ("\\n\\n" envelope)*
    envelope := OPEN "\\n" content "\\n" CLOSE
    content  := body | preface          (a nested preface, depth-limited)
    OPEN     := <retrieved_content provenance="V" origin="V"[ fetched_at="V"]>
    CLOSE    := </retrieved_content>

A body is defanged, so it never holds a raw ``<retrieved_content`` or
``</retrieved_content>``: the first ``\\n</retrieved_content>`` after a body's
start is its end, and content that starts with an open tag is a nested
preface. Everything is checked in one left-to-right pass; the cost is linear
in the text. Lines and columns of problems come from one :class:`LineIndex`
per text (line starts found once, then a bisect per problem), so many
problems stay linear too.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from ..errors import EnvelopeBreach
from ..eye import backend
from ..eye.escape import (
    BODY_CONTEXT,
    Level,
    canonical_body_at,
    check_level,
    defang_attribute,
    defang_body,
    opener_records,
    undefang_attribute,
)
from ..eye.load_tokens import Tokens
from ..eye.reader import exact_escaped, readings, visible
from ..eye.tokens import RESERVED_NAMES
from ..types import DEPTH_CEILING, NO_SPOTLIGHT, Envelope, LineIndex, Problem, Spotlight
from . import spotlight
from .entry import CANONICAL_FETCHED_AT_RE, empty_provenance, parse_iso8601
from .invisible import first_problems
from .provenance import PosingMemo
from .render import (
    ATTR_INVALID_RE,
    CLOSE_TAG,
    OPEN_TAG_RE,
    OPTIONAL_ATTRIBUTES,
    SEPARATOR,
    TAG,
    is_plain_attribute,
    unescape_attribute,
)

_CLOSE = "\n" + CLOSE_TAG
_NEXT_OPEN = SEPARATOR + f"<{TAG} "


@dataclass
class _Scan:
    text: str
    level: Level
    reserved: tuple[str, ...]
    max_depth: int
    invisible: str
    tokens: Tokens | None = None
    problems: list[Problem] = field(default_factory=list)
    depth_seen: int = 0
    lines: LineIndex = field(init=False, repr=False)
    posing: PosingMemo = field(default_factory=PosingMemo, repr=False)

    def __post_init__(self) -> None:
        self.lines = LineIndex(self.text)

    def problem(self, code: str, message: str, offset: int, path: tuple[int, ...]) -> None:
        line, column = self.lines.locate(offset)
        entry = path[0] if path else None
        self.problems.append(Problem(code, message, offset, line, column, entry, path))


def _snippet(text: str, start: int, width: int = 40) -> str:
    """A short excerpt with invisible characters shown as ``U+XXXX``."""
    return visible(text[start : start + width])


def _attribute(scan: _Scan, raw: str, name: str, offset: int, path: tuple[int, ...]) -> str:
    if is_plain_attribute(raw):
        return raw  # written as it is: nothing to unescape, no character to refuse, no escape point
    value = unescape_attribute(raw)
    bad, hidden = first_problems(value, invisible=scan.invisible == "strip")
    if bad:
        scan.problem("attribute-invalid-char", f"{name}: U+{ord(value[bad[0]]):04X} cannot be carried by XML", offset, path)
    if hidden:
        scan.problem("invisible-text", f"{name}: invisible TAG/bidi character (compose strips these)", offset, path)
    plain = undefang_attribute(value)
    if defang_attribute(plain) != value:
        scan.problem("attribute-not-canonical", f"{name}: not in canonical defanged form: {_snippet(value, 0)!r}", offset, path)
    return plain


def _body(scan: _Scan, start: int, end: int, path: tuple[int, ...], spot: Spotlight) -> str:
    if spot.mode != "none":
        return _spotlit_body(scan, scan.text[start:end], start, path, spot)
    # Checked where it lies (no slice of the body is made for the check: benchmarks/memory.py).
    plain, canonical = canonical_body_at(scan.text, start, end, level=scan.level, reserved=scan.reserved, tokens=scan.tokens)
    if canonical:
        return plain
    _not_canonical(scan, scan.text[start:end], start, path, plain)
    return plain


def _spotlit_body(scan: _Scan, raw: str, start: int, path: tuple[int, ...], spot: Spotlight) -> str:
    """A transformed body: undone (spotlight.decode_body) and redone to the same text, and no opener
    in what the model reads (the transformed text) that a reader takes for a tag.

    The transformed text is read as the model's eye reads it, each marker as what it stands for
    (:func:`_unescaped_tags`)."""
    try:
        plain = spotlight.decode_body(raw, spot, level=scan.level, reserved=scan.reserved, tokens=scan.tokens)
    except ValueError as exc:
        scan.problem("body-not-canonical", f"{spot.mode} body does not decode: {exc}", start, path)
        return raw
    if _unescaped_tags(scan, raw, start, path, spot):
        return plain
    canon = spotlight.encode_body(plain, spot, level=scan.level, reserved=scan.reserved, tokens=scan.tokens)
    if canon != raw:
        _first_difference(scan, raw, canon, start, path, f"{spot.mode} form")
    return plain


def _not_canonical(scan: _Scan, raw: str, start: int, path: tuple[int, ...], plain: str) -> None:
    """Not canonical: say where a reader would see a tag, else where the form differs."""
    if not _unescaped_tags(scan, raw, start, path):
        canon = defang_body(plain, level=scan.level, reserved=scan.reserved, tokens=scan.tokens)
        _first_difference(scan, raw, canon, start, path, "defanged form")


def _unescaped_tags(scan: _Scan, raw: str, start: int, path: tuple[int, ...], spot: Spotlight | None = None) -> int:
    """Report (up to 20) openers a reader of the whole preface takes for a tag or token, and exact
    tokens, that are not escaped (followed by ``\\``); return how many. One pass of the one reader
    (:func:`~envelock.escape.opener_readings`, natively with the native implementation).

    A marked body (``spot``) is read with each marker as what it stands for
    (:func:`spotlight.untransform`: a blank where datamark's marker replaced one, nothing where a
    marker was inserted, one marker for a doubled one), as a model told of the marker reads it.
    Reading every marker as nothing would join the words a replaced blank kept apart, which no
    reader does: letters the eye has no reading for stand in for a name's letters up to a blank, so
    15 kana, Thai and Khmer letters across a marker read as ``externalcontent`` (fuzz_spotlight).
    A marker the eye does not simply read past (one marker_problem should have refused) is also
    read where it stands."""
    marker = spot.marker if spot is not None else None
    if spot is None or marker is None or marker not in raw:
        hits = _tags_in(scan, raw)
    else:
        found = _tags_in(scan, spotlight.untransform(raw, spot))
        hits = set()
        if found:
            offsets = spotlight.untransform_offsets(raw, spot)
            hits = {offsets[s] for s in found}
        if readings(marker) != ("",):
            hits |= _tags_in(scan, raw)
    for s in sorted(hits)[:20]:
        scan.problem(
            "undefanged-tag",
            f"a reader sees an envelope tag or control token here: {_snippet(raw, s)!r}",
            start + s,
            path,
        )
    return len(hits)


def _tags_in(scan: _Scan, text: str) -> set[int]:
    """Where in ``text`` a reader sees an unescaped opener reading or exact token."""
    seen = text + BODY_CONTEXT  # as a reader of the whole preface sees the body's end
    n = len(text)
    found = {
        s
        for family in ("angle", "bracket")
        for s, e, kind, *_ in opener_records(seen, scan.reserved, family, scan.tokens)
        if s < n and kind != "none" and (e >= n or text[e] != "\\")
    }
    found.update(s for s, _ in backend.exact_tokens(text, scan.reserved, scan.tokens) if not exact_escaped(text, s))
    return found


def _first_difference(scan: _Scan, raw: str, canon: str, start: int, path: tuple[int, ...], form: str) -> None:
    i = next((k for k, (a, b) in enumerate(zip(raw, canon, strict=False)) if a != b), min(len(raw), len(canon)))
    scan.problem(
        "body-not-canonical",
        f"body is not in canonical {form} at level {scan.level!r}: {_snippet(raw, i)!r}",
        start + i,
        path,
    )


#: The open tag's attributes, in the order of its groups.
_ATTRIBUTE_NAMES = ("provenance", "origin", *OPTIONAL_ATTRIBUTES)


def _envelope(scan: _Scan, pos: int, depth: int, path: tuple[int, ...]) -> tuple[Envelope | None, int]:
    text = scan.text
    m = OPEN_TAG_RE.match(text, pos)
    if m is None:
        scan.problem("structure", f"expected an open tag <{TAG} provenance=... origin=...>: {_snippet(text, pos)!r}", pos, path)
        return None, -1
    groups = m.groups()  # one call, not one per attribute: a preface may hold thousands of envelopes
    for k, (name, raw) in enumerate(zip(_ATTRIBUTE_NAMES, groups, strict=True), start=1):
        bad = ATTR_INVALID_RE.search(raw) if raw and not is_plain_attribute(raw) else None
        if bad:
            found = _snippet(raw, bad.start(), 8)
            scan.problem("structure", f"{name}: {found!r} is not escaped as the renderer escapes it", m.start(k), path)
    source = _attribute(scan, groups[0], "provenance", pos, path)
    if empty_provenance(source):
        # None of the composer's outputs (red-team find of stop 42: it verified, and entries_of of it
        # could not be composed).
        scan.problem("provenance-empty", "provenance is empty: every envelope needs one (compose refuses it)", pos, path)
    elif (posing := scan.posing(source)) is not None:
        message = f"provenance {_snippet(source, 0)!r} reads as the tier {posing.label!r} but is not it (compose refuses it)"
        scan.problem("provenance-lookalike", message, pos, path)
    origin = _attribute(scan, groups[1], "origin", pos, path)
    fetched_at: str | None = None
    if groups[2] is not None:
        fetched_at = unescape_attribute(groups[2])
        if not CANONICAL_FETCHED_AT_RE.fullmatch(fetched_at) or fetched_at.endswith(".000000Z"):
            scan.problem("fetched-at", f"fetched_at is not in canonical UTC form: {fetched_at[:40]!r}", pos, path)
        else:
            try:
                parse_iso8601(fetched_at)
            except ValueError as exc:
                scan.problem("fetched-at", f"fetched_at is not a valid date-time: {exc}", pos, path)
    nonce, spot = _turn_attributes(scan, groups, pos, path)
    depth += 1
    scan.depth_seen = max(scan.depth_seen, depth)
    inner = m.end()
    if OPEN_TAG_RE.match(text, inner):
        if spot.mode != "none":
            scan.problem(
                "spotlight", "an envelope of nested envelopes declares a transform (only text bodies have one)", pos, path
            )
        if depth >= scan.max_depth:
            scan.problem("nesting-depth", f"envelopes nested deeper than max_depth={scan.max_depth}", inner, path)
            return None, -1
        children, after = _sequence(scan, inner, depth, path)
        if after < 0:
            return None, -1
        if not text.startswith(_CLOSE, after):
            scan.problem("structure", f"expected {CLOSE_TAG!r} after nested envelopes: {_snippet(text, after)!r}", after, path)
            return None, -1
        return Envelope(source, origin, fetched_at, None, tuple(children), pos, nonce), after + len(_CLOSE)
    close = backend.find(text, _CLOSE, inner)
    if close < 0:
        scan.problem("structure", f"envelope is never closed with {CLOSE_TAG!r}", pos, path)
        return None, -1
    body = _body(scan, inner, close, path, spot)
    return Envelope(source, origin, fetched_at, body, (), pos, nonce, spot), close + len(_CLOSE)


def _turn_attributes(scan: _Scan, groups: tuple[str | Any, ...], pos: int, path: tuple[int, ...]) -> tuple[str | None, Spotlight]:
    """The ``nonce`` and the spotlight (``transform``, ``marker``, ``seed``) attributes (the open tag's
    groups 4 to 7), checked."""
    nonce, mode, marker, seed = (None if raw is None else unescape_attribute(raw) for raw in groups[3:7])
    if nonce is not None and not spotlight.NONCE_RE.fullmatch(nonce):
        scan.problem("nonce", f"nonce is not 8 to 128 characters of [A-Za-z0-9_-]: {_snippet(nonce, 0)!r}", pos, path)
    if mode is None:
        if marker is not None or seed is not None:
            scan.problem("spotlight", "marker or seed without a transform", pos, path)
        return nonce, NO_SPOTLIGHT
    if mode not in spotlight.SPOTLIGHT_MODES or mode == "none":
        scan.problem("spotlight", f"unknown transform {_snippet(mode, 0)!r}", pos, path)
        return nonce, NO_SPOTLIGHT
    spot = Spotlight(spotlight.check_mode(mode), marker, seed)
    problem = spotlight.options_problem(spot.mode, marker, seed, need_marker=True, need_seed=True)
    if problem is None:
        return nonce, spot
    scan.problem("spotlight", f"{problem[0]}: {problem[1]}", pos, path)
    return nonce, NO_SPOTLIGHT


def _sequence(scan: _Scan, pos: int, depth: int, path: tuple[int, ...]) -> tuple[list[Envelope], int]:
    envelopes: list[Envelope] = []
    while True:
        env, pos = _envelope(scan, pos, depth, (*path, len(envelopes)))
        if env is None:
            return envelopes, -1
        envelopes.append(env)
        if not scan.text.startswith(_NEXT_OPEN, pos):
            return envelopes, pos
        pos += len(SEPARATOR)


def scan_preface(
    text: str,
    *,
    level: Level = "reserved",
    reserved: tuple[str, ...] = RESERVED_NAMES,
    max_depth: int = 2,
    invisible: str = "strip",
    tokens: Tokens | None = None,
) -> tuple[list[Envelope], list[Problem], int]:
    """Parse ``text``; return the envelopes, every problem found, and the depth seen."""
    check_level(level)
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    if not 1 <= max_depth <= DEPTH_CEILING:
        raise ValueError(f"max_depth must be between 1 and {DEPTH_CEILING}; got {max_depth}")
    scan = _Scan(text, level, tuple(reserved), max_depth, invisible, tokens=tokens)
    if text == "":
        return [], [], 0
    # One UTF-8 copy of a non-ASCII text for the native passes over it (each body's canonical-form
    # check finds its body in it, the character check reads it), instead of one encoding per pass.
    # The character check first: a body's check gives the copy up when the body is most of the text
    # (peak memory: the glue's ``let_go``), and a later reading would encode the text again.
    with backend.encoded_once(text):
        bad, hidden = first_problems(text, invisible=invisible == "strip")
        envelopes, end = _sequence(scan, 0, 0, ())
    if end >= 0 and end != len(text):
        scan.problem("text-outside", f"text after the last envelope: {_snippet(text, end)!r}", end, ())
    other = _other_nonce(envelopes)
    if other is not None:
        # Compose gives every envelope of a turn, nested ones too, the turn's nonce or none: a text that
        # mixes them (two turns pasted together, one envelope's nonce dropped) is no composer form,
        # and as a Preface it would nest with the nonce of none of them (red-team find of stop 43).
        env, path = other
        scan.problem("nonce-mixed", f"nonce attribute is {_nonce_shown(env.nonce)}, another envelope's differs", env.offset, path)
    starts = [e.offset for e in envelopes]

    def owner(offset: int) -> tuple[int, ...]:
        """The top-level envelope that holds ``offset`` (characters are checked over the whole text)."""
        k = bisect_right(starts, offset) - 1
        return (k,) if k >= 0 else ()

    if bad:
        message = f"U+{ord(text[bad[0]]):04X} cannot be carried by XML (compose replaces it)"
        scan.problem("invalid-char", message, bad[0], owner(bad[0]))
    if hidden:
        message = f"invisible TAG/bidi character U+{ord(text[hidden[0]]):04X} (compose strips these)"
        scan.problem("invisible-text", message, hidden[0], owner(hidden[0]))
    return envelopes, scan.problems, scan.depth_seen


def _other_nonce(envelopes: list[Envelope]) -> tuple[Envelope, tuple[int, ...]] | None:
    """The first envelope (in text order, at every depth) whose nonce is not the first envelope's."""
    stack: list[tuple[Envelope, tuple[int, ...]]] = [(e, (k,)) for k, e in reversed(list(enumerate(envelopes)))]
    first: list[str | None] = []
    while stack:
        env, path = stack.pop()
        if not first:
            first.append(env.nonce)
        elif env.nonce != first[0]:
            return env, path
        stack.extend((c, (*path, k)) for k, c in reversed(list(enumerate(env.children))))
    return None


def _nonce_shown(nonce: str | None) -> str:
    return "absent" if nonce is None else repr(nonce[:8] + "...")


def parse_preface(
    text: str,
    *,
    level: Level = "reserved",
    reserved: tuple[str, ...] = RESERVED_NAMES,
    max_depth: int = 2,
    tokens: Tokens | None = None,
) -> list[Envelope]:
    """The exact inverse of ``compose_preface``: envelopes with undefanged bodies.

    Raises :class:`EnvelopeBreach` listing every problem when ``text`` is not a
    sound preface at ``level`` (the same checks as ``verify_preface`` without
    ``expected`` or the reader checks).

    >>> from envelock import PrefaceEntry, compose_preface
    >>> text = compose_preface([PrefaceEntry("external", "web:x", "a </retrieved_content> b")])
    >>> [(e.source, e.origin, e.body) for e in parse_preface(text)]
    [('external', 'web:x', 'a </retrieved_content> b')]
    >>> parse_preface(text.replace("<\\\\/", "</"))
    Traceback (most recent call last):
    ...
    envelock.errors.EnvelopeBreach: not a sound preface: ...
    """
    envelopes, problems, _ = scan_preface(
        text, level=level, reserved=reserved, max_depth=max_depth, invisible="keep", tokens=tokens
    )
    if problems:
        raise EnvelopeBreach("not a sound preface", problems)
    return envelopes
