"""The native sanitize pass (``envelock._native.sanitize_events``) and XML text unescape equal the
Python reference.

``envelock.envelope.invisible`` (its regexes) and ``envelock.eye.levels.xml_unescape_text`` are the
reference; with the native implementation chosen, :func:`~envelock.envelope.invisible.sanitize`,
:func:`~envelock.envelope.invisible.first_problems` and the XML unescape of ``undefang_body`` use
the Rust core (``rust/envelock-core/src/sanitize.rs``). Differential checks over text built from
the characters that matter: every TAG character class (tag_spec letters and digits, CANCEL TAG,
the rest of the block), the RGI emoji tag sequences (the flags of England, Scotland and Wales) and
broken variants of them, bidi embedding controls, C0 controls, U+FFFE/U+FFFF, U+FFFD, lone
surrogates, non-BMP characters; every ``invisible`` x ``controls`` policy, compared field by field
(text, every ``Transformation``, or the error's type, message, index and field).

Negative controls: a native pass that forgets one XML-impossible character, one that takes a
broken emoji tag sequence for an RGI one, and an unescape that decodes twice must make the same
checks fail.

Skipped when ``envelock._native`` is not built; ``ENVELOCK_REQUIRE_NATIVE=1`` fails instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from helpers.data import NATIVE_HOW, optional_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envelock import PrefaceEntry, compose_preface, verify_preface
from envelock.envelope import invisible as inv
from envelock.errors import InvalidEntry
from envelock.escape import Level, undefang_body
from envelock.eye import backend, levels
from envelock.eye.charsets import BIDI_EMBEDDING_CONTROLS, CANCEL_TAG, TAG_SPEC_CHARACTERS, XML_IMPOSSIBLE
from envelock.eye.unicode_tables import RGI_EMOJI_TAG_SEQUENCES

optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)
from envelock import _native  # noqa: E402 -- after the check, which skips (or fails in CI) without the core

BLACK_FLAG = "\U0001f3f4"


def tags(ascii_text: str) -> str:
    """``ascii_text`` as TAG characters (U+E0000 + the ASCII code)."""
    return "".join(chr(0xE0000 + ord(c)) for c in ascii_text)


CANCEL = chr(CANCEL_TAG)
#: Not RGI: a subdivision flag of the right shape that emoji-sequences.txt does not list (the planted
#: mutant below takes it for one).
NOT_RGI = BLACK_FLAG + tags("usca") + CANCEL
BROKEN = [
    NOT_RGI,
    BLACK_FLAG + tags("gbeng"),  # no CANCEL TAG
    BLACK_FLAG + tags("gbengg") + CANCEL,  # one tag too many
    BLACK_FLAG + tags("gben") + CANCEL,  # one too few
    BLACK_FLAG + tags("GBENG") + CANCEL,  # capitals are not tag_spec characters
    BLACK_FLAG + CANCEL,
    tags("gbeng") + CANCEL,  # no base
    *(seq[:-1] for seq in RGI_EMOJI_TAG_SEQUENCES),
    *(seq[1:] for seq in RGI_EMOJI_TAG_SEQUENCES),
    *(seq[:3] + "\u202e" + seq[3:] for seq in RGI_EMOJI_TAG_SEQUENCES),  # a bidi control inside
    *(seq[:3] + "\x00" + seq[3:] for seq in RGI_EMOJI_TAG_SEQUENCES),  # a control inside
]
TAG_CHARS = [
    *(chr(cp) for lo, hi in TAG_SPEC_CHARACTERS for cp in (lo, hi)),
    CANCEL,
    "\U000e0000",
    "\U000e0001",
    "\U000e0020",
    "\U000e0041",
    "\U000e005a",
    "\U000e007e",
]
BIDI = [chr(cp) for lo, hi in BIDI_EMBEDDING_CONTROLS for cp in range(lo, hi + 1)]
IMPOSSIBLE = [chr(cp) for lo, hi in XML_IMPOSSIBLE for cp in range(lo, hi + 1) if cp < 0xD800 or cp > 0xDFFF]
SURROGATES = ["\ud800", "\udbff", "\udc00", "\udfff", *(seq[:3] + "\ud800" + seq[3:] for seq in RGI_EMOJI_TAG_SEQUENCES)]
NEIGHBOURS = [
    # Characters next to the sets (in value or in UTF-8 lead byte) that are none of them.
    "\u2029",
    "\u202f",
    "\u2065",
    "\u206a",
    "\ufffd",
    "\ufffc",
    "\ufeff",
    "\U000e0080",
    "\U000e0100",
    "\U000dffff",
    "\u200e",
    "\x7f",
    "\x85",
    "\t",
    "\n",
    "\r",
    " ",
]
OTHER = ["a", "Z", "<", "&", "\u00e9", "\u2014", "\u4e2d", "\U0001f600", "\U0001d400", "\U0010ffff", BLACK_FLAG]

PIECES = [*RGI_EMOJI_TAG_SEQUENCES, *BROKEN, *TAG_CHARS, *BIDI, *IMPOSSIBLE, *NEIGHBOURS, *OTHER]
#: Text rich in everything the pass looks at; surrogates only where the fallback is tested.
rich_text = st.lists(st.sampled_from(PIECES), max_size=40).map("".join) | st.text(max_size=30).filter(
    lambda s: not any("\ud800" <= c <= "\udfff" for c in s)
)
with_surrogates = st.lists(st.sampled_from([*PIECES, *SURROGATES, "\ufff9"]), max_size=40).map("".join)

INVISIBLE_POLICIES = ("strip", "keep", "reject")
CONTROLS_POLICIES = ("replace", "reject")
DIFF = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---------------------------------------------------------------------------
# The checks (also run by the negative controls)
# ---------------------------------------------------------------------------


def reference_runs(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The runs as the reference's regexes find them."""
    bad = [m.span() for m in inv.XML_IMPOSSIBLE_RE.finditer(text)]
    hidden = [m.span(2) for m in inv.INVISIBLE_RE.finditer(text) if m.group(2)]
    return bad, hidden


