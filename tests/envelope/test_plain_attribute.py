"""``render.is_plain_attribute``: the values compose writes and verify reads without the whole check.

A plain value must be one the whole check leaves as it is: no character XML cannot carry, nothing
invisible to strip, no escape point (the attribute defang and undefang leave it alone), nothing the
renderer escapes, and verify's reading of it (unescaped, sanitized, undone, redone) is itself with
no problem. Held on every character up to U+017F, on every token and reserved name of the reader's
tables and around them, and on hypothesis text.

Negative control: the same predicate built without one escape point's character (``[``, or the
fullwidth vertical line that starts an exact token) calls a value plain that the defang changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envelock import PrefaceEntry, compose_preface, verify_preface
from envelock.envelope import render
from envelock.envelope.invisible import XML_IMPOSSIBLE_RE, has_invisible
from envelock.eye.escape import defang, undefang
from envelock.eye.reader import names_for
from envelock.eye.tokens import EXACT_TOKENS, RESERVED_NAMES

#: Every test here runs once per defang implementation (tests/conftest.py, fixture ``impl``).
pytestmark = pytest.mark.usefixtures("impl")

NAMES = names_for(RESERVED_NAMES)
SAMPLES = [
    *map(chr, range(0x180)),
    *EXACT_TOKENS,
    *(f"<{n}>" for n in RESERVED_NAMES),
    *(f"</{n}>" for n in RESERVED_NAMES),
    "[INST]", "<|im_start|>", "<s>", "a\\b", "web:https://a.example/?q=1&r=2", "web:https://a.example/", "external",
    "x\uff5cDSML\uff5cy", "tool:search{q}", "a|b", "[x]", "\uff1cb", "&lt;", "\\[INST]",
]  # fmt: skip


def written_as_is(value: str) -> bool:
    """The whole check leaves ``value`` as it is: compose's steps and verify's reading."""
    return (
        XML_IMPOSSIBLE_RE.search(value) is None
        and not has_invisible(value)
        and defang(value) == value
        and undefang(value) == value
        and render.escape_attribute(value) == value
        and render.unescape_attribute(value) == value
        and render.ATTR_INVALID_RE.search(value) is None
        and all(c not in value for c in '"<>\n')
    )


def wrongly_plain(plain: Callable[[str], bool], values: list[str]) -> list[str]:
    return [v for v in values if plain(v) and not written_as_is(v)]


def test_every_plain_sample_is_written_as_it_is() -> None:
    assert wrongly_plain(render.is_plain_attribute, SAMPLES) == []
    assert sum(map(render.is_plain_attribute, SAMPLES)) > 60  # the fast path is taken


@given(st.text(st.sampled_from([*map(chr, range(0x20, 0x7F)), "\uff5c", "\uff1c", "\t", "\u200b"]), max_size=24))
def test_every_plain_text_is_written_as_it_is(value: str) -> None:
    assert not render.is_plain_attribute(value) or written_as_is(value)


@pytest.mark.parametrize("forgotten", ["[", "\uff5c"])
def test_negative_control_a_predicate_that_forgets_an_escape_point_is_caught(forgotten: str) -> None:
    kept = "".join(
        re.escape(c)
        for c in [*map(chr, range(0x20, 0x7F)), forgotten]
        if c == forgotten or (c not in NAMES.escape_starts() and c not in "&<>\"'\\")
    )
    mutant = re.compile(f"[{kept}]*")
    assert wrongly_plain(lambda v: mutant.fullmatch(v) is not None, SAMPLES) != []


def test_compose_and_verify_agree_with_the_whole_check() -> None:
    """A plain value and a value just short of plain compose and verify as before (same text)."""
    for source, origin in [("external", "web:https://a.example/"), ("external", "web:https://a.example/?q=1&r=2"), ("x[INST]", "o")]:
        entries = [PrefaceEntry(source, origin, "body", "2026-12-04T00:00:00Z")]
        text = compose_preface(entries)
        assert verify_preface(text, expected=entries).ok
        assert f'provenance="{render.escape_attribute(defang(source))}"' in text
