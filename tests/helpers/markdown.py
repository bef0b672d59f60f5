"""Fenced code blocks of Markdown files (the docs tests and the integration docs test read them)."""

from __future__ import annotations

import re
from dataclasses import dataclass

NOT_RUN = "# not run"
NEEDS = "# needs:"
_FENCE_RE = re.compile(r"^( {0,3})(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a Markdown file."""

    file: str
    line: int  # 1-based line of the opening fence
    lang: str
    code: str

    @property
    def first_line(self) -> str:
        return next((ln.strip() for ln in self.code.splitlines() if ln.strip()), "")

    @property
    def python(self) -> bool:
        return self.lang in ("python", "py")

    @property
    def runnable(self) -> bool:
        return self.python and not self.first_line.startswith(NOT_RUN)

    @property
    def needs(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(modules, files) named by a ``# needs: mod, mod; files: a.parquet, b.parquet`` first line."""
        if not self.first_line.startswith(NEEDS):
            return (), ()
        modules: list[str] = []
        files: list[str] = []
        for clause in self.first_line[len(NEEDS) :].split(";"):
            clause = clause.strip()
            target, clause = (files, clause[len("files:") :]) if clause.startswith("files:") else (modules, clause)
            target.extend(x.strip() for x in clause.split(",") if x.strip())
        return tuple(modules), tuple(files)

    @property
    def key(self) -> tuple[str, str]:
        return (self.file, self.first_line)


def fenced_blocks(text: str, file: str) -> list[Block]:
    """Every fenced code block (CommonMark fences: three or more backticks or tildes)."""
    blocks: list[Block] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _FENCE_RE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, fence, lang = len(m.group(1)), m.group(2), m.group(3).lower()
        body: list[str] = []
        j = i + 1
        while j < len(lines):
            stripped = lines[j].strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                break
            line = lines[j]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            j += 1
        blocks.append(Block(file, i + 1, lang, "\n".join(body) + "\n"))
        i = j + 1
    return blocks
