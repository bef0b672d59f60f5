"""Type stubs of ``envelock._native``, the Rust core (``rust/envelock-py``).

Offsets are code-point offsets (Python ``str`` indices). A text holding a lone
surrogate cannot cross into Rust as UTF-8: every function raises
:class:`SurrogateError` (a ``ValueError``) for it, and the caller falls back to the
Python reference (``envelock.eye.reference``) for that call.
"""

from collections.abc import Callable, Sequence
from typing import Literal, TypeAlias, TypeVar, final

# The names the module exports (PyO3 sets ``__all__``); ``mypy.stubtest envelock._native``
# (a stage of .ci/run) holds this stub equal to the built module.
__all__ = [
    "UNICODE_VERSION",
    "SurrogateError",
    "Utf8",
    "ascii_word_starts",
    "attribute_injections",
    "binary_group_starts",
    "blob_holds",
    "blob_runs",
    "canonical_body",
    "class_runs",
    "classes_present",
    "datamark",
    "decode_escapes",
    "defang",
    "defang_body",
    "defang_many",
    "escape_plan",
    "exact_tokens",
    "find_ascii",
    "findings",
    "interleave",
    "line_markers",
    "opener_reports",
    "openers",
    "openers_many",
    "openers_with_escapes",
    "read_after",
    "read_bracket",
    "sanitize_events",
    "scheme_starts",
    "skeleton",
    "starts_increase",
    "undatamark",
    "undefang",
    "undefang_body",
    "uninterleave",
    "words_with_runs",
    "xml_body_is",
    "xml_unescape_text",
]

# Stub-only type aliases (private: the module has no such attributes).
_Level: TypeAlias = Literal["reserved", "markup", "xml"]
_Kind: TypeAlias = Literal["none", "reserved", "token", "bar", "padding"]
_Family: TypeAlias = Literal["angle", "bracket"]
#: (kind, name skeleton, slash, end): ``eye.reader.Reading``; ``end`` is 0 for ``"none"``.
_ReadingTuple: TypeAlias = tuple[_Kind, str, bool, int]

UNICODE_VERSION: str

_T = TypeVar("_T")

class SurrogateError(ValueError):
    """The text holds a lone surrogate; use the Python reference for this call."""

@final
class Utf8:
    """One UTF-8 copy of a text (``SurrogateError`` for a lone surrogate): the scanner's native calls
    on one text read it instead of encoding the text each (``eye.backend.encoded_once``)."""

    def __new__(cls, text: str) -> Utf8: ...
    def __len__(self) -> int: ...
    @property
    def walked(self) -> int:
        """The bytes the code point searches of :func:`canonical_body` have walked so far."""
    @property
    def given_up(self) -> bool:
        """Whether a call gave the copy up (it made a new text from at least half of it, and let go
        of the copy first: peak memory); the calls after it encode the text again."""

def defang(text: str, level: _Level, reserved: tuple[str, ...]) -> str:
    """``eye.reference.defang(text, level, reserved)``; returns ``text`` itself when nothing changes."""

def defang_body(text: str, level: _Level, reserved: tuple[str, ...], utf8: Utf8 | None = None) -> str:
    """``escape.defang_body``: ``defang`` judged followed by ``"\\n<"`` (the end-of-body context)."""

def undefang(text: str, level: _Level, reserved: tuple[str, ...]) -> str:
    """``eye.reference.undefang(text, level, reserved)``: the inverse of :func:`defang` with the same
    reserved names (they decide where the escapes are)."""

def undefang_body(text: str, level: _Level, reserved: tuple[str, ...]) -> str:
    """``escape.undefang_body``: the exact inverse of :func:`defang_body` (bracket readings judged
    in the same ``"\\n<"`` context)."""

