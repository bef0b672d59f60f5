"""Guillemet quotation and the empty bar: precision on real prose, and no opening for a structural token.

Two rules of the model's eye (``docs/design.md``, "The model's eye"):

* a raw guillemet pair (``«`` or ``‹``, then ``»`` or ``›``) around a *plain word* is a quotation, not
  the ``<NAME>`` token that word spells (``«S»``, ``« PR »``, ``«\\ s\\ »`` in roff), when the token
  is one of :func:`envelock.eye.reader.quotable_angle_names` (letters and digits only, derived from the
  token tables);
* the bar shape with an empty name (``<|>``, ``«|»``, ``« | »``) is no bar token.

Every case runs on every implementation. The negative controls plant a reader without each rule
(the precision check must catch it) and a reader with each rule too wide (the recall check must
catch it). Injectivity is checked exhaustively over a guillemet alphabet, and by hypothesis; scan
parity (every escaped opener lies inside a finding) on the same strings.
"""

from __future__ import annotations

import importlib
import itertools
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace

import pytest
from helpers.data import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

import envelock
from envelock import LEVELS, defang, undefang
from envelock.eye import backend
from envelock.eye import reader as me
from envelock.eye import reference as ref
from envelock.eye import token_tables as tt
from envelock.eye.levels import Level
from envelock.eye.load_tokens import Tokens
from envelock.eye.tokens import ANGLE_TOKEN_NAMES, DOUBLED_ANGLE_NAMES, RESERVED_NAMES

pytestmark = pytest.mark.usefixtures("impl")

_REAL_QUOTED_WORD = me.quoted_word

#: Real text the two rules leave alone at ``reserved`` (where each line comes from), every one escaped before.
UNTOUCHED: list[tuple[str, str]] = [
    ("ru/man7/cp1252.7", "ЛАТИНСКАЯ ЗАГЛАВНАЯ БУКВА «S» С ГАЛОЧКОЙ"),
    ("ru/man5/proc.5", "кроме отладки. Значение «s»"),
    ("fr/man1/chattr.1 (roff unpaddable spaces)", "fichier avec l'attribut «\\ s\\ » est supprimé"),
    ("fr/man1/diff.1", "le sigle «\\ pr\\ » pour"),
    ("French prose", "le sigle « PR » signifie"),
    ("French prose, no-break spaces", "peut être «\u00a0s\u00a0» pour seconde"),
    ("Swiss German", "die «AI»-Revolution"),
    ("single guillemets", "le mot ‹think› ici"),
    ("ru/man5/core.5", "у следовать за символом «|»."),
    ("ru/man7/uri.7", "на вертикальную черту («|»), то"),
    ("de/man7/uri.7 (reversed German quotes)", "Schema= »http« | »ftp« | »gopher«"),
    ("Haskell", "parser = a <|> b"),
    ("distutils/versionpredicate.py", 're.compile(r"^\\s*(<=|>=|<|>|!=|==)\\s*([^\\s,]+)\\s*$")'),
    # The bar shape must close on its line (``reader.bar_closes``).
    ("_pydecimal.py (a bar that never closes)", "        # error < |f|/10**extra + 0.5\n        return result"),
    ("a bar in a regex, the line ends", "pattern = r'a <|b'\nother = '>'"),
]

