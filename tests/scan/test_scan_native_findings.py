"""The native Finding builder (``_native.findings``) against the Python one (``scan._py_findings``).

``scan._findings`` orders and deduplicates the passes' raw reports in Python, then builds the
Findings in one native call when the native core is in use; ``_py_findings`` is the reference. The
two are compared field by field (values and their exact types) on hypothesis-drawn
reports over hostile text (several lines, CRLF, non-ASCII, spans longer than a snippet, past the end)
and on the raw reports of every project corpus payload and the benchmark's hostile shapes.

Negative controls: builders broken as a native one could plausibly be (the line and column fields
swapped, the snippet bound off by one, a snippet cached by the shown part without the cut flag)
must each be told apart by the same comparison on the same inputs.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Callable
from itertools import pairwise

import pytest
from helpers.data import NATIVE_HOW, load_corpus, optional_module
from hypothesis import given
from hypothesis import strategies as st

from envelock import Finding
from envelock.eye import backend
from envelock.eye.tokens import RESERVED_NAMES
from envelock.scan import FAMILIES
from envelock.scan._base import SNIPPET_MAX, Context, _Reports, _snippet
from envelock.scan.encoded import _holds_lone_surrogate
from envelock.types import Severity

S = importlib.import_module("envelock.scan")
_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

Report = tuple[str, Severity, str, int, int]
Builder = Callable[[str, list[Report]], list[Finding]]


def native(text: str, raw: list[Report]) -> list[Finding]:
    got: list[Finding] = _native.findings(Finding, list(S._FIELDS), text, raw, _snippet, SNIPPET_MAX)
    return got


def same(a: list[Finding], b: list[Finding]) -> bool:
    """Equal field by field: values and their exact types."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        xs, ys = [getattr(x, f) for f in S._FIELDS], [getattr(y, f) for f in S._FIELDS]
        if type(x) is not type(y) or xs != ys or [type(v) for v in xs] != [type(v) for v in ys]:
            return False
    return True


def ordered(text: str, raw: list[Report]) -> list[Report]:
    """The reports as ``_findings`` hands them to a builder: sorted and deduplicated."""
    raw = sorted(raw, key=lambda r: r[3])
    return S._untied(raw)  # type: ignore[no-any-return]


PIECES = ["a", "bc", "\n", "\r\n", "\u200b", "\x1b", "<|", "é" * 90, "\U0001f600", "[INST]", "\u2028", "&lt;", "x" * 200]


@st.composite
def reports(draw: st.DrawFn) -> tuple[str, list[Report]]:
    text = draw(st.lists(st.sampled_from(PIECES), max_size=30).map("".join))
    n = len(text)
    raw: list[Report] = []
    for _ in range(draw(st.integers(0, 25))):
        start = draw(st.integers(0, n))
        end = draw(st.integers(start, n + draw(st.sampled_from([0, 0, 0, 3]))))
        rule = draw(st.sampled_from(["chat-control-token", "envelope-close-tag", "padded-opener"]))
        severity: Severity = draw(st.sampled_from(["error", "warning", "note"]))
        raw.append((rule, severity, draw(st.sampled_from(["m1", "m2"])), start, end))
    return text, ordered(text, raw)


def scanned(text: str) -> list[Report]:
    ctx = Context(tuple(RESERVED_NAMES), None)
    out = _Reports()
    for family in FAMILIES:
        family.run(text, ctx, out)
    return ordered(text, list(out))


SHAPES = ["%3C", "\\u003c", "a\u200b", "<|im_end|>", "[INST]", "<|", "&lt;", "« ", "line\n<|im_end|>\r\n"]


