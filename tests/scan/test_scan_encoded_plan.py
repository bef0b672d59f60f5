"""The encoded pass's plan made by the native core (``_native.escape_plan``) is the reference's
(``encoded._escape_plan_reference`` over the candidates' regex matches), field by field: the exact
tokens whose first character is encoded, the distinct windows after encoded openers with every occurrence,
and the layered escapes. On hypothesis texts built from the pieces of every scheme (their repeats,
lookbehinds and lookaheads), on the hostile shapes, the project corpus and real text. Controls:
planted mutants of the reference (a window one shorter, the octal readings forgotten, another
repeat bound, every escape cutting a window, no exact token followed) are told apart on the
examples."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.data import load_corpus, on_native
from helpers.scanning import reference_escape_plan
from hypothesis import given
from hypothesis import strategies as st

from envelock import scan_text
from envelock.eye import backend
from envelock.eye.tokens import RESERVED_NAMES
from envelock.scan import encoded as E
from envelock.scan._base import Context
from envelock.scan.tags import _name_maps

CTX = Context(RESERVED_NAMES)
NAMES = _name_maps(CTX)[0]

PIECES = st.sampled_from(
    [
        "%", "%25", "25", "%3C", "%3c", "%3E", "%7C", "%u003C", "%U003c", "%E2%80%B9", "%e2%80", "%B9", "%C3%A9",
        "%F0%9F%98%80", "%F4%90%80%80", "%2525", "%253C", "%5C", "%5Cu003c", "%25E2%2580%25B9", "%00",
        "=", "=3C", "=E2=80=B9", "=A9", "=C3=A9", "=\n", "=3D",
        "\\", "\\\\", "\\\\\\\\", "\\u003c", "\\u003C", "\\uD83D\\uDE00", "\\ud83d\\\\ude00", "\\u{3c}", "\\x{3C}",
        "\\U0000003C", "\\U0011FFFF", "\\x3c", "\\xE2\\x80\\xB9", "\\\\xE2\\x80", "\\x80", "\\3c ", "\\3c", "\\74 ", "\\074",
        "\\0", "\\fB", "\\5c", "\\25",
        "+", "+ADw-", "+ADw", "+AD4-", "+AHw-", "+ADwAfA-", "+AAA-", "+AF8-", "+2D3YAA-", "+ACU-", "+/v8-",
        "&", "&#37;", "&#x25;", "&#X2b", "&#0000092;", "&#00043", "&#x00005c;", "&#x00005c5", "&bsol;", "&percnt",
        "&equals;", "&plus", "&amp;", "&#60;", "&#x3C;",
        "<", ">", "[", "]", "|", "/", "~", " ", "\n", "s", "im_end", "retrieved_content", "TITLE", "INST", "x", "u", "U",
        "{", "}", ";", "0", "3", "C", "c", "e", "é", "\uff1c", "\u3008", "-", "\u2028",
        "%5D", "b", ">>", "%3E%3E", "=3E", "\\3e ", "+AD4-", "<<", "%3C%3C", "\uff5c", "DSML",
    ]
)  # fmt: skip
TEXTS = st.lists(PIECES, max_size=24).map("".join)


@pytest.fixture(autouse=True)
def _native() -> Iterator[None]:
    with on_native():
        yield


def native_plan(text: str, copies: int = 2, window: int = 192) -> E.EscapePlan | None:
    """The core's plan (``None`` for a text with a lone surrogate: the scan asks the reference)."""
    starts = E._opener_starts(CTX)
    inputs = E._plan_inputs(starts)
    assert inputs is not None
    got = backend.native_escape_plan(text, *inputs, copies, window, list(NAMES.exact))
    if got is None:
        assert any("\ud800" <= c <= "\udfff" for c in text), text
        return None
    exact, windows, layered = got
    return E.EscapePlan(exact, [(o, r, c, list(occ)) for o, r, c, occ in windows], layered)


def reference_plan(text: str, copies: int = 2) -> E.EscapePlan:
    starts = E._opener_starts(CTX)
    finder = E._candidates(copies)
    return E._escape_plan_reference(text, list(finder.finditer(text)), starts, NAMES.exact)


def differs(text: str, copies: int = 2) -> bool:
    native = native_plan(text, copies)
    return native is not None and native != reference_plan(text, copies)


@given(TEXTS)
def test_the_native_plan_is_the_references(text: str) -> None:
    assert native_plan(text) == reference_plan(text)


SURROGATES = st.sampled_from(["\ud800", "\udcff", "\ud83d", "\udfff\ud800", "\ufff9"])
WITH_SURROGATES = st.lists(st.one_of(PIECES, SURROGATES), max_size=24).map("".join)


@given(WITH_SURROGATES, st.integers(1, 4))
def test_a_text_with_a_lone_surrogate_is_planned_on_its_view(unit: str, times: int) -> None:
    """Within the scanner's ``encoded_once(text, view=True)`` the core reads the text's surrogate view
    (a lone surrogate as ``VIEW_CHAR``, U+FFF9, offsets kept), each window's raw text is sliced from
    the text itself, and windows that differ only in which surrogate they hold are one group, in the
    reference too: the plans are equal, and so are the scans of the native and fast implementations."""
    text = unit * times
    with backend.encoded_once(text, view=True):
        plan = native_plan(text)
    assert plan is not None and plan == reference_plan(text)
    native = scan_text(text)
    with backend.use("fast"):
        assert scan_text(text) == native


def test_windows_that_differ_in_their_surrogate_are_one_group() -> None:
    """Found by the test above on its first run (hypothesis): ``\\3c `` after two different lone
    surrogates, repeated. Control: outside the scanner's view the core is not asked."""
    text = "\ud800\\3c \udcff\\3c " * 2
    assert native_plan(text) is None
    with backend.encoded_once(text, view=True):
        plan = native_plan(text)
    assert plan is not None and plan == reference_plan(text)
    assert [w[1] for w in plan.windows] == ["\udcff"]


