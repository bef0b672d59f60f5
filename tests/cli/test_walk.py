"""``walk.reals``: the real path of many files, each directory resolved once, is ``walk.real`` of
each (``os.path.realpath``) on a tree of links of every kind: a link to a file, to a directory, a
chain, a broken one, a loop, ``..`` through a link, relative and absolute names.

Negative control: a ``reals`` that joins the name to its directory's real path without asking
whether the name is itself a link gives another path for a linked file, and the comparison sees it.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from envelock.cli import walk


def _tree(root: Path) -> list[str]:
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "f.txt").write_text("x")
    (root / "d" / "e" / "g.txt").write_text("y")
    links = {
        "file-link": "d/f.txt",
        "dir-link": "d",
        "chain": "file-link",
        "broken": "nowhere.txt",
        "loop-a": "loop-b",
        "loop-b": "loop-a",
        "d/e/up": "..",
    }
    for name, target in links.items():
        (root / name).symlink_to(target)
    names = [
        "d/f.txt", "d/e/g.txt", "file-link", "dir-link/f.txt", "dir-link/e/g.txt", "chain", "broken",
        "loop-a", "d/e/up/f.txt", "d/e/../f.txt", "d/./f.txt", "d/", "d/e/..", ".", "dir-link/e/up",
        "missing/f.txt", "d/f.txt/x",
    ]  # fmt: skip
    return names + [str(root / n) for n in names]


def _differences(reals: Callable[[Sequence[str]], dict[str, Path]], names: list[str]) -> list[str]:
    got = reals(names)
    return [n for n in names if got[n] != walk.real(n)]


@pytest.fixture
def names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.chdir(tmp_path)
    return _tree(tmp_path)


def test_reals_is_real_of_each_path(names: list[str]) -> None:
    assert _differences(walk.reals, names) == []
    assert len(walk.reals(names)) == len(set(names))


def test_control_reals_that_never_asks_about_the_last_name_is_caught(names: list[str]) -> None:
    def joins_blindly(paths: Sequence[str]) -> dict[str, Path]:
        out = {}
        for p in paths:
            head, name = os.path.split(p)
            out[p] = walk.real(p) if name in ("", ".", "..") else Path(os.path.realpath(head or os.curdir), name)
        return out

    assert set(_differences(joins_blindly, names)) >= {"file-link", "chain", "broken"}


def test_the_tree_has_the_links_it_claims(names: list[str]) -> None:
    # The control above is only a control if these are links (a file system without them would make it vacuous).
    for n in ("file-link", "chain", "broken", "loop-a", "dir-link"):
        assert stat.S_ISLNK(os.lstat(n).st_mode), n
