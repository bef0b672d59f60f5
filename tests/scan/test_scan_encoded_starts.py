"""The encoded pass searches only windows around the places an escape can start
(``encoded._SCHEME_STARTS``, read off the regexes by ``regex_reach.starts``, found by
``_native.scheme_starts``), and finds there just what its regexes find over the whole text.

Three claims, each with a control:
- the native starts are the places a Python loop over the text finds (control: a loop that forgets
  ``%u`` is told apart);
- every match of a scheme's regex starts at one of them (control: a start without ``uU`` misses
  ``%u2039``);
- the windowed passes find what the whole passes find (controls: a forgotten start, and a margin
  too short for the repeat lookahead, ``%3C%3C%3C``)."""

from __future__ import annotations

import codecs
import re
import string
from collections.abc import Iterator

import pytest
from helpers.data import on_native
from hypothesis import given
from hypothesis import strategies as st

from envelock.eye import backend
from envelock.eye.tokens import RESERVED_NAMES
from envelock.scan import encoded, regex_reach, scan_text
from envelock.scan._base import Context

assert encoded._SCHEME_STARTS is not None, "every scheme's starts are read off its regex (test_regex_reach.py)"
SCHEME_STARTS = encoded._SCHEME_STARTS

Scheme = tuple[str, str, str]

TEXTS = st.lists(
    st.one_of(
        st.text(alphabet="%=\\+25uUx{}0123456789abcdefABCDEF/-_ &#;bpeé日\n", max_size=8),
        st.sampled_from(
            ["%E2%80%B9", "%253C", "%25253C", "=E2=80", "\\ud833\\udc80", "\\\\x3c", "\\x{2039}", "+ADw-", "\\3c ",
             "%u2039", "&#37;", "&bsol;", "&percnt;", "&equals;", "&plus;", "\\U0000FF1C", "\\u{ff1c}"]
        ),
        st.sampled_from(["%3C", "%3E", "\\u003c", "=3C", "+ADw"]).flatmap(lambda e: st.integers(1, 6).map(lambda k: e * k)),
    ),
    max_size=14,
).map("".join)  # fmt: skip

#: Runs of one escape repeated (``core::escapes::repeated_at`` leaves most of their copies out).
REPEATS = st.lists(
    st.one_of(
        TEXTS,
        st.sampled_from(["%3C", "%3c", "=3C", "\\x3c", "\\\\x3c", "\\u003c", "\\U0000003c", "%41", "=FA", "\\xff", "\\x80", "%C3", "%25", "\\u00e9", "\\3c "])
        .flatmap(lambda e: st.integers(1, 6).map(lambda k: e * k)),
    ),
    max_size=8,
).map("".join)  # fmt: skip


def python_starts(text: str, schemes: tuple[Scheme, ...] = SCHEME_STARTS) -> list[list[int]]:
    """The reference: each place the introducer is, followed by the two classes."""
    return [
        [
            i
            for i, c in enumerate(text)
            if c == intro
            and text[i + 1 : i + 2] != ""
            and text[i + 1] in second
            and (not third or (text[i + 2 : i + 3] != "" and text[i + 2] in third))
        ]
        for intro, second, third in schemes
    ]


def whole(k: int, text: str) -> list[tuple[int, int]]:
    return [m.span() for m in encoded._ENC_CANDIDATE_RE.passes[k].finditer(text)]


def windowed(k: int, text: str, starts: list[int], margin: int) -> list[tuple[int, int]]:
    return [m.span() for m in encoded._in_windows(encoded._ENC_CANDIDATE_RE.passes[k], text, starts, margin)]


def test_every_scheme_has_a_bounded_width() -> None:
    # Without one the pass searches the whole text: correct, but the fast path would be gone unseen.
    margins = encoded._ENC_CANDIDATE_RE.margins
    assert margins is not None and len(margins) == len(encoded._SCHEMES) == len(SCHEME_STARTS)
    assert all(m > 2 * (w or 0) for m, w in zip(margins, map(regex_reach.max_width, encoded._SCHEMES), strict=True))


@given(TEXTS)
def test_the_native_starts_are_the_python_loop(text: str) -> None:
    with on_native():
        assert backend.native_scheme_starts(text, SCHEME_STARTS, len(text) + 1) == python_starts(text)
        # Past the limit a scheme has none (its pass searches the whole text).
        for limit in (0, 1, 3):
            capped = [s if len(s) <= limit else None for s in python_starts(text)]
            assert backend.native_scheme_starts(text, SCHEME_STARTS, limit) == capped


