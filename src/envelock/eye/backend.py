"""Which implementation runs a call: the one module that knows.

Three implementations of the model's-eye escape, equal on every input:

* ``native``: the Rust core ``envelock._native`` (``rust/``), when it was built;
* ``fast``: generated regexes over the same tables, the reference where they are unsure
  (:mod:`envelock.eye.fastpath`, Python 3.11+);
* ``reference``: one model's-eye reading per opener (:mod:`envelock.eye.reference`), the oracle.

The best available one is chosen once, at import; ``ENVELOCK_IMPL`` forces one (``native``,
``fast``, ``reference``, or ``python`` for the best pure-Python one). Every caller (the escape
functions, spotlighting, verify and the scanner) asks this module, so choosing here chooses for
all of them, and :func:`use` (the test fixture's switch) runs a whole test on one implementation.

A ``str`` holding a lone surrogate cannot cross into Rust as UTF-8; for it every native call falls
back to the Python reference, which gives the same answer. That fallback is written here and
nowhere else.
"""

from __future__ import annotations

import codecs
import os
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from functools import lru_cache
from typing import Any, Literal, Protocol, TypeVar, cast

from . import fastpath, levels, reader, reference, unicode_tables
from .levels import Level
from .load_tokens import Tokens

try:
    from .. import _native
except ImportError:  # pragma: no cover - depends on the build
    _native = None  # type: ignore[assignment]  # pragma: no cover

T = TypeVar("T")
R = TypeVar("R")

#: Is the native core built into this install?
NATIVE_AVAILABLE = _native is not None


class _NoSurrogateError(ValueError):
    """Stands in for ``_native.SurrogateError`` when the core was not built (nothing raises it)."""


#: What a native function raises for a text with a lone surrogate.
SurrogateError: type[ValueError] = _native.SurrogateError if _native is not None else _NoSurrogateError


class Implementation(Protocol):
    """What every implementation provides (a module or a namespace). ``tokens``: a team's own control
    tokens (:func:`envelock.eye.load_tokens.load_tokens`), read like the built-in tables."""

    NAME: str

    def defang(self, text: str, level: Level, reserved: tuple[str, ...], tokens: Tokens | None = None) -> str: ...

    def undefang(self, text: str, level: Level, reserved: tuple[str, ...], tokens: Tokens | None = None) -> str: ...

    def defang_body(self, text: str, level: Level, reserved: tuple[str, ...], tokens: Tokens | None = None) -> str: ...


class _Native:
    """The Rust core as an implementation, with the reference for a text holding a lone surrogate
    and for a team's own tokens (the core knows the built-in tables only)."""

    NAME = "native"

    @staticmethod
    def defang(text: str, level: Level, reserved: tuple[str, ...], tokens: Tokens | None = None) -> str:
        assert _native is not None
        if tokens is None:
            try:
                return str(_native.defang(text, level, reserved))
            except SurrogateError:
                pass
        return reference.defang(text, level, reserved, tokens)

    @staticmethod
    def undefang(text: str, level: Level, reserved: tuple[str, ...], tokens: Tokens | None = None) -> str:
        assert _native is not None
        if tokens is None:
            try:
                return str(_native.undefang(text, level, reserved))
            except SurrogateError:
                pass
        return reference.undefang(text, level, reserved, tokens)

    @staticmethod
    def defang_body(text: str, level: Level, reserved: tuple[str, ...], tokens: Tokens | None = None) -> str:
        assert _native is not None
        if tokens is None:
            try:
                return str(_native.defang_body(text, level, reserved, _copy_of(text)))
            except SurrogateError:
                pass
        return reference.defang_body(text, level, reserved, tokens)


_CANDIDATES: tuple[tuple[Implementation, bool], ...] = (
    (_Native(), NATIVE_AVAILABLE),
    (fastpath, fastpath.AVAILABLE),
    (reference, True),
)
#: Every implementation this interpreter can run, best first.
IMPLEMENTATIONS: dict[str, Implementation] = {impl.NAME: impl for impl, ok in _CANDIDATES if ok}


