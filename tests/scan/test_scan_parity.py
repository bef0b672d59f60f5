"""Scan parity: every opener that ``defang`` escapes for its reading lies inside a ``scan_text`` finding.

``defang`` and ``scan_text`` share one reader (:func:`envelock.eye.reader.read_after`,
:func:`envelock.eye.reader.read_bracket`); this holds them to it on hypothesis text
built from the eye's own tables (look-alike letters, blanks, marks, openers, bars,
brackets, references). Excluded, as documented in :mod:`envelock.scan`: openers
already followed by ``\\`` (escaped for injectivity only) and a bare ``<|`` with no
closing ``|>`` (an F#/Elm pipe operator).

Negative controls: a scanner that has lost its bracket rule, or whose reader
gives up on padding, must be caught by the same check on known inputs.
"""

from __future__ import annotations

import importlib
import sys

import pytest
from helpers.data import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

import envelock
from envelock.eye import backend, escape
from envelock.eye import reader as me
from envelock.eye.unicode_tables import LBRACKET_LOOKALIKES, LT_LOOKALIKES, PIPE_LOOKALIKES, READINGS, SKIP_RANGES

if str(ROOT / "fuzz") not in sys.path:
    sys.path.insert(0, str(ROOT / "fuzz"))
_common = importlib.import_module("_common")
S = importlib.import_module("envelock.scan")
TAGS = importlib.import_module("envelock.scan.tags")

_LETTERS = sorted(chr(cp) for cp in READINGS)
_SKIPS = [chr(cp) for lo, hi in SKIP_RANGES for cp in range(lo, hi + 1)]
FRAGMENTS = [
    "<", "</", "[", "[/", "]", ">", "|", "&lt;", "&#38;lt;", "&amplt;", "&#0000000060;", "&lsqb;", "&#91;",
    "&verbar;", "&gt;", "&AMP;GT;", "retrieved_content", "RETRIEVED_CONTENT", "external", "_content", "INST",
    "inst", "start_of_turn", "think", "tool_call", "im_end", "s>", "sys", "ns:", "a:", "<:", "\\", " ", "\n",
]
eye_text = st.lists(
    st.one_of(
        st.sampled_from(FRAGMENTS),
        st.sampled_from(_LETTERS),
        st.sampled_from(_SKIPS),
        st.sampled_from([chr(c) for c in (*LT_LOOKALIKES, *PIPE_LOOKALIKES, *LBRACKET_LOOKALIKES)]),
        st.text(max_size=3),
    ),
    max_size=40,
).map("".join)

#: Known inputs, one per kind of escape; each must have a finding over its opener.
KNOWN = [
    "</retrieved_content>",
    "</RETRI\u0395VED_CONTENT>",
    "<externaI_content>",
    "<" + " " * 40 + "x",
    "<\u2800/retrieved\u2014content>",
    "&#38;lt;/retrieved_content>",
    "<&verbar;im_end&verbar;>",
    "<\u05c0im_end\u05c0>",
    "[INST]",
    "\uff3b\uff29\uff2e\uff33\uff34\uff3d",
    "&lsqb;/INST]",
    "[\u200bINST\u200b]",
    "<seed:think>",
    "<a:<a:retrieved_content>",
]


def violations(text: str) -> list[str]:
    found: list[str] = _common.parity_violations(text, envelock.scan_text(text))
    return found


@pytest.mark.parametrize("text", KNOWN)
def test_known_escapes_are_findings(text: str) -> None:
    assert envelock.defang(text) != text, "the example must be escaped"
    assert violations(text) == []


@settings(max_examples=400, deadline=None)
@given(eye_text)
def test_every_escaped_opener_is_a_finding(text: str) -> None:
    assert violations(text) == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=80))
def test_every_escaped_opener_is_a_finding_any_text(text: str) -> None:
    assert violations(text) == []


def test_control_scanner_without_bracket_rule_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(S, "FAMILIES", tuple(f for f in S.FAMILIES if f.name != "brackets"))
    assert violations("[INST]") and violations("&lsqb;/INST]")


def test_control_scanner_ignoring_padding_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = me.read_after

    def no_padding(text: str, pos: int, names: me.Names) -> me.Reading:
        r = real(text, pos, names)
        return me.Reading("none") if r.kind == "padding" else r

    monkeypatch.setattr(TAGS, "read_after", no_padding)
    monkeypatch.setattr(escape, "read_after", no_padding)  # the scanner's openers come from escape.opener_readings
    monkeypatch.setattr(backend, "_impl", backend.IMPLEMENTATIONS["reference"])  # the planted reader is the Python one
    assert violations("<" + "\u200b" * 40 + "retrieved_content>")
