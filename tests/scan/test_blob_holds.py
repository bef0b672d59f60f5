"""``_native.blob_holds`` answers what the blobs pass's regex answers: does decoded data hold one of the
trigger sequences (``encoded._trigger_re(triggers).search(data)``)? Hypothesis data and trigger sets,
the scanner's own triggers on data that holds each of them, and the empty trigger (everywhere).
Negative control: a regex of the triggers less one (what a core that lost a sequence would answer)
differs on data holding only that one."""

from __future__ import annotations

from helpers.data import NATIVE_HOW, optional_module
from hypothesis import given
from hypothesis import strategies as st

from envelock.eye.tokens import RESERVED_NAMES
from envelock.scan import encoded
from envelock.scan._base import Context
from envelock.scan.encoded import B64_MIN, HEX_MIN

_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

#: The scanner's own triggers (every character a ``_first_danger`` match can start with, as UTF-8).
TRIGGERS = encoded.blob_triggers(Context(RESERVED_NAMES))


def holds(data: bytes, triggers: tuple[bytes, ...]) -> bool:
    got: bool = _native.blob_holds(data, triggers, B64_MIN, HEX_MIN)
    return got


def regex_holds(data: bytes, triggers: tuple[bytes, ...]) -> bool:
    return encoded._trigger_re(triggers).search(data) is not None


seqs = st.binary(min_size=1, max_size=4)


@given(
    st.binary(max_size=200),
    st.lists(seqs, max_size=8).map(lambda v: tuple(sorted(set(v)))),
    st.integers(0, 200),
    st.integers(-1, 7),
)
def test_holds_as_the_regex(data: bytes, triggers: tuple[bytes, ...], at: int, which: int) -> None:
    if triggers and which >= 0:  # one of them planted
        at = min(at, len(data))
        data = data[:at] + triggers[which % len(triggers)] + data[at:]
    assert holds(data, triggers) == regex_holds(data, triggers)


def test_the_scanner_s_triggers_each_found() -> None:
    assert len(TRIGGERS) > 50
    for t in TRIGGERS:
        data = b"xx" + t + b"yy"
        assert holds(data, TRIGGERS) and regex_holds(data, TRIGGERS), t
    quiet = b"plain words, no opener"
    assert not holds(quiet, TRIGGERS) and not regex_holds(quiet, TRIGGERS)
    assert holds(quiet, (b"",)) and regex_holds(quiet, (b"",))  # an empty trigger is everywhere
    assert holds(quiet, ()) and regex_holds(quiet, ())  # so is an empty set (the regex matches "")
    # ... and the sift keeps every base64 run for it (it dropped them all before).
    run = "QUJDREVGR0hJSktM"
    assert _native.blob_runs(f"a {run} b", (), B64_MIN, HEX_MIN) == [(2, 2 + len(run))]


def test_negative_control_a_lost_trigger_is_caught() -> None:
    for k, t in enumerate(TRIGGERS):
        fewer = TRIGGERS[:k] + TRIGGERS[k + 1 :]
        data = b"xx" + t + b"yy"
        if not regex_holds(data, fewer):  # a trigger no other one is part of
            assert holds(data, TRIGGERS) != regex_holds(data, fewer)
            return
    raise AssertionError("every trigger holds another")