class _Unavailable:
    """The implementation ``ENVELOCK_IMPL`` names when this interpreter lacks it: every use raises
    ``ImportError`` (nothing falls back to another implementation, so a mistyped variable is not
    ignored), and :func:`check` says so first. ``import envelock`` itself succeeds, so the CLI reports
    it as one line and exit 2, not a traceback and exit 1 (which CI could not tell from findings)."""

    def __init__(self, message: str) -> None:
        self.message = message

    def __getattr__(self, name: str) -> Any:
        raise ImportError(self.message)


def _choose(want: str) -> Implementation:
    if want == "python":
        return IMPLEMENTATIONS["fast" if fastpath.AVAILABLE else "reference"]
    if want and want not in IMPLEMENTATIONS:
        have = ", ".join(IMPLEMENTATIONS)
        return cast(Implementation, _Unavailable(f"ENVELOCK_IMPL={want!r}: not available here (have {have})"))
    return IMPLEMENTATIONS[want] if want else next(iter(IMPLEMENTATIONS.values()))


_impl: Implementation = _choose(os.environ.get("ENVELOCK_IMPL", ""))


def check() -> None:
    """Raise ``ImportError`` when ``ENVELOCK_IMPL`` names an implementation this interpreter lacks."""
    if isinstance(_impl, _Unavailable):
        raise ImportError(_impl.message)


def implementation() -> str:
    """The name of the implementation in use (``"native"``, ``"fast"`` or ``"reference"``)."""
    return _impl.NAME


def chosen() -> Implementation:
    """The implementation in use."""
    return _impl


def is_native() -> bool:
    """Is the native core the implementation in use?"""
    return _impl.NAME == "native"


@contextmanager
def use(name: str) -> Iterator[Implementation]:
    """Run the block on implementation ``name`` (tests, benchmarks, differential fuzzing)."""
    global _impl
    saved = _impl
    _impl = IMPLEMENTATIONS[name]
    try:
        yield _impl
    finally:
        _impl = saved


def native_or(native_name: str, python: Callable[..., str], *args: object) -> str:
    """``_native.<native_name>(*args)`` when the native core is in use, else ``python(*args)``;
    ``python`` also for a text the core cannot take (a lone surrogate)."""
    if _native is not None and is_native():
        try:
            return str(getattr(_native, native_name)(*args))
        except SurrogateError:
            pass
    return python(*args)


#: The text of the innermost :func:`encoded_once` and its one UTF-8 copy (``_native.Utf8``), then those
#: of :func:`encoded_alongside`.
_ENCODED: ContextVar[list[tuple[str, object]] | None] = ContextVar("envelock_encoded", default=None)


#: The text of the innermost :func:`encoded_once` with ``view=True`` that holds a lone surrogate, the
#: UTF-8 copy of its :func:`surrogate_view`, and its runs of surrogates.
_VIEWED: ContextVar[tuple[str, Any, list[Span]] | None] = ContextVar("envelock_viewed", default=None)


@contextmanager
def encoded_once(text: str, *, view: bool = False) -> Iterator[None]:
    """Within the block, the native calls on ``text`` (this very object) that several passes make (the
    scanner's passes; compose's sanitize and defang of one body) read one UTF-8 copy of it made here,
    instead of each encoding it again (a non-ASCII text crosses into Rust as a
    temporary UTF-8 copy: docs/INTERNALS.md). ASCII text is read in place and needs none; a text with a
    lone surrogate gets none (each call then falls back as it would), unless ``view``: then the calls
    that read it as the eye does (:func:`_readable`) read one copy of its :func:`surrogate_view`. The
    copy lives until the block ends."""
    if _native is None or not is_native() or text.isascii():
        yield
        return
    try:
        copy: object | None = _native.Utf8(text)
    except SurrogateError:
        copy = None
    if copy is not None:
        with _bound(_ENCODED, [(text, copy)]):
            yield
    elif view:
        seen, runs = surrogate_view(text)
        viewed = (text, _native.Utf8(seen), runs)
        del seen  # the copy holds its own bytes
        with _bound(_VIEWED, viewed):
            yield
    else:
        yield


@contextmanager
def _bound(var: ContextVar[T | None], value: T) -> Iterator[None]:
    """``var`` set to ``value`` within the block."""
    token = var.set(value)
    try:
        yield
    finally:
        var.reset(token)