def fixed_cases() -> list[tuple[str, list[Report]]]:
    cases = [(p["payload"], scanned(p["payload"])) for p in load_corpus()]
    cases += [((u * (5000 // len(u) + 1))[:5000], []) for u in SHAPES]
    return [(t, r if r else scanned(t)) for t, r in cases]


#: A text with a lone surrogate cannot cross into Rust: backend.native_findings gives None for it and
#: _findings builds its Findings in Python (test_surrogates_are_left_to_the_python_builder).
CASES = [c for c in fixed_cases() if not _holds_lone_surrogate(c[0])]


@given(reports())
def test_native_findings_equal_the_python_builder(case: tuple[str, list[Report]]) -> None:
    text, raw = case
    assert same(native(text, list(raw)), S._py_findings(text, list(raw)))


@st.composite
def sparse_reports(draw: st.DrawFn) -> tuple[str, list[Report]]:
    """Few reports in a long text (at most one per 16 bytes, their spans short in all): the native
    builder then walks from start to start instead of building a table of every line."""
    text = draw(st.lists(st.sampled_from(PIECES), min_size=1, max_size=12).map("".join)) * 40
    n = len(text)
    cap = len(text.encode("utf-8", "surrogatepass")) // 16
    raw: list[Report] = []
    for _ in range(draw(st.integers(1, min(12, max(1, cap))))):
        start = draw(st.integers(0, n))
        raw.append(("padded-opener", "note", "m", start, min(n + 2, start + draw(st.integers(0, 300)))))
    return text, ordered(text, raw)


@given(sparse_reports())
def test_native_findings_of_few_reports_in_a_long_text_equal_the_python_builder(case: tuple[str, list[Report]]) -> None:
    text, raw = case
    assert same(native(text, list(raw)), S._py_findings(text, list(raw)))


def test_native_findings_equal_the_python_builder_on_the_corpus_and_shapes() -> None:
    assert sum(len(r) for _, r in CASES) > 1000  # the corpus and the shapes do report
    for text, raw in CASES:
        assert same(native(text, list(raw)), S._py_findings(text, list(raw))), text[:80]


def test_scan_text_uses_the_native_builder_when_native() -> None:
    """scan_text on the native core returns the native builder's Findings (untracked by the garbage
    collector), on the Python implementations the reference's (tracked), equal either way."""
    text = "x\n <|im_end|> [INST]" * 3
    with backend.use("native"):
        got = S.scan_text(text)
    with backend.use("reference"):
        want = S.scan_text(text)
    assert got and same(got, want)
    assert not any(gc.is_tracked(f) for f in got) and all(gc.is_tracked(f) for f in want)


def test_surrogates_are_left_to_the_python_builder() -> None:
    with backend.use("native"):
        assert backend.native_findings(Finding, S._FIELDS, "a\ud800", [], _snippet, SNIPPET_MAX) is None
        assert backend.native_findings(Finding, S._FIELDS, "a", [], _snippet, SNIPPET_MAX) == []
        assert [f.rule for f in S.scan_text("a\ud800")] == ["control-character"]


def test_a_finding_holding_a_container_stays_tracked() -> None:
    """Only findings of exact str and int fields are untracked: one that could be part of a cycle is not."""

    class Message(str):
        pass

    (plain,) = native("ab", [("padded-opener", "note", "m", 0, 1)])
    (other,) = native("ab", [("padded-opener", "note", Message("m"), 0, 1)])
    assert not gc.is_tracked(plain) and gc.is_tracked(other)


def test_offsets_are_exact_ints_whatever_the_report_holds() -> None:
    """The builder reuses a report's own start and end objects only when they are exact ints: a
    subclass (which could hold a reference) is converted, so the finding stays untracked and its
    fields are ints, and the reused objects are the report's."""

    class Offset(int):
        pass

    start, end = 1000, 1001  # past the small-int cache
    (sub,) = native("x" * 1002, [("padded-opener", "note", "m", Offset(start), Offset(end))])
    assert type(sub.offset) is int and type(sub.end_offset) is int and not gc.is_tracked(sub)
    raw: list[Report] = [("padded-opener", "note", "m", start, end)]
    (same_obj,) = native("x" * 1002, raw)
    assert same_obj.offset is raw[0][3] and same_obj.end_offset is raw[0][4]


def test_a_class_whose_fields_are_not_slots_is_refused() -> None:
    """The builder sets each field through its slot descriptor: a class without ``__slots__`` (or a
    name that is not a slot) is a ``ValueError``, not a write through something else; a subclass of
    Finding is built with Finding's slots."""

    class Plain:
        rule = severity = message = offset = line = column = end_offset = end_line = end_column = snippet = None

    class Sub(Finding):
        __slots__ = ()

    report: list[Report] = [("padded-opener", "note", "m", 0, 1)]
    with pytest.raises(ValueError, match="__slots__"):
        _native.findings(Plain, list(S._FIELDS), "ab", report, _snippet, SNIPPET_MAX)
    with pytest.raises(ValueError, match="__slots__"):
        _native.findings(Finding, [*S._FIELDS[:9], "as_dict"], "ab", report, _snippet, SNIPPET_MAX)
    (sub,) = _native.findings(Sub, list(S._FIELDS), "ab", report, _snippet, SNIPPET_MAX)
    assert type(sub) is Sub and sub.as_dict() == native("ab", report)[0].as_dict()


def test_every_class_is_built_as_object_new_builds_it() -> None:
    """A class that keeps ``object.__new__`` is built from ``object``'s ``tp_new`` slot directly, any
    other through ``object.__new__(cls)``: both as the frozen dataclass's own construction does, never
    through the class's own ``__new__``."""
    calls: list[object] = []

    class Own(Finding):
        __slots__ = ()

        def __new__(cls, *args: object) -> Own:
            calls.append(args)
            return super().__new__(cls)

    report: list[Report] = [("padded-opener", "note", "m", 0, 1)]
    want = native("ab", report)[0].as_dict()
    (own,) = _native.findings(Own, list(S._FIELDS), "ab", report, _snippet, SNIPPET_MAX)
    assert type(own) is Own and own.as_dict() == want and calls == []
    (plain,) = _native.findings(Finding, list(S._FIELDS), "ab", report, _snippet, SNIPPET_MAX)
    assert type(plain) is Finding and plain.as_dict() == want


# -- negative controls: broken builders are told apart --------------------------------------


def swapped_fields(text: str, raw: list[Report]) -> list[Finding]:
    fields = list(S._FIELDS)
    fields[4], fields[5] = fields[5], fields[4]  # line <-> column
    got: list[Finding] = _native.findings(Finding, fields, text, raw, _snippet, SNIPPET_MAX)
    return got


def short_snippets(text: str, raw: list[Report]) -> list[Finding]:
    got: list[Finding] = _native.findings(Finding, list(S._FIELDS), text, raw, _snippet, SNIPPET_MAX - 1)
    return got


def cut_blind(text: str, raw: list[Report]) -> list[Finding]:
    """A snippet cache keyed by the shown part alone: a cut span and an uncut one of the same part share it."""
    cache: dict[str, str] = {}

    def snippet(t: str, start: int, end: int) -> str:
        part = t[start : min(end, start + SNIPPET_MAX)]
        if part not in cache:
            cache[part] = _snippet(t, start, end)
        return cache[part]

    got: list[Finding] = _native.findings(Finding, list(S._FIELDS), text, raw, snippet, SNIPPET_MAX)
    return got


@pytest.mark.parametrize("broken", [swapped_fields, short_snippets, cut_blind])
def test_broken_builders_are_told_apart(broken: Builder) -> None:
    caught = [text[:40] for text, raw in CASES if not same(broken(text, list(raw)), S._py_findings(text, list(raw)))]
    cut = "a" * 100
    caught += ["cut"] * (
        not same(
            broken(cut, [("r", "note", "m", 0, 100), ("r", "note", "m", 20, 100)]),
            S._py_findings(cut, [("r", "note", "m", 0, 100), ("r", "note", "m", 20, 100)]),
        )
    )
    assert caught, broken.__name__


@given(st.lists(st.integers(min_value=0, max_value=40), max_size=30))
def test_starts_increase_as_defined(starts: list[int]) -> None:
    raw = [("padded-opener", "note", "m", s, s + 1) for s in starts]
    assert _native.starts_increase(raw) == all(a < b for a, b in pairwise(starts))
