"""Where the test data lives, and the one way a test skips: an optional part that is absent."""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
CORPUS_DIR = ROOT / "corpus"

#: The variables that require a part (``.ci/run`` sets each to 1; tests/test_package.py checks it).
REQUIRE_NAME = re.compile(r"ENVELOCK_REQUIRE_[A-Z][A-Z_]*[A-Z]")


def skip_unless_required(reason: str, require_env: str) -> NoReturn:
    """The one place a test may skip: a part that is optional for a user's clone (the shared data,
    the native core, the pyarrow/ray extras) is absent, and ``require_env`` is unset or ``0``. Set to
    anything else (``.ci/run`` sets ``ENVELOCK_REQUIRE_SHARED=1`` and the others) it fails instead,
    so CI never passes by skipping. A name outside :data:`REQUIRE_NAME` is refused: a misspelt
    variable would never be set by CI, and the test would skip there too."""
    if not REQUIRE_NAME.fullmatch(require_env):
        raise ValueError(f"not an ENVELOCK_REQUIRE_* variable: {require_env!r}")
    setting = os.environ.get(require_env, "")
    if setting in ("", "0"):  # optional here: the one skip
        pytest.skip(reason, allow_module_level=True)
    pytest.fail(f"{reason}, but {require_env}={setting}", pytrace=False)  # any other setting requires it


@contextmanager
def on_native() -> Iterator[None]:
    """The block on the native core (skipped only where it is not built, failing then under
    ``ENVELOCK_REQUIRE_NATIVE=1``)."""
    from envelock.eye import backend

    if "native" not in backend.IMPLEMENTATIONS:
        skip_unless_required(f"needs envelock._native ({NATIVE_HOW})", "ENVELOCK_REQUIRE_NATIVE")
    with backend.use("native"):
        yield


def optional_module(name: str, *, require_env: str, how: str) -> ModuleType:
    """``name`` imported, or :func:`skip_unless_required` saying ``how`` to get it."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        skip_unless_required(f"needs {name} ({how}): {exc}", require_env)


#: How to get the native core (``optional_module("envelock._native", ...)``).
NATIVE_HOW = "built by `pip install -e .` (maturin, Rust toolchain)"


def shared_dir() -> Path:
    """``../shared`` next to the checkout; skip (or fail in CI) when it is absent.

    A user's clone has no ``../shared``: tests that need it skip with this
    reason. ``.ci/run`` sets ``ENVELOCK_REQUIRE_SHARED=1`` so that there they
    fail instead of skipping.
    """
    path = Path(os.environ.get("ENVELOCK_SHARED", ROOT.parent / "shared"))
    if not (path / "corpora").is_dir():
        skip_unless_required(
            f"needs the shared data folder {path} (corpora, unicode data, SARIF schema); not present",
            "ENVELOCK_REQUIRE_SHARED",
        )
    return path


def load_corpus() -> list[dict[str, Any]]:
    """Every payload of the project corpus (``corpus/*.json``), with its class."""
    out: list[dict[str, Any]] = []
    for path in sorted(CORPUS_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for p in data["payloads"]:
            out.append({**p, "class": data["class"]})
    return out


def shared_strings() -> list[tuple[str, str]]:
    """(label, string) for every string of the third-party corpora in ``../shared``."""
    base = shared_dir() / "corpora"
    out: list[tuple[str, str]] = []

    def walk(label: str, obj: Any) -> None:
        if isinstance(obj, str):
            out.append((label, obj))
        elif isinstance(obj, list):
            for i, x in enumerate(obj):
                walk(f"{label}[{i}]", x)
        elif isinstance(obj, dict):
            for k, v in obj.items():
                walk(f"{label}.{k}", v)

    for path in sorted(base.rglob("*.json")):
        rel = str(path.relative_to(base))
        data = json.loads(path.read_text(encoding="utf-8", errors="surrogatepass"))
        if rel.endswith("envelope_escape_payloads.json"):
            for p in data["payloads"]:
                out.append((f"{rel}:{p['id']}", p["payload"]))
        else:
            walk(rel, data)
    for path in sorted(base.rglob("*.txt")):
        rel = str(path.relative_to(base))
        for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines()):
            if line and not line.startswith("#"):
                out.append((f"{rel}:{i + 1}", line))
    return out