def encoded_alongside(text: str) -> None:
    """Within an :func:`encoded_once` block that made a copy, the native calls on ``text`` too (a text
    derived from the block's, as the scanner's ``ascii_folded``) read one UTF-8 copy of it made here,
    which lives until the block ends. Elsewhere, and for ASCII text, nothing to do."""
    current = _ENCODED.get()
    if current is None or text.isascii() or any(t is text for t, _ in current):
        return
    assert _native is not None  # a copy was made
    try:
        current.append((text, _native.Utf8(text)))
    except SurrogateError:
        pass


def _encoded(text: str) -> Any:
    """What a native call on ``text`` is handed: the UTF-8 copy of :func:`encoded_once` (or of
    :func:`encoded_alongside`) when ``text`` is its text, else ``text``."""
    copy = _copy_of(text)
    return text if copy is None else copy


def _readable(text: str) -> Any:
    """What a native call that reads ``text`` as the eye reads it is handed: :func:`_encoded`, or for a
    text with a lone surrogate inside ``encoded_once(text, view=True)`` the copy of its
    :func:`surrogate_view`. The eye reads a surrogate as it reads :data:`VIEW_CHAR` (every table of
    the reader and the scanner holds both or neither: ``tests/scan/test_scan_surrogates.py``), and
    neither starts, ends or belongs to an ASCII construct (a marker, an attribute, a word, an escape,
    a base64 run, a token), so the offsets and answers of such a call are the text's. Not for a call
    that answers with the text or looks for the surrogates themselves (sanitize, controls)."""
    current = _VIEWED.get()
    return current[1] if current is not None and current[0] is text else _encoded(text)


def _copy_of(text: str) -> Any:
    """The UTF-8 copy of :func:`encoded_once` (or of :func:`encoded_alongside`) when ``text`` is its
    text, else ``None``."""
    for t, copy in _ENCODED.get() or ():
        if t is text:
            return copy
    return None


def _if_native(call: Callable[[], R]) -> R | None:
    """``call()`` (a call of ``_native``) when the native core is in use, or ``None`` when it is not or cannot take the
    call's text (a lone surrogate): the one shape of every ``native_*`` function below, whose caller
    then does the work in Python."""
    if _native is None or not is_native():
        return None
    try:
        return call()
    except SurrogateError:
        return None


def find(text: str, sub: str, start: int) -> int:
    """``text.find(sub, start)``: natively for an ASCII ``text`` (read in place; CPython's search is
    the slower one there), else by ``str.find``."""
    if _native is not None and is_native():
        found = _native.find_ascii(text, sub, start)
        if found is not None:
            return found
    return text.find(sub, start)


def native_canonical_body(
    text: str, level: Level, reserved: tuple[str, ...], tokens: Tokens | None, start: int = 0, end: int | None = None
) -> tuple[str, bool] | None:
    """``(undefang_body(body), defang_body of that == body)`` for ``body = text[start:end]`` in one
    native call (an ASCII ``text`` read in place, no slice of it made; another read in the UTF-8 copy
    of :func:`encoded_once` when ``text`` is its text), or ``None`` when the native
    core is not in use or cannot take the body (or ``tokens``): the caller then makes the two calls."""
    if _native is None or not is_native() or tokens is not None:
        return None
    try:
        plain, same = _native.canonical_body(text, level, reserved, start, end, _copy_of(text))
    except SurrogateError:
        return None
    return str(plain), bool(same)


#: One opener's reading from the native pass: (start, end, kind, name, slash, reading end, family).
NativeOpener = tuple[int, int, str, str, bool, int, str]


def native_openers(text: str, reserved: tuple[str, ...], tokens: Tokens | None = None) -> list[NativeOpener] | None:
    """Every opener's reading in one native pass (both families), or ``None`` when the native core is
    not in use or cannot take ``text`` (or ``tokens``): the caller then reads with the Python reader."""
    if _native is None or not is_native() or tokens is not None:
        return None
    try:
        return _openers(text, reserved)
    except SurrogateError:
        return None


