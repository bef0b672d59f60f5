"""The build backend (build_backend/envelock_build): the native-or-pure decision, the one version,
and the pure wheel and sdist it writes with the standard library.

The real installs (no cargo, no network, Python 3.10-3.13) are in ``.ci/run`` (stage "pure Python");
here each rule is checked on its own, each with a broken input the rule must refuse.
"""

from __future__ import annotations

import base64
import email.parser
import hashlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path
from typing import Any

import pytest

import envelock
from envelock import escape

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "build_backend"))

import envelock_build as backend  # noqa: E402
from envelock_build import BuildError  # noqa: E402

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    from envelock_build._vendor import tomli as tomllib

#: The extras pyproject.toml declares (the wheel's Provides-Extra must be exactly these).
PROJECT_EXTRAS = tuple(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"])
NO_CARGO = (None, "cargo (the Rust toolchain) is not on PATH")
CARGO = ("cargo 1.95.0 (test)", "")


@pytest.fixture(scope="module")
def project() -> backend.Project:
    return backend.load_project(ROOT)


# ---------------------------------------------------------------------------------------------
# One version, from src/envelock/_version.py


def test_one_version_everywhere(project: backend.Project) -> None:
    cargo = tomllib.loads((ROOT / "rust" / "Cargo.toml").read_text(encoding="utf-8"))["workspace"]["package"]["version"]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project.version == envelock.__version__ == cargo
    assert "version" not in pyproject and pyproject["dynamic"] == ["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert re.search(r"^## (\S+)", changelog, re.M)[1] == envelock.__version__  # type: ignore[index]  # the newest entry
    for crate in ("envelock-core", "envelock-py"):  # the lock file follows the workspace version
        lock = (ROOT / "rust" / "Cargo.lock").read_text(encoding="utf-8")
        assert f'name = "{crate}"\nversion = "{envelock.__version__}"' in lock


def _copy_project(tmp_path: Path) -> Path:
    """The files load_project and the pure wheel read, copied."""
    root = tmp_path / "proj"
    for rel in ("pyproject.toml", "README.md", "LICENSE", "rust/Cargo.toml"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / rel, root / rel)
    shutil.copytree(ROOT / "src" / "envelock", root / "src" / "envelock", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    return root


def test_negative_control_version_mismatch_and_bad_version(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    assert backend.load_project(root).version == envelock.__version__
    cargo = root / "rust" / "Cargo.toml"
    cargo.write_text(
        cargo.read_text(encoding="utf-8").replace(f'version = "{envelock.__version__}"', 'version = "9.9.9"'), encoding="utf-8"
    )
    with pytest.raises(BuildError, match=r"version mismatch: src/envelock/_version.py says .*, rust/Cargo.toml says 9\.9\.9"):
        backend.load_project(root)
    version = root / "src" / "envelock" / "_version.py"
    for bad in ('__version__ = "v1"\n', "__version__ = VERSION\n", '__version__ = "1.0"\n__version__ = "1.1"\n', ""):
        version.write_text(bad, encoding="utf-8")
        with pytest.raises(BuildError, match=r"_version\.py"):
            backend.read_version(version)


def test_negative_control_project_keys_the_backend_does_not_write(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    pyproject = root / "pyproject.toml"
    text = pyproject.read_text(encoding="utf-8")
    pyproject.write_text(
        text.replace('name = "envelock"\n', 'name = "envelock"\nimport-names = ["envelock"]\n', 1), encoding="utf-8"
    )
    with pytest.raises(BuildError, match="does not write into the metadata: import-names"):
        backend.load_project(root)
    pyproject.write_text(text.replace('dynamic = ["version"]', 'version = "0.2.0"'), encoding="utf-8")
    with pytest.raises(BuildError, match="the version file is the one place"):
        backend.load_project(root)


# ---------------------------------------------------------------------------------------------
# Native or pure: the decision and what it says


def test_choice_follows_cargo_and_the_switch() -> None:
    assert backend.choose(environ={}, cargo=CARGO)[0] == "native"
    mode, line = backend.choose(environ={}, cargo=NO_CARGO)
    assert mode == "python" and "nothing downloaded" in line and "not on PATH" in line and "\n" not in line
    assert backend.choose(environ={"ENVELOCK_BUILD": "python"}, cargo=CARGO)[0] == "python"
    assert backend.choose(environ={"ENVELOCK_BUILD": "native"}, cargo=CARGO)[0] == "native"
    assert backend.choose(environ={"ENVELOCK_BUILD": "auto"}, cargo=NO_CARGO)[0] == "python"
    # the config setting wins over the environment variable
    assert backend.choose({"envelock-build": "python"}, environ={"ENVELOCK_BUILD": "native"}, cargo=CARGO)[0] == "python"
    assert backend.choose({"envelock-build": "native"}, environ={"ENVELOCK_BUILD": "python"}, cargo=CARGO)[0] == "native"


def test_negative_control_native_without_cargo_and_unknown_modes() -> None:
    with pytest.raises(
        BuildError, match=r"^ENVELOCK_BUILD=native, but cargo \(the Rust toolchain\) is not on PATH: install Rust"
    ):
        backend.choose(environ={"ENVELOCK_BUILD": "native"}, cargo=NO_CARGO)
    with pytest.raises(BuildError, match=r"^envelock-build=native, but"):
        backend.choose({"envelock-build": "native"}, environ={}, cargo=NO_CARGO)
    for bad in ("rust", "pure", "1"):
        with pytest.raises(BuildError, match="expected one of auto, native, python"):
            backend.choose(environ={"ENVELOCK_BUILD": bad}, cargo=CARGO)
    with pytest.raises(BuildError, match="expected one of"):
        backend.choose({"envelock-build": ["native"]}, environ={}, cargo=CARGO)


@pytest.mark.skipif(os.name == "nt", reason="a shell script stands in for cargo")
def test_a_cargo_that_does_not_run_counts_as_absent(tmp_path: Path) -> None:
    fake = tmp_path / "cargo"
    fake.write_text("#!/bin/sh\necho 'error: rustup could not choose a version of cargo to run' >&2\nexit 1\n", encoding="utf-8")
    fake.chmod(0o755)
    version, why = backend.find_cargo(which=lambda _: str(fake))
    assert version is None and "rustup could not choose" in why
    assert backend.find_cargo(which=lambda _: None) == NO_CARGO
    fine = tmp_path / "cargo-ok"
    fine.write_text("#!/bin/sh\necho 'cargo 1.99.0 (fake)'\n", encoding="utf-8")
    fine.chmod(0o755)
    assert backend.find_cargo(which=lambda _: str(fine)) == ("cargo 1.99.0 (fake)", "")


def test_hooks_ask_for_maturin_only_for_the_native_build(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("ENVELOCK_BUILD", "python")
    assert backend.get_requires_for_build_wheel() == [] == backend.get_requires_for_build_editable()
    assert backend.get_requires_for_build_sdist() == []
    monkeypatch.setattr(backend, "find_cargo", lambda: CARGO)
    monkeypatch.setenv("ENVELOCK_BUILD", "auto")
    assert backend.get_requires_for_build_wheel() == [backend.MATURIN_REQUIREMENT]
    monkeypatch.setattr(backend, "find_cargo", lambda: NO_CARGO)
    assert backend.get_requires_for_build_wheel() == []


def test_negative_control_forced_native_without_cargo_is_one_line_and_exit_1(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(backend, "find_cargo", lambda: NO_CARGO)
    monkeypatch.setenv("ENVELOCK_BUILD", "native")
    with pytest.raises(SystemExit) as exc:
        backend.get_requires_for_build_wheel()
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("envelock: ENVELOCK_BUILD=native, but cargo") and "Traceback" not in err


# ---------------------------------------------------------------------------------------------
# The pure wheel


def _wheel(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def _metadata(text: str) -> Any:
    return email.parser.Parser().parsestr(text)


def check_record(files: dict[str, bytes]) -> list[str]:
    """Problems of a wheel's RECORD: a file missing from it, a wrong hash or size."""
    record_name = next(n for n in files if n.endswith(".dist-info/RECORD"))
    rows = [line.split(",") for line in files[record_name].decode("utf-8").splitlines()]
    listed = {name: (h, size) for name, h, size in rows}
    problems = [f"not in RECORD: {n}" for n in files if n not in listed]
    for name, (h, size) in listed.items():
        if name == record_name:
            continue
        data = files.get(name)
        want = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data or b"").digest()).rstrip(b"=").decode()
        if data is None or h != want or int(size) != len(data):
            problems.append(f"bad RECORD row: {name}")
    return problems


def test_pure_wheel_carries_the_package_and_honest_metadata(project: backend.Project, tmp_path: Path) -> None:
    name = backend.write_wheel(project, tmp_path)
    assert name == f"envelock-{envelock.__version__}-py3-none-any.whl"
    files = _wheel(tmp_path / name)
    dist = f"envelock-{envelock.__version__}.dist-info"
    package = {n for n in files if not n.startswith(dist)}
    on_disk = {
        p.relative_to(ROOT / "src").as_posix()
        for p in (ROOT / "src" / "envelock").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }
    assert package == {p for p in on_disk if not p.endswith(".so")}
    assert {"envelock/py.typed", "envelock/__main__.py", "envelock/_version.py", "envelock/escape.py"} <= package
    assert not any(n.endswith((".so", ".pyd", ".pyc")) for n in files)
    assert check_record(files) == []
    wheel = _metadata(files[f"{dist}/WHEEL"].decode())
    assert wheel["Root-Is-Purelib"] == "true" and wheel.get_all("Tag") == ["py3-none-any"]
    assert files[f"{dist}/entry_points.txt"].decode() == "[console_scripts]\nenvelock = envelock.cli:main\n\n"
    assert files[f"{dist}/licenses/LICENSE"] == (ROOT / "LICENSE").read_bytes()
    meta = _metadata(files[f"{dist}/METADATA"].decode())
    assert meta["Metadata-Version"] == "2.4" and meta["Name"] == "envelock" and meta["Version"] == envelock.__version__
    assert meta["License-Expression"] == "Apache-2.0" and meta.get_all("License-File") == ["LICENSE"]
    assert meta["Requires-Python"] == ">=3.10"
    requires = meta.get_all("Requires-Dist")
    assert [r for r in requires if "extra ==" not in r] == ["lxml>=6.1,<7"]
    assert set(meta.get_all("Provides-Extra")) == set(PROJECT_EXTRAS)
    assert 'pathspec>=0.12; extra == "gitignore"' in requires
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert urls["Report a vulnerability"] == "https://github.com/envelock/envelock/security/advisories/new"
    assert meta["Description-Content-Type"] == "text/markdown; charset=UTF-8; variant=GFM"  # as maturin writes it
    assert meta.get_payload() == (ROOT / "README.md").read_text(encoding="utf-8")
    for v in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {v}" in meta.get_all("Classifier")


def test_pure_wheel_is_reproducible(project: backend.Project, tmp_path: Path) -> None:
    a = tmp_path / "a"
    b = tmp_path / "b"
    assert (a / backend.write_wheel(project, a)).read_bytes() == (b / backend.write_wheel(project, b)).read_bytes()


def test_editable_pure_wheel_points_at_the_source(project: backend.Project, tmp_path: Path) -> None:
    files = _wheel(tmp_path / backend.write_wheel(project, tmp_path, editable=True))
    pth = [n for n in files if n.endswith(".pth")]
    assert pth == ["_envelock_editable.pth"]
    assert files[pth[0]].decode().strip() == str((ROOT / "src").resolve())
    assert not any(n.startswith("envelock/") for n in files) and check_record(files) == []


def test_negative_control_unknown_files_stop_the_pure_build(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    (root / "src" / "envelock" / "_native.abi3.so").write_bytes(b"\x7fELF")  # an earlier native build: left out
    project = backend.load_project(root)
    assert "envelock/_native.abi3.so" not in _wheel(tmp_path / backend.write_wheel(project, tmp_path))
    (root / "src" / "envelock" / "table.json").write_text("{}", encoding="utf-8")
    with pytest.raises(BuildError, match=r"src/envelock/table\.json: neither packed nor excluded"):
        backend.write_wheel(project, tmp_path / "out")


@pytest.mark.skipif(os.name == "nt", reason="symbolic links")
def test_negative_control_symbolic_links_stop_the_build(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    project = backend.load_project(root)
    (root / "src" / "envelock" / "linked").symlink_to(root / "src" / "envelock" / "scan", target_is_directory=True)
    with pytest.raises(BuildError, match="envelock/linked is a symbolic link"):
        backend.package_files(project)
    (root / "src" / "envelock" / "linked").unlink()
    (root / "src" / "envelock" / "alias.py").symlink_to(root / "src" / "envelock" / "escape.py")
    with pytest.raises(BuildError, match=r"envelock/alias\.py is a symbolic link"):
        backend.package_files(project)


def test_metadata_refuses_what_it_cannot_say(tmp_path: Path) -> None:
    root = _copy_project(tmp_path)
    project = backend.load_project(root)
    broken = dict(project.project, description="two\nlines")
    with pytest.raises(BuildError, match="description: expected one line"):
        backend.core_metadata(backend.Project(root, broken, project.config, project.version))
    broken = dict(project.project, readme="README.docx")
    with pytest.raises(BuildError, match="unknown content type"):
        backend.core_metadata(backend.Project(root, broken, project.config, project.version))
    broken = dict(project.project, **{"license-files": ["COPYING*"]})
    with pytest.raises(BuildError, match="matches no file"):
        backend.core_metadata(backend.Project(root, broken, project.config, project.version))
    extra = dict(project.project, **{"optional-dependencies": {"Fuzz_Tools": ["atheris>=2.3; python_version < '3.15'"]}})
    meta = _metadata(backend.core_metadata(backend.Project(root, extra, project.config, project.version)))
    assert meta.get_all("Provides-Extra") == ["fuzz-tools"]
    assert "atheris>=2.3; (python_version < '3.15') and extra == \"fuzz-tools\"" in meta.get_all("Requires-Dist")


# ---------------------------------------------------------------------------------------------
# The sdist


def test_sdist_carries_the_rust_sources_the_backend_and_no_build_output(project: backend.Project, tmp_path: Path) -> None:
    name = backend.write_sdist(project, tmp_path)
    base = f"envelock-{envelock.__version__}"
    assert name == f"{base}.tar.gz"
    with tarfile.open(tmp_path / name) as tar:
        members = {m.name.removeprefix(base + "/"): m for m in tar.getmembers()}
        pkg_info = tar.extractfile(members["PKG-INFO"]).read().decode()  # type: ignore[union-attr]
    assert all(m.isfile() and m.name.startswith(base + "/") for m in members.values())
    assert pkg_info == backend.core_metadata(project)
    names = set(members)
    for need in ("pyproject.toml", "README.md", "LICENSE", "src/envelock/_version.py", "src/envelock/py.typed",
                 "build_backend/envelock_build/__init__.py", "build_backend/envelock_build/_vendor/tomli/_parser.py",
                 "rust/Cargo.toml", "rust/Cargo.lock", "rust/envelock-core/Cargo.toml", "rust/envelock-py/src/lib.rs"):  # fmt: skip
        assert need in names, need
    assert not any(
        n.startswith(("rust/target/", "rust/fuzz/", ".git/", ".venv/")) or "__pycache__" in n or n.endswith(".so") for n in names
    )
    assert names - {"PKG-INFO"} == set(backend.sdist_files(project))


def test_negative_control_sdist_include_that_matches_nothing(tmp_path: Path) -> None:
    config = dict(backend.load_project(ROOT).config)
    config["sdist-include"] = [*config["sdist-include"], "doc/**"]
    project = backend.Project(ROOT, backend.load_project(ROOT).project, config, envelock.__version__)
    with pytest.raises(BuildError, match=r"sdist-include 'doc/\*\*' matches no file"):
        backend.sdist_files(project)


def test_glob_match() -> None:
    assert backend.glob_match("docs/cli.md", "docs/**") and backend.glob_match("a/b/__pycache__/x.pyc", "**/__pycache__/**")
    assert backend.glob_match("envelock/py.typed", "envelock/**/*.typed") and backend.glob_match("x.so", "**/*.so")
    assert not backend.glob_match("docs/cli.md", "doc/**") and not backend.glob_match("a/b", "*")
    assert not backend.glob_match("envelock/sub/x.py", "envelock/*.py") and backend.glob_match(
        "envelock/sub/x.py", "envelock/**/*.py"
    )


# ---------------------------------------------------------------------------------------------
# The TOML the 3.10 build reads is the TOML 3.11+ reads


def test_vendored_tomli_reads_the_project_files_as_tomllib_does() -> None:
    from envelock_build._vendor import tomli

    for rel in ("pyproject.toml", "rust/Cargo.toml"):
        text = (ROOT / rel).read_text(encoding="utf-8")
        assert tomli.loads(text) == tomllib.loads(text)


# ---------------------------------------------------------------------------------------------
# What the user sees at run time


def test_version_names_the_implementation() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "envelock", "--version"], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"envelock {envelock.__version__} ({escape.implementation()})"
    env = {**os.environ, "ENVELOCK_IMPL": "reference"}
    ref = subprocess.run(
        [sys.executable, "-m", "envelock", "--version"], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert ref.stdout.strip() == f"envelock {envelock.__version__} (reference)"


def test_negative_control_record_check(project: backend.Project, tmp_path: Path) -> None:
    files = _wheel(tmp_path / backend.write_wheel(project, tmp_path))
    assert check_record(files) == []
    tampered = dict(files, **{"envelock/escape.py": files["envelock/escape.py"] + b"\n"})
    assert check_record(tampered) == ["bad RECORD row: envelock/escape.py"]
    assert check_record(dict(files, **{"envelock/extra.py": b""})) == ["not in RECORD: envelock/extra.py"]


# ---------------------------------------------------------------------------------------------
# scripts/check_wheels.py: the native and the pure wheel agree (run by .ci/run on real wheels)


def fake_elf(sections: list[str]) -> bytes:
    """A 64-bit little-endian ELF file with these (empty) sections and a section-name table."""
    names = b"\0" + b"".join(s.encode() + b"\0" for s in sections) + b".shstrtab\0"
    offsets = [names.index(b"\0" + s.encode() + b"\0") + 1 for s in sections]
    shnum = len(sections) + 2
    shoff = 64 + len(names)
    head = (
        b"\x7fELF"
        + bytes([2, 1, 1])
        + bytes(9)
        + struct.pack("<HHIQQQIHHHHHH", 3, 62, 1, 0, 0, shoff, 0, 64, 0, 0, 64, shnum, shnum - 1)
    )
    table = bytes(64) + b"".join(struct.pack("<IIQQQQIIQQ", o, 1, 0, 0, 0, 0, 0, 0, 1, 0) for o in offsets)
    table += struct.pack("<IIQQQQIIQQ", len(names) - len(b".shstrtab\0"), 3, 0, 0, 64, len(names), 0, 0, 1, 0)
    return head + names + table


def _native_from_pure(
    pure: Path, out: Path, *, tag: str, so: bytes, drop: str = "", metadata: tuple[str, str] = ("", "")
) -> Path:
    files = _wheel(pure)
    dist = f"envelock-{envelock.__version__}.dist-info"
    files[f"{dist}/WHEEL"] = (
        files[f"{dist}/WHEEL"].replace(b"Tag: py3-none-any", f"Tag: {tag}".encode()).replace(b"true", b"false")
    )
    files["envelock/_native.abi3.so"] = so
    files.pop(drop, None)
    if metadata[0]:
        files[f"{dist}/METADATA"] = files[f"{dist}/METADATA"].replace(metadata[0].encode(), metadata[1].encode(), 1)
    with zipfile.ZipFile(out, "w") as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return out


def test_check_wheels_and_its_negative_controls(project: backend.Project, tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    import check_wheels

    pure = tmp_path / backend.write_wheel(project, tmp_path)
    for name in (
        "envelock/_native.abi3.so",
        "envelock/_native.pyd",
        "envelock/_native.cpython-310-darwin.so",
    ):  # Linux, Windows, ...
        assert check_wheels.NATIVE_RE.fullmatch(name), name
    assert not check_wheels.NATIVE_RE.fullmatch("envelock/_nativeimpl.py") and not check_wheels.NATIVE_RE.fullmatch(
        "envelock/x.so"
    )
    stripped = fake_elf([".dynsym", ".text", ".rodata"])
    assert check_wheels.elf_sections(stripped) == ["", ".dynsym", ".text", ".rodata", ".shstrtab"]
    good = _native_from_pure(pure, tmp_path / "good.whl", tag="cp310-abi3-manylinux_2_17_x86_64", so=stripped)
    assert check_wheels.check(good, pure) == []
    two = "cp310-abi3-manylinux2014_x86_64\nTag: cp310-abi3-manylinux_2_17_x86_64"  # what manylinux2014 containers write
    assert check_wheels.check(_native_from_pure(pure, tmp_path / "two.whl", tag=two, so=stripped), pure) == []
    cases = {
        "linux.whl": ({"tag": "cp310-abi3-linux_x86_64", "so": stripped}, "not manylinux"),
        "half.whl": ({"tag": "cp310-abi3-manylinux2014_x86_64\nTag: cp310-abi3-linux_x86_64", "so": stripped}, "not manylinux"),
        "cp311.whl": ({"tag": "cp311-cp311-manylinux_2_17_x86_64", "so": stripped}, "expected cp310-abi3 tags only"),
        "symtab.whl": (
            {"tag": "cp310-abi3-manylinux_2_17_x86_64", "so": fake_elf([".text", ".symtab", ".debug_info"])},
            "not stripped",
        ),
        "missing.whl": (
            {"tag": "cp310-abi3-manylinux_2_17_x86_64", "so": stripped, "drop": "envelock/escape.py"},
            "only in the pure wheel: envelock/escape.py",
        ),
        "meta.whl": (
            {
                "tag": "cp310-abi3-manylinux_2_17_x86_64",
                "so": stripped,
                "metadata": ("Requires-Dist: lxml>=6.1,<7", "Requires-Dist: lxml"),
            },
            "METADATA Requires-Dist",
        ),
    }
    for name, (kwargs, expected) in cases.items():
        problems = check_wheels.check(_native_from_pure(pure, tmp_path / name, **kwargs), pure)  # type: ignore[arg-type]
        assert any(expected in p for p in problems), (name, problems)