@given(TEXTS, TEXTS, st.integers(1, 12))
def test_the_plans_agree_on_repeated_texts(unit: str, other: str, times: int) -> None:
    """Long texts that repeat a unit with another between: the core's memory of its last few exact
    walks (kept only where the bytes they read lie inside the text, so past 128 bytes) is asked."""
    text = (unit + other) * times + unit * times
    assert native_plan(text) == reference_plan(text)


@given(TEXTS)
def test_the_native_plan_is_the_references_with_three_copies(text: str) -> None:
    assert native_plan(text, 3) == reference_plan(text, 3)


#: The hostile shapes of the availability targets and the red team, and the controls' triggers.
SHAPES = [
    "%3C", "\\u003c", "<|im_end|>", "&lt;", "%3C%7C", "<|a>", "3c7c", "%3Cs%3E", "=3Cs=3E", "\\x3cs\\x3e", "%5BINST%5D",
    "+ADw-s+AD4-", "+", "%3E%3ETITLE%3C%3C", "%26", "%3C%26", "\\74 ", "%3C\\74 ", "%25", "%5C", "%5Cu003c", "&#92;",
    "%255C", "%5Cu003e", "%5Cu003c%5Cu003e", "%3C" + "x" * 200 + " ", "\\3c /re\\74 rieved_content>",
    "%3C/%26%23114%3Betrieved_content>",
]  # fmt: skip
EXAMPLES = [unit * k for unit in SHAPES for k in (1, 2, 3, 5)] + ["+AD4APg-COMMENT<<", "+AF0Afg-b]"]


@pytest.mark.parametrize("text", EXAMPLES)
def test_the_plans_agree_on_the_hostile_shapes(text: str) -> None:
    assert native_plan(text) == reference_plan(text)


def test_the_plans_agree_on_the_corpus() -> None:
    texts = [p["payload"] for p in load_corpus()]
    assert len(texts) > 500
    assert [t for t in texts if differs(t)] == []


def test_the_plans_agree_on_real_text() -> None:
    """The standard library's source (escapes of every scheme in strings and regexes) and the
    documentation's prose."""
    stdlib = Path(re.__file__).parent.parent
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(stdlib.glob("*.py"))[:80]]
    texts.append("\n".join(__import__("pydoc_data.topics").topics.topics.values()))
    assert [k for k, t in enumerate(texts) if differs(t)] == []


def test_a_utf7_reading_with_a_lone_surrogate_crosses_as_python_reads_it() -> None:
    """Python's UTF-7 decoder reads ``+ADzYAA-`` as ``<`` and a lone surrogate: the core hands that
    reading over as a ``str`` all the same (a fallback to the reference would let one such segment
    slow the whole text down)."""
    text = "+ADzYAA-|im_end|>"
    plan = native_plan(text)
    assert plan is not None and plan == reference_plan(text)
    assert plan.windows[0][0] == ("<\ud800",)


#: Exact tokens whose encoded first character reads as two (a UTF-7 segment), followed by a character
#: that is no token's second character: the follow rule (``encoded._may_go_on``, per prefix) must not
#: drop them (a test of the next character against the tokens' second characters did, in this
#: change's first version: a find of its own review).
LONG_FIRSTS = ["+AD4APg-COMMENT<<", "+AF0Afg-b]", "x +AD4APg-QUESTION<< y"]


@pytest.mark.usefixtures("impl")
@pytest.mark.parametrize("text", LONG_FIRSTS)
def test_an_exact_token_after_a_first_escape_of_two_characters(text: str) -> None:
    assert [f.rule for f in scan_text(text)] == ["encoded-tag"]


def test_control_the_first_versions_follow_rule_drops_them(monkeypatch: pytest.MonkeyPatch) -> None:
    reference_escape_plan(monkeypatch)

    def seconds_only(text: str, e: int, firsts: tuple[str, ...], exact: tuple[str, ...]) -> bool:
        return e < len(text) and text[e] in {t[1] for t in exact} | E._INTRODUCERS

    monkeypatch.setattr(E, "_may_go_on", seconds_only)
    assert [t for t in LONG_FIRSTS if [f.rule for f in scan_text(t)] != ["encoded-tag"]] == LONG_FIRSTS


def _cuts_always(decoded: set[str]) -> bool:
    return True


def _no_octal(m: re.Match[str]) -> set[str]:
    got = REAL_DECODINGS(m)
    digits = m.groupdict().get("digits")
    return {E._code_point(int(digits, 16))} if digits else got


REAL_DECODINGS = E._decodings


def _never_a_token(*args: object) -> None:
    return None


@pytest.mark.parametrize(
    ("name", "attr", "value"),
    [
        ("a window one code point shorter", "_WINDOW", 191),
        ("the octal readings forgotten", "_decodings", _no_octal),
        ("every escape cuts a window", "_cuts", _cuts_always),
        ("no exact token followed", "_encoded_exact", _never_a_token),
    ],
)
def test_control_a_mutant_of_the_reference_is_told_apart(
    name: str, attr: str, value: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert not any(differs(t) for t in EXAMPLES)
    monkeypatch.setattr(E, "_SEEN", {})  # verdicts made under the mutant are not kept
    monkeypatch.setattr(E, attr, value)
    assert any(differs(t) for t in EXAMPLES), name


def test_control_another_repeat_bound_is_told_apart() -> None:
    assert any(native_plan(t, 2) != reference_plan(t, 3) for t in EXAMPLES)