def canonical_body(
    text: str, level: _Level, reserved: tuple[str, ...], start: int = 0, end: int | None = None, utf8: Utf8 | None = None
) -> tuple[str, bool]:
    """``escape.canonical_body``: :func:`undefang_body` of ``text[start:end]`` and whether
    :func:`defang_body` of it is that slice again (verify's canonical-form check in one call). An ASCII
    ``text`` is read in place (no slice is made unless the slice is the answer); another is read in
    ``utf8`` (a :class:`Utf8` of ``text``, whose cursor walks on from the last body asked for), or
    sliced and encoded."""

def read_after(text: str, pos: int, reserved: tuple[str, ...], tokens: bool = True, pipes: bool = True) -> _ReadingTuple:
    """``eye.reader.read_after`` at ``pos`` (just after an opener); ``tokens=False`` reads with
    ``Names(reserved, (), pipes)`` (no ``<NAME>``, namespace, bracket or exact token), ``pipes=False``
    without the ``<|`` bars. ``pos`` past the end reads none."""

def read_bracket(text: str, pos: int) -> _ReadingTuple:
    """``eye.reader.read_bracket`` at ``pos`` (just after a bracket opener)."""

def openers(text: str, reserved: tuple[str, ...]) -> list[tuple[int, int, _Kind, str, bool, int, _Family]]:
    """(start, opener_end, kind, name, slash, reading_end, family) for every angle and bracket
    opener, in text order, whose reading is not none or that is followed by ``\\``."""

def openers_many(texts: list[str], reserved: tuple[str, ...]) -> list[list[tuple[int, int, _Kind, str, bool, int, _Family]]]:
    """:func:`openers` of each text, on every core with the GIL released for large batches.
    Raises :class:`SurrogateError` (with the index of the text) for a lone surrogate."""

def defang_many(texts: list[str], level: _Level, reserved: tuple[str, ...]) -> list[str]:
    """``defang`` of each text, on every core with the GIL released for large batches.
    Raises :class:`SurrogateError` (with the index of the text) for a lone surrogate."""

def sanitize_events(text: str | Utf8, first: bool = False) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(runs of characters XML 1.0 cannot carry, runs of invisible text ``invisible="strip"`` removes):
    ``envelope.invisible``'s ``XML_IMPOSSIBLE_RE`` runs and ``INVISIBLE_RE``'s group-2 runs (TAG and
    bidi embedding characters outside RGI emoji tag sequences), ``(start, end)`` in text order;
    with ``first``, at most the first run of each."""

def xml_unescape_text(text: str) -> str:
    """``levels.xml_unescape_text``; returns ``text`` itself when nothing changes."""

def decode_escapes(text: str, rounds: int) -> str | None:
    """``scan._base._decode_escapes(text)`` in up to ``rounds`` rounds, or ``None`` where that holds a lone surrogate (a UTF-7
    segment decoding to one); returns ``text`` itself when nothing changes."""

def xml_body_is(got: str, text: str, start: int, end: int, utf8: Utf8 | None = None) -> bool:
    """``got == "\\n" + levels.xml_unescape_text(text[start:end]) + "\\n"``, compared without making
    either side; ``utf8``: the caller's UTF-8 copy of ``text``."""

def find_ascii(text: str, needle: str, start: int) -> int | None:
    """``text.find(needle, start)`` for an ASCII ``text`` (read in place), ``None`` for any other text."""

def classes_present(text: str | Utf8, classes: list[list[tuple[int, int]]]) -> list[bool]:
    """For each class (inclusive code point ranges), whether one of its characters occurs in ``text``."""

def binary_group_starts(text: str | Utf8) -> list[int]:
    """Where ``scan.encoded._BIN_RE`` may start (code points, in order): eight binary digits before a
    space or a tab that ends a run of eight or more."""

def line_markers(text: str | Utf8, markers: list[str]) -> list[tuple[int, int]]:
    """The spans (code points) of the longest of ``markers`` (ASCII, no blank first, no line break)
    at the start of ``text`` and after each LF, CR, U+2028, U+2029 or NEL, past at most eight spaces or
    tabs, ASCII case-insensitively (``scan.text._PROSE_HEAD_RE`` and ``_PROSE_RE``)."""

