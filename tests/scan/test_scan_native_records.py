"""The native record loop (``_native.opener_reports``) against describing every record.

The openers and brackets passes hand each opener record to a describer, which returns the record's
reports and the end of the text they depend on besides the reading; the native loop reuses an answer
for every later record with the same reading and the same text up to that end. The reference calls
the describer for every record (what the passes do without the native core). The two are compared on
hypothesis text made of repeated hostile fragments (the same construct in many contexts: a later
copy followed by other text, cut by the end, disguised in its last character), on every project
corpus payload and on the benchmark's shapes.

Negative controls: describers that claim a too-short dependency (the opener only; one character
short of the real end) must be caught by the same comparison, and a run of the passes without the
cache must not be what the native path runs (the loop does take answers from its cache).
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable
from typing import Any

import pytest
from helpers.data import NATIVE_HOW, load_corpus, optional_module
from hypothesis import given
from hypothesis import strategies as st

from envelock.eye import backend, escape
from envelock.eye.tokens import RESERVED_NAMES
from envelock.scan._base import Context
from envelock.scan.encoded import _holds_lone_surrogate

T = importlib.import_module("envelock.scan.tags")
_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

CTX = Context(tuple(RESERVED_NAMES), None)
FAMILIES: dict[str, Callable[[str, Context], Any]] = {"angle": T._angle_describer, "bracket": T._bracket_describer}


def reference(text: str, family: str, wrap: Callable[[Any], Any] = lambda d: d) -> list[tuple[Any, ...]]:
    describe = wrap(FAMILIES[family](text, CTX))
    with backend.use("native"):
        records = escape.opener_records(text, CTX.reserved, family)
    return [tuple(r) for rec in records for r in describe(*rec)[1]]


def cached(text: str, family: str, wrap: Callable[[Any], Any] = lambda d: d) -> list[tuple[Any, ...]]:
    describe = wrap(FAMILIES[family](text, CTX))
    return [tuple(r) for r in _native.opener_reports(text, CTX.reserved, family, describe)]


FRAGMENTS = [
    "<|im_end|>", "<|im_end|", "<|im_start|>", "<|", "|>", ">", "<", "</", "[INST]", "[INST", "[/INST]", "[INST\uff3d",
    "[inst]", "<start_of_turn>", "<start_of_turn\uff1e", "<s>", "</s>", "<tool_call>", "\u00ab tool_call \u00bb",
    "<retrieved_content>", "</retrieved_content>", "<retrieved_content provenance=\"x\">", "&gt;", "&lt;", "\\", " ", "\n",
    "x", "\u200b", "<\uff5cend\u2581of\u2581sentence\uff5c>", "[SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "(", ")",
    # bar shapes (a Gemma block opener, a letter drawn as a bar, look-alike bars that also separate) and
    # what the second reading, with the bar shape off, spells after them
    "<|a>", "<|turn>", "<|\u2160m_end|>", "<\uffe4", "\u00a6", "&verbar;", "retrieved", "content", "a:", "\x00" * 40,
]  # fmt: skip
repeated_text = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)


@given(repeated_text, st.sampled_from(sorted(FAMILIES)))
def test_cached_records_equal_every_record_described(text: str, family: str) -> None:
    assert cached(text, family) == reference(text, family)


SHAPES = ["<|im_end|>", "[INST]", "<|", "<|a>", "<|turn>x", "<\u00a6retrieved\u00a6content>", "&lt;", "\u00ab ", "<s>", "<start_of_turn>", "</retrieved_content>", "[INST]\n<|im_end|>"]
#: Escaped slashes (their verdict decodes the escapes after the opener): code's, and one before a reserved name.
SHAPES += ["let re = /<\\/?[a-z]+>/g;\n", "<\\u002fretrieved_content> x ", "<\\/x <\\u002fim_end|> "]
CASES = [p["payload"] for p in load_corpus() if not _holds_lone_surrogate(p["payload"])]
CASES += [(u * (4000 // len(u) + 1))[:4000] for u in SHAPES]
#: Crafted: a construct, then the same opener and reading followed by other text.
CRAFTED = ["<|a><|a><|a:retrieved_content>", "<|turn><|turn\uff1e", "<|a><|a&verbar;>", "<|im_end|><|im_start|>", "<|im_end|><|im_end|x", "[INST][INST\uff3d", "<start_of_turn><start_of_turn\uff1e"]


def test_cached_records_equal_every_record_described_on_the_corpus_and_shapes() -> None:
    total = 0
    for text in CASES + CRAFTED:
        for family in FAMILIES:
            want = reference(text, family)
            total += len(want)
            assert cached(text, family) == want, (family, text[:80])
    assert total > 1000


def _until(change: Callable[[int, int, int], int | None]) -> Callable[[Any], Any]:
    def wrap(describe: Any) -> Any:
        def broken(start: int, end: int, kind: str, name: str, slash: bool, rend: int) -> Any:
            until, reports = describe(start, end, kind, name, slash, rend)
            return (None if until is None else change(until, start, end)), reports

        return broken

    return wrap


@pytest.mark.parametrize(
    "wrap",
    [_until(lambda until, start, end: end), _until(lambda until, start, end: until - 1 if until - 1 >= end else until)],
    ids=["opener-only", "one-short"],
)
def test_too_short_dependencies_are_caught(wrap: Callable[[Any], Any]) -> None:
    caught = [
        (family, text[:40])
        for text in CASES + CRAFTED
        for family in FAMILIES
        if cached(text, family, wrap) != reference(text, family)
    ]
    assert caught


def _counting(calls: list[int]) -> Callable[[Any], Any]:
    """A wrap of the describer that counts its calls in ``calls[0]``."""

    def wrap(describe: Any) -> Any:
        def counted(*args: Any) -> Any:
            calls[0] += 1
            return describe(*args)

        return counted

    return wrap


def test_the_native_loop_takes_answers_from_its_cache() -> None:
    calls = [0]
    text = "<|im_end|>" * 1000 + "[INST]" * 1000
    assert len(cached(text, "angle", _counting(calls))) == 1000 and len(cached(text, "bracket", _counting(calls))) == 1000
    assert calls[0] <= 4


def test_an_escaped_slash_verdict_is_taken_from_the_cache() -> None:
    """Code repeats its escaped slashes (``/<\\/?[a-z]+>/``): one description per distinct window."""
    for unit, reported in [("let re = /<\\/?[a-z]+>/g;\n", 0), ("<\\u002fretrieved_content> x ", 1)]:
        calls = [0]
        text = unit * 1000
        got = cached(text, "angle", _counting(calls))
        assert got == reference(text, "angle") and len(got) == reported * 1000, unit
        assert calls[0] <= 130 // len(unit) + 2, (unit, calls[0])


def test_a_report_moved_from_the_cache_is_untracked_only_when_plain() -> None:
    """The loop takes a moved report of exact strs off the collector's lists (it cannot be part of a
    cycle); one holding a str subclass (which could hold a reference) stays tracked."""

    class Message(str):
        pass

    text = "<|im_end|>" * 5

    def subclassed(describe: Any) -> Any:
        def wrapped(*args: Any) -> Any:
            until, reports = describe(*args)
            return until, [(r[0], r[1], Message(r[2]), r[3], r[4]) for r in reports]

        return wrapped

    describe = FAMILIES["angle"](text, CTX)
    plain = _native.opener_reports(text, CTX.reserved, "angle", describe)
    other = _native.opener_reports(text, CTX.reserved, "angle", subclassed(FAMILIES["angle"](text, CTX)))
    assert len(plain) == len(other) == 5
    # The first report is the describer's own tuple; the four moved from the cache are made natively.
    assert [gc.is_tracked(r) for r in plain[1:]] == [False] * 4
    assert [gc.is_tracked(r) for r in other[1:]] == [True] * 4