def native_openers_many(
    texts: list[str], reserved: tuple[str, ...], tokens: Tokens | None = None
) -> list[list[NativeOpener]] | None:
    """:func:`native_openers` of each of ``texts`` read on its own, in one native call
    (``_native.openers_many``), or ``None`` when the native core is not in use or cannot take one of
    them (or ``tokens``): the caller then reads each with the Python reader."""
    if tokens is not None:
        return None
    got = _if_native(lambda: _native.openers_many(texts, reserved))
    return None if got is None else [list(records) for records in got]


@lru_cache(maxsize=2)
def _openers(text: str, reserved: tuple[str, ...]) -> list[NativeOpener]:
    # Cached: verify and the scanner ask twice for the same text (one family each).
    assert _native is not None
    return list(_native.openers(text, reserved))


def native_opener_reports(
    text: str,
    reserved: tuple[str, ...],
    family: Literal["angle", "bracket"],
    tokens: Tokens | None,
    describe: Callable[[int, int, str, str, bool, int], tuple[int | None, Sequence[tuple[str, str, str, int, int]]]],
) -> list[tuple[str, str, str, int, int]] | None:
    """The reports of every ``family`` opener record in one native loop (``_native.opener_reports``:
    ``describe`` once per distinct reading and text it depends on), or ``None`` when the native core is
    not in use or cannot take ``text`` (or ``tokens``): the caller then describes every record of
    :func:`envelock.eye.escape.opener_records` itself (the reference)."""
    if _native is None or not is_native() or tokens is not None:
        return None
    try:
        return _native.opener_reports(_readable(text), reserved, family, describe)
    except SurrogateError:
        return None


def native_findings(
    cls: type[T],
    fields: tuple[str, ...],
    text: str,
    raw: Sequence[tuple[str, str, str, int, int]],
    snippet: Callable[[str, int, int], str],
    snippet_max: int,
) -> list[T] | None:
    """The scanner's findings of its ordered raw reports in one native call (``_native.findings``), or
    ``None`` when the native core is not in use or cannot take ``text``: the caller then builds them in
    Python (``envelock.scan._py_findings``, the reference)."""
    rows = raw if isinstance(raw, list) else list(raw)
    return _if_native(lambda: _native.findings(cls, list(fields), text, rows, snippet, snippet_max, _copy_of(text)))


def native_starts_increase(raw: Sequence[tuple[str, str, str, int, int]]) -> bool | None:
    """Whether the reports' starts strictly increase (``_native.starts_increase``), or ``None`` when the
    native core is not in use: the caller then sorts and looks for ties in Python."""
    if _native is None or not is_native():
        return None
    return _native.starts_increase(raw if isinstance(raw, list) else list(raw))


def skeleton(text: str) -> str:
    """``reader.skeleton(text)``, natively when the core is in use."""
    return native_or("skeleton", reader.skeleton, text)


def xml_unescape_text(text: str) -> str:
    """:func:`envelock.eye.levels.xml_unescape_text` (the inverse of the XML text escape), in the native
    core when it is in use."""
    return native_or("xml_unescape_text", levels.xml_unescape_text, text)


def xml_body_is(got: str, text: str, start: int, end: int) -> bool:
    """Is ``got`` the strict XML reader's text of the raw body ``text[start:end]``, that is
    ``"\\n" + xml_unescape_text(text[start:end]) + "\\n"``? In the native core (no unescaped copy, no
    concatenation; the body read in the UTF-8 copy of :func:`encoded_once` when ``text`` is its text)
    when it is in use and can take both texts, else that comparison in Python."""
    same = _if_native(lambda: bool(_native.xml_body_is(got, text, start, end, _copy_of(text))))
    if same is not None:
        return same
    return got == "\n" + levels.xml_unescape_text(text[start:end]) + "\n"


#: A run ``(start, end)`` in code points.
Span = tuple[int, int]


def native_classes_present(text: str, classes: list[list[tuple[int, int]]]) -> list[bool] | None:
    """For each class (inclusive code point ranges), whether one of its characters occurs in ``text``,
    in one native pass; ``None`` when the native core is not in use or cannot take ``text`` (a lone
    surrogate): the caller then runs its passes as if every class occurred."""
    viewed = _VIEWED.get()
    if viewed is None or viewed[0] is not text:
        return _if_native(lambda: _native.classes_present(_encoded(text), classes))
    # A text with a lone surrogate, read through its view: a class that holds surrogates is present.
    found = _if_native(lambda: _native.classes_present(_readable(text), classes))
    return None if found is None else [f or _holds_surrogates(c) for f, c in zip(found, classes, strict=True)]