#: Shapes that stay escaped, with the defang each must give at ``reserved``.
ESCAPED: list[tuple[str, str, str]] = [
    ("an envelope close tag", "«/retrieved_content»", "«\\/retrieved_content»"),
    ("an envelope name with spaces", "« retrieved content »", "«\\ retrieved content »"),
    ("a bar token", "«|im_end|»", "«\\|im_end|»"),
    ("a bar token, spaced", "« | im_end | »", "«\\ | im_end | »"),
    ("the exact token next to a quotation", "«s» <s>", "«s» <\\s>"),
    ("written between doubled angles (<<SYS>>)", "«SYS»", "«\\SYS»"),
    ("a multi-part name", "«start_of_turn»", "«\\start_of_turn»"),
    ("a multi-part name, spaced", "« tool_call »", "«\\ tool_call »"),
    ("a plain spelling of a multi-part name (tool_call)", "«TOOLCALL»", "«\\TOOLCALL»"),
    ("a placeholder family", "«SPECIAL_12»", "«\\SPECIAL_12»"),
    ("a namespace token", "«dsml:invoke»", "«\\dsml:invoke»"),
    ("an invisible character inside", "«s\u200b»", "«\\s\u200b»"),
    ("a slash inside", "«/s»", "«\\/s»"),
    ("character references, not typographic quotation", "&laquo;s&raquo;", "&laquo;\\s&raquo;"),
    ("a reference for the closer", "«s&raquo;", "«\\s&raquo;"),
    ("not a guillemet pair (ASCII closer)", "«s>", "«\\s>"),
    ("not a guillemet pair (ASCII opener)", "<s»", "<\\s»"),
    ("two bars", "<||>", "<\\||>"),
    ("padding after a bar (fail closed)", "<|" + " " * 40 + ">", "<\\|" + " " * 40 + ">"),
    ("Gemma 4's string delimiter (a one-character name)", '<|"|>', '<\\|"|>'),
    ("Gemma 4's block opener", "<|turn>", "<\\|turn>"),
    ("a space before the bar", "< |im_end|>", "<\\ |im_end|>"),
    ("spaces inside the bars", "<| im_end |>", "<\\| im_end |>"),
    ("a closer inside the name (<｜/table>｜)", "<\uff5c/table>\uff5c", "<\\\uff5c/table>\uff5c"),
    ("the closer as a reference", "<|im_end|&gt;", "<\\|im_end|&gt;"),
    ("the closer as a reference with many zeros", "<|im_end|&#" + "0" * 300 + "62;", "<\\|im_end|&#" + "0" * 300 + "62;"),
    ("a name past the lookahead (fail closed)", "<|im_end" + "x" * 300, "<\\|im_end" + "x" * 300),
    ("a markdown table cell (\\| renders as |)", "| <\\|im_end\\|> |", "| <\\\\|im_end\\|> |"),
]

Defang = Callable[[str], str]


def real(text: str) -> str:
    return defang(text)


def precision_misses(fn: Defang) -> list[str]:
    """The texts of :data:`UNTOUCHED` that ``fn`` changes."""
    return [text for _, text in UNTOUCHED if fn(text) != text]


def recall_misses(fn: Defang) -> list[str]:
    """The texts of :data:`ESCAPED` that ``fn`` does not defang as they must be."""
    return [text for _, text, want in ESCAPED if fn(text) != want]


def test_quotations_and_empty_bars_are_left_alone() -> None:
    assert precision_misses(real) == []


def test_structural_shapes_stay_escaped() -> None:
    assert recall_misses(real) == []
    for _, text, _want in ESCAPED:
        for level in ("reserved", "markup", "xml"):
            assert undefang(defang(text, level=level), level=level) == text


def test_every_level_and_a_body_in_its_context() -> None:
    from envelock import PrefaceEntry, compose_preface, parse_preface, verify_preface

    for _, text in UNTOUCHED:
        p = compose_preface([PrefaceEntry("external", "man:x", text)])
        assert text in p
        assert parse_preface(p)[0].body == text
        assert verify_preface(p).ok


# -- the data the rules rest on ---------------------------------------------------------------


def _all_table_tokens() -> set[str]:
    return (
        {row[0] for row in tt.TOKENS}
        | set(tt.BAR_TOKENS)
        | set(tt.TOKENIZER_TOKENS)
        | set(tt.LITERAL_TOKENS)
        | set(tt.EXACT_TOKENS)
    )


