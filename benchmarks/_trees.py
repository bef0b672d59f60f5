"""One measurement on this checkout and, with ``--before``, on another one in the same run: a child
process per tree (``PYTHONPATH`` set to its ``src``), so each imports its own envelock. Shared by
``scan_shapes.py`` and ``per_text.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

#: This checkout's ``src``.
HERE = Path(__file__).resolve().parents[1] / "src"


def trees(before: Path | None, before_label: str) -> dict[str, Path]:
    """The trees measured, by their label in the table: this one alone, or another one then this one."""
    return {before_label: before, "after": HERE} if before is not None else {"this tree": HERE}


def in_tree(src: Path, child: str, *args: str) -> Any:
    """``python -c child args`` with ``src`` first on the path; what it printed, read as JSON."""
    proc = subprocess.run(
        [sys.executable, "-c", child, *args],
        env={**os.environ, "PYTHONPATH": str(src)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout)
