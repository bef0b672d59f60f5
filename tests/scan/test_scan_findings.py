"""The scanner's fast paths against the code they replaced: the same findings, field for field.

``_findings`` (sorting, dedupe, line and column, snippets, Finding built without its generated
``__init__``), the bracket and plain-pipe reports worked out once per span (``_scan_brackets``,
``_scan_openers``) and a word's invisible characters taken out kind by kind (``_scan_hidden``) are
each compared, on hypothesis-drawn text, with the previous implementation kept here as the oracle
(``old_*``, as they were before the fast paths). tests/scan/test_scan_snapshot.py pins the findings
on fixed inputs; these draw new ones.

Negative controls: a ``_findings`` that keeps the last of two duplicates, one whose columns are off
by one past the first line, and a bracket pass that reuses a report across slash and no slash must
each be told apart from the oracle.
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
from hypothesis import example, given
from hypothesis import strategies as st

from envelock import Finding, scan_text
from envelock.eye.reader import MAX_RUN, read_after, visible
from envelock.eye.tokens import BRACKET_TOKEN_CONTEXT
from envelock.scan import context
from envelock.scan._base import Context, _decode_escapes, _Raw
from envelock.scan.hidden import (
    _MAY_BE_LEGITIMATE_RE,
    _SHORT_RUN_RE,
    INVISIBLE_IN_WORD,
    _runs_in_word,
)
from envelock.scan.tags import (
    _ASCII_ALNUM_RE,
    _PIPE_STOPS,
    _SIMPLE_PIPE_RE,
    CONTROL_TOKEN,
    DEFANGED_TAG,
    PADDED_OPENER,
    _describe_bracket,
    _describe_hit,
    _Hit,
    _hit_of,
    _name_maps,
    _padding_finding,
)
from envelock.types import LineIndex, Severity

S = importlib.import_module("envelock.scan")  # its private parts, monkeypatched by the oracle
T = importlib.import_module("envelock.scan.tags")
H = importlib.import_module("envelock.scan.hidden")
BASE = importlib.import_module("envelock.scan._base")

pytestmark = pytest.mark.usefixtures("impl")

# -- the oracle: the previous implementation ---------------------------------------------------


def old_findings(text: str, raw: list[_Raw], off: frozenset[str]) -> list[Finding]:
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
        out.append(Finding(rule, severity, message, start, line, col, end, end_line, end_col, BASE._snippet(text, start, end)))
    return out


def old_scan_openers(text: str, ctx: Context, out: list[_Raw]) -> None:
    """Every opener the model's eye reads as a tag or token (what the defang escapes) is a finding."""
    names = _name_maps(ctx)[0]
    n = len(text)
    # (snippet, hit) -> (rule, message, severity): a description depends on the hit and its text only
    # (except a ``<s>``, see _describe_hit), and hostile text repeats one construct many times.
    described: dict[tuple[str, str, str, bool, bool], tuple[str, str, Severity]] = {}
    pipes: dict[tuple[str, bool], tuple[str, str, Severity] | tuple[()]] = {}
    append = out.append
    for start, end, kind, name, slash, rend in T.opener_records(text, ctx.reserved, "angle", ctx.tokens):
        escaped = end < n and text[end] == "\\"
        if escaped:
            k = end
            while k < n and k - end < MAX_RUN and text[k] == "\\":
                k += 1
            hit = _hit_of(text, kind, name, slash, rend, ctx)
            if hit is None:
                # A backslash-escaped slash: <\u002f...
                window = _decode_escapes(text[end : k + 128])
                if read_after(window, 0, names).kind in ("reserved", "token"):
                    append(_Raw(DEFANGED_TAG.id, "warning", "escaped slash before a reserved name", start, min(n, k + 16)))
                continue
            what = "an envelope tag" if hit.kind == "reserved" else "a control token"
            append(_Raw(DEFANGED_TAG.id, "warning", f"already-escaped form of {what} ({hit.name!r})", start, hit.end))
            continue
        if kind == "none":
            continue
        if kind == "padding":
            append(_padding_finding(text, start, end, rend, ctx))
            continue
        if kind == "bar":
            if rend >= n or text[rend] in _PIPE_STOPS or text[rend].isspace():
                continue  # _pipe_token gives up on its first character: a bare ``<|`` (a pipe operator)
            simple = _SIMPLE_PIPE_RE.match(text, rend) if _SIMPLE_PIPE_RE is not None else None
            if simple is not None:
                # The plain ``NAME|>`` of _pipe_token, described once per spelling (the pipe's
                # description depends on its name only).
                stop = simple.end()
                spelled = (text[start:stop], slash)
                pipe = pipes.get(spelled)
                if pipe is None:
                    word = simple.group(1)
                    hit = _Hit("pipe", f"<|{word}|>", slash, stop, True)
                    pipe = pipes[spelled] = _describe_hit(text, start, hit, ctx) if _ASCII_ALNUM_RE.search(word) else ()
                if pipe:
                    append(_Raw(pipe[0], pipe[2], pipe[1], start, max(stop, end)))
                continue
        hit = _hit_of(text, kind, name, slash, rend, ctx)
        if hit is None:
            continue  # a bare ``<|`` (see _hit)
        key = (text[start : hit.end], hit.kind, hit.name, hit.slash, hit.closed)
        got = described.get(key) if hit.name != "s" else None
        if got is None:
            got = _describe_hit(text, start, hit, ctx)
            if hit.name != "s":
                described[key] = got
        rule, message, severity = got
        append(_Raw(rule, severity, message, start, max(hit.end, end)))


