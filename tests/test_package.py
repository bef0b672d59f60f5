"""The package is a package: a LICENSE, project URLs (a private channel for vulnerabilities among
them), extras that say what they are for and contributors' tools as dependency groups, runtime
dependencies kept to lxml, and an sdist that carries what the tests read.

``scripts/ci_sdist.sh`` (run by CI) builds the sdist, unpacks it and runs the suite from it; here
the build backend's own file list is checked against what the tests need, quickly.
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
ADVISORIES = "https://github.com/envelock/envelock/security/advisories/new"

sys.path.insert(0, str(ROOT / "build_backend"))
import envelock_build  # noqa: E402

#: What the test suite reads outside src/ and tests/ (keep in step with scripts/ci_sdist.sh).
NEEDED_IN_SDIST = (
    "LICENSE", "README.md", "SECURITY.md", "CHANGELOG.md", ".pre-commit-hooks.yaml", "docs/cli.md", "docs/design.md",
    "tests/conftest.py", "tests/helpers/strategies.py", "tests/helpers/diagnostics.py", "corpus/README.md",
    "examples/turn.json", "fuzz/_common.py", "scripts/gen_unicode_tables.py", "build_backend/envelock_build/__init__.py",
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
    assert {"Homepage", "Documentation", "Source", "Issues", "Changelog", "Security"} <= set(urls)
    assert all(u.startswith("https://github.com/envelock/envelock") for u in urls.values())
    assert urls["Documentation"].endswith(("/README.md", "/docs/design.md"))
    for label in ("Documentation", "Changelog", "Security"):
        assert (ROOT / urls[label].split("/blob/main/", 1)[1]).is_file(), label


def test_vulnerabilities_have_a_private_channel_named_in_the_metadata_and_security_md() -> None:
    assert ADVISORIES in PROJECT["urls"].values()
    security = (ROOT / "SECURITY.md").read_text(encoding="utf-8")
    assert ADVISORIES in security
    assert "security contact in the package metadata" not in security  # the old pointer to nothing


def test_classifiers_name_the_supported_pythons_and_systems() -> None:
    classifiers = PROJECT["classifiers"]
    assert PROJECT["requires-python"] == ">=3.10"
    versions = sorted(c.rsplit(" :: ", 1)[1] for c in classifiers if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c))
    assert versions == ["3.10", "3.11", "3.12", "3.13"]
    assert {"Operating System :: POSIX :: Linux", "Operating System :: MacOS", "Operating System :: Microsoft :: Windows"} <= set(
        classifiers
    )


def test_runtime_dependencies_are_lxml_only_and_extras_say_what_they_are_for() -> None:
    assert [d.split(">")[0].split("=")[0].strip() for d in PROJECT["dependencies"]] == ["lxml"]
    extras = PROJECT["optional-dependencies"]
    frameworks = {"langchain", "llamaindex", "anthropic", "openai", "mcp"}
    # what a user installs; nothing for contributors
    assert set(extras) == {"gitignore", "examples", "arrow", "ray", "scale", "integrations", *frameworks}
    assert set(extras["integrations"]) == {d for f in frameworks for d in extras[f]}  # all five, nothing else
    assert any(d.startswith("pathspec") for d in extras["gitignore"])
    assert any(d.startswith("anthropic") for d in extras["examples"])


def resolve_group(groups: dict[str, list[Any]], name: str, seen: tuple[str, ...] = ()) -> list[str]:
    """The requirements of a PEP 735 group, includes expanded (a cycle or an unknown group raises)."""
    if name in seen or name not in groups:
        raise KeyError(f"dependency group {name!r}: {'cycle' if name in seen else 'unknown'}")
    out: list[str] = []
    for item in groups[name]:
        out.extend(resolve_group(groups, item["include-group"], (*seen, name)) if isinstance(item, dict) else [item])
    return out


def test_contributor_tools_are_dependency_groups() -> None:
    groups = PYPROJECT["dependency-groups"]
    assert {"test", "test-core", "lint", "bench", "gen", "mutation", "fuzz", "dev"} <= set(groups)
    names = {g: {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0] for r in resolve_group(groups, g)} for g in groups}
    assert {"pytest", "hypothesis", "pytest-xdist"} == names["test-core"]  # the core tests on every core
    assert {
        "pytest",
        "hypothesis",
        "html5lib",
        "markupsafe",
        "jsonschema",
        "pathspec",
        "anthropic",
        "unicodedata2",
        "anyascii",
        "pytest-xdist",
    } <= names["test"]
    assert {"mypy", "ruff", "types-lxml"} <= names["lint"] and any(n.startswith("actionlint") for n in names["lint"])
    assert names["test"] | names["lint"] <= names["dev"]
    assert "mutmut" in names["mutation"] and "matplotlib" in names["bench"] and "atheris" in names["fuzz"]


def test_negative_control_group_resolution() -> None:
    assert resolve_group({"a": ["x"], "b": [{"include-group": "a"}, "y"]}, "b") == ["x", "y"]
    with pytest.raises(KeyError, match="cycle"):
        resolve_group({"a": [{"include-group": "b"}], "b": [{"include-group": "a"}]}, "a")
    with pytest.raises(KeyError, match="unknown"):
        resolve_group({"a": [{"include-group": "nope"}]}, "a")


def test_readme_starts_with_the_two_commands_of_a_newcomer() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quickstart = readme.split("---", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", quickstart, re.S)
    assert len(blocks) == 2, blocks
    install, tests = blocks
    assert "pip install ." in install and "envelock compose examples/turn.json --verify" in install
    assert "[test]" not in install and "--group" not in install  # the user's first install is not the dev one
    assert "--group" in tests and "pytest" in tests and "pip>=25.1" in tests  # --group needs pip 25.1
    assert "envelock --version" in quickstart  # how to see which implementation was installed
    import envelock

    assert f"envelock {envelock.__version__} (native)" in " ".join(quickstart.split())  # what it prints, this version
    assert "not on PyPI yet" in quickstart
    assert "pip install envelock\n" not in readme and "pip install envelock`" not in readme


def test_readme_pins_no_tag_that_was_never_made() -> None:
    """A snippet that pins a tag pins the tag of this version (made at release, as the README says)."""
    import envelock

    for doc in ("README.md", "docs/cli.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        tags = set(re.findall(r"(?:@|rev: )(v\d+\.\d+\.\d+)\b", text))
        assert tags <= {f"v{envelock.__version__}"}, (doc, tags)
    assert f"v{envelock.__version__}" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_sdist_carries_what_the_tests_read() -> None:
    files = set(envelock_build.sdist_files(envelock_build.load_project(ROOT)))
    missing = [n for n in NEEDED_IN_SDIST if n not in files]
    tests = sorted(
        p.relative_to(ROOT).as_posix() for p in (ROOT / "tests").rglob("*") if p.is_file() and "__pycache__" not in p.parts
    )
    assert missing == [] and [t for t in tests if t not in files] == []


def test_negative_control_sdist_check() -> None:
    full = ["LICENSE", "README.md", "SECURITY.md", "CHANGELOG.md", ".pre-commit-hooks.yaml", "docs/**", "tests/**",
            "corpus/**", "examples/**", "fuzz/**", "scripts/**", "build_backend/**"]  # fmt: skip

    def missing(patterns: list[str]) -> list[str]:
        return [n for n in NEEDED_IN_SDIST if not any(envelock_build.glob_match(n, p) for p in patterns)]

    assert missing(full) == []
    assert missing([p for p in full if p != "corpus/**"]) == ["corpus/README.md"]
    assert missing([]) == list(NEEDED_IN_SDIST)


def test_chat_turn_example_says_which_extra_it_needs(tmp_path: Path) -> None:
    import os
    import subprocess

    fake = tmp_path / "anthropic"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('not installed (test)')\n", encoding="utf-8")
    script = str(ROOT / "examples" / "chat_turn.py")
    r = subprocess.run(
        [sys.executable, script], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(tmp_path)}, check=False
    )
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
    # Fail closed: any setting but unset or 0 requires the part; a misspelt variable is refused.
    monkeypatch.setenv("ENVELOCK_REQUIRE_TEST_PART", "yes")
    with pytest.raises(pytest.fail.Exception, match="ENVELOCK_REQUIRE_TEST_PART=yes"):
        optional_module("envelock_no_such_module", require_env="ENVELOCK_REQUIRE_TEST_PART", how="nowhere")
    monkeypatch.setenv("ENVELOCK_REQUIRE_TEST_PART", "0")
    with pytest.raises(pytest.skip.Exception):
        optional_module("envelock_no_such_module", require_env="ENVELOCK_REQUIRE_TEST_PART", how="nowhere")
    with pytest.raises(ValueError, match="not an ENVELOCK_REQUIRE_"):
        optional_module("envelock_no_such_module", require_env="ENVELOCK_REQUIRED_SHARED", how="nowhere")


def _unrequired(names: set[str], ci_script: str) -> set[str]:
    """The ``ENVELOCK_REQUIRE_*`` names that ``ci_script`` never sets to 1 (a skip under one of them
    would pass CI by skipping: an unconditional skip there)."""
    return {n for n in names if not re.search(rf"\b{n}=1\b", ci_script)}


def test_every_skip_is_required_somewhere_in_ci() -> None:
    """``skip_unless_required`` (tests/helpers/data.py) skips only where its variable is not 1. Every
    variable a test names must be set by some stage of ``.ci/run``, so no test skips there."""
    names = {
        n
        for path in (ROOT / "tests").rglob("*.py")
        for n in re.findall(r"ENVELOCK_REQUIRE_[A-Z][A-Z_]*[A-Z]", path.read_text(encoding="utf-8"))
    }
    names.discard("ENVELOCK_REQUIRE_TEST_PART")  # the helper's own test above, set by that test
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert len(names) >= 9, names  # the parts: shared, native, tokenizers, gen, realtext, scale, ...
    assert _unrequired(names, ci) == set()
    # Control: a stage that stopped requiring the native core is seen.
    assert _unrequired(names, ci.replace("ENVELOCK_REQUIRE_NATIVE=1", "ENVELOCK_REQUIRE_NATIVE=0")) == {"ENVELOCK_REQUIRE_NATIVE"}


#: The helper modules that skip for a part, and the variable that requires it.
_HELPER_REQUIRES = {"helpers.scale": "ENVELOCK_REQUIRE_SCALE", "helpers.integrations": "ENVELOCK_REQUIRE_INTEGRATIONS"}


def _stage_variables(path: Path) -> set[str]:
    """The ``ENVELOCK_REQUIRE_*`` variables under which a test file's skips become failures: the ones
    it names, and those of the skip helpers it imports."""
    text = path.read_text(encoding="utf-8")
    names = set(re.findall(r"ENVELOCK_REQUIRE_[A-Z][A-Z_]*[A-Z]", text))
    names |= {v for helper, v in _HELPER_REQUIRES.items() if re.search(rf"\b{re.escape(helper)}\b", text)}
    return names - {"ENVELOCK_REQUIRE_TEST_PART"}


def _unrun(ci_script: str) -> dict[str, set[str]]:
    """Each test file whose variables no ``pytest`` command of ``ci_script`` sets (exported, or on
    the command) while naming the file or a folder of it: the file's skips would pass CI there."""
    exported = set(re.findall(r"^export (ENVELOCK_REQUIRE_\w+)=1", ci_script, re.M))
    commands = [c for c in ci_script.replace("\\\n", " ").splitlines() if " pytest " in c]
    out: dict[str, set[str]] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if path == Path(__file__).resolve():
            continue  # this checker names the variables it looks for
        rel = path.relative_to(ROOT).as_posix()
        need = _stage_variables(path) - exported
        if not need:
            continue
        places = [rel, *(p.as_posix() for p in Path(rel).parents if p.as_posix() != ".")]
        # A path argument: the file, or a folder holding it, standing alone (``tests`` is not ``tests/x``).
        runs = [c for c in commands if any(re.search(rf"(?<![\w/.]){re.escape(p)}/?(?=\s|$)", c) for p in places)]
        if not any(need <= set(re.findall(r"(ENVELOCK_REQUIRE_\w+)=1", c)) for c in runs):
            out[rel] = need
    return out


def test_every_file_that_skips_runs_where_its_parts_are_required() -> None:
    """A file whose tests skip for an optional part runs in some stage of ``.ci/run`` that requires
    every part it names (the README stage runs everything without the extras: their files must run
    again where they are installed). Control: the integrations stage without ``ENVELOCK_REQUIRE_SCALE``
    (as it was) leaves the README blocks that need pyarrow or ray skipping in every stage."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert _unrun(ci) == {}
    before = ci.replace("ENVELOCK_REQUIRE_SCALE=1 ENVELOCK_REQUIRE_INTEGRATIONS=1", "ENVELOCK_REQUIRE_INTEGRATIONS=1")
    assert before != ci and _unrun(before) == {"tests/test_docs.py": {"ENVELOCK_REQUIRE_SCALE", "ENVELOCK_REQUIRE_INTEGRATIONS"}}
    # Control: a scale stage that stopped requiring its part leaves its three files skipping.
    unscaled = ci.replace('ENVELOCK_REQUIRE_SCALE=1 "$PY" -m pytest --hypothesis', '"$PY" -m pytest --hypothesis')
    assert set(_unrun(unscaled)) == {"tests/batch/test_columnar.py", "tests/batch/test_ray.py", "tests/cli/test_cli_rows.py"}