def outcome(impl: str, text: str, invisible: str, controls: str) -> tuple[Any, ...]:
    """What :func:`sanitize` gives on implementation ``impl``: the text and every transformation
    field, or the error's type, message, index and field."""
    with backend.use(impl):
        try:
            out, changes = inv.sanitize(text, invisible=invisible, controls=controls, index=3, field="body")
        except InvalidEntry as exc:
            return ("error", type(exc), str(exc), exc.index, exc.field)
    return ("ok", out, [(c.entry, c.field, c.kind, c.start, c.end, c.removed) for c in changes])


def check_runs(text: str) -> None:
    bad, hidden = reference_runs(text)
    assert _native.sanitize_events(text) == (bad, hidden), text
    assert _native.sanitize_events(text, True) == (bad[:1], hidden[:1]), text


def check_sanitize(text: str) -> None:
    for invisible in INVISIBLE_POLICIES:
        for controls in CONTROLS_POLICIES:
            want = outcome("reference", text, invisible, controls)
            got = outcome("native", text, invisible, controls)
            assert got == want, (text, invisible, controls)
    for strip in (True, False):
        with backend.use("reference"):
            want_first = inv.first_problems(text, invisible=strip)
        with backend.use("native"):
            got_first = inv.first_problems(text, invisible=strip)
        assert got_first == want_first, (text, strip)


def check_unescape(text: str) -> None:
    assert _native.xml_unescape_text(text) == levels.xml_unescape_text(text), text
    with backend.use("native"):
        assert backend.xml_unescape_text(text) == levels.xml_unescape_text(text), text


# ---------------------------------------------------------------------------
# Differential tests
# ---------------------------------------------------------------------------


def test_native_is_what_sanitize_uses() -> None:
    """The native path is taken (else the checks compare the reference with itself)."""
    with backend.use("native"):
        assert backend.native_sanitize_events("a\x00") == ([(1, 2)], [])
    with backend.use("reference"):
        assert backend.native_sanitize_events("a\x00") is None


KNOWN = [
    "",
    "plain ASCII\twith tabs\r\n",
    "caf\u00e9",
    "a\x00\x01b\x0b\x0c\x0e\x1f",
    "\ufffe\uffff\ufffd",
    "x" + tags("hidden instructions") + "y",
    "\u202eevil\u202c \u2066x\u2069",
    *RGI_EMOJI_TAG_SEQUENCES,
    "".join(RGI_EMOJI_TAG_SEQUENCES) + "\x00",
    *BROKEN,
    tags("a") + RGI_EMOJI_TAG_SEQUENCES[0] + tags("b"),
    BLACK_FLAG + RGI_EMOJI_TAG_SEQUENCES[1],
    "\x00" + tags("x") + "\x01\u202a",
    "\U0001f600\x00\U0001f600" + tags("q"),
    *SURROGATES,
    "a\ud800\x00" + tags("z") + RGI_EMOJI_TAG_SEQUENCES[0] + "\udfff",
]


