"""The decoded windows of the encoded passes read by the native reader (``encoded._dangers``).

``_scan_raw_openers`` reads each decoded window (and, where it finds a tag, the window as it
stands) for the tag or token it starts with. With the native core in use the openers at the start of
every window are read in one native call (``_native.openers_many``) and handed to
``_encoded_danger``; the Python reader is the reference. Here the two are held equal on every text of
a hostile palette and on generated ones, with controls: native readings given to the other family,
readings that end a character late, and one that reads none where there is a tag must each be caught.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envelock.eye import backend
from envelock.eye.reader import Reading, names_for
from envelock.eye.tokens import RESERVED_NAMES
from envelock.scan import _base, encoded

CTX = _base.Context(RESERVED_NAMES)
NAMES = names_for(CTX.reserved, CTX.tokens)

#: Decoded windows start with an opener of either family and end in ``<`` (what ended the window)
#: or in more padding than the eye reads past (``_UNREAD``).
OPENERS = ["<", "</", "[", "[/", "&lt;", "\uff1c", "<|", "\u2039", "&#91;"]
PIECES = ["INST", "im_end", "|", "retrieved_content", "system", "s", "/", "]", ">", "\u200b", " ", "\x00", "a:", "|>",
          "\uff5c", "\u0456", "l", "1", "é", "日", "&gt;", "&#x7c;", "x", "-", "_"]  # fmt: skip
TAILS = ["<", encoded._UNREAD, ""]


def _texts() -> list[str]:
    out = []
    for o in OPENERS:
        for a in PIECES:
            for b in PIECES:
                for t in TAILS:
                    out.append(o + a + b + t)
    return out


def _reference(texts: list[str]) -> list[str | None]:
    return [encoded._encoded_danger(t, CTX, NAMES) for t in texts]


def _first_difference(texts: list[str]) -> str | None:
    got = encoded._dangers(texts, CTX, NAMES)
    want = _reference(texts)
    return next((f"{t!r}: {g!r} != {w!r}" for t, g, w in zip(texts, got, want, strict=True) if g != w), None)


@pytest.mark.usefixtures("native")
def test_native_readings_give_the_reference_dangers_on_every_palette_text() -> None:
    texts = _texts()
    assert _first_difference(texts) is None
    # Not a test of nothing: the native call reads them, and most kinds of danger are among them.
    many = backend.native_openers_many(texts, CTX.reserved, CTX.tokens)
    assert many is not None and sum(1 for recs in many if recs and recs[0][0] == 0) > 1000
    kinds = {recs[0][2] for recs in many if recs and recs[0][0] == 0}
    assert kinds >= {"reserved", "token", "bar"}, kinds


@pytest.mark.usefixtures("native")
@given(st.lists(st.tuples(st.sampled_from(OPENERS), st.lists(st.sampled_from(PIECES), max_size=12).map("".join),
                          st.sampled_from(TAILS)).map("".join), min_size=2, max_size=8))  # fmt: skip
def test_native_readings_give_the_reference_dangers(texts: list[str]) -> None:
    assert _first_difference(texts) is None


@pytest.mark.usefixtures("native")
def test_a_text_the_native_core_cannot_take_is_read_by_the_reference() -> None:
    texts = ["<retrieved_content>\ud800<", "[INST]<"]  # a lone surrogate: no native call at all
    assert backend.native_openers_many(texts, CTX.reserved, CTX.tokens) is None
    assert encoded._dangers(texts, CTX, NAMES) == _reference(texts)
    assert all(d is not None for d in _reference(texts))


Broken = Callable[[backend.NativeOpener], backend.NativeOpener | None]


def _controlled(monkeypatch: pytest.MonkeyPatch, broken: Broken) -> str | None:
    real = encoded._readings_at_start

    def at_start(records: list[backend.NativeOpener]) -> encoded._AtStart:
        return real([b for r in records if (b := broken(r)) is not None])

    monkeypatch.setattr(encoded, "_readings_at_start", at_start)
    return _first_difference(_texts())


@pytest.mark.usefixtures("native")
@pytest.mark.parametrize(
    "broken",
    [
        pytest.param(lambda r: (*r[:6], "angle" if r[6] == "bracket" else "bracket"), id="families swapped"),
        pytest.param(lambda r: (*r[:5], r[5] + 1, r[6]), id="a character late"),
        pytest.param(lambda r: None if r[2] in ("reserved", "token") else r, id="none for a tag"),
    ],
)
def test_control_a_wrong_native_reading_is_caught(monkeypatch: pytest.MonkeyPatch, broken: Broken) -> None:
    assert _controlled(monkeypatch, broken) is not None


def test_without_native_readings_the_reference_reads() -> None:
    # ``_native_reading`` hands over to the Python reader without native readings, and where the
    # native pass ends an opener elsewhere than the Python reader does.
    r = Reading("token", "inst", False, 6)
    assert encoded._native_reading(None, "bracket", 1) is None
    assert encoded._native_reading({("bracket", 2): r}, "bracket", 1) is None
    assert encoded._native_reading({("angle", 1): r}, "bracket", 1) == encoded._NO_READING
    assert encoded._native_reading({("bracket", 1): r}, "bracket", 1) == r
