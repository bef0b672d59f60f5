"""Complexity guard without a clock: the defang's Python-level work grows linearly.

Work is counted, not timed: every piece the model's-eye lookahead decodes
(``modeleye._decode_at``) and every per-opener Python check. On adversarial
inputs of size n and 8n the count must satisfy ``work(8n) <= 8.5 * work(n) + c``
(``c`` covers the openers near the end of the small text), and the work per
input character must be small: ``work(8n) <= PER_CHAR * 8n``. The linear bound
alone cannot see a reader that re-walks up to its budget after every opener
(that is linear, with a constant of ``MAX_LOOKAHEAD``); the per-character bound does.
The fast path's regexes have only bounded quantifiers (at most MAX_RUN skips,
a trie of fixed depth), so their cost per opener is constant by construction.

Negative controls: with the lookahead budget removed (``MAX_LOOKAHEAD`` huge) and
a reading no longer ending at the next opener (``_stops_reading`` always false,
the reader before that rule), a chain of namespace prefixes makes every opener
read to the end of the text, and the linear check must fail; with the budget kept
but the stop rule removed, every opener re-walks the budget, and the
per-character check must fail.

Prefaces with many envelopes or many problems (``verify_preface`` and
``parse_preface``): work is the characters the text's own ``str`` methods walk
(``find``, ``count``, ``rfind``, slices, ...; :class:`Walked` counts them), which
is where the grammar, the line/column helper (``parse.LineIndex``) and the old
per-problem newline count all do theirs. Same bound. Negative controls: the old
per-problem computation (``count``/``rfind`` from offset 0) put back into
``LineIndex.locate``, and the old eager per-envelope computation put back into
verify's ``expected`` path, must each fail it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ClassVar, SupportsIndex

import pytest

from envelock import EnvelopeBreach, PrefaceEntry, compose_preface, parse_preface, verify_preface
from envelock.escape import Level
from envelock.eye import reader as modeleye
from envelock.types import LineIndex

D = importlib.import_module("envelock.eye.reference")
F = importlib.import_module("envelock.eye.fastpath")

ADVERSARIAL: dict[str, Callable[[int], str]] = {
    "lt": lambda n: "<" * n,
    "conten": lambda n: ("</retrieved_conten" * n)[:n],
    "ltref": lambda n: ("&lt;&#x3c;" * n)[:n],
    "ignorables": lambda n: ("<\u200b\u200d/x " * n)[:n],
    "close": lambda n: ("</retrieved_content>" * n)[:n],
    "namespaces": lambda n: ("<a:" * n)[:n],
    "padded": lambda n: (("<" + " " * 31 + "r" + "_" * 10 + "e") * n)[:n],
    "fullwidth": lambda n: ("\uff1c\uff0fretrieved_conten" * n)[:n],
    "refs": lambda n: ("<&#114;&#x65;t" * n)[:n],
    "colons": lambda n: ("<:" * n)[:n],
    "lookalike-accent": lambda n: ("\uff1c\u00e9" * n)[:n],
    "lt-letter": lambda n: ("<a" * n)[:n],
    # U+1438 CANADIAN SYLLABICS PA is an opener (it looks like <) and a letter: the reading does not stop at it.
    "alnum-opener-ns": lambda n: ("\u1438a:" * n)[:n],
    # The stand-in rule (a symbol for one letter of a reserved name) adds states, not lookahead.
    "stand-in": lambda n: ("</retrieved_c\u00b0nten" * n)[:n],
    "stand-in-run": lambda n: (("<" + "\u00b0" * 40) * n)[:n],
    "stand-in-lead": lambda n: ("<\u00ae\u00a9etrieved_c\u00b0" * n)[:n],
    # Bracket and angle shapes derived from categories and names: openers that a reading stops at.
    "corner-brackets": lambda n: ("\u300cINS\u300c" * n)[:n],
    "triangles": lambda n: ("\u25c1/retrieved_c\u00b0nten\u22b2" * n)[:n],
}
N = 600
SLACK = modeleye.MAX_LOOKAHEAD**2 // 2
#: Pieces decoded plus openers checked, per input character (the worst pattern is 4: ``<`` runs, reference defang).
PER_CHAR = 8


class _CountingPattern:
    """A compiled regex whose ``finditer`` counts its pass over the text and the matches it yields
    (the fast path's C work: bounded quantifiers, so one pass is linear by construction)."""

    def __init__(self, pattern: re.Pattern[str], box: list[int]) -> None:
        self.pattern, self.box = pattern, box

    def finditer(self, text: str, loud: str | None = None) -> Iterator[re.Match[str]]:
        # ``loud`` (the encoded candidates' quiet filter) is not passed on: every candidate is
        # counted, an upper bound of the work done.
        self.box[0] += len(text)  # one pass of the regex engine over the text
        for m in self.pattern.finditer(text):
            self.box[0] += 1
            yield m


@contextmanager
def counting() -> Iterator[list[int]]:
    """Count the defang's work: pieces the reader decodes, per-opener reference checks, and
    every match of the fast path's generated regexes (opener and bracket prefilters)."""
    box = [0]
    real_decode = modeleye._decode_at
    real_check: Callable[..., bool] = D.opener_needs_escape
    real_fast = F._fast_regex
    real_brackets = F._bracket_prefilter

    def decode(text: str, i: int) -> tuple[str, int]:
        box[0] += 1
        return real_decode(text, i)

    def check(*args: object, **kw: object) -> bool:
        box[0] += 1
        return real_check(*args, **kw)

    mp = pytest.MonkeyPatch()
    mp.setattr(modeleye, "_decode_at", decode)
    mp.setattr(D, "opener_needs_escape", check)
    mp.setattr(F, "_fast_regex", lambda names, markup: _CountingPattern(real_fast(names, markup), box))
    mp.setattr(F, "_bracket_prefilter", lambda names: _CountingPattern(real_brackets(names), box))
    try:
        yield box
    finally:
        mp.undo()


def work(fn: Callable[[str], str], text: str) -> int:
    with counting() as box:
        fn(text)
    return box[0]


def linear(fn: Callable[[str], str], make: Callable[[int], str], n: int = N) -> tuple[bool, int, int]:
    small, big = work(fn, make(n)), work(fn, make(8 * n))
    # c: openers within MAX_LOOKAHEAD of the end of the small text read less than a full lookahead.
    return big <= 8.5 * small + SLACK, small, big


#: The implementations whose work is counted: the fast path only where it runs (Python 3.11+).
IMPLS = {"reference": D.defang, **({"fast": F.defang} if F.AVAILABLE else {})}


@pytest.mark.parametrize("impl", sorted(IMPLS))
@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
@pytest.mark.parametrize("level", ["reserved", "markup"])
def test_work_is_linear(impl: str, kind: str, level: Level) -> None:
    ok, small, big = linear(lambda t: IMPLS[impl](t, level=level), ADVERSARIAL[kind])
    assert ok, f"{impl}/{kind}: work({N})={small}, work({8 * N})={big}"


@pytest.mark.parametrize("impl", sorted(IMPLS))
@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
@pytest.mark.parametrize("level", ["reserved", "markup"])
def test_work_per_character_is_small(impl: str, kind: str, level: Level) -> None:
    """Bounded, small work per opener: no re-walk of the lookahead after every opener of a run."""
    big = work(lambda t: IMPLS[impl](t, level=level), ADVERSARIAL[kind](8 * N))
    assert big <= PER_CHAR * 8 * N, f"{impl}/{kind}: {big / (8 * N):.1f} units of work per character"


def test_reference_does_real_work() -> None:
    """The counter sees the reference lookahead (else the guard would pass vacuously)."""
    assert work(D.defang, ADVERSARIAL["conten"](N)) > N // 2


@pytest.mark.skipif(not F.AVAILABLE, reason="the fast path needs Python 3.11+")
@pytest.mark.parametrize("kind", sorted(ADVERSARIAL))
def test_fast_path_work_is_seen(kind: str) -> None:
    """The counter sees the fast path's own work (regex matches), so no adversarial case counts zero."""
    text = ADVERSARIAL[kind](N)
    assert work(F.defang, text) > 0, kind


@pytest.mark.skipif(not F.AVAILABLE, reason="the fast path needs Python 3.11+")
def test_control_a_quadratic_fast_path_is_caught() -> None:
    """A fast path that re-runs its regex over the text before every match it finds is caught."""
    names = modeleye.names_for()

    def quadratic(text: str) -> str:
        for m in F._fast_regex(names, False).finditer(text):
            for _ in F._fast_regex(names, False).finditer(text[: m.end()]):
                pass
        return text

    ok, small, big = linear(quadratic, ADVERSARIAL["close"])
    assert not ok, f"a quadratic fast path passed: {small} -> {big}"


def test_negative_control_unbounded_lookahead_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modeleye, "MAX_LOOKAHEAD", 10**9)
    monkeypatch.setattr(modeleye, "_stops_reading", lambda piece: False)
    ok, small, big = linear(D.defang, ADVERSARIAL["namespaces"], 200)
    assert not ok, f"an unbounded lookahead passed the linearity check: {small} -> {big}"
    assert big > 30 * small