@pytest.mark.parametrize("text", KNOWN, ids=range(len(KNOWN)))
def test_known_inputs(text: str) -> None:
    if not any("\ud800" <= c <= "\udfff" for c in text):
        check_runs(text)
    check_sanitize(text)


@DIFF
@given(rich_text)
def test_runs_equal_reference(text: str) -> None:
    check_runs(text)


@DIFF
@given(rich_text)
def test_sanitize_equals_reference_for_every_policy(text: str) -> None:
    check_sanitize(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(with_surrogates)
def test_lone_surrogates_are_read_through_the_surrogate_view(text: str) -> None:
    """The core cannot take a lone surrogate; the backend hands it the text with each one written as
    ``backend.VIEW_CHAR`` (same offsets) and merges the surrogates' runs into the XML-impossible ones."""
    if any("\ud800" <= c <= "\udfff" for c in text):
        with pytest.raises(_native.SurrogateError):
            _native.sanitize_events(text)
        view, runs = backend.surrogate_view(text)
        assert len(view) == len(text) and runs == [m.span() for m in re.finditer("[\ud800-\udfff]+", text)]
        assert view == re.sub("[\ud800-\udfff]", backend.VIEW_CHAR, text)
    with backend.use("native"):
        assert backend.native_sanitize_events(text) == reference_runs(text)
        first = reference_runs(text)
        assert backend.native_sanitize_events(text, True) == (first[0][:1], first[1][:1])
    check_sanitize(text)


def test_negative_control_runs_that_touch_must_be_joined() -> None:
    """``\x00`` then a surrogate is one XML-impossible run; a merge that only concatenates is caught."""
    text = "a\x00\ud800b"
    with backend.use("native"):
        assert backend.native_sanitize_events(text) == reference_runs(text) == ([(1, 3)], [])
    assert backend.merged_runs([(1, 2)], [(2, 3)]) == [(1, 3)] != sorted([(1, 2), (2, 3)])


def test_large_input_released_gil_path() -> None:
    """Inputs past the GIL-release threshold (64 KiB) take the other branch of the binding."""
    piece = "Lorem ipsum \u00e9 " + tags("x") + RGI_EMOJI_TAG_SEQUENCES[2] + "\x07" + NOT_RGI + "\u202e\n"
    text = piece * (70_000 // len(piece.encode()) + 1)
    assert len(text.encode()) > 64 * 1024
    check_runs(text)
    check_sanitize(text)
    escaped = levels.xml_escape_text(text + "&amp;<\r") * 2
    check_unescape(escaped)


UNESCAPE_PIECES = [
    "&",
    "amp;",
    "lt;",
    "gt;",
    "#13;",
    "&amp;",
    "&lt;",
    "&gt;",
    "&#13;",
    "&#x3c;",
    "&quot;",
    ";",
    "#",
    "a",
    "\u00e9",
    "\U0001f600",
]


@DIFF
@given(st.lists(st.sampled_from(UNESCAPE_PIECES), max_size=30).map("".join) | st.text(max_size=30))
def test_xml_unescape_equals_reference(text: str) -> None:
    if any("\ud800" <= c <= "\udfff" for c in text):
        with backend.use("native"):
            assert backend.xml_unescape_text(text) == levels.xml_unescape_text(text)
        return
    check_unescape(text)


def _public(impl: str, text: str, level: Level) -> tuple[Any, ...]:
    """compose (its text and transformations, or its error) and the problems verify finds in a
    preface with ``text`` put raw into its body and its origin, on implementation ``impl``."""
    entry = PrefaceEntry("external", "web:x", text)
    with backend.use(impl):
        try:
            composed = compose_preface([entry], level=level)
            made: tuple[Any, ...] = (str(composed), composed.transformations)
        except InvalidEntry as exc:
            made = (type(exc), str(exc))
        raw = f'<retrieved_content provenance="external" origin="web:{text}" fetched_at="2026-11-29T21:29:03Z">\n{text}\n</retrieved_content>'
        found = verify_preface(raw, level=level).problems
    return made, found


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rich_text | with_surrogates, st.sampled_from(["reserved", "xml"]))
def test_compose_and_verify_equal_on_both(text: str, level: Level) -> None:
    """Through the public functions: the same preface and transformations, the same problems."""
    assert _public("native", text, level) == _public("reference", text, level)


@pytest.mark.parametrize("text", ["a&amp;lt;b", "&&amp;&lt;&gt;&#13;&#13", "\u00e9&gt;", "x" * 10])
def test_undefang_body_xml_equal_on_both(text: str) -> None:
    with backend.use("reference"):
        want = undefang_body(text, level="xml")
    with backend.use("native"):
        assert undefang_body(text, level="xml") == want


# ---------------------------------------------------------------------------
# Negative controls: a broken native pass must make the same checks fail
# ---------------------------------------------------------------------------


class _Mutant:
    """``envelock._native`` with ``sanitize_events`` / ``xml_unescape_text`` replaced."""

    def __init__(self, **parts: Callable[..., Any]) -> None:
        self._parts = parts

    def __getattr__(self, name: str) -> Any:
        return self._parts[name] if name in self._parts else getattr(_native, name)


def _forgets_vt(text: str, first: bool = False) -> Any:
    """Forgets one XML-impossible character: U+000B read as a letter (same length, same offsets)."""
    return _native.sanitize_events(text.replace("\x0b", "a"), first)


def _not_rgi_kept(text: str, first: bool = False) -> Any:
    """Takes the unlisted flag NOT_RGI for an RGI sequence: its characters hidden from the pass."""
    return _native.sanitize_events(text.replace(NOT_RGI, "x" * len(NOT_RGI)), first)


def _unescape_twice(text: str) -> str:
    """Decodes reference by reference, in turn (``&amp;lt;`` becomes ``<``)."""
    for raw, ref in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\r", "&#13;")):
        text = text.replace(ref, raw)
    return text


@contextmanager
def _planted(mutant: _Mutant) -> Iterator[None]:
    # The backend's own name for the core: every native call goes through it.
    names = vars(backend)
    saved = names["_native"]
    names["_native"] = mutant
    try:
        yield
    finally:
        names["_native"] = saved


def _check_runs_via_backend(text: str) -> None:
    """:func:`check_runs` through the backend (which the mutant replaces)."""
    with backend.use("native"):
        assert backend.native_sanitize_events(text) == reference_runs(text), text


SANITIZE_MUTANTS: list[tuple[str, _Mutant, str]] = [
    ("forgets U+000B", _Mutant(sanitize_events=_forgets_vt), "a\x0bb"),
    ("broken flag taken for RGI", _Mutant(sanitize_events=_not_rgi_kept), "see " + NOT_RGI + " here"),
]


@pytest.mark.parametrize(("label", "mutant", "text"), SANITIZE_MUTANTS, ids=[m[0] for m in SANITIZE_MUTANTS])
def test_negative_control_known_input(label: str, mutant: _Mutant, text: str) -> None:
    check_sanitize(text)  # equal without the mutant
    _check_runs_via_backend(text)
    with _planted(mutant), pytest.raises(AssertionError):
        check_sanitize(text)
    with _planted(mutant), pytest.raises(AssertionError):
        _check_runs_via_backend(text)


@pytest.mark.parametrize(("label", "mutant"), [(m[0], m[1]) for m in SANITIZE_MUTANTS], ids=[m[0] for m in SANITIZE_MUTANTS])
def test_negative_control_hypothesis_finds_the_mutant(label: str, mutant: _Mutant) -> None:
    """The differential property itself, run under a mutant, must find a difference."""

    @settings(max_examples=400, derandomize=True, database=None, deadline=None, report_multiple_bugs=False)
    @given(rich_text)
    def prop(text: str) -> None:
        check_sanitize(text)

    with _planted(mutant), pytest.raises(AssertionError):
        prop()


def test_negative_control_unescape() -> None:
    check_unescape("a&amp;lt;b")
    with _planted(_Mutant(xml_unescape_text=_unescape_twice)), pytest.raises(AssertionError):
        with backend.use("native"):
            assert backend.xml_unescape_text("a&amp;lt;b") == levels.xml_unescape_text("a&amp;lt;b")

    @settings(max_examples=300, derandomize=True, database=None, deadline=None, report_multiple_bugs=False)
    @given(st.lists(st.sampled_from(UNESCAPE_PIECES), max_size=30).map("".join))
    def prop(text: str) -> None:
        with backend.use("native"):
            assert backend.xml_unescape_text(text) == levels.xml_unescape_text(text)

    with _planted(_Mutant(xml_unescape_text=_unescape_twice)), pytest.raises(AssertionError):
        prop()