def old_scan_brackets(text: str, ctx: Context, out: list[_Raw]) -> None:
    """``[NAME]`` control tokens through the same eye (:func:`envelock.modeleye.read_bracket`).

    Severity, for precision on code (``list[Mark]``, ``[args]``, ``[inst]``): an error
    when written exactly as the model family writes it (``[INST]``, ``[/INST]``,
    ``[gMASK]``) or disguised (look-alikes, references, invisible characters); a
    warning when only ASCII case or spacing differs, and for a token of
    :data:`~envelock.tokens.BRACKET_TOKEN_CONTEXT` outside its context. An
    already-escaped one (``[\\INST]``) is a warning. The defang escapes all of them.
    """
    names, _, _, brk = _name_maps(ctx)
    n = len(text)
    # (span, name, slash, in context) -> (rule, severity, message): hostile text repeats one token many times.
    described: dict[tuple[str, str, bool, bool], tuple[str, Severity, str]] = {}
    append = out.append
    for start, end, kind, rname, slash, rend in T.opener_records(text, ctx.reserved, "bracket", ctx.tokens):
        if kind == "none":
            continue
        if kind == "bar":
            span = text[start:rend]
            if end < n and text[end] == "\\":
                msg = f"already-escaped form of control token {visible(span)}"
                append(_Raw(DEFANGED_TAG.id, "warning", msg, start, rend))
            else:
                msg = f"chat-template control token {visible(span)} (a bracket-bar token: EXAONE, BlueLM)"
                append(_Raw(CONTROL_TOKEN.id, "error", msg, start, rend))
            continue
        if kind == "padding":
            layout = context.layout_padding(text, end, rend, names, bracket=True)
            what = "code layout the eye reads past" if layout else "padding too long to read past"
            append(_Raw(PADDED_OPENER.id, "note" if layout else "warning", f"bracket followed by {what}", start, rend))
            continue
        name = brk.get(rname, rname)
        span = text[start:rend]
        if end < n and text[end] == "\\":
            token = f"[{'/' if slash else ''}{name}]"
            append(_Raw(DEFANGED_TAG.id, "warning", f"already-escaped form of control token {token}", start, rend))
            continue
        after = BRACKET_TOKEN_CONTEXT.get(name)
        in_context = after is None or text[rend : rend + 8].lstrip().startswith(after)
        key = (span, name, slash, in_context)
        got = described.get(key)
        if got is None:
            got = described[key] = _describe_bracket(span, name, slash, in_context, after)
        append(_Raw(got[0], got[1], got[2], start, rend))


def old_scan_hidden(text: str, ctx: Context, out: list[_Raw]) -> None:
    """The previous hidden pass: its long runs as now, each word read with a regex over all of it."""
    real_words = H._words_with_invisibles
    kept: list[_Raw] = []
    with _patched(H, "_words_with_invisibles", lambda t: []):
        H._scan_hidden(text, ctx, kept)  # the long runs only
    out.extend(kept)
    for m in real_words(text):
        word = m.group()
        if _MAY_BE_LEGITIMATE_RE.search(word):
            _runs_in_word(text, m.start(), m.end(), out)
            continue
        count = _SHORT_RUN_RE.subn("", word)[1]
        if count == 1:
            found = _SHORT_RUN_RE.search(word)
            assert found is not None
            msg = f"invisible {' '.join(f'U+{ord(c):04X}' for c in found.group())} inside a word"
        else:
            kinds = sorted(c for c in set(word) if _SHORT_RUN_RE.fullmatch(c))
            msg = f"{count} invisible runs ({' '.join(f'U+{ord(c):04X}' for c in kinds[:8])}) inside a word"
        out.append(_Raw(INVISIBLE_IN_WORD.id, "warning", msg, m.start() + 1, m.end() - 1))


@contextmanager
def _patched(module: Any, name: str, value: Any) -> Iterator[None]:
    mp = pytest.MonkeyPatch()
    mp.setattr(module, name, value)
    try:
        yield
    finally:
        mp.undo()


OLD_FAMILIES = {"openers": old_scan_openers, "brackets": old_scan_brackets, "hidden": old_scan_hidden}


def old_scan(text: str, **kw: Any) -> list[Finding]:
    """scan_text with the previous families and the previous _findings."""
    families = tuple(S.Family(f.name, f.rules, OLD_FAMILIES.get(f.name, f.run)) for f in S.FAMILIES)
    with _patched(S, "FAMILIES", families), _patched(S, "_findings", old_findings):
        return scan_text(text, **kw)


