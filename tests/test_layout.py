"""The layout is the architecture: five areas in layers, no import cycle, no private name across areas.

Read from the source with :mod:`ast` (every ``import`` and ``from ... import``, also inside
functions), so the check holds whatever is imported at run time. The areas, lowest first:

* the leaves: ``types``, ``errors``, ``_version`` (and the native core ``_native``);
* ``eye``: the model's eye and the escape built on it;
* ``scan``: ``scan_text`` and its rules;
* ``envelope``: the format (compose, parse, verify, spotlighting...) and the policy object;
* ``batch``: corpus scale;
* ``cli``: the command;
* the faces: ``envelock/__init__.py``, ``__main__``, the compatibility shims (``escape``,
  ``columnar``) and ``integrations``.

A module may import its own area and any area below it, never one above; and no module imports a
``_private`` name from another area (a private name is the area's own business).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.data import ROOT

PKG = ROOT / "src" / "envelock"
#: The areas, lowest first; a module's area is its first path component under the package.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("types", "errors", "_version", "_native"),
    ("eye",),
    ("scan",),
    ("envelope",),
    ("batch",),
    ("cli",),
    ("__init__", "__main__", "escape", "columnar", "integrations"),
)
RANK = {area: k for k, areas in enumerate(LAYERS) for area in areas}


def module_name(path: Path, pkg: Path = PKG) -> str:
    rel = path.relative_to(pkg).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def area(module: str) -> str:
    return module.split(".")[0]


def imports(path: Path, pkg: Path = PKG) -> Iterator[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import of a package module."""
    me = module_name(path, pkg)
    package = me.split(".") if path.name == "__init__.py" and me != "__init__" else me.split(".")[:-1]
    if me == "__init__":
        package = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            elif node.module and node.module.startswith("envelock"):
                target = node.module.removeprefix("envelock").lstrip(".")
            else:
                continue
            for alias in node.names:
                sub = f"{target}.{alias.name}".strip(".")
                stem = pkg / sub.replace(".", "/")
                if stem.with_suffix(".py").exists() or stem.with_suffix(".pyi").exists() or stem.is_dir():
                    yield sub, None, node.lineno
                else:
                    yield target or "__init__", alias.name, node.lineno
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("envelock."):
                    yield alias.name.removeprefix("envelock."), None, node.lineno


def graph(pkg: Path = PKG) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for path in pkg.rglob("*.py"):
        out.setdefault(module_name(path, pkg), set()).update(t for t, _, _ in imports(path, pkg))
    return out


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), or a module importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in g.get(v, ()):
                out.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def violations(pkg: Path = PKG) -> list[str]:
    """Upward imports between areas and private names imported across areas."""
    out = []
    for path in sorted(pkg.rglob("*.py")):
        me = module_name(path, pkg)
        for target, name, line in imports(path, pkg):
            src, dst = area(me), area(target)
            where = f"{path.relative_to(pkg)}:{line}"
            if src not in RANK or dst not in RANK:
                out.append(f"{where}: module outside every area ({me} -> {target})")
            elif RANK[dst] > RANK[src]:
                out.append(f"{where}: {src} imports {dst} above it ({target})")
            if src != dst and name is not None and name.startswith("_") and not name.startswith("__"):
                out.append(f"{where}: private name {name} imported from another area ({target})")
            if src != dst and name is None and target.split(".")[-1].startswith("_") and dst != "_native":
                out.append(f"{where}: private module {target} imported from another area")
    return out


def test_no_import_cycle() -> None:
    assert cycles(graph()) == []


def test_areas_import_only_downward_and_no_private_names_across() -> None:
    assert violations() == []


def test_every_module_is_in_an_area() -> None:
    assert {area(m) for m in graph()} <= set(RANK)


@pytest.fixture
def broken_pkg(tmp_path: Path) -> Path:
    pkg = tmp_path / "envelock"
    for d in ("eye", "envelope", "cli"):
        (pkg / d).mkdir(parents=True)
        (pkg / d / "__init__.py").write_text("", encoding="utf-8")
    (pkg / "__init__.py").write_text("from .envelope.compose import compose\n", encoding="utf-8")
    (pkg / "types.py").write_text("", encoding="utf-8")
    (pkg / "eye" / "reader.py").write_text("from ..envelope.compose import compose  # upward\n", encoding="utf-8")
    (pkg / "envelope" / "compose.py").write_text(
        "from ..eye.reader import _private\ndef compose(): pass\n", encoding="utf-8"
    )
    (pkg / "cli" / "main.py").write_text("import envelock.envelope.compose\nfrom ..types import X\n", encoding="utf-8")
    return pkg


def test_negative_control_cycle_upward_import_and_private_name_are_found(broken_pkg: Path) -> None:
    assert cycles(graph(broken_pkg)) == [["envelope.compose", "eye.reader"]]
    found = violations(broken_pkg)
    assert any("eye imports envelope above it" in v for v in found), found
    assert any("private name _private imported from another area" in v for v in found), found
    assert not any(v.startswith("cli/main.py") for v in found), found


# ---------------------------------------------------------------------------
# Test modules share code through tests/helpers only


def cross_test_imports(tests_dir: Path) -> list[str]:
    """Imports of one test module (or conftest) by another: shared code belongs in tests/helpers."""
    out = []
    for path in sorted(tests_dir.rglob("*.py")):
        if "helpers" in path.relative_to(tests_dir).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module] if node.level == 0 else [f"{'.' * node.level}{node.module}"]
            elif isinstance(node, ast.ImportFrom):
                names = [a.name for a in node.names]
            for name in names:
                parts = name.lstrip(".").split(".")
                if parts[0] == "tests" or any(p.startswith("test_") or p == "conftest" for p in parts):
                    out.append(f"{path.relative_to(tests_dir)}:{node.lineno}: imports {name}")
    return out


def test_no_test_module_imports_another() -> None:
    assert cross_test_imports(ROOT / "tests") == []


def test_negative_control_a_test_module_importing_another_is_found(tmp_path: Path) -> None:
    (tmp_path / "cli").mkdir()
    (tmp_path / "helpers").mkdir()
    (tmp_path / "cli" / "test_a.py").write_text("from helpers.cli import run\nfrom cli.test_b import fixture\n", encoding="utf-8")
    (tmp_path / "test_c.py").write_text("import test_docs\nfrom . import conftest\n", encoding="utf-8")
    (tmp_path / "helpers" / "x.py").write_text("import test_anything\n", encoding="utf-8")  # helpers are not checked
    assert cross_test_imports(tmp_path) == [
        "cli/test_a.py:2: imports cli.test_b",
        "test_c.py:1: imports test_docs",
        "test_c.py:2: imports conftest",
    ]
