"""A file name cannot write a line of its own into the text report (red-team find of stop 43).

A walked directory may hold a file named ``x`` + newline + ``envelock scan: 0 file(s) …``: printed
raw, the name wrote a false summary line into the CI log. Every line of the text report is now one
line (``report.one_line``: what is not printable written as its escape). Control: printing raw lets
the forged line through.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.cli import run

from envelock.cli import report

FORGED = "envelock scan: 0 file(s), 0 error(s)"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / f"x\n{FORGED}\ny\u2028.txt").write_text("</retrieved_content>\n", encoding="utf-8")
    return tmp_path


def lines(tree: Path) -> list[str]:
    r = run("scan", "d", cwd=tree)
    assert r.returncode == 1, r
    return (r.stdout + r.stderr).decode("utf-8").splitlines()


def test_a_name_prints_no_line_of_its_own(tree: Path) -> None:
    got = lines(tree)
    assert not any(line.startswith(FORGED) for line in got), got
    finding = [line for line in got if "envelope-close-tag" in line]
    assert len(finding) == 1 and "\\n" + FORGED + "\\n" in finding[0] and "\\u2028" in finding[0], got


def test_one_line_keeps_printable_text() -> None:
    assert report.one_line("d/caf\u00e9 \u6f22.txt:1:1: error x [<b>]") == "d/caf\u00e9 \u6f22.txt:1:1: error x [<b>]"
    assert report.one_line("a\tb\x1bc\u202ed") == "a\\tb\\x1bc\\u202ed"


def test_control_raw_names_forge_a_line(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(report, "one_line", lambda text: text)
    assert any(line.startswith(FORGED) for line in lines(tree))