def test_no_tokenizer_token_lies_inside_what_the_rules_leave_alone() -> None:
    """A tokenizer matches its special tokens as exact substrings; none occurs in the texts left alone."""
    tokens = _all_table_tokens()
    assert len(tokens) > 500  # the tables were read
    for where, text in UNTOUCHED:
        assert [t for t in tokens if t in text] == [], where


def test_no_table_token_has_the_empty_bar_shape() -> None:
    """A token that reads as a bar only when the empty bar counts as one (``Names.empty_bars``)."""
    plain = me.Names((), (), True)
    strict = replace(plain, empty_bars=True)
    found = [
        t
        for t in _all_table_tokens()
        if (m := me.OPENER_RE.match(t))
        and me.read_after(t, m.end(), strict).kind == "bar"
        and me.read_after(t, m.end(), plain).kind != "bar"
    ]
    assert found == []
    assert me.read_after("<|>", 1, strict).kind == "bar" and me.read_after("<|>", 1, plain).kind != "bar"  # the probe works
    assert not me.names_for().empty_bars


def test_quotable_names_come_from_the_tables_by_shape() -> None:
    q = me.quotable_angle_names()
    assert set(q) <= set(ANGLE_TOKEN_NAMES)
    assert {"s", "pr", "AI", "think"} <= set(q)
    assert "SYS" in DOUBLED_ANGLE_NAMES and "sys" not in q  # «SYS» is <<SYS>>'s own shape
    assert "TOOLCALL" in ANGLE_TOKEN_NAMES and "TOOLCALL" not in q  # it folds to tool_call
    for n in q:
        assert n.isalnum() and me.skeleton(n) not in {me.skeleton(d) for d in DOUBLED_ANGLE_NAMES}
    structural = [n for n in ANGLE_TOKEN_NAMES if not n.isalnum()]
    assert len(structural) > 50 and not set(structural) & set(q)


def test_the_native_tables_hold_the_same_quotable_names() -> None:
    text = (ROOT / "rust" / "envelock-core" / "src" / "tables.rs").read_text(encoding="utf-8")
    body = text.split("pub static QUOTABLE_ANGLE_TOKEN_NAMES: &[&str] = &[", 1)[1].split("];", 1)[0]
    rust = [re.sub(r"\\u\{([0-9a-f]+)\}", lambda m: chr(int(m.group(1), 16)), s) for s in re.findall(r'"([^"]*)"', body)]
    assert rust == list(me.quotable_angle_names())
    for name, chars in (("QUOTE_OPENERS", me.QUOTE_OPENERS), ("QUOTE_CLOSERS", me.QUOTE_CLOSERS)):
        block = text.split(f"pub static {name}: &[u32] = &[", 1)[1].split("];", 1)[0]
        assert sorted(int(h, 16) for h in re.findall(r"0x([0-9A-F]+)", block)) == sorted(map(ord, chars))


def test_a_teams_own_tokens_are_never_read_as_quotations() -> None:
    own = Tokens.of(["<s>", "<|>"])
    assert "s" not in me.names_for(extra=own).quotable and me.names_for(extra=own).empty_bars
    assert defang("«s»", tokens=own) == "«\\s»"
    assert defang("a <|> b", tokens=own) == "a <\\|> b"
    assert defang("a <|> b", tokens=Tokens.of(["<|"])) == "a <\\|> b"  # a tokenizer finds <| inside <|>
    assert defang("«think»", tokens=Tokens.of(["<|x|>"])) == "«think»"


# -- negative controls: the checks above catch a reader without each rule, or with one too wide ----