def test_control_a_loop_that_forgets_percent_u_is_told_apart(native: None) -> None:
    forgetful = (("%", "0123456789abcdefABCDEF", "0123456789abcdefABCDEF"), *SCHEME_STARTS[1:])
    text = "x%u2039y"
    assert backend.native_scheme_starts(text, SCHEME_STARTS, 8) == python_starts(text) != python_starts(text, forgetful)


def test_a_start_that_is_not_ascii_falls_back(native: None) -> None:
    assert backend.native_scheme_starts("a%3C", (("\uff05", "3", "C"),), 8) is None


@given(TEXTS)
def test_every_match_starts_at_a_start(text: str) -> None:
    starts = python_starts(text)
    for k in range(len(encoded._SCHEMES)):
        width = regex_reach.max_width(encoded._SCHEMES[k])
        assert width is not None
        for s, e in whole(k, text):
            assert s in starts[k] and e - s <= width, (k, text[s:e])


def test_control_a_start_without_u_misses_a_match() -> None:
    text = "%u2039/retrieved_content>"
    forgetful = (("%", "0123456789abcdefABCDEF", "0123456789abcdefABCDEF"),)
    assert whole(0, text) == [(0, 6)]
    assert 0 in python_starts(text)[0] and 0 not in python_starts(text, forgetful)[0]


@given(TEXTS)
def test_the_windowed_passes_find_what_the_whole_passes_find(text: str) -> None:
    margins = encoded._ENC_CANDIDATE_RE.margins
    assert margins is not None
    for k, starts in enumerate(python_starts(text)):
        assert windowed(k, text, starts, margins[k]) == whole(k, text), k


@pytest.mark.parametrize("every", [0, encoded._WINDOWED_EVERY])
@given(text=st.one_of(TEXTS, REPEATS))
def test_the_candidates_on_the_native_core_are_the_whole_passes(every: int, text: str) -> None:
    # ``every=0``: windows however dense the starts (a hypothesis text is short, so the real
    # threshold takes the whole pass for nearly every one).
    merged = sorted((span for k in range(len(encoded._SCHEMES)) for span in whole(k, text)), key=lambda s: s[0])
    with on_native(), pytest.MonkeyPatch.context() as mp:
        mp.setattr(encoded, "_WINDOWED_EVERY", every)
        assert [m.span() for m in encoded._ENC_CANDIDATE_RE.finditer(text)] == merged