def _holds_surrogates(ranges: Sequence[tuple[int, int]]) -> bool:
    return any(lo <= 0xDFFF and hi >= 0xD800 for lo, hi in ranges)


def native_binary_group_starts(text: str) -> list[int] | None:
    """Where the scanner's binary-groups regex may start in ``text`` (``_native.binary_group_starts``),
    or ``None`` when the native core is not in use or cannot take ``text``."""
    return _if_native(lambda: _native.binary_group_starts(_readable(text)))


def native_decode_escapes(text: str, rounds: int) -> str | None:
    """``scan._base._decode_escapes(text)`` in up to ``rounds`` rounds (``_native.decode_escapes``), or
    ``None`` when the native core is not in use, cannot take ``text`` (a lone surrogate) or its
    answer would hold one: the caller then decodes in Python."""
    return _if_native(lambda: _native.decode_escapes(text, rounds))


def native_line_markers(text: str, markers: tuple[str, ...]) -> list[Span] | None:
    """The spans of ``markers`` (ASCII) at the start of ``text`` or of a line, after at most eight
    blanks (``_native.line_markers``, ASCII case folding), or ``None`` when the native core is not in
    use or cannot take ``text``."""
    return _if_native(lambda: _native.line_markers(_readable(text), list(markers)))


def native_attribute_injections(text: str, names: tuple[str, ...]) -> list[tuple[int, int, int, int]] | None:
    """(start, end, name start, name end) of every quote, blanks, one of ``names`` (ASCII), blanks and
    ``=`` in ``text`` (``_native.attribute_injections``, ASCII case folding), or ``None`` when the
    native core is not in use or cannot take ``text``."""
    return _if_native(lambda: _native.attribute_injections(_readable(text), list(names)))


def native_ascii_word_starts(text: str, words: tuple[str, ...]) -> list[int] | None:
    """Every offset where one of ``words`` (ASCII) occurs in ``text``, ASCII case-insensitively, sorted
    (``_native.ascii_word_starts``: the text lowered once, each word found by ``memmem``), or ``None``
    when the native core is not in use, cannot take ``text``, or a word is empty or not ASCII."""
    if not _all_ascii(words):
        return None  # the core refuses them too; a lone surrogate could not even be handed over
    return _if_native(lambda: _native.ascii_word_starts(_readable(text), words))


@lru_cache(maxsize=16)
def _all_ascii(words: tuple[str, ...]) -> bool:
    # Asked once per set of words (a scan asks for the same cipher words on every text).
    return all(w.isascii() for w in words)


def native_class_runs(
    text: str, ranges: Sequence[tuple[int, int]], limit: int | None = None, shortest: int = 1
) -> list[Span] | None:
    """The maximal runs of at least ``shortest`` of ``text``'s characters in the inclusive ``ranges``
    (``_native.class_runs``), or ``None`` when the native core is not in use, cannot take ``text``, a
    range is not one a table holds or there are more than ``limit`` runs: the caller then runs its
    ``[class]{shortest,}`` regex."""
    viewed = _VIEWED.get()
    if viewed is None or viewed[0] is not text:
        return _if_native(lambda: _native.class_runs(_encoded(text), list(ranges), limit, shortest))
    # A text with lone surrogates, read through its view: VIEW_CHAR stands for them there, so a class
    # holding it is left to the regex; a class holding every surrogate gets their runs merged in, one
    # holding some of them is left to the regex too, and so is a search for long runs (a merge could
    # join short ones into a long one).
    every = any(lo <= 0xD800 and hi >= 0xDFFF for lo, hi in ranges)
    if shortest > 1 and _holds_surrogates(ranges):
        return None
    if any(lo <= ord(VIEW_CHAR) <= hi for lo, hi in ranges) or (_holds_surrogates(ranges) and not every):
        return None
    found = _if_native(lambda: _native.class_runs(viewed[1], list(ranges), limit, shortest))
    if found is None or not every:
        return found
    return merged_runs(found, viewed[2])


