"""The scanner's rewritten regexes match exactly as the forms they replace (differential, hypothesis),
with a control: a rewrite that changes matches is caught."""

from __future__ import annotations

import base64
import re
import sys
from collections.abc import Callable

import pytest
from helpers.data import NATIVE_HOW, skip_unless_required
from hypothesis import given
from hypothesis import strategies as st

from envelock.eye import backend
from envelock.eye.reader import exact_tokens
from envelock.scan import encoded, hidden

#: Word characters, invisible ones, characters that are both (a variation selector and CGJ are marks,
#: so word characters, and default-ignorable, so invisible), and others.
ALPHABET = ["a", "\u00e9", "7", "\u0301", "\u200b", "\u2060", "\ufe00", "\u034f", " ", "<", "\u00ad"]
TEXTS = st.lists(st.sampled_from(ALPHABET), max_size=40).map("".join)

GREEDY = re.compile(f"[{hidden._WORD_CLASS}](?:[{hidden._HIDDEN_CLASS}]{{1,3}}[{hidden._WORD_CLASS}])+")
#: The control: possessive in the wrong place (inside the iteration), which can change the match.
INNER_POSSESSIVE = f"[{hidden._WORD_CLASS}](?:[{hidden._HIDDEN_CLASS}]{{1,3}}+[{hidden._WORD_CLASS}])+"


def spans(rx: re.Pattern[str], text: str) -> list[tuple[int, int] | None]:
    out: list[tuple[int, int] | None] = []
    for i in range(len(text)):
        m = rx.match(text, i)
        out.append(m.span() if m else None)
    return out


@given(TEXTS)
def test_word_pattern_matches_as_the_greedy_form(text: str) -> None:
    assert spans(hidden._IN_WORD_RE, text) == spans(GREEDY, text)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive quantifiers need Python 3.11")
def test_control_a_rewrite_that_changes_matches_is_caught() -> None:
    wrong = re.compile(INNER_POSSESSIVE)
    text = "a\ufe00\ufe00"  # the selector is invisible and a mark: greedy gives one back, possessive cannot
    assert spans(GREEDY, text) != spans(wrong, text)
    assert spans(hidden._IN_WORD_RE, text) == spans(GREEDY, text)


BINARY = st.lists(st.sampled_from(["0", "1", "01100001", " ", "\t", "  ", "x", "\n", "é"]), max_size=60).map("".join)


def _spans(found: object) -> list[tuple[int, int]]:
    return [m.span() for m in found]  # type: ignore[attr-defined]


def _require_native() -> None:
    """The native core's tests skip only where it is not built, and fail then under
    ``ENVELOCK_REQUIRE_NATIVE=1`` (CI): the project's one way to skip."""
    if "native" not in backend.IMPLEMENTATIONS:
        skip_unless_required(f"needs envelock._native ({NATIVE_HOW})", "ENVELOCK_REQUIRE_NATIVE")


@pytest.mark.parametrize("impl", ["native", "reference"])
@given(text=BINARY)
def test_binary_matches_are_the_regex_matches(impl: str, text: str) -> None:
    """Where the start finder (native) looks, or the regex alone (Python), the matches are
    ``finditer``'s: none lost, none added."""
    if impl == "native":
        _require_native()
    with backend.use(impl):
        assert _spans(encoded._binary_matches(text)) == _spans(encoded._BIN_RE.finditer(text))


