"""The examples of docs/integrations.md run, each with its extra installed.

test_docs.py does not run them (their first line starts with ``# not run``: the default test run
has no framework installed); this test runs each block whose first line names the extra, in a
fresh namespace, when the extra's package is importable (skips, or fails under
``ENVELOCK_REQUIRE_INTEGRATIONS=1``, otherwise). Control: every framework section has a block,
and a block that raises fails the test.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers.integrations import need
from helpers.markdown import Block, fenced_blocks

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "integrations.md"
MARK = re.compile(r"# not run here: needs envelock\[(\w+)\]")
PACKAGES = {"langchain": "langchain_core", "llamaindex": "llama_index.core", "anthropic": "anthropic", "openai": "openai", "mcp": "mcp"}
BLOCKS = [b for b in fenced_blocks(DOC.read_text(encoding="utf-8"), "docs/integrations.md") if b.lang == "python"]


def extra_of(block: Block) -> str:
    m = MARK.match(block.first_line)
    assert m, f"{block.file}:{block.line}: the first line must be '# not run here: needs envelock[EXTRA] ...'"
    return m.group(1)


def test_one_block_per_integration() -> None:
    assert sorted(extra_of(b) for b in BLOCKS) == sorted(PACKAGES)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"line{b.line}" for b in BLOCKS])
def test_block_runs(block: Block) -> None:
    extra = extra_of(block)
    need(PACKAGES[extra], extra)
    namespace: dict[str, Any] = {"__name__": "__docs__"}
    exec(compile(block.code, f"{block.file}:{block.line}", "exec"), namespace)


def test_negative_control_unmarked_and_failing_blocks() -> None:
    with pytest.raises(AssertionError, match="first line"):
        extra_of(Block("x.md", 1, "python", "import envelock\n"))  # a block the test could not attribute fails
    bad = Block("x.md", 1, "python", "# not run here: needs envelock[mcp]\nraise ValueError('broken doc')\n")
    assert extra_of(bad) == "mcp"
    with pytest.raises(ValueError, match="broken doc"):
        exec(compile(bad.code, "x.md:1", "exec"), {})
