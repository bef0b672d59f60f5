"""Which inputs a command reads: the paths given, directories walked in a stable order.

A file named explicitly is read even if ``--include``/``--exclude``/``.gitignore`` would leave it
out (a named pipe too, for ``<(command)``), and a directory named explicitly is walked even if it
is ignored itself. In a directory: sorted order; directories in :data:`DEFAULT_EXCLUDED_DIRS`,
virtual environments, ``--exclude`` matches and ``.gitignore``\\ d entries are pruned; FIFOs,
sockets and devices are never opened (skipped); symbolic links to directories are skipped
unless ``--follow-symlinks`` (each real directory is walked once); a broken link is skipped.

Fail closed: a path that should be read and cannot be (a symbolic link loop, a directory or file
whose metadata cannot be read, a broken link named explicitly) is an *error* target, which makes
the command exit 2. Paths are made real with :func:`os.path.realpath`, which never raises (before
Python 3.13 ``Path.resolve`` raises ``RuntimeError`` on a loop).
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .exits import UsageError

#: Directories never walked into unless ``--no-default-excludes``: version control metadata,
#: virtual environments, dependency folders and tool caches. A directory holding a
#: ``pyvenv.cfg`` (a virtual environment, whatever its name) is pruned too.
DEFAULT_EXCLUDED_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".bzr", "_darcs", ".jj",
        ".venv", ".tox", ".nox", "node_modules", "__pycache__", ".eggs",
        ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
    }
)  # fmt: skip
SYMLINK_LOOP = "symbolic link loop (too many levels of symbolic links)"


@dataclass(frozen=True)
class Target:
    """One input: a file to read, ``-``, an entry skipped before reading (``skipped``, the reason),
    or one that should be read and cannot be (``error``, the reason: exit 2)."""

    path: str
    size: int = 0
    skipped: str | None = None
    error: str | None = None

    @property
    def readable(self) -> bool:
        return self.skipped is None and self.error is None


def real(path: str | Path) -> Path:
    """The real path (symbolic links resolved as far as they go); never raises."""
    return Path(os.path.realpath(path))


def reals(paths: Sequence[str]) -> dict[str, Path]:
    """:func:`real` of each path, each directory resolved once (``os.path.realpath`` reads every
    component of every path with ``lstat``: about a seventh of a gate's run over the standard library's
    1,790 files). ``realpath`` reads the components in order, so a path whose last component is
    not a symbolic link is its directory's real path joined with that name; any other path
    (a link, ``.``, ``..``, a trailing separator, an ``lstat`` that fails) takes ``realpath``
    itself. ``tests/cli/test_walk.py`` holds it equal to :func:`real`."""
    dirs: dict[str, str] = {}
    out: dict[str, Path] = {}
    for p in paths:
        head, name = os.path.split(p)
        if name in ("", ".", ".."):
            out[p] = real(p)
            continue
        d = dirs.get(head)
        if d is None:
            d = dirs[head] = os.path.realpath(head or os.curdir)
        full = os.path.join(d, name)
        try:
            link = stat.S_ISLNK(os.lstat(full).st_mode)
        except (OSError, ValueError):
            link = True  # realpath decides
        out[p] = real(p) if link else Path(full)
    return out


def stat_error(e: OSError, *, link: bool) -> tuple[str | None, str | None]:
    """(skipped, error) for a failed ``stat``: a broken link is skipped, a loop or anything else is an error."""
    if e.errno == errno.ELOOP:
        return None, SYMLINK_LOOP
    if link and e.errno in (errno.ENOENT, errno.ENOTDIR):
        return "broken symbolic link", None
    return None, f"unreadable ({e.strerror or e})"


class _Spec(Protocol):
    def check_file(self, file: str) -> Any: ...


def _load_pathspec() -> Callable[[list[str]], _Spec] | None:
    try:
        from pathspec import GitIgnoreSpec
    except ImportError:
        return None
    return GitIgnoreSpec.from_lines


@dataclass
class Ignores:
    """``.gitignore`` files (and ``.git/info/exclude``) as git applies them, read with ``pathspec``."""

    enabled: bool
    make: Callable[[list[str]], _Spec] | None = field(default_factory=_load_pathspec)
    cache: dict[Path, _Spec | None] = field(default_factory=dict)
    missing_reported: bool = False

    def _spec(self, directory: Path) -> _Spec | None:
        if directory in self.cache:
            return self.cache[directory]
        lines: list[str] = []
        for name in (".gitignore", ".git/info/exclude"):
            lines += _read_lines(directory / name)
        spec = self.make(lines) if lines and self.make is not None else None
        if lines and self.make is None and not self.missing_reported:
            self.missing_reported = True
            print(
                f"envelock: {directory / '.gitignore'} is NOT applied: reading .gitignore needs the optional "
                "'pathspec' package (pip install 'envelock[gitignore]'); ignored files are scanned too",
                file=sys.stderr,
            )
        self.cache[directory] = spec
        return spec

    def chain(self, root: Path) -> list[Path]:
        """The directories above ``root`` (absolute) whose ignore files apply to it, outermost first:
        its parents up to the repository root (the nearest directory holding ``.git``)."""
        if not self.enabled:
            return []
        ancestors = [root, *root.parents]
        for i, a in enumerate(ancestors):
            if _probe((a / ".git").exists):
                return list(reversed(ancestors[1 : i + 1]))
        return []

    def ignored(self, path: Path, is_dir: bool, dirs: Sequence[Path]) -> bool:
        """Is ``path`` ignored by the ignore files of ``dirs`` (outermost first; the deepest decides)?"""
        if not self.enabled:
            return False
        for d in reversed(dirs):
            spec = self._spec(d)
            if spec is None:
                continue
            rel = path.relative_to(d).as_posix() + ("/" if is_dir else "")
            verdict = spec.check_file(rel).include
            if verdict is not None:
                return bool(verdict)
        return False


def _probe(test: Callable[[], bool]) -> bool:
    """``test()`` (``path.exists()``, ``path.is_file()``), false where it cannot be asked: inside a
    directory without search permission they raise ``PermissionError`` (an internal error of the
    gate until stop 48). False walks on, and the walk then reports that directory as unreadable."""
    try:
        return test()
    except OSError:
        return False


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


def _matches(rel: str, patterns: Sequence[str]) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(rel, p) or fnmatch.fnmatchcase(name, p) for p in patterns)


def _kind(mode: int) -> str:
    for test, what in (
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISSOCK, "socket"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
    ):
        if test(mode):
            return what
    return "special file"


@dataclass(frozen=True)
class Walk:
    """How directories are walked (see :func:`expand`)."""

    include: Sequence[str] = ()
    exclude: Sequence[str] = ()
    default_excludes: bool = True
    gitignore: bool = True
    follow_symlinks: bool = False


def expand(paths: Sequence[str], walk: Walk) -> list[Target]:
    """The inputs, in a stable order; ``-`` stays ``-``. Raises UsageError for a missing path."""
    ignores = Ignores(walk.gitignore)
    out: list[Target] = []
    for arg in paths:
        if arg == "-":
            out.append(Target("-"))
            continue
        p = Path(arg)
        try:
            st = p.stat()
        except OSError as e:
            link = _is_link(p)
            if not link and e.errno in (errno.ENOENT, errno.ENOTDIR):
                raise UsageError(f"{arg}: no such file or directory") from None
            skipped, error = stat_error(e, link=link)
            out.append(Target(arg, error=error or f"{skipped}, named explicitly"))
            continue
        if stat.S_ISDIR(st.st_mode):
            out.extend(_walk_dir(p, walk, ignores, {real(p)}))
        elif stat.S_ISREG(st.st_mode) or stat.S_ISFIFO(st.st_mode):
            out.append(Target(arg, st.st_size if stat.S_ISREG(st.st_mode) else 0))
        else:
            out.append(Target(arg, skipped=f"not a regular file ({_kind(st.st_mode)}), not opened"))
    return out


def _is_link(p: Path) -> bool:
    try:
        return p.is_symlink()
    except OSError:
        return False


def _walk_dir(top: Path, walk: Walk, ignores: Ignores, seen: set[Path]) -> Iterator[Target]:
    """Walk ``top`` in sorted order (depth first); ``seen`` holds the real directories walked
    (with ``--follow-symlinks``, a link to one of them is a loop)."""
    top_abs = Path(os.path.abspath(top))
    top_real = real(top)
    chain = ignores.chain(top_abs)
    if chain and ignores.ignored(top_abs, True, chain):
        chain = []  # a directory named explicitly is walked even if it is ignored itself (its own ignore files apply)
    stack: list[tuple[Path, Path, list[Path]]] = [(top, top_abs, [*chain, top_abs])]
    while stack:
        directory, dir_abs, dirs = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as e:
            yield Target(str(directory), error=f"unreadable directory ({e.strerror or e})")
            continue
        subdirs: list[tuple[Path, Path, list[Path]]] = []
        for entry in entries:
            full, full_abs = Path(entry.path), dir_abs / entry.name
            rel = full_abs.relative_to(top_abs).as_posix()
            link = False
            try:
                link = entry.is_symlink()
                st = full.stat() if link else entry.stat(follow_symlinks=False)
            except OSError as e:
                if not _pruned(full_abs, rel, walk, ignores, dirs, is_dir=False) and _included(rel, walk):
                    skipped, error = stat_error(e, link=link)
                    yield Target(str(full), skipped=skipped, error=error)
                continue
            if stat.S_ISDIR(st.st_mode):
                if _pruned(full_abs, rel, walk, ignores, dirs, is_dir=True):
                    continue
                if walk.default_excludes and _probe((full / "pyvenv.cfg").is_file):
                    continue  # a virtual environment, whatever its name
                if link:
                    target = real(full)
                    if not walk.follow_symlinks:
                        yield Target(str(full), skipped="symbolic link to a directory, not followed (--follow-symlinks)")
                        continue
                    if target == top_real or top_real in target.parents:
                        yield Target(str(full), skipped="symbolic link to a directory inside the scanned tree (walked there)")
                        continue
                    if target in seen:
                        yield Target(str(full), skipped="symbolic link to a directory already walked (a loop), not followed")
                        continue
                    seen.add(target)
                elif walk.follow_symlinks:  # reached through a followed link: walk each real directory once
                    target = real(full)
                    if target in seen:
                        yield Target(str(full), skipped="directory already walked through a symbolic link (a loop)")
                        continue
                    seen.add(target)
                subdirs.append((full, full_abs, [*dirs, full_abs]))
                continue
            if _pruned(full_abs, rel, walk, ignores, dirs, is_dir=False):
                continue
            if not _included(rel, walk):
                continue
            if stat.S_ISREG(st.st_mode):
                yield Target(str(full), st.st_size)
            else:
                yield Target(str(full), skipped=f"not a regular file ({_kind(st.st_mode)}), not opened")
        stack.extend(reversed(subdirs))


def _included(rel: str, walk: Walk) -> bool:
    return not walk.include or _matches(rel, walk.include)


def _pruned(full: Path, rel: str, walk: Walk, ignores: Ignores, dirs: list[Path], *, is_dir: bool) -> bool:
    if is_dir and walk.default_excludes and full.name in DEFAULT_EXCLUDED_DIRS:
        return True
    if walk.exclude and _matches(rel, walk.exclude):
        return True
    return ignores.ignored(full, is_dir, dirs)
