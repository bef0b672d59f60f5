"""envelock's PEP 517 build backend (in the tree: ``backend-path = ["build_backend"]`` in pyproject.toml).

One decision, taken before anything is installed: build the native core or not.

* ``cargo`` on PATH (and it runs): every wheel hook is delegated to maturin, which
  ``get_requires_for_build_*`` asks the frontend to install; maturin builds ``envelock._native``
  from ``rust/`` and packs ``src/`` (configuration: ``[tool.maturin]``).
* no ``cargo``: a pure-Python wheel (``py3-none-any``) is written here, with the standard library
  only, so that a machine with neither network nor build dependencies installs envelock (the defang
  then runs in Python: same output, slower). Nothing is downloaded.
* ``ENVELOCK_BUILD=native|python|auto``, or the config setting ``envelock-build`` (``pip install .
  -C envelock-build=python``; it wins over the variable), forces a choice. ``native`` without a
  working cargo is a one-line error, never a toolchain download.

The choice is said on one line of stderr when a wheel is built (pip shows a backend's output with
``-v`` or when the build fails). The sdist is always written here (``tarfile``): it carries the Rust
sources and this backend, so installing it takes the same decision on the installing machine.

Everything the pure wheel and the sdist say comes from ``[project]`` and ``[tool.envelock-build]``
in pyproject.toml, and the version from ``src/envelock/_version.py``, which the Cargo workspace
version must equal (checked on every build). What this backend does not understand (a
``[project]`` key, a file of the package that no pattern names) is refused, not skipped.
"""

from __future__ import annotations

import ast
import base64
import gzip
import hashlib
import importlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    from ._vendor import tomli as tomllib

__all__ = [
    "ENV_VAR",
    "MATURIN_REQUIREMENT",
    "SETTING",
    "BuildError",
    "Project",
    "build_editable",
    "build_sdist",
    "build_wheel",
    "choose",
    "core_metadata",
    "get_requires_for_build_editable",
    "get_requires_for_build_sdist",
    "get_requires_for_build_wheel",
    "glob_match",
    "load_project",
    "sdist_files",
    "write_sdist",
    "write_wheel",
]

ENV_VAR = "ENVELOCK_BUILD"
SETTING = "envelock-build"
MODES = ("auto", "native", "python")
#: What the native build asks the frontend for (the same range the project has always built with).
MATURIN_REQUIREMENT = "maturin>=1.7,<2"
#: The ``[project]`` keys this backend turns into core metadata; any other key is refused.
PROJECT_KEYS = frozenset(
    {
        "name", "dynamic", "description", "readme", "requires-python", "license", "license-files", "authors",
        "maintainers", "keywords", "classifiers", "urls", "dependencies", "optional-dependencies", "scripts",
        "gui-scripts", "entry-points",
    }
)  # fmt: skip
CONFIG_KEYS = frozenset({"package", "source", "version-file", "cargo-workspace", "package-include", "package-exclude",
                         "sdist-include", "sdist-exclude"})  # fmt: skip
#: Zip timestamps cannot predate 1980; SOURCE_DATE_EPOCH (reproducible builds) moves it later.
ZIP_EPOCH = 315532800
VERSION_RE = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")


class BuildError(Exception):
    """A build that must stop; the message is one line, for a person."""


def _fail(message: str) -> NoReturn:
    """Stop the hook with one line on stderr and exit status 1 (no traceback for the frontend to show)."""
    print(f"envelock: {message}", file=sys.stderr, flush=True)
    raise SystemExit(1)


def _say(message: str) -> None:
    print(f"envelock: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# The decision: native or pure Python


def find_cargo(which: Any = shutil.which) -> tuple[str | None, str]:
    """(cargo's version line, or None; why not). A cargo that is on PATH but does not run (a rustup
    proxy with no toolchain installed) counts as absent."""
    path = which("cargo")
    if path is None:
        return None, "cargo (the Rust toolchain) is not on PATH"
    try:
        r = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=120, check=False)  # noqa: S603 - PATH's cargo, fixed arguments
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{path} does not run ({exc})"
    if r.returncode != 0 or not r.stdout.startswith("cargo "):
        first = (r.stderr or r.stdout).strip().splitlines()[:1]
        return None, f"`{path} --version` failed ({first[0] if first else f'exit status {r.returncode}'})"
    return r.stdout.strip(), ""