def native_words_with_runs(text: str, hidden: Sequence[tuple[int, int]], word: Sequence[tuple[int, int]]) -> list[Span] | None:
    """The scanner's words holding invisible runs (``_native.words_with_runs``: over every maximal run of
    ``hidden``, the words of ``word`` characters holding runs of one to three), or ``None`` when the
    native core is not in use, cannot take ``text``, or reads it through its surrogate view (the
    caller then searches with its regexes)."""
    viewed = _VIEWED.get()
    if viewed is not None and viewed[0] is text:
        return None
    return _if_native(lambda: _native.words_with_runs(_encoded(text), list(hidden), list(word)))


def native_scheme_starts(
    text: str, schemes: tuple[tuple[str, str, str], ...], limit: int, loud: str | None = None, copies: int | None = None
) -> list[list[int] | None] | None:
    """For each scheme ``(introducer, second, third)``, the sorted offsets of ``text`` where it starts,
    or ``None`` for a scheme with more than ``limit`` (``_native.scheme_starts``: the introducer found by
    ``memchr``, the next characters looked up), or ``None`` in all when the native core is not in use,
    cannot take ``text``, or a scheme is not ASCII: the caller then runs its regexes over the text.
    ``loud``: leave out the starts of escapes that decode to none of these characters; ``copies``:
    and of escapes followed by that many copies of themselves (which the pass's regex rejects)."""
    return _if_native(lambda: _native.scheme_starts(_readable(text), list(schemes), limit, loud, copies))


def native_escape_plan(
    text: str,
    starts: str,
    openers: str,
    cut_at: str,
    introducers: str,
    ref_names: list[tuple[str, str]],
    copies: int,
    window: int,
    exact: list[str],
) -> tuple[list[tuple[int, int, str]], list[tuple[tuple[str, ...], str, int, Sequence[int]]], list[int]] | None:
    """The encoded pass's escapes read and grouped in one native pass (``_native.escape_plan``: the
    fields of ``envelock.scan.encoded.EscapePlan``; each window's occurrences a view of the core's
    64-bit words, its raw text sliced from ``text``), or ``None`` when the native core is not in use
    or cannot take ``text``: the caller then runs the reference (``encoded._escape_plan_reference``).
    A text with a lone surrogate is read as the eye reads it (:func:`_readable`: within the scanner's
    ``encoded_once(text, view=True)``, its surrogate view; no construct the plan reads starts, ends
    or holds a surrogate but a UTF-7 segment's reading, which the core makes itself), so windows
    that differ only in which surrogate they hold are one group, as in the reference."""
    got = _if_native(
        lambda: _native.escape_plan(_readable(text), starts, openers, cut_at, introducers, ref_names, copies, window, exact)
    )
    if got is None:
        return None
    exact_found, windows, layered = got
    return exact_found, [(o, text[a:e], cut, memoryview(occ).cast("Q")) for o, (a, e), cut, occ in windows], layered


def native_openers_with_escapes(
    text: str, schemes: tuple[tuple[str, str, str], ...], window: int
) -> list[tuple[int, int, list[int]]] | None:
    """The windows of the openers whose reading may pass over an escape of one of ``schemes``, one
    ``(start, end, starts)`` per distinct window text (``_native.openers_with_escapes``), or ``None``
    when the native core is not in use or cannot take ``text`` or the schemes: the caller then runs
    the reference (``envelock.scan.encoded._raw_windows_reference``)."""
    return _if_native(lambda: _native.openers_with_escapes(_readable(text), list(schemes), window))


def reading_kind_after(text: str, pos: int, reserved: tuple[str, ...], tokens: Tokens | None, names: reader.Names) -> str:
    """The kind of ``reader.read_after(text, pos, names)`` (``names``: ``names_for(reserved, tokens)``),
    read by the native reader when it is in use and there are no team tokens (the native fuzz harness
    holds the two readers equal at every position), else by the reference."""
    if tokens is None:
        got = _if_native(lambda: _native.read_after(text, pos, reserved))
        if got is not None:
            return got[0]
    return reader.read_after(text, pos, names).kind


