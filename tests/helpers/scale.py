"""Optional extras of the corpus-scale tests: pyarrow and ray.

Without them the tests skip (a plain ``pip install -e . --group test``); ``.ci/run`` installs
``envelock[scale]`` and sets ``ENVELOCK_REQUIRE_SCALE=1`` so that there they fail instead.
"""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from helpers.data import ROOT, optional_module


def require(module: str) -> ModuleType:
    """``module`` imported, or skip (fail under ENVELOCK_REQUIRE_SCALE=1)."""
    return optional_module(module, require_env="ENVELOCK_REQUIRE_SCALE", how="pip install 'envelock[scale]'")


def corpus_gen() -> ModuleType:
    """``examples/corpus_gen.py`` (the generated corpus of the example, benchmarks and tests)."""
    path = str(ROOT / "examples")
    if path not in sys.path:
        sys.path.insert(0, path)
    return importlib.import_module("corpus_gen")