def requested_mode(config_settings: Mapping[str, Any] | None, environ: Mapping[str, str]) -> tuple[str, str]:
    """(mode, where it was asked for): the config setting, else the environment variable, else auto."""
    value = (config_settings or {}).get(SETTING)
    source = f"{SETTING}={value}"
    if value is None:
        value = environ.get(ENV_VAR, "") or "auto"
        source = f"{ENV_VAR}={value}"
    if not isinstance(value, str) or value.strip().lower() not in MODES:
        raise BuildError(f"{source!s}: expected one of {', '.join(MODES)}")
    return value.strip().lower(), source


def choose(
    config_settings: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    cargo: tuple[str | None, str] | None = None,
) -> tuple[str, str]:
    """("native" or "python", the one line that says so). Raises :class:`BuildError` for an unknown
    mode and for ``native`` without a working cargo."""
    mode, source = requested_mode(config_settings, os.environ if environ is None else environ)
    if mode == "python":
        return "python", f"{source}: building the pure-Python package (no native core)"
    version, why = find_cargo() if cargo is None else cargo
    if version is None:
        if mode == "native":
            raise BuildError(
                f"{source}, but {why}: install Rust (https://rustup.rs) or build the pure-Python package with {ENV_VAR}=python"
            )
        return "python", (
            f"{why}: building the pure-Python package, nothing downloaded (same output, slower defang); "
            f"for the native core install Rust (https://rustup.rs) and reinstall, or set {ENV_VAR}=native to require it"
        )
    how = f"{source}: " if mode == "native" else ""
    return "native", f"{how}building the native core with {version} (maturin); {ENV_VAR}=python builds the pure-Python package"


def _decide(config_settings: Mapping[str, Any] | None) -> tuple[str, str]:
    try:
        return choose(config_settings)
    except BuildError as exc:
        _fail(str(exc))


# ---------------------------------------------------------------------------------------------
# The project: pyproject.toml, the version, and the files


def glob_match(path: str, pattern: str) -> bool:
    """Does the ``/``-separated relative ``path`` match ``pattern``? ``**/`` is any number of
    directories (none included), a final ``**`` anything, ``*`` anything within one name, ``?`` one
    character; everything else is literal."""
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