#: Past the lookahead, what a reading may decode of a character reference that starts inside it:
#: ``MAX_AMP_LAYERS`` layers of ``&amp;`` and a name of at most 32 characters fit; a number may have
#: any count of leading zeros (``html.unescape``), so a window that ends inside one is read whole.
REREAD_MARGIN = 160
#: A numeric reference (behind ``&amp;`` layers) that runs to the end of a window.
_OPEN_NUMBER_RE = re.compile(r"&(?:amp;)*#[xX]?[0-9A-Fa-f]*\Z")


def reread_window(text: str, start: int, pos: int) -> tuple[int, int]:
    """The part of ``text`` that ``reader.read_after(text, pos, ...)`` looks at for the opener that
    starts at ``start`` (the quote before it, the lookahead and the references read there)."""
    return max(0, start - 8), min(len(text), pos + reader.MAX_LOOKAHEAD + REREAD_MARGIN)


def _whole_window(text: str, start: int, pos: int) -> tuple[int, int] | None:
    """:func:`reread_window`, or ``None`` when it ends inside a numeric reference (its leading zeros
    are unbounded, so the reading may look further: read the whole text)."""
    lo, hi = reread_window(text, start, pos)
    return None if hi < len(text) and _OPEN_NUMBER_RE.search(text, lo, hi) else (lo, hi)


def reading_kind_near(text: str, pos: int, reserved: tuple[str, ...], tokens: Tokens | None, names: reader.Names) -> str:
    """:func:`reading_kind_after` on the window of ``text`` the reading looks at (:func:`reread_window`):
    a call per opener of a long text must not copy the whole text for the core each time (stop 50, a
    red-team find: ``‹`` + padding + ``s>`` repeated was quadratic). A window that ends inside a numeric
    reference is read whole, by the reference."""
    window = _whole_window(text, pos, pos)
    if window is None:
        return reader.read_after(text, pos, names).kind
    lo, hi = window
    return reading_kind_after(text[lo:hi], pos - lo, reserved, tokens, names)


def read_reserved_only(
    text: str,
    start: int,
    pos: int,
    reserved: tuple[str, ...],
    names: reader.Names,
    memo: dict[tuple[str, int], tuple[str, str, bool, int]] | None = None,
) -> reader.Reading:
    """``reader.read_after(text, pos, names)`` for ``names`` with no token and no bar shape (the
    ``Names(reserved, (), pipes=False)`` of ``reserved``), for the opener that starts at ``start``:
    natively when the core is in use, on :func:`reread_window` (the reader looks no further), so a
    call costs no copy of the whole text; the scanner asks it for openers whose token reading passed
    letter symbols. ``memo``: the answers by window (hostile text repeats its windows; the caller
    bounds its size)."""
    window = _whole_window(text, start, pos)
    if is_native() and window is not None:
        lo, hi = window
        key = (text[lo:hi], pos - lo)
        got = memo.get(key) if memo is not None else None
        if got is None:
            try:
                got = _native.read_after(key[0], key[1], reserved, False, False)
            except SurrogateError:
                return reader.read_after(text, pos, names)
            if memo is not None:
                memo[key] = got
        kind, name, slash, end = got
        return reader.Reading(cast(reader.Kind, kind), name, slash, end + lo if kind != "none" else 0)
    return reader.read_after(text, pos, names)


def exact_tokens(text: str, reserved: tuple[str, ...], tokens: Tokens | None) -> list[Span]:
    """``(start, end)`` of every exact token of ``text``: the native search, else ``reader.exact_tokens``."""
    found = native_exact_tokens(text, reserved, tokens)
    return reader.exact_tokens(text, reader.names_for(reserved, tokens)) if found is None else found


def native_exact_tokens(text: str, reserved: tuple[str, ...], tokens: Tokens | None) -> list[Span] | None:
    """``(start, end)`` of every exact token of ``text`` (``_native.exact_tokens``: the one reader's
    ``exact_after`` at each place a token's first character is), or ``None`` when the native core is
    not in use or cannot take ``text``, or a team's ``tokens`` add exact tokens the core does not
    hold: the caller then runs ``reader.exact_finder`` and ``exact_after`` (the reference)."""
    if tokens is not None:
        return None
    return _if_native(lambda: _native.exact_tokens(_readable(text), reserved))


