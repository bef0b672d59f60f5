"""Optional extras of the corpus-scale tests (issue 13): pyarrow and ray.

Without them the tests skip (a plain ``pip install -e '.[test]'``); ``.ci/run`` installs
``envelock[scale]`` and sets ``ENVELOCK_REQUIRE_SCALE=1`` so that there they fail instead.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType

import pytest
from conftest import ROOT


def require(module: str) -> ModuleType:
    """``module`` imported, or skip (fail under ENVELOCK_REQUIRE_SCALE=1)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        reason = f"needs the optional {module} (pip install 'envelock[scale]'): {e}"
        if os.environ.get("ENVELOCK_REQUIRE_SCALE") == "1":
            pytest.fail(reason + " but ENVELOCK_REQUIRE_SCALE=1", pytrace=False)
        pytest.skip(reason, allow_module_level=True)


def corpus_gen() -> ModuleType:
    """``examples/corpus_gen.py`` (the generated corpus of the example, benchmarks and tests)."""
    path = str(ROOT / "examples")
    if path not in sys.path:
        sys.path.insert(0, path)
    return importlib.import_module("corpus_gen")
