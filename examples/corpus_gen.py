"""A generated corpus for the corpus-scale example, benchmarks and tests (deterministic).

Benign text we did not write: paragraphs of the running interpreter's standard library
(docstrings, comments and code of its ``.py`` files, and its ``.txt`` files), which exist on
every machine. Planted attacks: the payloads of ``corpus/*.json`` that ``scan_text`` reports
as an error on their own, each put as its own paragraph into a benign document at a known row.
"""

from __future__ import annotations

import json
import random
import sysconfig
from pathlib import Path

from envelock import scan_text

ROOT = Path(__file__).resolve().parent.parent


def benign_paragraphs(limit: int = 20000) -> list[str]:
    """Paragraphs (blank-line separated, 80..3000 characters) of the standard library, sorted by file."""
    lib = Path(sysconfig.get_paths()["stdlib"])
    skip = {"site-packages", "test", "tests"}
    files = sorted(p for p in lib.rglob("*") if p.suffix in (".py", ".txt") and not skip & set(p.parts))
    out: list[str] = []
    seen: set[str] = set()
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for para in text.split("\n\n"):
            para = para.strip("\n")
            if 80 <= len(para) <= 3000 and para not in seen:
                seen.add(para)
                out.append(para)
                if len(out) >= limit:
                    return out
    return out


def attack_payloads() -> list[tuple[str, str]]:
    """(id, payload) of every corpus body payload that is an error for ``scan_text`` on its own
    and can be written as UTF-8."""
    files = sorted((ROOT / "corpus").glob("*.json"))
    payloads = [p for path in files for p in json.loads(path.read_text(encoding="utf-8"))["payloads"] if p["as"] == "body"]
    # A lone surrogate cannot be UTF-8 (nor Parquet, nor JSON Lines): those payloads are left out.
    utf8 = [p for p in payloads if not any("\ud800" <= c <= "\udfff" for c in p["payload"])]
    return [(p["id"], p["payload"]) for p in utf8 if any(f.severity == "error" for f in scan_text(p["payload"]))]


def generate(n: int, *, every: int = 50, seed: int = 13) -> tuple[list[dict[str, str]], dict[str, str]]:
    """``n`` documents ``{"doc_id", "text", "origin"}``; one in ``every`` gets a planted attack.
    Returns the rows and ``{doc_id: corpus payload id}`` of the planted ones."""
    rng = random.Random(seed)  # noqa: S311  # reproducible test data, not a secret
    paras = benign_paragraphs()
    attacks = attack_payloads()
    rows: list[dict[str, str]] = []
    planted: dict[str, str] = {}
    for i in range(n):
        k = rng.randint(1, 4)
        doc = [paras[rng.randrange(len(paras))] for _ in range(k)]
        doc_id = f"doc-{i:07d}"
        if i % every == every // 2:
            aid, payload = attacks[(i // every) % len(attacks)]
            doc.insert(rng.randint(0, k), payload)
            planted[doc_id] = aid
        rows.append({"doc_id": doc_id, "text": "\n\n".join(doc), "origin": f"web:https://docs.example/{i}"})
    return rows, planted
