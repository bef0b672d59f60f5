"""The fast implementation's hand-over (``fastpath.WARM_OPENERS``): the texts of one configuration
(names, markup) go to the reference until they have held that many ``<``, then to the generated regex,
whose compile takes about ten seconds. The output equals the reference's throughout. Counted: which
of the two ran, per call (no clocks)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import pytest

F = importlib.import_module("envelock.eye.fastpath")
R = importlib.import_module("envelock.eye.reference")
#: The oracle, taken before the spy replaces it.
REF: Callable[..., str] = R.defang

#: 30 openers, some of them dangerous (the output differs from the input).
TEXT = "a </retrieved_content> b <x> <|im_end|> " * 10


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which implementation each ``fastpath.defang`` call ran (``"reference"`` or ``"regex"``), with a
    fresh hand-over state and ``WARM_OPENERS`` = 100."""
    ran: list[str] = []
    monkeypatch.setattr(F, "WARM_OPENERS", 100)
    monkeypatch.setattr(F, "_seen", {})
    monkeypatch.setattr(F, "_warm", set())

    def spy(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def called(*args: Any, **kwargs: Any) -> Any:
            ran.append(name)
            return real(*args, **kwargs)

        return called

    monkeypatch.setattr(F._reference, "defang", spy("reference", REF))
    monkeypatch.setattr(F, "_fast_regex", spy("regex", F._fast_regex))
    return ran


def test_the_reference_runs_until_the_openers_pay_for_the_regex(calls: list[str]) -> None:
    assert TEXT.count("<") == 30
    for k in range(5):
        calls.clear()
        out = F.defang(TEXT)
        assert out == REF(TEXT) != TEXT
        # 30, 60, 90 openers seen: the reference; 120 >= 100: the regex, and from then on
        assert calls == ["reference" if k < 3 else "regex"], (k, calls)
    calls.clear()
    assert F.defang("<x>") == REF("<x>") and calls == ["regex"]  # warm: a small text too


def test_each_configuration_warms_on_its_own(calls: list[str]) -> None:
    for _ in range(4):
        F.defang(TEXT)  # reserved: warm after the fourth
    calls.clear()
    assert F.defang(TEXT, "markup") == REF(TEXT, "markup")
    assert calls == ["reference"]  # markup has seen 30
    calls.clear()
    F.defang(TEXT, "xml")  # xml and markup are one configuration (markup=True): 60
    assert calls == ["reference"]
    calls.clear()
    F.defang(TEXT, reserved=("retrieved_content", "mine"))  # other names: 30
    assert calls == ["reference"]


def test_text_without_an_opener_costs_nothing_and_counts_nothing(calls: list[str]) -> None:
    for _ in range(10):
        assert F.defang("plain text [INST] here") == REF("plain text [INST] here")
    assert calls == [] and F._seen == {}


def test_the_tests_run_the_regex_at_once() -> None:
    """The suite's setting (tests/conftest.py): every test of the fast implementation runs the regex."""
    assert F.WARM_OPENERS == 0