@contextmanager
def planted(
    quotable: Callable[[me.Names], tuple[str, ...]] | None = None,
    quoted_word: Callable[[str, int, int], bool] | None = None,
    empty_bar: Callable[[str, int, int], bool] | None = None,
    bar_closes: Callable[[str, int, int], bool] | None = None,
) -> Iterator[None]:
    """Run the Python reference with a changed rule (the planted reader is the Python one)."""
    mp = pytest.MonkeyPatch()
    try:
        if quotable is not None:

            def names_for(reserved: tuple[str, ...] = RESERVED_NAMES, extra: Tokens | None = None) -> me.Names:
                n = me.names_for(reserved, extra)
                return replace(n, quotable=quotable(n))

            mp.setattr(ref, "names_for", names_for)
        if quoted_word is not None:
            mp.setattr(me, "quoted_word", quoted_word)
        if empty_bar is not None:
            mp.setattr(me, "empty_bar", empty_bar)
        if bar_closes is not None:
            mp.setattr(me, "bar_closes", bar_closes)
        with backend.use("reference"):
            yield
    finally:
        mp.undo()


def test_control_without_the_quotation_rule_is_caught() -> None:
    with planted(quotable=lambda n: ()):
        misses = precision_misses(real)
    assert any("«S»" in m for m in misses) and any("« PR »" in m for m in misses)
    assert not any("«|»" in m for m in misses)  # only this rule is missing


def test_control_without_the_empty_bar_rule_is_caught() -> None:
    with planted(empty_bar=lambda text, i, end: False):
        misses = precision_misses(real)
    assert any("«|»" in m for m in misses) and any("<|>" in m for m in misses)


def test_control_quoting_every_token_is_caught() -> None:
    with planted(quotable=lambda n: n.tokens):
        misses = recall_misses(real)
    assert any("«SYS»" in m for m in misses) and any("«TOOLCALL»" in m for m in misses)


def test_control_quoting_any_span_is_caught() -> None:
    with planted(quoted_word=lambda text, pos, close: True):
        misses = recall_misses(real)
    assert any("«s\u200b»" in m for m in misses) and any("«s>" in m for m in misses)


def test_control_taking_any_opener_for_a_guillemet_is_caught() -> None:
    mp = pytest.MonkeyPatch()
    mp.setattr(me, "QUOTE_OPENERS", me.QUOTE_OPENERS | {"<", ";"})
    try:
        with planted(quoted_word=lambda text, pos, close: True):
            misses = recall_misses(real)
    finally:
        mp.undo()
    assert any("<s»" in m for m in misses) and any("&laquo;s&raquo;" in m for m in misses)


def test_control_refusing_the_roff_backslash_is_caught() -> None:
    """``«\\ s\\ »`` is how roff writes ``« s »`` (unpaddable spaces): a rule without ``\\`` loses it."""
    with planted(quoted_word=lambda text, pos, close: "\\" not in text[pos:close] and _REAL_QUOTED_WORD(text, pos, close)):
        misses = precision_misses(real)
    assert "fichier avec l'attribut «\\ s\\ » est supprimé" in misses and "le sigle « PR » signifie" not in misses


def test_control_without_the_closing_rule_is_caught() -> None:
    """A reader that takes every named bar for a token (the rule before ``bar_closes``) changes _pydecimal."""
    with planted(bar_closes=lambda text, i, end: True):
        misses = precision_misses(real)
    assert any("10**extra" in m for m in misses) and not any("«S»" in m for m in misses)


def test_control_with_no_bar_closing_is_caught() -> None:
    with planted(bar_closes=lambda text, i, end: False):
        misses = recall_misses(real)
    assert "< |im_end|>" in misses and "<|turn>" in misses and "<\uff5c/table>\uff5c" in misses


def test_control_a_closing_rule_that_stops_at_the_lookahead_is_caught() -> None:
    """The end of the lookahead is a bound, not the end of a name: it must fail closed."""
    real_closes = me.bar_closes
    assert "<|im_end" + "x" * 300 not in recall_misses(real)
    with planted(bar_closes=lambda text, i, end: real_closes(text[:end], i, end)):
        misses = recall_misses(real)
    assert "<|im_end" + "x" * 300 in misses


