"""The package is a package (issue 12, item 4): a LICENSE, project URLs, extras that say what
they are for, runtime dependencies kept to lxml, and an sdist that carries what the tests read.

``scripts/ci_sdist.sh`` (run by CI) builds the sdist, unpacks it and runs the suite from it;
here the same list of needed files is checked against the build configuration, quickly.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT: dict[str, Any] = PYPROJECT["project"]

#: What the test suite reads outside src/ and tests/ (keep in step with scripts/ci_sdist.sh).
NEEDED_IN_SDIST = (
    "LICENSE", "README.md", "SECURITY.md", "CHANGELOG.md", ".pre-commit-hooks.yaml", "docs/cli.md", "docs/design.md",
    "tests/conftest.py", "tests/strategies.py", "tests/diagnostics.py", "tests/data/benign/x", "corpus/x.json",
    "examples/turn.json", "fuzz/_common.py", "scripts/gen_unicode_tables.py",
)  # fmt: skip


def test_license_file_is_the_apache_2_text() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert PROJECT["license"] == "Apache-2.0" and "LICENSE" in PROJECT["license-files"]
    assert "Apache License\n                           Version 2.0, January 2004" in text
    for section in ("1. Definitions.", "2. Grant of Copyright License.", "3. Grant of Patent License.", "9. Accepting Warranty"):
        assert section in text
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text
    assert len(text) > 11000  # the full text, not a pointer to it


def test_project_urls() -> None:
    urls = PROJECT["urls"]
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert all(u.startswith("https://") for u in urls.values())
    assert urls["Documentation"].endswith("docs/cli.md")


def test_runtime_dependencies_are_lxml_only_and_extras_say_what_they_are_for() -> None:
    assert [d.split(">")[0].split("=")[0].strip() for d in PROJECT["dependencies"]] == ["lxml"]
    extras = PROJECT["optional-dependencies"]
    assert any(d.startswith("pathspec") for d in extras["gitignore"])
    assert any(d.startswith("anthropic") for d in extras["examples"])
    test = " ".join(extras["test"])
    assert "pathspec" in test and "anthropic" in test and "pytest" in test  # contributors get everything


def test_readme_installs_from_source_until_published() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("---", 1)[0]
    assert "not on PyPI yet" in quickstart and "pip install ." in quickstart
    assert "pip install envelock\n" not in readme and "pip install envelock`" not in readme
    assert "[test]" not in quickstart.split("pip install .", 1)[0]  # the user's first install is not the dev one


def _sdist_patterns() -> list[str]:
    maturin = PYPROJECT.get("tool", {}).get("maturin", {})
    out: list[str] = [PROJECT["readme"], *PROJECT.get("license-files", [])]  # maturin packs these itself
    for item in maturin.get("include", []):
        if isinstance(item, str):
            out.append(item)
        elif item.get("format", "sdist") in ("sdist", ["sdist"]) or "sdist" in item.get("format", []):
            out.append(item["path"])
    return out


def glob_match(path: str, pattern: str) -> bool:
    """Does ``path`` match a glob as maturin reads it (``**/`` any number of directories, ``*`` within one)?"""
    rx = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            rx, i = rx + "(?:[^/]+/)*", i + 3
        elif pattern.startswith("**", i):
            rx, i = rx + ".*", i + 2
        else:
            c = pattern[i]
            rx += "[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c)
            i += 1
    return re.fullmatch(rx, path) is not None


def missing_from_sdist(patterns: list[str], needed: tuple[str, ...] = NEEDED_IN_SDIST) -> list[str]:
    """Needed paths outside src/ that no ``include`` pattern of [tool.maturin] covers."""
    return [n for n in needed if not any(glob_match(n, p) for p in patterns)]


def test_sdist_configuration_carries_what_the_tests_read() -> None:
    assert missing_from_sdist(_sdist_patterns()) == []


def test_negative_control_sdist_check() -> None:
    full = ["LICENSE", "README.md", "SECURITY.md", "CHANGELOG.md", ".pre-commit-hooks.yaml", "docs/**/*", "tests/**/*",
            "corpus/**/*", "examples/**/*", "fuzz/**/*", "scripts/**/*"]  # fmt: skip
    assert missing_from_sdist(full) == []
    assert missing_from_sdist([p for p in full if p != "corpus/**/*"]) == ["corpus/x.json"]
    assert missing_from_sdist([]) == list(NEEDED_IN_SDIST)
    assert glob_match("docs/cli.md", "docs/**/*") and glob_match("tests/data/benign/x", "tests/**/*")
    assert not glob_match("docs/cli.md", "doc/**/*") and not glob_match("a/b", "*")


def test_chat_turn_example_says_which_extra_it_needs(tmp_path: Path) -> None:
    import os
    import subprocess

    fake = tmp_path / "anthropic"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('not installed (test)')\n", encoding="utf-8")
    script = str(ROOT / "examples" / "chat_turn.py")
    r = subprocess.run([sys.executable, script], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)}, check=False)
    assert r.returncode == 1 and "pip install 'envelock[examples]'" in r.stderr and "Traceback" not in r.stderr
    ok = subprocess.run([sys.executable, script], capture_output=True, text=True, check=False)  # control: with the SDK
    assert ok.returncode == 0, ok.stderr


def test_optional_parts_skip_only_when_not_required(monkeypatch: pytest.MonkeyPatch) -> None:
    """The one skip helper (tests/conftest.py) skips for a user's clone and fails when CI requires
    the part: a missing module is never a silent pass under ``ENVELOCK_REQUIRE_*=1``."""
    from helpers.data import optional_module

    monkeypatch.delenv("ENVELOCK_REQUIRE_TEST_PART", raising=False)
    with pytest.raises(pytest.skip.Exception):
        optional_module("envelock_no_such_module", require_env="ENVELOCK_REQUIRE_TEST_PART", how="nowhere")
    monkeypatch.setenv("ENVELOCK_REQUIRE_TEST_PART", "1")
    with pytest.raises(pytest.fail.Exception, match="ENVELOCK_REQUIRE_TEST_PART=1"):
        optional_module("envelock_no_such_module", require_env="ENVELOCK_REQUIRE_TEST_PART", how="nowhere")
    assert optional_module("envelock", require_env="ENVELOCK_REQUIRE_TEST_PART", how="nowhere").__name__ == "envelock"