def test_negative_control_rewalking_the_budget_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Budget kept, stop rule removed: linear, but every opener of a ``<a:`` run re-walks the lookahead."""
    monkeypatch.setattr(modeleye, "_stops_reading", lambda piece: False)
    big = work(D.defang, ADVERSARIAL["namespaces"](8 * N))
    assert big > PER_CHAR * 8 * N, f"re-walking the lookahead after every opener passed: {big / (8 * N):.1f} per character"


# -- prefaces with many envelopes or many problems -------------------------------------------


class Walked(str):
    """A text that counts the characters its own ``str`` methods walk into ``Walked.box``."""

    box: ClassVar[list[int]] = [0]

    def _span(self, start: SupportsIndex | None, end: SupportsIndex | None) -> tuple[int, int]:
        s, e, _ = slice(start, end).indices(len(self))
        return s, max(s, e)

    def find(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        s, e = self._span(start, end)
        r = str.find(self, sub, s, e)
        Walked.box[0] += (r + len(sub) - s) if r >= 0 else e - s
        return r

    def rfind(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        s, e = self._span(start, end)
        r = str.rfind(self, sub, s, e)
        Walked.box[0] += (e - r) if r >= 0 else e - s
        return r

    def count(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        s, e = self._span(start, end)
        Walked.box[0] += e - s
        return str.count(self, sub, s, e)

    def index(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        r = self.find(sub, start, end)
        if r < 0:
            raise ValueError("substring not found")
        return r

    def rindex(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        r = self.rfind(sub, start, end)
        if r < 0:
            raise ValueError("substring not found")
        return r

    def startswith(self, prefix: Any, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> bool:
        Walked.box[0] += max(map(len, prefix)) if isinstance(prefix, tuple) else len(prefix)
        return str.startswith(self, prefix, start, end)

    def __getitem__(self, key: Any) -> str:
        got = str.__getitem__(self, key)
        Walked.box[0] += len(got)
        return got

    def _whole(name: str) -> Any:
        def method(self: Walked, *args: Any, **kw: Any) -> Any:
            Walked.box[0] += len(self)
            return getattr(str, name)(self, *args, **kw)

        return method

    split = _whole("split")
    rsplit = _whole("rsplit")
    splitlines = _whole("splitlines")
    partition = _whole("partition")
    rpartition = _whole("rpartition")
    replace = _whole("replace")
    encode = _whole("encode")
    __iter__ = _whole("__iter__")
    __contains__ = _whole("__contains__")
    del _whole


def walked(fn: Callable[[str], object], text: str) -> int:
    """Characters ``fn(text)`` walks through the text's ``str`` methods."""
    Walked.box = [0]
    try:
        fn(Walked(text))
    except EnvelopeBreach:
        pass
    return Walked.box[0]


