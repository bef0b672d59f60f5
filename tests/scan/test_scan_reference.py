"""Differential check: ``scan_text`` reports exactly what the scanner it replaced reported.

The passes of the scanner were rewritten for speed (prefilters, one forward decode, cheap snippets);
none of that may change a finding. The reference is the scanner before the rewrite, frozen in
``tests/helpers/scan_reference``. Compared: every field of every finding, their order and their
dedupe, on the project corpus, the third-party corpora, hypothesis text built from the constructs
the passes look for, the hostile repeated shapes of the complexity guard, and real text nobody here
wrote (the Python documentation's topics, the standard library's source). Each test runs once per
implementation of the eye (the native reader, the Python one).

Negative control: a scanner whose snippets are cut one character short, and one that drops the
second of two identical findings, must be told apart from the reference by the same comparison.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path

import pytest
from helpers.data import load_corpus, shared_strings
from helpers.scan_reference import scan_text as reference_scan
from hypothesis import given, settings
from hypothesis import strategies as st

from envelock import RESERVED_NAMES, Finding, scan_text
from envelock.eye.load_tokens import load_tokens

pytestmark = pytest.mark.usefixtures("impl")

S = importlib.import_module("envelock.scan")
BASE = importlib.import_module("envelock.scan._base")

#: The hostile repeated shapes (also in tests/properties/test_complexity.py and benchmarks/run.py).
SHAPES = (
    "<|im_end|>", "<|", "[INST]", "a\u200b", "%3C", "\\u003c", "</retrieved_content>", "<", "[", "&lt;", "%3C/",
    "<|im_start|>user\n", "<s>", "\u200b\u200b\u200b\u200b", "\U000e0041", "\u202e", "\x1b", "QUJD", "3c2f", "<|a", "<|\u200b",
)
FRAGMENTS = (
    "<", "</", "<|", "|>", "｜", "[", "[/", "]", ">", "|", "&lt;", "&gt;", "&#124;", "&verbar;", "&#60;", "&amp;lt;", "%3C", "%3E",
    "%253C", "\\u003c", "\\x3c", "\\u003e", "=3C", "+ADw-", "\\", "/", "&#47;", "retrieved_content", "RETRIEVED_CONTENT",
    "retrieved content", "im_end", "im_start", "eot_id", "INST", "/INST", "SYS", "s", "think", "start_of_turn", "turn",
    "tool_call", "a:", " ", "  ", "\n", "\t", "\r\n", "\u200b", "\u200d", "\u2060", "\u00ad", "\ufe0f", "\U000e0041",
    "\U000e007f", "\u202e", "\x00", "\x1b", "\ud800", "\uff1c", "\uff0f", "\u2039", "«", "»", "x", "ab", "日本", "ก",
    "provenance", "origin=", "source=", '"', "'", "&quot;", "Human:", "Assistant:", "### Instruction:", "USER:",
    "QUJDREVGR0g=", "PC9yZXRyaWV2ZWRfY29udGVudD4=", "3c2f72657472696576", "00111100", "ertevrirq_pbagrag",
    "tnetnoc_deveirter", "\u2062\u2064\u2062\u2064", "\ufe00\ufe01\ufe02\ufe03", "-" * 40, " " * 40,
)


def same(text: str, **kw: object) -> None:
    got: list[Finding] = scan_text(text, **kw)  # type: ignore[arg-type]
    try:
        want: list[Finding] = reference_scan(text, **kw)  # type: ignore[arg-type]
    except IndexError:
        # The reference read past the end of the text when a word ended the text with a variation
        # selector after a run of them (``%3C`` + U+FE00..U+FE03); the scanner never raises.
        return
    if got != want:
        for k, (g, w) in enumerate(zip(got, want, strict=False)):
            assert g == w, f"finding {k} of {text[:80]!r}: {g} != {w}"
        assert len(got) == len(want), f"{len(got)} findings, the reference {len(want)}, on {text[:80]!r}"


def test_corpus() -> None:
    for p in load_corpus():
        same(p["payload"])


def test_shared_corpora() -> None:
    strings = shared_strings()
    for _, s in strings:
        same(s)


@pytest.mark.parametrize("shape", SHAPES)
def test_repeated_shapes(shape: str) -> None:
    for n in (1, 2, 3, 7, 50, 3000 // len(shape)):
        same(shape * n)
        same("x " + shape * n + "\n")


#: The edges of the plain ``NAME|>`` fast path and of the bare-``<|`` prefilter.
PIPE_EDGES = (
    "<|im_end|>", "<|" + "a" * 62 + "|>", "<|" + "a" * 63 + "|>", "<|" + "a" * 64 + "|>", "<|___|>", "<|-|>", "<|a|>>",
    "<|a| >", "<|a|\u200b>", "<|\u200bim_end|>", "<|im\u200b_end|>", "\uff1c|im_end|>", "&lt;|im_end|>", "<\uff5cim_end\uff5c>",
    "<|im_end&#124;>", "<|im_end|&gt;", "<|im&#95;end|>", "<|im end|>", "<|im_end\n|>", "<|im_end<|>", "<|a>", "<|_>",
    "<||>", "<| |>", "<|\t", "<|", "<|a", "<|a|", "<|é|>", "<|日本|>", "</|im_end|>", "<\\|im_end|>", "<|im_end|/>",
)


@pytest.mark.parametrize("text", PIPE_EDGES)
def test_pipe_edges(text: str) -> None:
    for t in (text, text * 3, "x" + text + "y", text + "\n" + text):
        same(t)


@settings(max_examples=300)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_fragments(parts: list[str]) -> None:
    same("".join(parts))


@settings(max_examples=100)
@given(
    st.lists(st.sampled_from(FRAGMENTS), max_size=30),
    st.sets(st.sampled_from(sorted(S.RULES_BY_ID)), max_size=4),
)
def test_fragments_with_disabled_rules(parts: list[str], disable: set[str]) -> None:
    same("".join(parts), disable=disable)


@settings(max_examples=100)
@given(st.text(alphabet=st.sampled_from("<|>[]/&#;lt%3Cu0\\x ai_m\n\u200b\uff1cINSTend"), max_size=60))
def test_small_alphabet(text: str) -> None:
    same(text)


def test_custom_names_and_tokens() -> None:
    tokens = load_tokens(["<my_turn>", "[MYTOK]", "@@stop@@", "<|my_bar|>"])
    for text in ("<my_turn> [MYTOK] @@stop@@ <|my_turn|> </mine> <mine x>", "<|im_end|>" * 20 + "[MYTOK]" * 20):
        same(text, tokens=tokens)
        same(text, reserved=(*RESERVED_NAMES, "mine"))


def _stdlib() -> Path:
    return Path(os.__file__).parent


def test_pydoc_topics() -> None:
    topics = importlib.import_module("pydoc_data.topics").topics
    same("\n".join(topics.values()))


@pytest.mark.parametrize("start", range(0, 200, 40))
def test_stdlib_source(start: int) -> None:
    files = sorted(_stdlib().glob("*.py"))[start : start + 40]
    assert files
    for path in files:
        same(path.read_text(encoding="utf-8", errors="surrogateescape"))


def test_control_short_snippets_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = BASE._snippet
    monkeypatch.setattr(S, "_snippet", lambda text, start, end: real(text, start, end)[:-1])
    with pytest.raises(AssertionError):
        same("a <|im_end|> b")


def test_control_lost_duplicate_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = S.scan_text

    def dedupe_by_rule(text: str, **kw: object) -> list[Finding]:
        out: list[Finding] = []
        for f in real(text, **kw):
            if not out or (out[-1].rule, out[-1].message) != (f.rule, f.message):
                out.append(f)
        return out

    monkeypatch.setattr(importlib.import_module(__name__), "scan_text", dedupe_by_rule)
    with pytest.raises(AssertionError):
        same("<|im_end|><|im_end|>")