def test_sparse_starts_take_windows_and_dense_ones_the_whole_pass(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[int] = []
    real = encoded._in_windows

    def spy(p: re.Pattern[str], t: str, s: list[int], m: int) -> list[re.Match[str]]:
        taken.append(len(s))
        return real(p, t, s, m)

    monkeypatch.setattr(encoded, "_in_windows", spy)
    sparse = "clean text " * 400 + "%3C/retrieved_content>"
    dense = "\\fBbold\\fR " * 400
    assert [m.span() for m in encoded._ENC_CANDIDATE_RE.finditer(sparse)] == [(4400, 4403)]
    assert taken == [1, 0, 0, 0, 0]  # the percent scheme's one start; the others have none
    taken.clear()
    assert len(list(encoded._ENC_CANDIDATE_RE.finditer(dense))) == 800
    assert taken == [0, 0, 0, 0]  # every scheme but the backslash one, whose 800 starts take the whole pass


def test_control_a_forgotten_start_or_a_short_margin_is_caught() -> None:
    margins = encoded._ENC_CANDIDATE_RE.margins
    assert margins is not None
    text = "a %u2039 b"
    assert windowed(0, text, [], margins[0]) != whole(0, text) == [(2, 8)]
    # A margin shorter than a match and its repeat lookahead splits the windows and cuts the
    # lookahead off: the escapes the whole pass rejects for their copies are found.
    dense = "%3C" * 5
    assert whole(0, dense) == [(9, 12), (12, 15)]
    assert windowed(0, dense, python_starts(dense)[0], margins[0]) == whole(0, dense)
    assert windowed(0, dense, python_starts(dense)[0], 2) != whole(0, dense)


def test_escapes_far_apart_are_each_found(native: None) -> None:
    # Windows between long clean stretches (the shape of source code), each escape reported.
    text = ("clean text " * 500).join(["", "%3C/retrieved_content>", "\\u003c|im_end|>", "=3C/retrieved_content=3E", ""])
    found = scan_text(text)
    assert [f.rule for f in found].count("encoded-tag") == 3
    with backend.use("reference"):
        assert scan_text(text) == found


@pytest.mark.parametrize("pattern", [r"a+", r"(?:ab)*c"])
def test_an_unbounded_scheme_has_no_width(pattern: str) -> None:
    # Its pass then searches the whole text (fail closed: slower, never blind).
    assert regex_reach.max_width(pattern) is None


def test_a_scheme_without_a_width_searches_the_whole_text(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    unbounded = encoded._Candidates(encoded._SCHEMES, 2)
    monkeypatch.setattr(unbounded, "margins", None)
    called: list[str] = []
    monkeypatch.setattr(backend, "native_scheme_starts", lambda *a: called.append("starts"))
    text = "x %3C/retrieved_content> y"
    assert [m.span() for m in unbounded.finditer(text)] == [m.span() for m in encoded._ENC_CANDIDATE_RE.passes[0].finditer(text)]
    assert called == []


# The quiet escapes (``core::escapes::quiet_at``): with ``loud`` (``encoded._loud``), the native
# starts leave out escapes of a fixed shape whose every reading is a character outside it. Sound
# when every start left out is one whose match (if any) has the verdict ``_NOTHING``: then no report
# changes. Held on hypothesis texts and on every value of each shape, with a control (a loud set
# without ``<``, under which ``\x3c`` would be left out and is caught).

CTX_STARTS = encoded._opener_starts(Context(RESERVED_NAMES, None))
_LOUD = encoded._loud(CTX_STARTS)
assert _LOUD is not None
LOUD: str = _LOUD
SCHEME_RES = tuple(re.compile(p) for p in encoded._SCHEMES)

QUIET_TEXTS = st.lists(
    st.one_of(
        TEXTS,
        st.sampled_from(["\\x", "\\\\x", "\\\\\\\\\\x", "=", "%", "\\u", "\\U", "\\", "\\\\", "%25", "=C3", "\\xe2", "\\x80"]),
        st.text(alphabet="0123456789abcdefABCDEF", min_size=1, max_size=8),
        st.sampled_from(["3c", "3C", "ab", "AB", "ff", "c3", "e2", "80", "b9", "0000", "2039", "003c", "00ab", "d83d", "de00"]),
        # UTF-7: `+` and base64 letters (`ADw` is `<`, `AKs` `«`, `2D3` a high surrogate, `PC9` U+3C2F).
        st.sampled_from(["+", "+", "-", "ADw", "AKs", "ACs", "2D3", "3gA", "PC9", "AAA", "4Pg==", "/+", "A"]),
        st.text(alphabet=string.ascii_letters + string.digits + "+/", min_size=1, max_size=18),
    ),
    max_size=12,
).map("".join)  # fmt: skip


def left_out(text: str, loud: str) -> list[tuple[int, int]]:
    """(scheme, offset) of every start the native search leaves out as quiet."""
    every = backend.native_scheme_starts(text, SCHEME_STARTS, len(text) + 1)
    kept = backend.native_scheme_starts(text, SCHEME_STARTS, len(text) + 1, loud)
    assert every is not None and kept is not None
    out = []
    for k, (a, b) in enumerate(zip(every, kept, strict=True)):
        assert a is not None and b is not None and set(b) <= set(a)
        out += [(k, i) for i in sorted(set(a) - set(b))]
    return out


def unsound(text: str, loud: str, starts: frozenset[str] = CTX_STARTS) -> list[str]:
    """The escapes left out as quiet whose verdict is not nothing (the claim: none)."""
    bad = []
    for k, i in left_out(text, loud):
        m = SCHEME_RES[k].match(text, i)
        if m is not None and encoded._verdict(m, starts) != encoded._NOTHING:
            bad.append(m.group())
    return bad


@given(QUIET_TEXTS)
def test_every_start_left_out_as_quiet_decodes_to_nothing(text: str) -> None:
    with on_native():
        assert unsound(text, LOUD) == []


def acting_apart(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The spans of the candidates that act (verdict not nothing): windowed without the quiet
    starts, and from the whole passes (the claim: equal)."""

    def acting(ms: Iterator[re.Match[str]]) -> list[tuple[int, int]]:
        return [m.span() for m in ms if encoded._verdict(m, CTX_STARTS) != encoded._NOTHING]

    merged = sorted(
        (m for k in range(len(encoded._SCHEMES)) for m in encoded._ENC_CANDIDATE_RE.passes[k].finditer(text)), key=re.Match.start
    )
    with on_native(), pytest.MonkeyPatch.context() as mp:
        mp.setattr(encoded, "_WINDOWED_EVERY", 0)  # windows however dense
        return acting(encoded._ENC_CANDIDATE_RE.finditer(text, LOUD)), acting(iter(merged))


@given(QUIET_TEXTS)
def test_the_candidates_without_the_quiet_ones_act_as_all_of_them(text: str) -> None:
    got, want = acting_apart(text)
    assert got == want


def _every_shape() -> Iterator[str]:
    """Every value of each quiet shape, alone and followed by what could extend it."""
    tails = ("", "x", "=", "%", "\\", "=80", "%80", "\\x80", "\\\\x80", " ", "0", "7")
    for v in range(256):
        for head in ("=", "%", "\\x", "\\\\x", "\\\\\\\\x", "\\\\\\\\\\x"):
            for tail in tails:
                yield f"{head}{v:02x}{tail}"
                yield f"{head}{v:02X}{tail}"
    for v in range(0x10000):
        yield f"\\u{v:04x}"
    for v in (*range(0, 0x110000, 0x101), 0x10FFFF, 0x110000, 0xFFFFFFFF, 0x3C, 0xAB, 0x2039, 0xFF1C):
        yield f"\\U{v:08x}"
    for v in range(0x1000):
        for width in (1, 2, 3, 4):
            digits = f"{v:0{width}x}"[-width:]
            yield f"\\{digits}"
            yield f"\\{digits} x"
    for v in (0x3C, 0xAB, 0x2039, 0xFF1C, 0x10FFFF, 0xFFFFFF):
        yield f"\\{v:06x}"
        yield f"\\{v:x}"


#: UTF-7's base64 letters (RFC 2152): the alphabet of ``base64`` in order.
_B64 = string.ascii_uppercase + string.ascii_lowercase + string.digits + "+/"


def _every_utf7() -> Iterator[str]:
    """Every UTF-7 shift sequence of three letters (every first unit and its two low bits, `+` among
    them), ended or not; then, after a few first units, a `+` at each of the next sixteen places, and
    every length of letters up to eighteen."""
    for a in _B64:
        for b in _B64:
            for c in _B64:
                yield f"+{a}{b}{c}-"
                yield f"+{a}{b}{c}"
    for head in ("AGE", "ADw", "AKs", "PC9", "2D3", "AAA"):
        for k in range(17):
            yield f"+{head}{'A' * k}+ADw-"
            yield f"+{head}{'Q' * k}"
        yield f"+{head[:2]}-"
    # Every loud character in UTF-7 (those past U+FFFF as a surrogate pair), ended, not ended, and
    # followed by more letters.
    for ch in LOUD:
        seq = codecs.encode(ch, "utf-7").decode("ascii")
        if seq.startswith("+") and seq != "+-":
            yield seq
            yield seq.rstrip("-")
            yield seq.rstrip("-") + "AA"


def test_a_quiet_utf7_sequence_holding_a_plus_is_searched(native: None) -> None:
    # A `+` inside a sequence's reach is a start of its own, which the whole pass never tries (the
    # sequence's match takes it): the sequence must stay a start, so that its window's search takes
    # it too. Every place of the `+` among the sixteen letters, before `<` (`+ADw-`).
    for k in range(16):
        text = f"x +AGE{'A' * k}+ADw-/retrieved_content> y"
        got, want = acting_apart(text)
        assert got == want, (k, got, want)


def test_every_value_of_each_shape_left_out_decodes_to_nothing(native: None) -> None:
    texts = list(_every_shape())
    found = [bad for text in texts for bad in unsound(text, LOUD)]
    assert found == []
    # Most of them are left out (the search is worth it), and only quiet ones.
    dropped = sum(bool(left_out(text, LOUD)) for text in texts)
    assert dropped > len(texts) // 2, (dropped, len(texts))
    # UTF-7 sequences end at a space: a thousand of them are checked in one text.
    seqs = list(_every_utf7())
    chunks = [" ".join(seqs[k : k + 1000]) for k in range(0, len(seqs), 1000)]
    assert [bad for text in chunks for bad in unsound(text, LOUD)] == []
    dropped = sum(len(left_out(text, LOUD)) for text in chunks)
    assert dropped > len(seqs) // 2, (dropped, len(seqs))


def test_control_a_loud_set_without_the_angle_is_caught(native: None) -> None:
    deaf = LOUD.replace("<", "")
    assert unsound("a \\x3c/retrieved_content> b", LOUD) == []
    assert unsound("a \\x3c/retrieved_content> b", deaf) == ["\\x3c"]
    assert unsound("=3C and %3c and \\u003c and \\74 and \\U0000003c", deaf) != []
    assert unsound("a +ADw-/retrieved_content> b", LOUD) == []
    assert unsound("a +ADw-/retrieved_content> b", deaf) == ["+ADw-"]


def test_a_loud_set_holding_a_surrogate_leaves_nothing_out() -> None:
    # A team token may start with a lone surrogate, which cannot cross into the core: no filter then
    # (every escape goes to the regexes, as without the core). tests/cli/test_failure_modes.py runs
    # such a token through the CLI.
    assert encoded._loud(CTX_STARTS | {"\ud800"}) is None


# Repeated escapes (``core::escapes::repeated_at``): with ``copies``, the native starts leave out an
# escape of a fixed shape followed by that many copies of itself, which the pass's regex (its
# negative lookahead) rejects. Sound when the pass's regex has no match at any start left out: the
# windows then find what the whole passes find. Control: leaving out escapes followed by one copy
# fewer than the regex looks for drops matches and is caught.

COPIES = encoded._ENC_CANDIDATE_RE.copies


def repeated_out(text: str, copies: int) -> list[tuple[int, int]]:
    """(scheme, offset) of every start the native search leaves out for ``copies`` copies after it."""
    every = backend.native_scheme_starts(text, SCHEME_STARTS, len(text) + 1)
    kept = backend.native_scheme_starts(text, SCHEME_STARTS, len(text) + 1, None, copies)
    assert every is not None and kept is not None
    return [(k, i) for k, (a, b) in enumerate(zip(every, kept, strict=True)) for i in sorted(set(a or ()) - set(b or ()))]


def matched_out(text: str, copies: int) -> list[str]:
    """The starts left out where the pass's regex does match (the claim: none)."""
    return [
        m.group() for k, i in repeated_out(text, copies) if (m := encoded._ENC_CANDIDATE_RE.passes[k].match(text, i)) is not None
    ]


@given(REPEATS)
def test_every_repeated_escape_left_out_has_no_match(text: str) -> None:
    with on_native():
        assert matched_out(text, COPIES) == []


def test_a_hostile_run_of_one_escape_leaves_its_last_copies(native: None) -> None:
    # (Not ``\\\\x3c`` repeated: the regex does match the ``\\x3c`` inside each copy.)
    for unit in ("%3C", "\\u003c", "=3C", "\\x3c", "\\U0000003c"):
        text = "a " + unit * 1000 + " b"
        kept = backend.native_scheme_starts(text, SCHEME_STARTS, len(text) + 1, None, COPIES)
        assert kept is not None
        assert sum(len(s or ()) for s in kept) <= COPIES + 1, unit
        merged = sorted((span for k in range(len(encoded._SCHEMES)) for span in whole(k, text)), key=lambda s: s[0])
        assert [m.span() for m in encoded._ENC_CANDIDATE_RE.finditer(text)] == merged != []


def test_control_one_copy_fewer_than_the_regex_is_caught(native: None) -> None:
    text = "%3C%3C/retrieved_content>"
    assert matched_out(text, COPIES) == []
    assert matched_out(text, COPIES - 1) == ["%3C"]


@pytest.mark.parametrize("unit", ["%3C", "\\u003c", "=3C", "\\x3c", "\\U0000003c"])
def test_a_window_ending_inside_a_run_reads_past_its_end(native: None, unit: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A window may end inside a run of escapes left out as repeated; an attempt there must still see
    the copies after it (hypothesis found a run of ``\\u003c`` seventeen long whose cut-off lookahead
    matched inside the window of an escape before it). Every run length up to 40, after an escape of
    another scheme."""
    monkeypatch.setattr(encoded, "_WINDOWED_EVERY", 0)  # windows however dense
    for count in range(1, 41):
        for head in ("", "\\00000 ", "%41 "):
            text = head + unit * count + "/x"
            merged = sorted((span for k in range(len(encoded._SCHEMES)) for span in whole(k, text)), key=lambda s: s[0])
            assert [m.span() for m in encoded._ENC_CANDIDATE_RE.finditer(text)] == merged, (head, count)