def preface(n: int, body: str = "", origin: str = "web:x", level: Level = "reserved") -> str:
    return str(compose_preface([PrefaceEntry("external", origin, body)] * n, level=level))


def _n_entries(n: int) -> list[PrefaceEntry]:
    return [PrefaceEntry("external", "web:x", "")] * n


def _wrong(n: int) -> list[PrefaceEntry]:
    return [PrefaceEntry("external", "web:y", "")] * n


#: (make(n) -> text, check(text, n)): prefaces of n envelopes, checked by verify or parse.
PREFACES: dict[str, tuple[Callable[[int], str], Callable[[str, int], object]]] = {
    # n envelopes, no problem
    "empty-entries/verify": (preface, lambda t, n: verify_preface(t)),
    "empty-entries/verify-expected": (preface, lambda t, n: verify_preface(t, expected=_n_entries(n))),
    "empty-entries/parse": (preface, lambda t, n: parse_preface(t)),
    "short-entries/verify-expected": (
        lambda n: preface(n, "a\r\nb <x> & c"),
        lambda t, n: verify_preface(t, expected=[PrefaceEntry("external", "web:x", "a\r\nb <x> & c")] * n),
    ),
    # n problems, one per envelope
    "stray-tokens/verify": (lambda n: preface(n, "<|im_start|>").replace("<\\|", "<|"), lambda t, n: verify_preface(t)),
    "stray-tokens/parse": (lambda n: preface(n, "<|im_start|>").replace("<\\|", "<|"), lambda t, n: parse_preface(t)),
    "stray-close/verify": (
        lambda n: preface(n, "a </retrieved_content> b").replace("<\\/", "</"),
        lambda t, n: verify_preface(t),
    ),
    # Non-canonical bodies exist only at a level that escapes more than the model's eye (at reserved every
    # body without an unescaped tag is canonical): a raw markup opener at markup.
    "non-canonical/verify": (
        lambda n: preface(n, "<x", level="markup").replace("\n<\\x", "\n<x"),
        lambda t, n: verify_preface(t, level="markup"),
    ),
    "non-canonical/parse": (
        lambda n: preface(n, "<x", level="markup").replace("\n<\\x", "\n<x"),
        lambda t, n: parse_preface(t, level="markup"),
    ),
    "attributes/verify": (lambda n: preface(n, "b", "web:x").replace('"web:x"', '"web&#58;x"'), lambda t, n: verify_preface(t)),
    "expected-mismatch/verify": (preface, lambda t, n: verify_preface(t, expected=_wrong(n))),
}
ENTRIES = 300
#: Slack for the few characters that do not scale by exactly 8 (one separator fewer per text, etc.).
PREFACE_SLACK = 1000