def attribute_injections(text: str | Utf8, names: list[str]) -> list[tuple[int, int, int, int]]:
    """(start, end, name start, name end) in code points of every match of ``scan.text._ATTR_INJECTION_RE``
    with ``names`` (ASCII) as its attribute names, ASCII case-insensitively."""

def ascii_word_starts(text: str | Utf8, words: Sequence[str]) -> list[int] | None:
    """The offsets (code points) of every occurrence of any of ``words`` in ``text``, ASCII
    case-insensitively, sorted, each once; ``None`` for an empty or non-ASCII word."""

def scheme_starts(
    text: str | Utf8, schemes: list[tuple[str, str, str]], limit: int, loud: str | None = None, copies: int | None = None
) -> list[list[int] | None] | None:
    """For each ``(introducer, second, third)``, the offsets (code points, sorted) where ``introducer``
    is followed by a character of ``second`` and (when ``third`` is not empty) one of ``third``, or
    ``None`` for a scheme with more than ``limit`` of them; ``None`` in all when a scheme's introducer
    is not one ASCII character or its sets are not ASCII. With ``loud`` (the characters an escape
    must decode to to matter), the starts of quiet escapes (a fixed shape that decodes to none of
    them: ``core::escapes::quiet_at``) are left out; with ``copies``, so are those of escapes of a
    fixed shape followed by that many copies of themselves (``core::escapes::repeated_at``)."""

def escape_plan(
    text: str | Utf8,
    starts: str,
    openers: str,
    cut_at: str,
    introducers: str,
    ref_names: list[tuple[str, str]],
    copies: int,
    window: int,
    exact: list[str],
) -> tuple[list[tuple[int, int, str]], list[tuple[tuple[str, ...], tuple[int, int], int, bytes]], list[int]]:
    """The encoded pass's escapes (``envelock.scan.encoded._SCHEMES``, each with its repeat lookahead
    of ``copies``), read and grouped: the tokens of ``exact`` whose first character is encoded and
    no opener, its other characters raw or encoded, ``(start, end, token)``; one ``(decodings, raw
    text's span, cut, occurrences)`` per distinct window after an encoded opener (``window`` code points at
    most), the occurrences being each one's start and finding end as native 64-bit words; and the
    starts of escapes of an introducer (``ref_names``: the HTML names of the introducers with their
    characters). An exact token's first character is followed only where a reading of it is a token,
    or a prefix of one that the next character (or an escape there) may go on. Code points."""

def openers_with_escapes(
    text: str | Utf8, schemes: list[tuple[str, str, str]], window: int
) -> list[tuple[int, int, list[int]]] | None:
    """The windows of the openers of either family (``reader.OPENER_PATTERN``,
    ``BRACKET_OPENER_PATTERN``) whose reading may pass over an escape: one ``(start, end, starts)``
    (code points) per distinct window text, in the order of its first opener, ``starts`` being every
    opener with that window. An opener's window runs from its start to the next opener, or just past
    the first ASCII closer (``>`` or ``]`` by family), or ``window`` code points, whichever comes
    first; it counts when a start of one of ``schemes`` (as for :func:`scheme_starts`) lies in it
    after the opener. ``None`` when a scheme is not ASCII."""

def exact_tokens(text: str | Utf8, reserved: tuple[str, ...]) -> list[tuple[int, int]]:
    """``(start, end)`` (code points) of every exact token of ``text``: ``reader.exact_after`` at each
    place one may start (tokens that overlap are all found)."""

def class_runs(
    text: str | Utf8, ranges: list[tuple[int, int]], limit: int | None = None, shortest: int = 1
) -> list[tuple[int, int]] | None:
    """``(start, end)`` (code points) of each maximal run of characters in the inclusive ``ranges``,
    in order (what ``[class]+`` finds); ``None`` for a range past U+10FFFF or with its ends reversed,
    or for more than ``limit`` runs."""