# -- drawn texts -------------------------------------------------------------------------------

#: What the fast paths branch on: plain and disguised pipes and brackets, escapes, slashes, tokens
#: with a template context, padding, line breaks, invisible characters in words of several scripts.
FRAGMENTS = (
    "<|", "|>", "<|im_end|>", "<|im_start|>", "<\\|im_end|>", "<\\|_|>", "</|eot_id|>", "<|a>", "<|_|>", "&lt;|x|&gt;",
    "\uff1c|im_end|>", "<\u200b|im_end|>", "[", "]", "[INST]", "[/INST]", "[\\INST]", "[inst]", "[ INST ]", "[|", "|]",
    "[|endofturn|]", "[\\|endofturn|]", "[gMASK]", "[SYS]", "[/SYS]", "[TOOL_CALLS]", "[AVAILABLE_TOOLS]", "sop", " ",
    "\n", "\r\n", "\t", "x", "ab", "\\", "/", "<", ">", "<s>", "</retrieved_content>", "<retrieved_content a=1>",
    " " * 40, "\u200b", "\u200b\u200b", "\u2060", "\u00ad", "\u034f", "\ufe0f", "\u200d", "a\u200bb", "\u0628",
    "\u05d0", "\u0e01", "\u65e5", "\uac00", "\u3164", "%3C", "\\u003c", "[ARGS]", "{", "[\\ARGS]",
)  # fmt: skip
texts = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)
REPEATED = st.tuples(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=6).map("".join), st.integers(1, 30)).map(
    lambda p: p[0] * p[1]
)


@given(st.one_of(texts, REPEATED))
@example("<|im_end|>" * 5 + "\n" + "[INST]" * 3)
@example("a\u200b" * 20)
@example("a\u200bb\u2060c\u200b\u200bd\u00ade\u034ff")
@example("[ARGS] {" + "[ARGS]x" + "[\\ARGS]")
@example("<\\|_|>" + "<\\|im_end|>" + "</|im_end|>")
def test_scan_equals_the_previous_implementation(text: str) -> None:
    assert scan_text(text) == old_scan(text)


RULE_IDS = sorted(S.RULES_BY_ID)


@given(texts, st.frozensets(st.sampled_from(RULE_IDS), max_size=4))
def test_scan_with_disabled_rules_equals_the_previous_implementation(text: str, off: frozenset[str]) -> None:
    assert scan_text(text, disable=off) == old_scan(text, disable=off)


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
def test_findings_equal_the_previous_findings(case: tuple[str, list[_Raw]], off: frozenset[str]) -> None:
    text, raw = case
    got = S._findings(text, list(raw), off)
    want = old_findings(text, list(raw), off)
    assert got == want
    assert [f.as_dict() for f in got] == [f.as_dict() for f in want]


# -- Finding without its generated __init__ ----------------------------------------------------


def test_finding_built_by_the_scanner_is_a_finding() -> None:
    """The scanner sets a Finding's fields in its __dict__; that is only the same object while
    Finding is a plain frozen dataclass with these fields and no __post_init__ or __slots__."""
    assert [f.name for f in dataclasses.fields(Finding)] == [
        "rule", "severity", "message", "offset", "line", "column", "end_offset", "end_line", "end_column", "snippet",
    ]  # fmt: skip
    assert not hasattr(Finding, "__post_init__") and not hasattr(Finding, "__slots__")
    params = Finding.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen and params.eq
    (got,) = scan_text("x\n y <|im_end|>")
    want = Finding(**got.as_dict())  # type: ignore[arg-type]
    assert type(got) is Finding and got == want and hash(got) == hash(want) and repr(got) == repr(want)
    assert vars(got) == vars(want) and list(vars(got)) == list(vars(want))
    assert pickle.loads(pickle.dumps(got)) == want and copy.deepcopy(got) == want
    assert dataclasses.replace(got, line=9) == dataclasses.replace(want, line=9)
    with pytest.raises(dataclasses.FrozenInstanceError):
        got.line = 2  # type: ignore[misc]


# -- negative controls: the oracle tells broken fast paths apart --------------------------------


def _differs(findings: Callable[[str, list[_Raw], frozenset[str]], list[Finding]]) -> bool:
    text = "ab\ncd <|im_end|> [INST]\n" * 2
    raw: list[_Raw] = [_Raw("chat-control-token", "error", "first", 3, 5), _Raw("chat-control-token", "error", "second", 3, 5)]
    raw += [_Raw("bidi-control", "warning", "x", 9, 12), _Raw("padded-opener", "note", "y", 30, 40)]
    return findings(text, list(raw), frozenset()) != old_findings(text, list(raw), frozenset())


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
    with _patched(T, "_bracket_report", unslashed):
        broken = scan_text(text)
    assert broken != old_scan(text) and scan_text(text) == old_scan(text)