def preface_linear(kind: str, n: int = ENTRIES) -> tuple[bool, int, int]:
    make, check = PREFACES[kind]
    small = walked(lambda t: check(t, n), make(n))
    big = walked(lambda t: check(t, 8 * n), make(8 * n))
    return big <= 8.5 * small + PREFACE_SLACK, small, big


@pytest.mark.parametrize("kind", sorted(PREFACES))
def test_preface_work_is_linear(kind: str) -> None:
    ok, small, big = preface_linear(kind)
    assert ok, f"{kind}: work({ENTRIES} entries)={small}, work({8 * ENTRIES})={big}"


@pytest.mark.parametrize("kind", [k for k in sorted(PREFACES) if not k.startswith(("empty-", "short-"))])
def test_many_problem_prefaces_really_have_many_problems(kind: str) -> None:
    """The many-problem inputs hold one problem per envelope (else the guard would pass vacuously)."""
    make, _ = PREFACES[kind]
    text = make(50)
    wanted = _wrong(50) if kind.startswith("expected-") else None
    level: Level = "markup" if kind.startswith("non-canonical") else "reserved"
    problems = verify_preface(text, expected=wanted, level=level).problems
    assert len(problems) >= 50, (kind, problems[:3])
    assert len({p.offset for p in problems}) >= 50


