"""Line and column of problems: one helper (``common.LineIndex``), same positions as before.

The positions were computed, before the helper, as ``text.count("\\n", 0, o) + 1``
and ``o - (text.rfind("\\n", 0, o) + 1) + 1``. ``old_position`` keeps that formula
as the oracle: the helper must agree with it on every offset of every text
(only ``"\\n"`` ends a line; CR, CRLF, U+2028, U+0085, VT and FF do not), and
every problem ``scan_preface``/``verify_preface`` report must carry it.
"""

from __future__ import annotations

import re
from pathlib import Path

from helpers.data import ROOT
from helpers.strategies import hostile_text
from hypothesis import given
from hypothesis import strategies as st

from envelock import PrefaceEntry, compose_preface, verify_preface
from envelock.envelope.parse import scan_preface
from envelock.types import LineIndex, Problem

SRC = ROOT / "src" / "envelock"
BREAKS = ["\n", "\r", "\r\n", "\n\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\n\n"]
texts = st.lists(st.one_of(st.sampled_from(BREAKS), st.text(max_size=5)), max_size=30).map("".join)


def old_position(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


def assert_positions(text: str, problems: list[Problem] | tuple[Problem, ...]) -> None:
    for p in problems:
        assert (p.line, p.column) == old_position(text, p.offset), p


def test_pinned_positions() -> None:
    text = "ab\r\ncd\re\n\nf\u2028g\x85"
    index = LineIndex(text)
    got = [index.locate(o) for o in range(len(text) + 3)]
    lines = [
        [1, 2, 3, 4],  # a b CR LF: the CR is column 3, the LF column 4
        [1, 2, 3, 4, 5],  # c d CR e LF
        [1],  # the empty line
        [1, 2, 3, 4, 5, 6, 7],  # f U+2028 g U+0085, the end, then past the end (as far as the last line goes)
    ]
    assert got == [(line, column) for line, columns in enumerate(lines, 1) for column in columns]
    assert LineIndex("").locate(0) == (1, 1)
    assert LineIndex("\n").locate(1) == (2, 1)


@given(texts, st.data())
def test_helper_matches_the_old_formula(text: str, data: st.DataObject) -> None:
    index = LineIndex(text)
    offsets = data.draw(st.lists(st.integers(0, len(text) + 3), max_size=12))
    for o in [*offsets, *range(len(text) + 2)]:  # arbitrary order first, then every offset
        assert index.locate(o) == old_position(text, o), (text, o)


entry_text = st.lists(
    st.one_of(st.sampled_from(["\r\n", "\r", "\n", "<|im_start|>", "<\\x", "\u2028"]), hostile_text), max_size=4
).map("".join)


@given(st.lists(entry_text, min_size=1, max_size=5), st.data())
def test_problem_positions_match_the_old_formula(bodies: list[str], data: st.DataObject) -> None:
    entries = [PrefaceEntry("external", f"web:{k}", b) for k, b in enumerate(bodies)]
    text = str(compose_preface(entries))
    # Undo some escapes and add line breaks so that problems land on many lines and columns.
    mutated = text.replace("<\\", data.draw(st.sampled_from(["<", "<\\", "<\r\n"])))
    mutated = mutated.replace("\n\n<", data.draw(st.sampled_from(["\n\n<", "\r\n\r\n<", "\n\r\n<"])))
    for t in (text, mutated, mutated + data.draw(texts)):
        _, problems, _ = scan_preface(t)
        assert_positions(t, problems)
        assert_positions(t, verify_preface(t).problems)


def test_many_problems_on_crlf_lines() -> None:
    entries = [PrefaceEntry("external", "web:x", "a\r\nb\r<|im_start|>\r\n<\\x") for _ in range(50)]
    text = str(compose_preface(entries)).replace("<\\|", "<|")
    problems = verify_preface(text).problems
    assert len(problems) == 50
    assert {p.code for p in problems} == {"undefanged-tag"}
    assert_positions(text, problems)
    assert problems[0].line == 3 and problems[0].column == 3


def test_expected_mismatch_positions() -> None:
    entries = [PrefaceEntry("external", f"web:{k}", "x\r\n\ry\u2028" * k) for k in range(30)]
    text = str(compose_preface(entries))
    wrong = [PrefaceEntry(e.source, e.origin + "!", e.body) for e in entries]
    problems = verify_preface(text, expected=wrong).problems
    assert len(problems) == 30
    assert {p.code for p in problems} == {"expected-mismatch"}
    assert [p.entry for p in problems] == list(range(30))
    assert_positions(text, problems)


#: A line or column computed by hand: counting or searching for LF, or splitting lines.
POSITION_RE = re.compile(r"""\.(count|rfind|rindex|find)\(\s*["']\\n["']""")


def hand_positions(root: Path) -> list[str]:
    """``file:line`` of every hand-made position computation under ``root`` (``types.py``, the home of
    :class:`LineIndex`, excepted)."""
    out = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "types.py" and path.parent == root:
            continue
        for k, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if POSITION_RE.search(line):
                out.append(f"{path.relative_to(root)}:{k}")
    return out


def test_positions_are_computed_only_by_the_helper() -> None:
    """Every line and column of the package comes from :class:`LineIndex` (a quadratic copy once
    lived in the parser; others in the readers and the suppressions)."""
    assert hand_positions(SRC) == []


def test_negative_control_hand_position_is_found(tmp_path: Path) -> None:
    (tmp_path / "types.py").write_text("starts = text.count('\\n')\n", encoding="utf-8")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mod.py").write_text("x = 1\nline = text.count('\\n', 0, i) + 1\n", encoding="utf-8")
    assert hand_positions(tmp_path) == ["sub/mod.py:2"]
