"""Each integration is an optional extra: declared in pyproject, never imported by ``envelock``
itself, and its module says which extra to install when its package is absent."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parents[2]
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
#: integration module -> (its extra, the distribution it needs, the top-level module that distribution provides)
MODULES = {
    "langchain": ("langchain", "langchain-core", "langchain_core"),
    "llamaindex": ("llamaindex", "llama-index-core", "llama_index"),
    "anthropic": ("anthropic", "anthropic", "anthropic"),
    "openai": ("openai", "openai", "openai"),
    "mcp": ("mcp", "mcp", "mcp"),
}


def names(requirements: list[str]) -> set[str]:
    return {r.split(">")[0].split("=")[0].split("<")[0].split(";")[0].strip() for r in requirements}


def test_every_integration_has_its_extra_and_integrations_is_all_of_them() -> None:
    for module, (extra, dist, _) in MODULES.items():
        assert (ROOT / "src" / "envelock" / "integrations" / f"{module}.py").is_file()
        assert names(EXTRAS[extra]) == {dist}, extra
    assert sorted(EXTRAS["integrations"]) == sorted(r for extra, _, _ in MODULES.values() for r in EXTRAS[extra])


def test_importing_envelock_imports_no_integration_package() -> None:
    code = "import sys, envelock, envelock.integrations, envelock.integrations.common; print(sorted(sys.modules))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(eval(r.stdout))  # a printed list of module names
    assert not loaded & {top for _, _, top in MODULES.values()}, "envelock imported an optional package"
    assert "langchain_core" not in loaded and "llama_index" not in loaded  # control: the names are the packages' own


@pytest.mark.parametrize("module", sorted(MODULES))
def test_integration_module_names_its_extra_when_its_package_is_missing(module: str, tmp_path: Path) -> None:
    extra, dist, top = MODULES[module]
    fake = tmp_path / top
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('not installed (test)')\n", encoding="utf-8")
    code = f"import envelock.integrations.{module}"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)}, check=False)
    assert r.returncode == 1
    assert f"envelock.integrations.{module} needs {dist}: pip install 'envelock[{extra}]'" in r.stderr
