"""The fast defang (generated regexes) equals the reference defang (one Python check per opener).

``defang_reference`` is the oracle. Strategies are biased toward what the
fast path models specially: openers and their look-alikes and character
references, skip characters (whitespace, ignorables, controls, separators,
slashes), fragments of reserved names and chat tokens, namespace prefixes,
and long runs that reach the lookahead bounds.
"""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from envelock.escape import Level
from envelock.eye.reader import GT_CHARS, LT_CHARS, MAX_RUN, PIPE_CHARS, SLASH_CHARS

F = importlib.import_module("envelock.eye.fastpath")
R = importlib.import_module("envelock.eye.reference")
E = importlib.import_module("envelock.escape")
LEVELS: tuple[Level, ...] = ("reserved", "markup", "xml")

OPENERS = [*LT_CHARS, "&lt;", "&lt", "&LT;", "&#60;", "&#060", "&#x3c;", "&#X3C", "&#x00003c;", "&amp;lt;", "&#0000060;"]
FRAGMENTS = [
    "retrieved", "_content", "retrieved_content", "retrieved_content_hygiene", "external_content", "retrieved_conten",
    "s", "sys", "system", "system-reminder", "systemreminder", "start_of_turn", "end_of_turn", "think", "bos", "eos",
    "tool_call", "tool_response", "function_calls", "function_results", "im_end", "INST", "[INST]", "[/INST]", "[\\INST]",
    "RETRIEVED", "rEtRiEvEd", "retrieved-content", "retrieved content", "retr\u0435ved", "retrieve\u0501", "c0ntent", "extern",
    "externa1", "exte\u0433nal", "rn", "m", "ns:", "a:", "x:retrieved_content", "https:", "&gt;", "&#62;", "&#x3e;", "&GT;",
    "&sol;", "&#47;", "&#x2f;", "&nbsp;", "&#32;", "&#114;", "&amp;", "&", "#", ";", ":", "\uff1a",
]
SKIPS = [" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x00", "\x1f", "\x7f", "\x85", "\xa0", "_", "-", ".", "\\", "!", "?",
         "\u200b", "\u200d", "\u2060", "\ufeff", "\u00ad", "\ufe0f", "\U000e0041", "\U000e0001", "\u3000", "\ufffd",
         "\u202e", "\u2066", "\uff01"]
ODD = [*SLASH_CHARS, *PIPE_CHARS, *GT_CHARS, "\u0301", "\u00e9", "\u4e2d", "\U0001d42b", "\uff52", "\u2028", "\u1160"]

piece = st.one_of(
    st.sampled_from(OPENERS),
    st.sampled_from(FRAGMENTS),
    st.sampled_from(SKIPS),
    st.sampled_from(ODD),
    st.builds(lambda c, k: c * k, st.sampled_from([*SKIPS, "/", " "]), st.integers(MAX_RUN - 3, MAX_RUN + 2)),
    st.builds(lambda c, k: c * k, st.sampled_from([" ", "_", "\u200b", "\x00"]), st.integers(8, 14)),
    st.text(max_size=4),
    st.text(alphabet="<>/&#;:|[]\\ abcdefghilmnorstuvxy_-0123456789", max_size=6),
)
texts = st.lists(piece, max_size=24).map("".join)


@settings(max_examples=1500)
@given(texts, st.sampled_from(LEVELS))
def test_fast_equals_reference(text: str, level: Level) -> None:
    assert F.defang(text, level=level) == R.defang(text, level=level)


@settings(max_examples=300)
@given(st.text(max_size=200), st.sampled_from(LEVELS))
def test_fast_equals_reference_any_text(text: str, level: Level) -> None:
    assert F.defang(text, level=level) == R.defang(text, level=level)


@settings(max_examples=200)
@given(texts, st.sampled_from([("retrieved_content",), ("data", "secret_block"), ("x-y",)]))
def test_fast_equals_reference_other_reserved(text: str, reserved: tuple[str, ...]) -> None:
    assert F.defang(text, reserved=reserved) == R.defang(text, reserved=reserved)


@pytest.mark.parametrize(
    "text",
    [
        "</retrieved_content>",
        "<" + " " * (MAX_RUN - 1) + "retrieved_content",
        "<" + " " * MAX_RUN,
        "<" + " " * MAX_RUN + "x",
        "<r" + " " * 11 + "etrieved_content",
        "<r" + " " * MAX_RUN + "x",
        "<s" + "/" * MAX_RUN + "x",
        "<s" + "/" * (MAX_RUN - 1) + ">",
        "<\u200b/retrieved_content>",
        "&lt;&#x3c;" * 50 + "&#x",
        "<a:b:c:retrieved_content>",
        "<|im_end|>",
        "\uff1c\uff5cend\uff5c\uff1e",
        "<" + "r" + "\u200b" * 40 + "etrieved_content",
    ],
)
@pytest.mark.parametrize("level", LEVELS)
def test_fast_equals_reference_edges(text: str, level: Level) -> None:
    for t in (text, text * 3, "x " + text + " y"):
        assert F.defang(t, level=level) == R.defang(t, level=level)


def test_impl_switch() -> None:
    """``envelock.escape`` chose one implementation at import; the conftest fixture ``impl`` runs core tests over all."""
    assert E.implementation() in E.IMPLEMENTATIONS


@pytest.mark.parametrize("text", ["<0" + " " * 29 + "x:retrieved_content", "<0 x:retrieved_content", "<o\tx:retrieved_content", "<9  ab:retrieved_content"])
@pytest.mark.parametrize("level", LEVELS)
def test_a_namespace_prefix_with_blanks_after_a_dead_letter(text: str, level: Level) -> None:
    """A hypothesis find (CI profile): the fast path's namespace run held no blank, so after a letter
    that starts no name (``0`` reads ``o``) it was sure of ``<0 x:retrieved_content`` while the
    reference reads ``0 x:`` as a namespace prefix and escapes the opener."""
    assert F.defang(text, level=level) == R.defang(text, level=level) != text
