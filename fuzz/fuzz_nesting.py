#!/usr/bin/env python3
"""Fuzz nesting: random trees of ``Preface`` bodies, envelope depth 0-4.

Properties (docs/design.md, section 3):

* a tree whose envelope depth is within ``max_depth`` composes, verifies
  against its entries, and parses back with every nested ``Preface`` as child
  envelopes (bodies after the documented invisible/control handling);
* the first group whose depth exceeds ``max_depth`` raises ``NestingError``
  (exactly at depth ``max_depth + 1``), and nothing else is raised;
* ``Preface(out, max_depth=d)`` accepts the composed text iff its depth <= d
  (``NestingError`` otherwise);
* ``Preface(t)`` never accepts a text ``verify_preface`` rejects, for the
  composed text and for a fuzzed edit of it (at ``reserved`` the two agree
  both ways).

Input: header bytes from the end (level, max_depth, edit position, shape
bytes); the rest is a pool of leaf bodies split on ``\\x1e``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _common import LEVELS, RS, Input, expected_text

from envelock import (
    EnvelockError,
    NestingError,
    Preface,
    PrefaceEntry,
    compose_preface,
    parse_preface,
    verify_preface,
)

HEADER = 12
MAX_NODES = 14
MAX_TREE_DEPTH = 4


@dataclass
class Group:
    """A list of entries composed together; an entry body is a str or a nested Group."""

    items: list[str | Group] = field(default_factory=list)

    def depth(self) -> int:
        if not self.items:
            return 0
        return 1 + max((i.depth() for i in self.items if isinstance(i, Group)), default=0)


class _Shape:
    def __init__(self, shape: list[int], pool: list[str]) -> None:
        self.shape, self.pool, self.k, self.nodes, self.leaf = shape, pool, 0, 0, 0

    def byte(self) -> int:
        b = self.shape[self.k % len(self.shape)] if self.shape else 0
        self.k += 1
        return b

    def leaf_body(self) -> str:
        body = self.pool[self.leaf % len(self.pool)]
        self.leaf += 1
        return body

    def group(self, level: int) -> Group:
        b = self.byte()
        g = Group()
        n = 0 if (b & 0x0F) == 0x0F else 1 + (b & 3)  # an empty group now and then
        for _ in range(n):
            self.nodes += 1
            nest = level < MAX_TREE_DEPTH and self.nodes < MAX_NODES and (self.byte() % 3 != 0)
            g.items.append(self.group(level + 1) if nest else self.leaf_body())
        return g


def decode(data: bytes) -> tuple[str, int, int, Group]:
    inp = Input(data, HEADER)
    h = inp.header
    level = LEVELS[h[0] % 3]
    max_depth = 1 + h[1] % 4
    edit = h[2]
    pool = inp.text.split(RS) or [""]
    tree = _Shape(h[3:], pool).group(0)
    return level, max_depth, edit, tree


def _entries(g: Group, level: str, max_depth: int, path: str) -> list[PrefaceEntry]:
    out = []
    for k, item in enumerate(g.items):
        body: str = item if isinstance(item, str) else compose(item, level, max_depth, f"{path}.{k}")
        out.append(PrefaceEntry("external", f"node{path}.{k}", body))
    return out


def compose(g: Group, level: str, max_depth: int, path: str = "") -> Preface:
    entries = _entries(g, level, max_depth, path)  # a child's NestingError passes through here
    try:
        return compose_preface(entries, level=level, max_depth=max_depth)
    except NestingError:
        assert g.depth() == max_depth + 1, f"NestingError for a group of depth {g.depth()} at max_depth={max_depth}"
        raise


def same(envs: tuple, g: Group, path: str) -> None:
    assert len(envs) == len(g.items), (path, len(envs), len(g.items))
    for k, (env, item) in enumerate(zip(envs, g.items, strict=True)):
        assert env.source == "external" and env.origin == f"node{path}.{k}", (env.source, env.origin)
        if isinstance(item, Group) and item.items:
            assert env.body is None, f"nested Preface at {path}.{k} parsed as a text body"
            same(env.children, item, f"{path}.{k}")
        else:
            want = expected_text(item) if isinstance(item, str) else ""
            assert env.children == () and env.body == want, (path, k, env.body, want)


def check(data: bytes) -> None:
    level, max_depth, edit, tree = decode(data)
    depth = tree.depth()
    try:
        out = compose(tree, level, max_depth)
    except NestingError:
        assert depth > max_depth, "NestingError within the limit"
        return
    assert depth <= max_depth, f"composed a tree of depth {depth} with max_depth={max_depth}"
    assert out.depth == depth, (out.depth, depth)
    v = verify_preface(out, expected=_entries_cached(tree, level, max_depth), level=level, max_depth=max_depth)
    assert v.ok, [str(p) for p in v.problems]
    envs = parse_preface(out, level=level, max_depth=max_depth)
    same(tuple(envs), tree, "")
    for d in range(1, 5):
        try:
            p = Preface(out, level=level, max_depth=d)
        except NestingError:  # noqa: PERF203
            assert depth > d, f"Preface refused depth {depth} with max_depth={d}"
        else:
            assert depth <= d, f"Preface accepted depth {depth} with max_depth={d}"
            assert p == out and p.depth == depth
    # A fuzzed edit: insert a pool string at a position chosen by the header.
    snippet = (tree.items[0] if tree.items and isinstance(tree.items[0], str) else "<")[:64]
    pos = (edit * max(1, len(out))) // 255 if out else 0
    for t in (str(out), out[:pos] + snippet + out[pos:], out[:pos] + out[pos + 1 :]):
        try:
            Preface(t, level=level, max_depth=max_depth)
            accepted = True
        except EnvelockError:
            accepted = False
        ok = verify_preface(t, level=level, max_depth=max_depth).ok
        assert not accepted or ok, f"Preface accepted what verify_preface rejects: {t!r}"
        if level == "reserved":
            assert accepted == ok, f"Preface and verify_preface disagree: {t!r}"


def _entries_cached(tree: Group, level: str, max_depth: int) -> list[PrefaceEntry]:
    return _entries(tree, level, max_depth, "")


if __name__ == "__main__":
    _common.neutralise_missing_readers()
    _common.main("nesting", check)