def test_walked_counts_the_line_column_pass() -> None:
    """The counter sees the helper's work: the first lookup walks the whole text once, later ones nothing."""
    text = preface(100)
    Walked.box = [0]
    index = LineIndex(Walked(text))
    index.locate(len(text) // 2)
    assert len(text) <= Walked.box[0] <= len(text) + 1
    index.locate(len(text) - 1)
    index.locate(3)
    assert Walked.box[0] <= len(text) + 1


def _old_locate(self: LineIndex, offset: int) -> tuple[int, int]:
    """The computation ``_Scan.problem`` used before LineIndex: newlines counted from the start, per problem."""
    text: str = self._text
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


@pytest.mark.parametrize("kind", ["stray-tokens/verify", "non-canonical/parse", "attributes/verify", "expected-mismatch/verify"])
def test_negative_control_per_problem_newline_count_is_caught(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LineIndex, "locate", _old_locate)
    ok, small, big = preface_linear(kind, 100)
    assert not ok, f"{kind}: the old quadratic line/column passed the linearity check: {small} -> {big}"
    assert big > 20 * small


def test_negative_control_eager_line_of_in_verify_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify's ``expected`` path used to locate every envelope from offset 0 before comparing, even when all match."""
    verify = importlib.import_module("envelock.envelope.verify")
    real = verify._expect

    def old_expect(problems: list[Any], env: Any, *args: Any, **kw: Any) -> None:
        _old_locate(kw["lines"] if "lines" in kw else args[-1], env.offset)
        real(problems, env, *args, **kw)

    monkeypatch.setattr(verify, "_expect", old_expect)
    ok, small, big = preface_linear("empty-entries/verify-expected", 100)
    assert not ok, f"the old eager line_of passed the linearity check: {small} -> {big}"
    assert big > 20 * small


# -- the scanner on hostile repeated shapes ---------------------------------------------------
#
# ``scan_text`` runs eleven passes. Their regexes have bounded quantifiers only (linear by
# construction); what can grow is the Python work around them: the characters the passes and the
# finding builder walk through the text's own ``str`` methods (indexing, slices, ``find``...;
# :class:`Walked` counts them), the pieces the model's eye decodes (:func:`counting`), and the opener
# records the tag passes look at. One finding per repetition (``<|im_end|>``: 200,000 findings in
# 2 MB) must cost a bounded amount each, and so must a repetition that is no finding at all (``<|``,
# an F#/Elm pipe). Bounds: ``work(8n) <= 9 * work(n)`` and ``work(8n) <= SCAN_PER_CHAR * 8n``.
# Negative controls: a pipe-token reader that searches the rest of the text for ``|>``, the old
# per-finding line count from offset 0, a word search that slices the rest of the text at every
# invisible run, and a bracket pass that recounts from every opener must each fail a bound.

SCAN = importlib.import_module("envelock.scan")
SCAN_TAGS = importlib.import_module("envelock.scan.tags")
SCAN_HIDDEN = importlib.import_module("envelock.scan.hidden")
SCAN_ENCODED = importlib.import_module("envelock.scan.encoded")

#: The shapes (also in benchmarks/run.py as ``scan-*`` and in tests/scan/test_scan_snapshot.py).
SCAN_SHAPES: dict[str, str] = {
    "im_end": "<|im_end|>",
    "im_end-lines": "<|im_end|>\n",
    "pipe": "<|",
    "pipe-name": "<|a",
    # A bar shape that closes (``reader.bar_closes``) but has no ``|>``: a bar reading for the scanner.
    "pipe-closer": "<|a>",
    "pipe-reference": "<|&#97;",
    "inst": "[INST]",
    "zwsp-word": "a\u200b",
    "zwsp-words": "ab\u200bc ",
    "percent": "%3C",
    "json-escape": "\\u003c",
    # Encoded characters found by what they decode to: a look-alike's UTF-8, an exact token's first
    # character alone (followed one decoded character at a time), a whole encoded exact token.
    "percent-utf8": "%E2%80%B9",
    "percent-gt": "%3E",
    "percent-exact-start": "%5D~",
    "percent-exact": "%3E%3EKEY%3C%3C",
    "close": "</retrieved_content>",
    "lt": "<",
    "bracket": "[",
    "padded": "<" + " " * 40,
    "base64": "PC9yZXRyaWV2ZWRfY29udGVudD4= ",
    "references": "&lt;|im_end|&gt;",
}
SCAN_N = 2000
#: Work units per input character (the worst shape, a padded opener, is about 11).
SCAN_PER_CHAR = 16


class _WalkingPattern:
    """A compiled regex of the hidden-character pass whose ``search`` and ``match`` count the characters
    they walk (from ``pos`` to the end of the match, or of the text when there is none): the words of
    ``a`` + U+200B are found by these regexes on the text, not by the text's own ``str`` methods."""

    def __init__(self, pattern: re.Pattern[str], box: list[int]) -> None:
        self.pattern, self.box = pattern, box

    def search(self, text: str, pos: int = 0) -> re.Match[str] | None:
        m = self.pattern.search(text, pos)
        self.box[0] += (m.end() if m else len(text)) - pos
        return m

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        m = self.pattern.match(text, pos)
        self.box[0] += (m.end() if m else pos + 1) - pos
        return m

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        self.box[0] += len(text)  # one pass over the text
        return self.pattern.finditer(text)


def scan_work(text: str) -> int:
    """Characters walked (by the text's ``str`` methods and the hidden pass's word regexes), pieces
    decoded, encoded candidates found and opener records read by one ``scan_text(text)``."""
    records = [0]
    real = SCAN_TAGS.opener_records

    def counted(*args: Any, **kw: Any) -> Any:
        got = real(*args, **kw)
        records[0] += len(got)
        return got

    mp = pytest.MonkeyPatch()
    mp.setattr(SCAN_TAGS, "opener_records", counted)
    # The Python record loop and Finding builder, whose work the count sees: the native ones
    # (_native.opener_reports, _native.findings) do a bounded amount per record and are held equal to
    # these by tests/scan/test_scan_native_records.py and test_scan_native_findings.py.
    mp.setattr(SCAN_TAGS, "native_opener_reports", lambda *args: None)
    mp.setattr(SCAN, "native_findings", lambda *args: None)
    for name in ("_ANY_RUN_RE", "_IN_WORD_RE"):
        mp.setattr(SCAN_HIDDEN, name, _WalkingPattern(getattr(SCAN_HIDDEN, name), records))
    # The encoded pass's candidates: one regex pass over the text, plus one per candidate.
    # (the reference's: the native plan, _native.escape_plan, does a bounded amount per candidate and
    # is held equal to it by tests/scan/test_scan_encoded_plan.py).
    mp.setattr(SCAN_ENCODED, "_ENC_CANDIDATE_RE", _CountingPattern(SCAN_ENCODED._ENC_CANDIDATE_RE, records))
    mp.setattr(SCAN_ENCODED.backend, "native_escape_plan", lambda *args: None)
    Walked.box = [0]
    try:
        with counting() as decoded:
            SCAN.scan_text(Walked(text))
    finally:
        mp.undo()
    return Walked.box[0] + decoded[0] + records[0]


def repeated(shape: str, n: int) -> str:
    return (SCAN_SHAPES[shape] * (n // len(SCAN_SHAPES[shape]) + 1))[:n]


def scan_linear(shape: str, n: int = SCAN_N) -> tuple[bool, int, int]:
    small, big = scan_work(repeated(shape, n)), scan_work(repeated(shape, 8 * n))
    return big <= 9 * small and big <= SCAN_PER_CHAR * 8 * n, small, big


@pytest.mark.parametrize("shape", sorted(SCAN_SHAPES))
def test_scan_work_is_linear(shape: str) -> None:
    ok, small, big = scan_linear(shape)
    assert ok, f"{shape}: work({SCAN_N})={small}, work({8 * SCAN_N})={big} ({big / (8 * SCAN_N):.1f} per character)"


@pytest.mark.parametrize("shape", ["im_end", "inst", "close", "zwsp-words", "references"])
def test_scan_shapes_really_have_many_findings(shape: str) -> None:
    """The shapes that should report one finding per repetition do (else the guard is vacuous), and
    the counter sees the work."""
    text = repeated(shape, SCAN_N)
    assert len(SCAN.scan_text(text)) >= SCAN_N // (2 * len(SCAN_SHAPES[shape]))
    assert scan_work(text) >= SCAN_N


def test_negative_control_unbounded_pipe_search_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = SCAN_TAGS._pipe_token

    def unbounded(text: str, i: int, slash: bool) -> Any:
        text.find("|>", i)  # where the token would end, searched to the end of the text
        return real(text, i, slash)

    monkeypatch.setattr(SCAN_TAGS, "_pipe_token", unbounded)
    # ``<|a<|a`` is no bar reading since the bar must close on its line: ``<|a>`` still is one.
    ok, small, big = scan_linear("pipe-closer", 500)
    assert not ok, f"an unbounded pipe-token search passed: {small} -> {big}"


def test_negative_control_per_finding_line_count_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(LineIndex, "locate", _old_locate)
    ok, small, big = scan_linear("im_end-lines", 500)
    assert not ok, f"the old per-finding line count passed: {small} -> {big}"


def test_negative_control_slicing_words_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    def slicing(text: str, runs: object = None) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for run in SCAN_HIDDEN._ANY_RUN_RE.finditer(text):
            rest = text[run.start() - 1 :]  # the rest of the text, copied at every run
            word = SCAN_HIDDEN._IN_WORD_RE.match(rest)
            if word is not None:
                out.append((run.start() - 1, run.start() - 1 + word.end()))
        return out

    monkeypatch.setattr(SCAN_HIDDEN, "_words_with_invisibles", slicing)
    ok, small, big = scan_linear("zwsp-words", 500)
    assert not ok, f"a word search slicing the rest of the text passed: {small} -> {big}"


def test_negative_control_recounting_family_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pass that rescans from every opener it reads (a planted quadratic family)."""
    families = list(SCAN.FAMILIES)
    k = next(i for i, f in enumerate(families) if f.name == "brackets")
    real = families[k].run

    def rescanning(text: str, ctx: Any, out: list[Any]) -> None:
        real(text, ctx, out)
        for start, *_ in SCAN_TAGS.opener_records(text, ctx.reserved, "bracket", ctx.tokens):
            text.count("[", start)

    families[k] = SCAN.Family(families[k].name, families[k].rules, rescanning)
    monkeypatch.setattr(SCAN, "FAMILIES", tuple(families))
    ok, small, big = scan_linear("inst", 500)
    assert not ok, f"a family rescanning from every opener passed: {small} -> {big}"


# -- the five shapes of the scanner's availability target (benchmarks/scan_shapes.py) ---------
#
# ``<|im_end|>`` and ``[INST]`` make one finding per repetition (the per-finding work: family, sort,
# dedupe, line and column, snippet); ``a`` + U+200B is one word of invisible runs (the hidden pass);
# ``%3C`` and ``\\u003c`` are runs of encoded openers (the encoded pass). Each is guarded by
# test_scan_work_is_linear above; here the counter is shown to see each one's own work, and a planted
# quadratic variant of the code that shape exercises must fail the bound.

TARGET_SHAPES = ("im_end", "inst", "zwsp-word", "percent", "json-escape")


@pytest.mark.parametrize("shape", TARGET_SHAPES)
def test_scan_target_shapes_are_counted(shape: str) -> None:
    """Work grows with the text for each shape (the guard is not vacuous for it), within the bounds."""
    ok, small, big = scan_linear(shape)
    assert ok and small >= SCAN_N and big >= 8 * SCAN_N, (shape, small, big)


def _with_per_finding_line_count(monkeypatch: pytest.MonkeyPatch) -> None:
    """_findings as it would be with each finding's line counted from the start of the text (the
    computation LineIndex replaced), also where the text is one line."""
    real = SCAN._findings

    def counting_lines(text: str, raw: list[Any], off: frozenset[str]) -> list[Any]:
        found: list[Any] = real(text, raw, off)
        for f in found:
            text.count("\n", 0, f.offset)
        return found

    monkeypatch.setattr(SCAN, "_findings", counting_lines)


@pytest.mark.parametrize("shape", ["im_end", "inst"])
def test_negative_control_per_finding_line_count_on_one_line_is_caught(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _with_per_finding_line_count(monkeypatch)
    ok, small, big = scan_linear(shape, 500)
    assert not ok, f"{shape}: a per-finding line count passed: {small} -> {big}"


def test_negative_control_word_search_restarting_at_every_run_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The word search going on after each invisible run instead of after the word: a word of
    ``a`` + U+200B is matched again from every run of it."""

    def restarting(text: str, runs: object = None) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        pos = 0
        while True:
            run = SCAN_HIDDEN._ANY_RUN_RE.search(text, pos)
            if run is None:
                return out
            word = SCAN_HIDDEN._IN_WORD_RE.match(text, run.start() - 1) if run.start() > 0 else None
            if word is not None and (not out or word.end() != out[-1][1]):
                out.append(word.span())
            pos = run.end()

    monkeypatch.setattr(SCAN_HIDDEN, "_words_with_invisibles", restarting)
    ok, small, big = scan_linear("zwsp-word", 500)
    assert not ok, f"a word search restarting at every run passed: {small} -> {big}"


def test_negative_control_invisibles_removed_one_run_at_a_time_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """A word's invisible characters taken out one run at a time (a search from the word's start
    after each), instead of one kind at a time."""
    real = SCAN_HIDDEN._invisibles_of

    def per_run(word: str) -> Any:
        rest = word
        while SCAN_HIDDEN._ANY_RUN_RE.search(rest) is not None:
            run = SCAN_HIDDEN._ANY_RUN_RE.search(rest)
            assert run is not None
            rest = rest[: run.start()] + rest[run.end() :]
        return real(word)

    monkeypatch.setattr(SCAN_HIDDEN, "_invisibles_of", per_run)
    ok, small, big = scan_linear("zwsp-word", 500)
    assert not ok, f"invisible runs removed one at a time passed: {small} -> {big}"


@pytest.mark.parametrize("shape", ["percent", "json-escape"])
def test_negative_control_encoded_windows_to_the_end_are_caught(shape: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoded pass without its two linearity devices: every encoded opener a candidate (not only
    the last of a run) and each window decoded to the end of the text (not to the next candidate)."""

    def to_the_end(text: str, ctx: Any, out: list[Any]) -> None:
        for m in SCAN_ENCODED._ENC_OPENER_RE.finditer(text):
            SCAN_ENCODED._decode_escapes(text[m.start() :])

    families = [SCAN.Family(f.name, f.rules, to_the_end) if f.name == "encoded" else f for f in SCAN.FAMILIES]
    monkeypatch.setattr(SCAN, "FAMILIES", tuple(families))
    ok, small, big = scan_linear(shape, 300)
    assert not ok, f"{shape}: encoded windows decoded to the end passed: {small} -> {big}"