def words_with_runs(text: str | Utf8, hidden: list[tuple[int, int]], word: list[tuple[int, int]]) -> list[tuple[int, int]] | None:
    """``(start, end)`` (code points) of each word ``scan.hidden._words_with_invisibles`` finds over every
    maximal run of the ``hidden`` ranges (``_IN_WORD_RE`` matched at the character before a run not inside
    the last word: a ``word`` character, then one to three ``hidden`` characters and a ``word`` character,
    once or more), in order; ``None`` for a range past U+10FFFF or with its ends reversed."""

def blob_runs(
    text: str | Utf8, triggers: Sequence[bytes], b64_min: int, hex_min: int, all: bool = False
) -> list[tuple[int, int]]:
    """The base64 runs (``b64_min`` or more characters, then up to two ``=``) of ``text`` as
    ``scan.encoded._B64_RE`` finds them (code points), hex runs ``hex_min`` digits or more: every one with
    ``all``, else only those holding a hex run or, not all digits, decoding (leniently, at any of
    ``_b64_candidates``' shifts) to bytes that hold one of ``triggers`` (``scan.encoded.blob_triggers``; the
    set built from an exact tuple of bytes is kept for the next call with that very tuple)."""

def blob_holds(data: bytes, triggers: Sequence[bytes], b64_min: int, hex_min: int) -> bool:
    """Whether ``data`` holds one of the byte sequences ``triggers`` (``scan.encoded._trigger_re(triggers)
    .search(data)``; an empty sequence is everywhere; the set is kept as :func:`blob_runs` keeps it)."""

def skeleton(text: str) -> str:
    """``eye.reader.skeleton``."""

def datamark(text: str, marker: str) -> str:
    """``spotlight.datamark`` (``marker``: one code point that ``spotlight.marker_problem`` accepts)."""

def undatamark(text: str, marker: str) -> str:
    """``spotlight.undatamark``."""

def interleave(text: str, marker: str, seed: int) -> str:
    """``spotlight.interleave`` with ``seed`` the int of the hex seed (CPython's MT19937, ``random()``
    below 1/4 per boundary)."""

def uninterleave(text: str, marker: str) -> str:
    """``spotlight.uninterleave``."""

def findings(
    cls: type[_T],
    fields: list[str],
    text: str,
    raw: list[tuple[str, str, str, int, int]],
    snippet: Callable[[str, int, int], str],
    snippet_max: int,
    utf8: Utf8 | None = None,
) -> list[_T]:
    """Instances of ``cls`` (``object.__new__``, the ten ``fields`` set in their ``__dict__``) of ordered
    reports ``(rule, severity, message, start, end)``: line and column of both ends as
    ``types.LineIndex.locate``, the snippet ``snippet(text, start, end)`` once per distinct shown part;
    instances of exact ``str`` and ``int`` fields untracked by the garbage collector."""

def starts_increase(raw: list[tuple[str, str, str, int, int]]) -> bool:
    """Whether the reports' starts (item 3) strictly increase: in order, no two at one start."""

def opener_reports(
    text: str | Utf8,
    reserved: tuple[str, ...],
    family: _Family,
    describe: Callable[[int, int, str, str, bool, int], tuple[int | None, Sequence[tuple[str, str, str, int, int]]]],
) -> list[tuple[str, str, str, int, int]]:
    """The reports ``(rule, severity, message, start, end)`` of every ``family`` record of :func:`openers`,
    in order: ``describe(start, opener_end, kind, name, slash, reading_end)`` returns ``(until, reports)``,
    and a record with the same reading (kind, name, slash, opener and reading lengths) and the same text
    from its start to ``until`` (not ``None``) gets the same reports, moved, without a call."""