def test_control_a_start_finder_missing_tabs_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A start finder that forgets the tab (a blank the groups may be separated by) finds no start
    in tab-separated groups, so the matches differ from ``finditer``'s: the comparison above tells it
    apart, and the native finder does find the match."""
    _require_native()
    text = "01100001\t01100010\t01100011\t01100100"
    want = _spans(encoded._BIN_RE.finditer(text))
    assert want == [(0, len(text))]

    def spaces_only(t: str) -> list[int]:
        return [i - 8 for i, c in enumerate(t) if c == " " and i >= 8 and set(t[i - 8 : i]) <= {"0", "1"}]

    with backend.use("native"):
        assert _spans(encoded._binary_matches(text)) == want
        monkeypatch.setattr(backend, "native_binary_group_starts", spaces_only)
        assert _spans(encoded._binary_matches(text)) != want


#: Base64 of hostile and harmless text at every shift, among base64 characters and separators; some
#: near the line ``is_text`` draws (one bad character in ten), some with a look-alike opener.
_TEXTS = (
    b"</retrieved_content>", b"x</retrieved_content>", b"xy[INST]", b"&lt;|im_end|&gt;", b"plain words only", b"\xef\xbc\x9c/x",
    b"[INST]abcdefghijkl\x01\x02", b"<|im_end|>\x01", b"<|im_end|>\x01\x02", b"<|im_end|>\xe2\x80", b"\xe2\x80\xb9/retrieved_content>", b"<\x00\x01\x02\x03\xff\xfe",
)  # fmt: skip
_PIECES = [base64.b64encode(p).decode() for p in _TEXTS]
BLOBS = st.lists(
    st.one_of(
        st.sampled_from(_PIECES),
        st.sampled_from(_PIECES).map(lambda p: p.replace("+", "-").replace("/", "_")),
        st.text(alphabet="ABCabc0123+/-_=", max_size=12),
        st.sampled_from([" ", "\n", "3c", "5B", "3c7265747269", "é", "=="]),
        st.sampled_from(_TEXTS).map(bytes.hex),
    ),
    max_size=12,
).map("".join)


@given(BLOBS)
def test_blob_runs_are_the_regex_runs(text: str) -> None:
    _require_native()
    assert _native_blob_runs(text, True) == [m.span() for m in encoded._B64_RE.finditer(text)]


def _native_blob_runs(text: str, all: bool) -> list[tuple[int, int]]:
    from envelock import _native
    from envelock.eye.tokens import RESERVED_NAMES
    from envelock.scan._base import Context

    got: list[tuple[int, int]] = _native.blob_runs(text, list(encoded.blob_triggers(Context(RESERVED_NAMES))), encoded.B64_MIN, encoded.HEX_MIN, all)
    return got


def _blobs(text: str) -> list[object]:
    from envelock.eye.tokens import RESERVED_NAMES
    from envelock.scan._base import Context

    out: list[object] = []
    encoded._scan_blobs(text, Context(RESERVED_NAMES), out)  # type: ignore[arg-type]
    return out


@given(BLOBS)
def test_sifted_runs_report_what_every_run_reports(text: str) -> None:
    """The native sift drops only runs the pass reports nothing from: the blobs pass reports the
    same over the sifted runs (native) as over every run (reference)."""
    _require_native()
    with backend.use("reference"):
        want = _blobs(text)
    with backend.use("native"):
        assert _blobs(text) == want


def test_control_a_sift_that_decodes_one_shift_only_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sift reading only the unshifted decoding drops a run whose tag starts at another shift; the
    comparison above tells it apart."""
    text = "x" + base64.b64encode(b"x</retrieved_content> and more text here").decode()  # aligned at shift 1

    def shift_zero_only(t: str, triggers: tuple[bytes, ...], b64_min: int, hex_min: int) -> list[tuple[int, int]]:
        keep = []
        for m in encoded._B64_RE.finditer(t):
            body = m.group().rstrip("=")
            body = body[: len(body) - len(body) % 4]
            if any(x in base64.b64decode(body, validate=False) for x in triggers):
                keep.append(m.span())
        return keep

    with backend.use("reference"):
        want = _blobs(text)
    assert want  # the tag is reported from some shift
    monkeypatch.setattr(backend, "native_blob_runs", shift_zero_only)
    assert _blobs(text) != want