def native_blob_runs(text: str, triggers: tuple[bytes, ...], b64_min: int, hex_min: int) -> list[Span] | None:
    """The base64 runs of ``text`` the scanner's blobs pass could report from (``_native.blob_runs``:
    a hex run or a decoding holding one of the byte sequences ``triggers``), in one native pass;
    ``None`` when the native core is not in use or cannot take ``text``: the caller then takes every
    run of its regex."""
    return _if_native(lambda: _native.blob_runs(_readable(text), triggers, b64_min, hex_min))


def native_blob_holds(data: bytes, triggers: tuple[bytes, ...], b64_min: int, hex_min: int) -> bool | None:
    """Whether ``data`` holds one of ``triggers`` (``_native.blob_holds``), or ``None`` when the native
    core is not in use: the caller then searches with its regex."""
    if _native is None or not is_native():
        return None
    return _native.blob_holds(data, triggers, b64_min, hex_min)


def native_sanitize_events(text: str, first: bool = False) -> tuple[list[Span], list[Span]] | None:
    """The runs of characters XML cannot carry and of invisible text to strip
    (:mod:`envelock.envelope.invisible`) in one native pass, only the first of each with ``first``;
    ``None`` when the native core is not in use: the caller then finds them with the Python reference.

    A text with a lone surrogate (which cannot cross as UTF-8) is read through its
    :func:`surrogate_view`, one code point for one, so every offset stays: :data:`VIEW_CHAR` is neither
    XML-impossible nor invisible, and the surrogates' own runs (XML-impossible) are merged into the
    first list. (The Python reference it replaces multiplied compose's time: ``benchmarks/cliffs.py``.)"""
    found = _if_native(lambda: _native.sanitize_events(_encoded(text), first))
    if found is not None or _native is None or not is_native():
        return found
    view, surrogates = surrogate_view(text)
    bad, hidden = _native.sanitize_events(view, False)
    bad = merged_runs(bad, surrogates)
    return (bad[:1], hidden[:1]) if first else (bad, hidden)


#: What a lone surrogate is written as for the core: the first code point that every character table
#: holds as it holds a surrogate but XML_IMPOSSIBLE (whose surrogate runs are merged back) and
#: spotlight's BLANK_RANGES (not read by the eye or the scanner), found by scripts/gen_unicode_tables.py
#: (U+FFF9 INTERLINEAR ANNOTATION ANCHOR). ``tests/scan/test_scan_surrogates.py`` compares every table.
VIEW_CHAR = chr(unicode_tables.SURROGATE_VIEW)
_VIEW_BYTES = VIEW_CHAR.encode("utf-8")
_VIEW_HANDLER = "envelock-surrogate-view"
_view_runs = threading.local()


def _as_replacement(e: UnicodeError) -> tuple[bytes, int]:
    # CPython's encoder hands over a whole run of surrogates at a time (merged again all the same).
    assert isinstance(e, UnicodeEncodeError)
    _view_runs.runs.append((e.start, e.end))
    return _VIEW_BYTES * (e.end - e.start), e.end


codecs.register_error(_VIEW_HANDLER, _as_replacement)


def surrogate_view(text: str) -> tuple[str, list[Span]]:
    """``text`` with each lone surrogate written as :data:`VIEW_CHAR` (one code point for one: every
    offset stays), and the maximal runs of surrogates, in order. One pass of CPython's UTF-8 encoder
    and decoder (a ``re`` search for the surrogate class is several times slower)."""
    _view_runs.runs = []
    try:
        view = text.encode("utf-8", _VIEW_HANDLER).decode("utf-8")
        return view, merged_runs(_view_runs.runs, ())
    finally:
        del _view_runs.runs


def merged_runs(a: Sequence[Span], b: Sequence[Span]) -> list[Span]:
    """The maximal runs of the union of two classes, from each class's maximal runs (disjoint classes:
    runs that touch are joined)."""
    out: list[Span] = []
    for start, end in sorted((*a, *b)):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out