def test_every_table_bar_token_closes_on_its_line() -> None:
    """The data the closing rule rests on: every angle bar token of the tables (and every one with a
    line break or padding removed) reads as a bar, so no real token is given up."""
    names = me.names_for()
    angle = [(t, m.end()) for t in tt.BAR_TOKENS if (m := me.OPENER_RE.match(t))]
    assert len(angle) > 500
    for t, end in angle:
        assert me.read_after(t, end, names).kind == "bar", t
        assert me.read_after(t + "\nnext line", end, names).kind == "bar", t
    assert all("\n" not in t and "\r" not in t for t in tt.BAR_TOKENS)


def test_control_with_every_bar_empty_is_caught() -> None:
    with planted(empty_bar=lambda text, i, end: True):
        misses = recall_misses(real)
    assert any("«|im_end|»" in m for m in misses)


# -- injectivity and scan parity over guillemet alphabets ---------------------------------------

SMALL = ["«", "»", "‹", "<", ">", "\\", "s", " ", "|"]
WIDE = ["«", "»", "›", "&laquo;", "&raquo;", "\\", "/", "s", "sys", "PR", "tool_call", "|", "\u200b", "\u00a0", "<", ">"]


def strings(alphabet: list[str], most: int) -> Iterable[str]:
    for k in range(most + 1):
        for parts in itertools.product(alphabet, repeat=k):
            yield "".join(parts)


def unescaped(out: str) -> list[int]:
    """Openers of ``out`` whose reading is dangerous but that no ``\\`` follows."""
    names = me.names_for()
    n = len(out)
    return [
        m.end()
        for m in me.OPENER_RE.finditer(out)
        if (m.end() >= n or out[m.end()] != "\\") and ref.opener_needs_escape(out, m, names, False)
    ]


def violations(texts: Iterable[str], level: Level) -> list[str]:
    seen: dict[str, str] = {}
    out: list[str] = []
    for s in texts:
        d = defang(s, level=level)
        if undefang(d, level=level) != s:
            out.append(f"round trip: {s!r} -> {d!r}")
        if seen.get(d, s) != s:
            out.append(f"not injective: {seen[d]!r} and {s!r} -> {d!r}")
        seen[d] = s
        if level == "reserved" and unescaped(d):
            out.append(f"unescaped dangerous opener in {d!r} (from {s!r})")
        if len(out) > 10:
            break
    return out


@pytest.mark.parametrize("level", ["reserved", "markup"])
def test_exhaustive_guillemet_alphabet(level: Level) -> None:
    assert violations(strings(SMALL, 5), level) == []


@pytest.mark.parametrize("level", ["reserved", "markup"])
def test_exhaustive_wide_guillemet_alphabet(level: Level) -> None:
    assert violations(strings(WIDE, 3), level) == []


FRAGMENTS = [
    "«", "»", "‹", "›", "&laquo;", "&raquo;", "\\", "\\ ", " ", "\u00a0", "|", "s", "S", "PR", "sys", "think",
    "tool_call", "im_end", "/", "<", ">", "<s>", "retrieved_content", "\u200b", "ѕ", "5",
]  # fmt: skip
guillemet_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=3)), max_size=24).map("".join)


@settings(max_examples=300, deadline=None)
@given(guillemet_text)
def test_hypothesis_round_trip_and_containment(text: str) -> None:
    for level in LEVELS:
        assert undefang(defang(text, level=level), level=level) == text
    assert unescaped(defang(text)) == []


if str(ROOT / "fuzz") not in sys.path:
    sys.path.insert(0, str(ROOT / "fuzz"))
_common = importlib.import_module("_common")


def test_scan_parity_on_the_wide_alphabet() -> None:
    bad = [v for s in strings(WIDE, 3) for v in _common.parity_violations(s, envelock.scan_text(s))]
    assert bad[:5] == []


@settings(max_examples=200, deadline=None)
@given(guillemet_text)
def test_scan_parity_hypothesis(text: str) -> None:
    assert _common.parity_violations(text, envelock.scan_text(text)) == []