def _two_letters(k: int) -> bytes:
    return bytes((0x41 + k % 26, 0x41 + k // 26 % 26))


#: One base64 run the sift must keep (it decodes to ``<x></x>``, an opener the eye reads and finds
#: harmless), one hex run and one binary run likewise, each repeated; and the same run made distinct
#: in each copy (two letters in front, encoded the same way).
_REPEATED_BLOBS = (
    ("PHg+PC94Pg== ", lambda k: base64.b64encode(b"a" + _two_letters(k) + b"<x></x>").decode() + " "),
    ("3c783e3c2f783e3c2f783e ", lambda k: (_two_letters(k) + b"<x></x></x>").hex() + " "),
    ("00111100 01111000 00111110 00111100 x ", lambda k: " ".join(f"{c:08b}" for c in _two_letters(k) + b"<x><") + " x "),
)


@pytest.mark.parametrize("unit, distinct", _REPEATED_BLOBS)
@pytest.mark.parametrize("impl", ["native", "reference"])
def test_a_repeated_run_is_judged_once(impl: str, unit: str, distinct: Callable[[int], str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Hostile text repeats one blob: its decodings are read by the eye once, not once per copy (the
    base64 ``<x></x>`` repeated was scanned at 0.5 MB/s). Counted: the calls of ``_blob_danger``.
    Control: copies made distinct cost at least one call each, so the count sees the calls."""
    if impl == "native":
        _require_native()
    calls = [0]
    real = encoded._blob_danger

    def counted(data: bytes, ctx: object) -> str | None:
        calls[0] += 1
        return real(data, ctx)  # type: ignore[arg-type]

    monkeypatch.setattr(encoded, "_blob_danger", counted)
    times = 300
    with backend.use(impl):
        assert _blobs(unit * times) == []
        once = calls[0]
        calls[0] = 0
        assert _blobs("".join(map(distinct, range(times)))) == []
    assert 0 < once <= 8, once
    assert calls[0] >= times, calls[0]


#: The forms the prefix-set rewrites replaced: a leading lookahead, which no match needed.
OLD_ATTRIBUTE = re.compile(
    r"(?=[\"'&%])(?:[\"']|&quot;|&#0*3[49];|&#[xX]0*2[27];|&apos;|%22|%27)"
    r"(?:[ \t\u2028\u2029]|%20|\+){0,8}(provenance|source|origin|fetched_at)[ \t]{0,4}(?:=|%3[dD])",
    re.IGNORECASE,
)
ATTRIBUTE_TEXT = st.lists(
    st.sampled_from(['"', "'", "&quot;", "&#34;", "&#x27;", "&apos;", "%22", "%27", "&", "%", " ", "%20", "+",
                     "provenance", "Source", "ORIGIN", "fetched_at", "=", "%3D", "\t", "x"]),
    max_size=20,
).map("".join)


@given(ATTRIBUTE_TEXT)
def test_attribute_pattern_matches_as_the_lookahead_form(text: str) -> None:
    from envelock.scan import text as scan_text_rules

    new = [(m.span(), m.group(1)) for m in scan_text_rules._ATTR_INJECTION_RE.finditer(text)]
    assert new == [(m.span(), m.group(1)) for m in OLD_ATTRIBUTE.finditer(text)]


def _exact_names() -> object:
    from envelock.eye.tokens import RESERVED_NAMES
    from envelock.scan import tags
    from envelock.scan._base import Context

    return tags._name_maps(Context(RESERVED_NAMES))[0]


def _zero_width_finder(names: object) -> re.Pattern[str]:
    """The finder as it was: one lookahead over every alternative (zero-width matches)."""
    exact = names._exact  # type: ignore[attr-defined]
    alts = [f"{re.escape(c)}\\\\*(?:{'|'.join(re.escape(r) for r in exact[c])})" for c in names.exact_starts()]  # type: ignore[attr-defined]
    return re.compile(f"(?=(?:{'|'.join(alts)}))")


EXACT_PIECES = ["<", ">", "[", "]", "\\", "\uff5c", "PAD>", ">TITLE<<", "IMG]", "INST]", "DSML\uff5c", "pad>", "x", " "]


@given(st.lists(st.sampled_from(EXACT_PIECES), max_size=24).map("".join))
def test_exact_tokens_start_as_the_zero_width_form(text: str) -> None:
    """Written out (no ``&``: no reference), the tokens start where the zero-width form finds them."""
    names = _exact_names()
    new = [s for s, _ in exact_tokens(text, names)]  # type: ignore[arg-type]
    assert new == [m.start() for m in _zero_width_finder(names).finditer(text)]


def test_control_a_finder_that_consumes_the_token_is_caught() -> None:
    """Overlapping tokens (``<PASSWORD>`` ends where ``>>INTRODUCTION<<`` starts): a finder whose
    matches take the whole token misses the second; the one-character finder does not."""
    names = _exact_names()
    whole = re.compile(_zero_width_finder(names).pattern[len("(?=(?:") : -len("))")])  # the alternatives, consumed
    text = "<PASSWORD>>INTRODUCTION<<"
    want = [m.start() for m in _zero_width_finder(names).finditer(text)]
    assert want == [0, 9]
    assert [m.start() for m in whole.finditer(text)] != want
    assert [s for s, _ in exact_tokens(text, names)] == want  # type: ignore[arg-type]
