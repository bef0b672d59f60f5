"""``context.is_text`` (do decoded bytes look like text?) counts its bad characters with ``str.count``:
equal to the per-character definition (a replacement character, or a C0 control other than tab, line
feed and carriage return) on every single byte, every two-byte pair and hypothesis bytes, with a
control that forgets one control character."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envelock.scan import context


def defined(data: bytes) -> bool:
    s = data.decode("utf-8", "replace")
    bad = sum(1 for c in s if c == "\ufffd" or (c < " " and c not in "\t\n\r"))
    return bad * 10 <= len(s)


#: Byte strings around the one-in-ten line: each byte (and each pair) among nine letters.
NEAR = [bytes([b]) + b"a" * k for b in range(256) for k in (8, 9, 10)]


def test_every_byte_near_the_line() -> None:
    assert [context.is_text(d) for d in NEAR] == [defined(d) for d in NEAR]
    assert any(context.is_text(d) for d in NEAR) and not all(context.is_text(d) for d in NEAR)


def test_every_pair_of_bytes() -> None:
    pairs = [bytes([a, b]) for a in range(256) for b in range(0, 256, 3)]
    assert [context.is_text(d) for d in pairs] == [defined(d) for d in pairs]


@given(st.binary(max_size=64))
def test_hypothesis_bytes(data: bytes) -> None:
    assert context.is_text(data) == defined(data)


def test_control_a_count_that_forgets_a_control_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(context, "_NOT_TEXT", tuple(c for c in context._NOT_TEXT if c != "\x01"))
    assert [context.is_text(d) for d in NEAR] != [defined(d) for d in NEAR]
