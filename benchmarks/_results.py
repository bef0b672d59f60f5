"""Where a benchmark leaves its numbers: ``<out>/<name>.txt``, the table a reader reads, and
``<out>/<name>.json``, the same numbers for ``scripts/readme_figures.py`` and the docs (one home for
the format, shared by every script here)."""

from __future__ import annotations

import json
from pathlib import Path


def write_results(out: Path, name: str, text: str, data: object) -> tuple[Path, Path]:
    """Write ``text`` (ending in one newline) and ``data`` (as JSON) under ``out``; the two paths."""
    out.mkdir(parents=True, exist_ok=True)
    txt, js = out / f"{name}.txt", out / f"{name}.json"
    txt.write_text(text.rstrip("\n") + "\n", encoding="utf-8")
    js.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return txt, js


def show_results(out: Path, name: str, text: str, data: object) -> int:
    """``text`` printed, then :func:`write_results`; 0, the script's exit status."""
    text = text.rstrip("\n") + "\n"
    print(text, end="")
    write_results(out, name, text, data)
    return 0
