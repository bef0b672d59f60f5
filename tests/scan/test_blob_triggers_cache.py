"""``_native.blob_runs`` keeps the trigger set it built from an exact tuple of bytes for the next call
with that very tuple and the same bounds (the scanner hands one cached tuple to every call; building
the set of 114 sequences cost more than the sift of a small file). Held here: the kept set is used
only for that tuple and those bounds, never for an equal-looking list, another tuple, or other
bounds. Negative control: a sift that reused the set whatever it was handed would report the first
tuple's runs for the second."""

from __future__ import annotations

import base64

from helpers.data import NATIVE_HOW, optional_module

_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

#: Two base64 runs: one decodes to bytes holding ``<``, the other to bytes holding ``[``.
LT_RUN = base64.b64encode(b"xx<tag>xx").decode()
BRACKET_RUN = base64.b64encode(b"xx[INST]xx").decode()
TEXT = f"a {LT_RUN} b {BRACKET_RUN} c"


def spans(triggers: object, b64_min: int = 8) -> list[tuple[int, int]]:
    got: list[tuple[int, int]] = _native.blob_runs(TEXT, triggers, b64_min, 12)
    return got


def run_of(run: str) -> tuple[int, int]:
    start = TEXT.index(run)
    return (start, start + len(run))


def test_each_call_sifts_by_what_it_is_handed() -> None:
    lt, bracket = (b"<",), (b"[",)
    for _ in range(3):  # the same tuples again: the kept set is theirs
        assert spans(lt) == [run_of(LT_RUN)]
        assert spans(bracket) == [run_of(BRACKET_RUN)]
    assert spans([b"<"]) == [run_of(LT_RUN)]  # a list is built each time
    assert spans(lt) == [run_of(LT_RUN)]
    assert spans(lt, b64_min=40) == []  # other bounds: not the kept set's
    assert spans(lt) == [run_of(LT_RUN)]


def test_negative_control_a_set_kept_whatever_is_handed_would_be_caught() -> None:
    first = spans((b"<",))
    second = spans((b"[",))
    assert first != second  # a sift that reused the first set would give `first` twice
