"""``_findings`` against its specification, and the Finding the scanner builds without ``__init__``.

``_findings`` (sorting, dedupe, line and column, snippets, Finding built without its generated
``__init__``) is compared, on hypothesis-drawn raw reports, with ``spec_findings``: everything
sorted by (start, -severity, rule, end), the first of each (rule, start, end) kept, each position
located from the start, each Finding made by its ``__init__``. The passes themselves are pinned by
tests/scan/test_scan_snapshot.py (fixed inputs) and the parity and corpus tests, not by a copy of
their code.

Negative controls: a ``_findings`` that keeps the last of two duplicates, one whose columns are off
by one past the first line, and a bracket pass that reuses a report across slash and no slash must
each be told apart.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import pickle
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from envelock import Finding, scan_text
from envelock.scan._base import _Raw, _snippet
from envelock.types import LineIndex, Severity

S = importlib.import_module("envelock.scan")  # its private parts
T = importlib.import_module("envelock.scan.tags")

pytestmark = pytest.mark.usefixtures("impl")

# -- the specification of _findings -------------------------------------------------------------


def spec_findings(text: str, raw: list[_Raw], off: frozenset[str]) -> list[Finding]:
    """Everything sorted by (start, -severity, rule, end), the first of each (rule, start, end) kept,
    each position located from the start, each snippet made, each Finding through its __init__."""
    seen: set[tuple[str, int, int]] = set()
    lines = LineIndex(text)
    out: list[Finding] = []
    for rule, severity, message, start, end in sorted(raw, key=S._order):
        if rule in off or (rule, start, end) in seen:
            continue
        seen.add((rule, start, end))
        line, col = lines.locate(start)
        end_line, end_col = lines.locate(end)
        out.append(Finding(rule, severity, message, start, line, col, end, end_line, end_col, _snippet(text, start, end)))
    return out


@contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    mp.setattr(module, name, value)
    try:
        yield
    finally:
        mp.undo()


RULE_IDS = sorted(S.RULES_BY_ID)
SEVERITIES: list[Severity] = ["error", "warning", "note"]


@st.composite
def raw_reports(draw: st.DrawFn) -> tuple[str, list[_Raw]]:
    """A text and raw reports on it as the passes give them: unordered, with equal starts across
    rules and severities, exact duplicates with other messages, spans across lines and longer than
    a snippet."""
    text = draw(st.lists(st.sampled_from(["a", "bc", "\n", "\r\n", "\u200b", "\x1b", "<|", "é" * 90]), max_size=30).map("".join))
    n = len(text)
    reports: list[_Raw] = []
    for _ in range(draw(st.integers(0, 25))):
        start = draw(st.integers(0, n))
        end = draw(st.integers(start, n))
        rule = draw(st.sampled_from(RULE_IDS[:4]))
        reports.append(_Raw(rule, draw(st.sampled_from(SEVERITIES)), draw(st.sampled_from(["m1", "m2"])), start, end))
        if draw(st.booleans()):
            reports.append(reports[draw(st.integers(0, len(reports) - 1))]._replace(message="dup"))
    return text, reports


@given(raw_reports(), st.frozensets(st.sampled_from(RULE_IDS[:4]), max_size=2))
def test_findings_equal_their_specification(case: tuple[str, list[_Raw]], off: frozenset[str]) -> None:
    text, raw = case
    got = S._findings(text, list(raw), off)
    want = spec_findings(text, list(raw), off)
    assert got == want
    assert [f.as_dict() for f in got] == [f.as_dict() for f in want]


# -- Finding as the native builder makes it ---------------------------------------------------


def test_finding_built_by_the_scanner_is_a_finding() -> None:
    """The native builder makes a Finding with ``object.__new__`` and sets its ten slots with
    ``object.__setattr__`` (as the dataclass's own ``__init__`` does); that is only the same object
    while Finding is a frozen, slotted dataclass with these fields and no ``__post_init__``."""
    assert [f.name for f in dataclasses.fields(Finding)] == [
        "rule", "severity", "message", "offset", "line", "column", "end_offset", "end_line", "end_column", "snippet",
    ]  # fmt: skip
    names = tuple(f.name for f in dataclasses.fields(Finding))
    assert not hasattr(Finding, "__post_init__") and Finding.__slots__ == names
    params = Finding.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen and params.eq
    (got,) = scan_text("x\n y <|im_end|>")
    want = Finding(**got.as_dict())  # type: ignore[arg-type]
    assert type(got) is Finding and got == want and hash(got) == hash(want) and repr(got) == repr(want)
    assert not hasattr(got, "__dict__")  # slotted: 234 bytes a finding instead of 452 (CHANGELOG)
    assert [getattr(got, n) for n in names] == [getattr(want, n) for n in names]
    assert pickle.loads(pickle.dumps(got)) == want and copy.deepcopy(got) == want
    assert dataclasses.replace(got, line=9) == dataclasses.replace(want, line=9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.line = 2  # type: ignore[misc]


# -- negative controls: broken fast paths are told apart --------------------------------


def _differs(findings: Callable[[str, list[_Raw], frozenset[str]], list[Finding]]) -> bool:
    text = "ab\ncd <|im_end|> [INST]\n" * 2
    raw: list[_Raw] = [_Raw("chat-control-token", "error", "first", 3, 5), _Raw("chat-control-token", "error", "second", 3, 5)]
    raw += [_Raw("bidi-control", "warning", "x", 9, 12), _Raw("padded-opener", "note", "y", 30, 40)]
    return findings(text, list(raw), frozenset()) != spec_findings(text, list(raw), frozenset())


def test_control_keeping_the_last_duplicate_is_caught() -> None:
    def last(text: str, raw: list[_Raw], off: frozenset[str]) -> list[Finding]:
        found: list[Finding] = S._findings(text, raw[::-1], off)
        return found

    assert _differs(last)


def test_control_columns_off_past_the_first_line_are_caught() -> None:
    def shifted(text: str, raw: list[_Raw], off: frozenset[str]) -> list[Finding]:
        return [dataclasses.replace(f, column=f.column + 1) if f.line > 1 else f for f in S._findings(text, raw, off)]

    assert _differs(shifted)
    assert not _differs(S._findings)


def test_control_a_bracket_report_shared_across_slashes_is_caught() -> None:
    """A report cache keyed without the slash: [INST] and [/INST] would share one."""
    real = T._bracket_report
    seen: dict[tuple[str, str], Any] = {}

    def unslashed(span: str, kind: str, name: str, slash: bool, opener: int) -> Any:
        return seen.setdefault((kind, name), real(span, kind, name, slash, opener))

    text = "[INST] x [/INST]"
    want = ["chat-template control token [INST]", "chat-template control token [/INST]"]
    assert [f.message for f in scan_text(text)] == want
    with _patched(T, "_bracket_report", unslashed):
        assert [f.message for f in scan_text(text)] != want