def _strings(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BuildError(f"{where}: expected a list of strings")
    return list(value)


@dataclass(frozen=True)
class Project:
    """What pyproject.toml and the version file say, checked."""

    root: Path
    project: dict[str, Any]
    config: dict[str, Any]
    version: str

    @property
    def name(self) -> str:
        return str(self.project["name"])

    @property
    def dist_name(self) -> str:
        """The name as it appears in file names (PEP 427 / PEP 625)."""
        return re.sub(r"[-_.]+", "_", self.name).lower()

    @property
    def package_dir(self) -> Path:
        return self.root / str(self.config["source"]) / str(self.config["package"])


def read_version(path: Path) -> str:
    """``__version__ = "X"`` of a version file (read, never imported)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise BuildError(f"cannot read the version from {path}: {exc}") from None
    found = [
        node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and [t.id for t in node.targets if isinstance(t, ast.Name)] == ["__version__"]
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    ]
    if len(found) != 1:
        raise BuildError(f'{path}: expected exactly one `__version__ = "..."` (found {len(found)})')
    if not VERSION_RE.fullmatch(found[0]):
        raise BuildError(f"{path}: {found[0]!r} is not a canonical version (N.N[.N][aN|bN|rcN][.postN][.devN])")
    return found[0]


def cargo_workspace_version(path: Path) -> str:
    """``[workspace.package] version`` of a Cargo workspace manifest."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        return str(data["workspace"]["package"]["version"])
    except (OSError, KeyError, TypeError, tomllib.TOMLDecodeError) as exc:
        raise BuildError(f"cannot read [workspace.package] version from {path}: {exc!r}") from None


def load_project(root: Path) -> Project:
    """Read and check pyproject.toml, the version file and the Cargo workspace version."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise BuildError(f"cannot read {root / 'pyproject.toml'}: {exc}") from None
    project = data.get("project")
    config = data.get("tool", {}).get("envelock-build")
    if not isinstance(project, dict) or not isinstance(config, dict):
        raise BuildError("pyproject.toml needs a [project] and a [tool.envelock-build] table")
    if project.get("dynamic") != ["version"] or "version" in project:
        raise BuildError('[project] must have dynamic = ["version"] and no version: the version file is the one place')
    unknown = sorted(set(project) - PROJECT_KEYS)
    if unknown:
        raise BuildError(f"[project] keys this backend does not write into the metadata: {', '.join(unknown)}")
    unknown = sorted(set(config) - CONFIG_KEYS)
    missing = sorted(CONFIG_KEYS - set(config))
    if unknown or missing:
        raise BuildError(f"[tool.envelock-build]: unknown keys {unknown}, missing keys {missing}")
    for key in ("package-include", "package-exclude", "sdist-include", "sdist-exclude"):
        _strings(config[key], f"[tool.envelock-build] {key}")
    version = read_version(root / str(config["version-file"]))
    cargo = cargo_workspace_version(root / str(config["cargo-workspace"]))
    if cargo != version:
        raise BuildError(
            f"version mismatch: {config['version-file']} says {version}, "
            f"{config['cargo-workspace']} says {cargo}; make them equal"
        )
    return Project(root=root, project=project, config=config, version=version)


def _walk(root: Path, base: Path, prune: Any) -> Iterator[str]:
    """Relative ``/`` paths of the files under ``base`` (sorted), pruning directories ``prune(rel)`` names."""
    for dirpath, dirnames, filenames in os.walk(base):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            rel = (here / d).relative_to(root).as_posix()
            if prune(rel):
                continue
            if (here / d).is_symlink():  # os.walk would not enter it: refuse rather than skip it
                raise BuildError(f"{rel} is a symbolic link: the build packs regular files only")
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            path = here / f
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                raise BuildError(f"{rel} is a symbolic link: the build packs regular files only")
            yield rel


def _dir_excluded(rel_dir: str, excludes: Sequence[str]) -> bool:
    return any(p.endswith("/**") and glob_match(rel_dir + "/x", p) for p in excludes)


def package_files(project: Project) -> list[str]:
    """The package's files, relative to the source directory (``envelock/...``). A file that neither
    ``package-include`` nor ``package-exclude`` names stops the build."""
    source = project.root / str(project.config["source"])
    include = project.config["package-include"]
    exclude = project.config["package-exclude"]
    if not project.package_dir.is_dir():
        raise BuildError(f"no package directory {project.package_dir}")
    out: list[str] = []
    for rel in _walk(source, project.package_dir, lambda d: _dir_excluded(d, exclude)):
        if any(glob_match(rel, p) for p in exclude):
            continue
        if not any(glob_match(rel, p) for p in include):
            raise BuildError(
                f"{project.config['source']}/{rel}: neither packed nor excluded; name it in [tool.envelock-build] "
                "package-include or package-exclude"
            )
        out.append(rel)
    if f"{project.config['package']}/__init__.py" not in out:
        raise BuildError(f"{project.package_dir}/__init__.py is not packed")
    return out


def _literal_prefix(pattern: str) -> str:
    m = re.match(r"[^*?]*", pattern)
    return m.group(0) if m else ""


def sdist_files(project: Project) -> list[str]:
    """Every file the sdist carries, relative to the root, sorted: pyproject.toml, the readme, the
    license files, the version file and the package (always), and what ``sdist-include`` names less
    ``sdist-exclude``. An include pattern that matches nothing stops the build."""
    root = project.root
    include = list(project.config["sdist-include"])
    exclude = list(project.config["sdist-exclude"])
    prefixes = [_literal_prefix(p) for p in include]

    def prune(rel: str) -> bool:
        if _dir_excluded(rel, exclude):
            return True
        d = rel + "/"
        return not any(p.startswith(d) or d.startswith(p) for p in prefixes)

    found = sorted(
        rel
        for rel in _walk(root, root, prune)
        if any(glob_match(rel, p) for p in include) and not any(glob_match(rel, p) for p in exclude)
    )
    for p in include:
        if not any(glob_match(rel, p) for rel in found):
            raise BuildError(f"[tool.envelock-build] sdist-include {p!r} matches no file")
    source = str(project.config["source"])
    readme = readme_and_type(project)[2]
    always = {"pyproject.toml", *([readme] if readme else []), *license_files(project), str(project.config["version-file"])}
    always |= {f"{source}/{rel}" for rel in package_files(project)}
    return sorted(set(found) | always)


def readme_and_type(project: Project) -> tuple[str, str, str]:
    """(text, content type, path) of ``readme``, or ("", "", "") without one."""
    readme = project.project.get("readme")
    if readme is None:
        return "", "", ""
    types = {
        ".md": "text/markdown; charset=UTF-8; variant=GFM",
        ".rst": "text/x-rst; charset=UTF-8",
        ".txt": "text/plain; charset=UTF-8",
    }
    if isinstance(readme, str):
        path, ctype = readme, types.get(Path(readme).suffix.lower())
    elif isinstance(readme, dict) and set(readme) <= {"file", "content-type"} and "file" in readme:
        path, ctype = str(readme["file"]), readme.get("content-type")  # as given: the author's charset
    else:
        raise BuildError("[project] readme: expected a file name or {file, content-type}")
    if not ctype:
        raise BuildError(f"[project] readme {path!r}: unknown content type")
    try:
        text = (project.root / path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BuildError(f"cannot read the readme {path}: {exc}") from None
    return text, str(ctype), path


def license_files(project: Project) -> list[str]:
    out: list[str] = []
    for pattern in _strings(project.project.get("license-files", []), "[project] license-files"):
        matched = sorted(p.relative_to(project.root).as_posix() for p in project.root.glob(pattern) if p.is_file())
        if not matched:
            raise BuildError(f"[project] license-files {pattern!r} matches no file")
        out.extend(m for m in matched if m not in out)
    return out


# ---------------------------------------------------------------------------------------------
# Core metadata (METADATA / PKG-INFO), version 2.4


def _one_line(value: Any, where: str) -> str:
    if not isinstance(value, str) or "\n" in value or "\r" in value:
        raise BuildError(f"[project] {where}: expected one line of text")
    return value


def _people(value: Any, where: str) -> tuple[list[str], list[str]]:
    """(names, "Name <email>" entries) of ``authors`` / ``maintainers``."""
    names: list[str] = []
    emails: list[str] = []
    if not isinstance(value, list):
        raise BuildError(f"[project] {where}: expected a list of tables")
    for person in value:
        if not isinstance(person, dict) or not person or set(person) - {"name", "email"}:
            raise BuildError(f"[project] {where}: each entry has a name, an email or both")
        name = _one_line(person.get("name", ""), where)
        if "email" in person:
            email = _one_line(person["email"], where)
            emails.append(f"{name} <{email}>" if name else email)
        else:
            names.append(name)
    return names, emails


def _with_extra(requirement: str, extra: str) -> str:
    req, sep, marker = requirement.partition(";")
    if sep:
        return f'{req.strip()}; ({marker.strip()}) and extra == "{extra}"'
    return f'{req.strip()}; extra == "{extra}"'


def core_metadata(project: Project) -> str:
    """The METADATA (and PKG-INFO) text of the project."""
    p = project.project
    fields: list[tuple[str, str]] = [
        ("Metadata-Version", "2.4"),
        ("Name", _one_line(p["name"], "name")),
        ("Version", project.version),
    ]
    if "description" in p:
        fields.append(("Summary", _one_line(p["description"], "description")))
    if "keywords" in p:
        fields.append(("Keywords", ",".join(_one_line(k, "keywords") for k in _strings(p["keywords"], "[project] keywords"))))
    for key, name_field, email_field in (
        ("authors", "Author", "Author-email"),
        ("maintainers", "Maintainer", "Maintainer-email"),
    ):
        if key in p:
            names, emails = _people(p[key], key)
            if names:
                fields.append((name_field, ", ".join(names)))
            if emails:
                fields.append((email_field, ", ".join(emails)))
    if "license" in p:
        fields.append(("License-Expression", _one_line(p["license"], "license (an SPDX expression)")))
    fields.extend(("License-File", f) for f in license_files(project))
    fields.extend(
        ("Classifier", _one_line(c, "classifiers")) for c in _strings(p.get("classifiers", []), "[project] classifiers")
    )
    if "requires-python" in p:
        fields.append(("Requires-Python", _one_line(p["requires-python"], "requires-python")))
    fields.extend(
        ("Requires-Dist", _one_line(d, "dependencies")) for d in _strings(p.get("dependencies", []), "[project] dependencies")
    )
    extras = p.get("optional-dependencies", {})
    if not isinstance(extras, dict):
        raise BuildError("[project] optional-dependencies: expected a table")
    for extra, reqs in extras.items():
        norm = re.sub(r"[-_.]+", "-", extra).lower()
        fields.append(("Provides-Extra", norm))
        fields.extend(
            ("Requires-Dist", _with_extra(_one_line(r, f"optional-dependencies.{extra}"), norm)) for r in _strings(reqs, extra)
        )
    urls = p.get("urls", {})
    if not isinstance(urls, dict):
        raise BuildError("[project] urls: expected a table")
    fields.extend(("Project-URL", f"{_one_line(label, 'urls')}, {_one_line(url, 'urls')}") for label, url in urls.items())
    text, ctype, _ = readme_and_type(project)
    if ctype:
        fields.append(("Description-Content-Type", ctype))
    head = "".join(f"{k}: {v}\n" for k, v in fields)
    return head + ("\n" + text if text else "")


def entry_points(project: Project) -> str:
    """entry_points.txt: ``scripts``, ``gui-scripts`` and ``entry-points`` groups."""
    groups: dict[str, dict[str, str]] = {}
    for key, group in (("scripts", "console_scripts"), ("gui-scripts", "gui_scripts")):
        if key in project.project:
            groups[group] = dict(project.project[key])
    for group, table in project.project.get("entry-points", {}).items():
        if group in ("console_scripts", "gui_scripts"):
            raise BuildError(f"[project.entry-points.{group}]: use [project.scripts] / [project.gui-scripts]")
        groups[group] = dict(table)
    return "".join(f"[{g}]\n" + "".join(f"{k} = {v}\n" for k, v in table.items()) + "\n" for g, table in groups.items())


# ---------------------------------------------------------------------------------------------
# Writing the pure wheel and the sdist


def _epoch() -> int:
    try:
        return max(ZIP_EPOCH, int(os.environ.get("SOURCE_DATE_EPOCH", ZIP_EPOCH)))
    except ValueError:
        raise BuildError(f"SOURCE_DATE_EPOCH={os.environ['SOURCE_DATE_EPOCH']!r} is not an integer") from None


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def _stale_native(project: Project) -> list[str]:
    return sorted(p.name for p in project.package_dir.glob("_native*") if p.suffix in (".so", ".pyd", ".dylib"))


def write_wheel(project: Project, wheel_directory: Path, *, editable: bool = False) -> str:
    """Write the pure-Python wheel (``py3-none-any``; editable: a ``.pth`` naming the source
    directory instead of the files) into ``wheel_directory``; return its file name."""
    tag = "py3-none-any"
    dist_info = f"{project.dist_name}-{project.version}.dist-info"
    source = project.root / str(project.config["source"])
    members: list[tuple[str, bytes]] = []
    if editable:
        members.append((f"_{project.dist_name}_editable.pth", (str(source.resolve()) + "\n").encode("utf-8")))
    else:
        members.extend((rel, (source / rel).read_bytes()) for rel in package_files(project))
    members.append((f"{dist_info}/METADATA", core_metadata(project).encode("utf-8")))
    wheel = f"Wheel-Version: 1.0\nGenerator: envelock_build ({project.version})\nRoot-Is-Purelib: true\nTag: {tag}\n"
    members.append((f"{dist_info}/WHEEL", wheel.encode("utf-8")))
    eps = entry_points(project)
    if eps:
        members.append((f"{dist_info}/entry_points.txt", eps.encode("utf-8")))
    members.extend((f"{dist_info}/licenses/{f}", (project.root / f).read_bytes()) for f in license_files(project))
    record_name = f"{dist_info}/RECORD"
    record = "".join(f"{name},{_record_hash(data)},{len(data)}\n" for name, data in members) + f"{record_name},,\n"
    members.append((record_name, record.encode("utf-8")))

    name = f"{project.dist_name}-{project.version}-{tag}.whl"
    wheel_directory.mkdir(parents=True, exist_ok=True)
    date = _zip_date(_epoch())
    tmp = wheel_directory / (name + ".part")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for arcname, data in members:
            info = zipfile.ZipInfo(arcname, date_time=date)
            info.external_attr = (0o100644 & 0xFFFF) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    tmp.replace(wheel_directory / name)
    return name


def _zip_date(epoch: int) -> tuple[int, int, int, int, int, int]:
    t = time.gmtime(epoch)
    return (t.tm_year, t.tm_mon, t.tm_mday, t.tm_hour, t.tm_min, t.tm_sec)


def write_sdist(project: Project, sdist_directory: Path) -> str:
    """Write ``{name}-{version}.tar.gz`` (PKG-INFO plus :func:`sdist_files`); return its file name."""
    base = f"{project.dist_name}-{project.version}"
    name = f"{base}.tar.gz"
    epoch = _epoch()
    sdist_directory.mkdir(parents=True, exist_ok=True)
    tmp = sdist_directory / (name + ".part")

    def add(tar: tarfile.TarFile, arcname: str, data: bytes, mode: int) -> None:
        info = tarfile.TarInfo(f"{base}/{arcname}")
        info.size, info.mtime, info.mode = len(data), epoch, mode
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        tar.addfile(info, io.BytesIO(data))

    with open(tmp, "wb") as raw, gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=epoch) as gz:
        with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
            add(tar, "PKG-INFO", core_metadata(project).encode("utf-8"), 0o644)
            for rel in sdist_files(project):
                path = project.root / rel
                executable = os.access(path, os.X_OK)
                add(tar, rel, path.read_bytes(), 0o755 if executable else 0o644)
    tmp.replace(sdist_directory / name)
    return name


# ---------------------------------------------------------------------------------------------
# The PEP 517 / PEP 660 hooks


def _project() -> Project:
    try:
        return load_project(Path.cwd())
    except BuildError as exc:
        _fail(str(exc))


def _maturin() -> ModuleType:
    # maturin must never fetch a toolchain: the native build was chosen because cargo runs.
    os.environ["MATURIN_NO_INSTALL_RUST"] = "1"
    try:
        return importlib.import_module("maturin")
    except ImportError:
        _fail(
            f"the native build needs {MATURIN_REQUIREMENT!r} (an isolated build installs it; "
            "with --no-build-isolation install it first)"
        )


def _for_maturin(config_settings: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if config_settings is None:
        return None
    return {k: v for k, v in config_settings.items() if k != SETTING}


def get_requires_for_build_wheel(config_settings: Mapping[str, Any] | None = None) -> list[str]:
    _project()  # a broken configuration or a version mismatch stops here, before anything is installed
    mode, _ = _decide(config_settings)
    return [MATURIN_REQUIREMENT] if mode == "native" else []


def get_requires_for_build_editable(config_settings: Mapping[str, Any] | None = None) -> list[str]:
    return get_requires_for_build_wheel(config_settings)


def get_requires_for_build_sdist(config_settings: Mapping[str, Any] | None = None) -> list[str]:
    return []


def _build(
    wheel_directory: str, config_settings: Mapping[str, Any] | None, metadata_directory: str | None, *, editable: bool
) -> str:
    project = _project()
    mode, line = _decide(config_settings)
    _say(line)
    if mode == "native":
        maturin = _maturin()
        hook = maturin.build_editable if editable else maturin.build_wheel
        return str(hook(wheel_directory, _for_maturin(config_settings), metadata_directory))
    if editable and _stale_native(project):
        _say(f"note: {', '.join(_stale_native(project))} (an earlier native build) is in {project.package_dir}: "
             "an editable install imports it; delete it to run the pure-Python implementation")  # fmt: skip
    try:
        return write_wheel(project, Path(wheel_directory), editable=editable)
    except BuildError as exc:
        _fail(str(exc))


def build_wheel(
    wheel_directory: str, config_settings: Mapping[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    return _build(wheel_directory, config_settings, metadata_directory, editable=False)


def build_editable(
    wheel_directory: str, config_settings: Mapping[str, Any] | None = None, metadata_directory: str | None = None
) -> str:
    return _build(wheel_directory, config_settings, metadata_directory, editable=True)


def build_sdist(sdist_directory: str, config_settings: Mapping[str, Any] | None = None) -> str:
    project = _project()
    try:
        return write_sdist(project, Path(sdist_directory))
    except BuildError as exc:
        _fail(str(exc))
