"""Write the figure blocks of README.md and SECURITY.md from their sources; ``--check`` only compares.

A figure block is the text between ``<!-- figures:NAME -->`` and ``<!-- /figures -->`` (inline or
over several lines); this script owns it, nobody types it. The sources:

* ``lookalikes``: ``len(envelock.eye.unicode_tables.LT_LOOKALIKES)``, the generated characters a
  reader may take for ``<``;
* ``rules``: ``len(envelock.scan.rules.RULES)``;
* ``corpus``, ``corpus-payloads``: the payloads and attack classes of ``corpus/*.json`` (a class is
  a file whose name does not start with ``benign_``);
* ``corpus-classes``: corpus/README.md's table of every file of ``corpus/`` (its payloads, where they
  go, its distinct ``reserved / markup`` outcome pairs);
* ``speed``: the README's speed table, from ``benchmarks/results/latest.json`` (the largest size
  of each input), with the date, interpreter and machine of that run;
* ``spotlight``: the README's spotlighting cost table, from ``benchmarks/results/spotlight.json``;
* ``stdlib-reserved``: what ``reserved`` changes in the standard library, from
  ``benchmarks/results/benign.json``;
* ``growth``: the output growth per level, from ``benchmarks/results/levels.json``;
* ``memory``: docs/INTERNALS.md's peak memory of compose and verify on one 100 MB body, from
  ``benchmarks/results/memory.json``;
* ``scaling``: docs/INTERNALS.md's batch scan on two threads and two processes, with the busy-loop
  control, from ``benchmarks/results/scaling.json``.

``tests/test_docs.py`` fails when a file differs from what this script writes. Run it after a
benchmark run or a change to the tables: ``python scripts/readme_figures.py``.
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FILES = ("README.md", "SECURITY.md", "docs/INTERNALS.md", "corpus/README.md")
BLOCK_RE = re.compile(r"(<!-- figures:([a-z0-9-]+) -->)(.*?)(<!-- /figures -->)", re.S)

#: The README's speed table: (row label, input class in the results).
SPEED_ROWS = (
    ("prose", "prose"),
    ("Markdown with code", "markdown"),
    ("tag-dense HTML", "html"),
    ("source code", "source"),
    ("multilingual", "multilingual"),
)
#: (column header, metric in the results).
SPEED_COLUMNS = (
    ("compose `reserved`", "compose[reserved]"),
    ("`markup`", "compose[markup]"),
    ("`xml`", "compose[xml]"),
    ("verify `reserved`", "verify[reserved]"),
    ("`markup`", "verify[markup]"),
    ("`xml`", "verify[xml]"),
    ("`scan_text`", "scan_text"),
    ("`markupsafe.escape`", "markupsafe.escape"),
)


def _size(n: int) -> str:
    return f"{n // (1024 * 1024)} MB" if n % (1024 * 1024) == 0 else f"{n // 1024} KB"


def speed(results: Mapping[str, Any]) -> str:
    """The speed table and the sentence that says which run it comes from."""
    meta = results.get("meta", {})
    rows: dict[str, dict[str, Any]] = {}
    for r in results["results"]:
        if r["input"] in dict(SPEED_ROWS).values() and r["size"] >= rows.get(r["input"], {"size": 0})["size"]:
            rows[r["input"]] = r
    sizes = sorted({r["size"] for r in rows.values()})
    run = "a quick run (`--quick`)" if meta.get("quick") else "a full run"
    about = [f"CPython {meta['python']}" if "python" in meta else None, f"{meta['impl']} core" if "impl" in meta else None]
    machine = meta.get("machine") or (meta.get("platform", "").split("-with-")[0].rsplit("-", 1)[-1] or None)
    about += [machine, f"{meta['cpus']} CPUs" if "cpus" in meta else None]
    best = f", best of {meta['repeat']}" if "repeat" in meta else ""
    intro = (
        f"**Speed.** From {run} of `python benchmarks/run.py` on {meta.get('date', '?')[:10]} "
        f"({', '.join(a for a in about if a)}; {' and '.join(_size(s) for s in sizes)} inputs{best}; "
        "`benchmarks/results/latest.json`, written into this table by `scripts/readme_figures.py`). "
        "MB/s of input, higher is better:"
    )
    lines = [
        *textwrap.wrap(intro, width=96, break_long_words=False, break_on_hyphens=False),
        "",
        "| input | " + " | ".join(h for h, _ in SPEED_COLUMNS) + " |",
        "|---|" + "---|" * len(SPEED_COLUMNS),
    ]
    for label, name in SPEED_ROWS:
        r = rows[name]
        cells = [f"{r['bytes'] / r['seconds'][m] / 1e6:.0f}" if m in r["seconds"] else "-" for _, m in SPEED_COLUMNS]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n" + "\n".join(lines) + "\n\n"


#: The README's real-text table: (row label, text in ``pipeline.json``).
REAL_TEXT_ROWS = (
    ("stdlib source (ASCII)", "code"),
    ("stdlib source + `é`", "code +é"),
    ("`pydoc_data` prose", "prose"),
    ("package READMEs (Markdown)", "markdown"),
    ("python3-doc HTML", "html"),
    ("man pages, 10 languages", "multilingual"),
)
LEVELS = ("reserved", "markup", "xml")


def real_text(results: Mapping[str, Any]) -> str:
    """The compose and verify ratios on real text (``benchmarks/pipeline.py``), native."""
    meta = results.get("meta", {})
    cell = {(r["text"], r["level"]): r for r in results["rows"]}
    about = ", ".join(
        a
        for a in (
            f"CPython {meta['python']}" if "python" in meta else None,
            meta.get("machine"),
            f"{meta['cpus']} CPUs" if "cpus" in meta else None,
            f"{_size(meta['size'])} per text" if "size" in meta else None,
        )
        if a
    )
    intro = (
        f"**On real text.** One run of `python benchmarks/pipeline.py` on {meta.get('date', '?')} ({about}; "
        "`benchmarks/results/pipeline.json`, written here by `scripts/readme_figures.py`). Native compose "
        "time as a multiple of `markupsafe.escape` of the same text (timed in the same rounds), and verify "
        "time as a multiple of compose; lower is better:"
    )
    head = [f"compose `{lv}`" if k == 0 else f"`{lv}`" for k, lv in enumerate(LEVELS)]
    head += [f"verify/compose `{lv}`" if k == 0 else f"`{lv}`" for k, lv in enumerate(LEVELS)]
    lines = [
        *textwrap.wrap(intro, width=96, break_long_words=False, break_on_hyphens=False),
        "",
        "| text | " + " | ".join(head) + " |",
        "|---|" + "---|" * len(head),
    ]
    for label, name in REAL_TEXT_ROWS:
        rows = [cell.get((name, lv)) for lv in LEVELS]
        if not all(rows):
            continue
        ratios = [f"{r['compose/native'] / r['markupsafe']:.1f}x" for r in rows if r]
        ratios += [f"{r['verify/native'] / r['compose/native']:.1f}x" for r in rows if r]
        lines.append(f"| {label} | " + " | ".join(ratios) + " |")
    return "\n" + "\n".join(lines) + "\n\n"


def verify_floor(results: Mapping[str, Any]) -> str:
    """The range of verify's lxml floor (1 + lxml's parse alone / compose) per level, from
    ``benchmarks/hotspots.py``."""
    floors: dict[str, list[float]] = {}
    for r in results["rows"]:
        if "floor" in r:
            floors.setdefault(r["level"], []).append(r["floor"])
    parts = [f"`{lv}` {min(v):.2f}–{max(v):.2f}x" for lv, v in floors.items()]
    return (
        f"lxml's parse on top of one reading of the body (about what compose costs) puts verify's floor at "
        f"{', '.join(parts)} compose on these texts while it reads with lxml "
        "(`benchmarks/results/hotspots.json`, written here by `scripts/readme_figures.py`)."
    )


#: The README's spotlighting table: (row label, mode in the results), and its columns (text classes).
SPOTLIGHT_ROWS = (
    ("`datamark`", "datamark"),
    ("`datamark`, `ˆ`", "datamark ˆ"),
    ("`interleave`, `ˆ`", "interleave ˆ"),
    ("`base64`", "base64"),
)
SPOTLIGHT_CLASSES = ("prose", "code", "multilingual", "cjk")
SPOTLIGHT_TOKENIZER = "o200k_base"


def _median(values: list[float]) -> float:
    v = sorted(values)
    mid = len(v) // 2
    return v[mid] if len(v) % 2 else (v[mid - 1] + v[mid]) / 2


def spotlight(results: Mapping[str, Any]) -> str:
    """The spotlighting cost table (characters x / tokens x / compose+verify speed x, against
    ``spotlight="none"`` of the same entries; the per-turn marker's cells are medians over its
    candidates) and the system-prompt sentence, from ``benchmarks/results/spotlight.json``."""
    meta = results.get("meta", {})
    rows = {(r["class"], r["mode"]): r for r in results["rows"]}
    intro = (
        f"One run of `python benchmarks/spotlight.py` on {meta.get('date', '?')[:10]} (CPython {meta.get('python', '?')}, "
        f"{meta.get('cpus', '?')} CPUs; `benchmarks/results/spotlight.json`, written here by `scripts/readme_figures.py`)."
    )
    lines = [
        "",
        *textwrap.wrap(intro, width=96, break_long_words=False, break_on_hyphens=False),
        "",
        "| mode | " + " | ".join(SPOTLIGHT_CLASSES) + " |",
        "|---|" + "---|" * len(SPOTLIGHT_CLASSES),
    ]
    for label, mode in SPOTLIGHT_ROWS:
        cells = []
        for cls in SPOTLIGHT_CLASSES:
            none, r = rows[(cls, "none")], rows[(cls, mode)]
            chars = _median(r["chars"]) / _median(none["chars"])
            tokens = _median(r["tokens"][SPOTLIGHT_TOKENIZER]) / _median(none["tokens"][SPOTLIGHT_TOKENIZER])
            speed = none["seconds"]["compose+verify"] / r["seconds"]["compose+verify"]
            cells.append(f"{chars:.2f} / {tokens:.2f} / {speed:.2f}")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    rule = results.get("hygiene_rule", {})
    if rule:
        t = SPOTLIGHT_TOKENIZER
        nonce = rule["none +nonce"][t] - rule["none"][t]
        sentence = (
            f"The system-prompt text ({t} tokens): {rule['none'][t]} with `none`, {rule['datamark ˆ'][t]} with `datamark`, "
            f"{rule['base64'][t]} with `base64`; a nonce adds {nonce}."
        )
        lines += ["", *textwrap.wrap(sentence, width=96, break_long_words=False, break_on_hyphens=False)]
    return "\n".join(lines) + "\n\n"


def growth(results: Mapping[str, Any]) -> str:
    """The output growth table per level (characters over the input, envelope overhead included),
    from ``benchmarks/results/levels.json`` (``python benchmarks/levels.py --json``)."""
    levels = ("reserved", "markup", "xml")
    inputs = list(dict.fromkeys(r["input"] for r in results["rows"]))
    cell = {(r["input"], r["level"]): r["growth_pct"] for r in results["rows"]}
    lines = ["", "| input | " + " | ".join(f"`{lv}`" for lv in levels) + " |", "|---|" + "---|" * len(levels)]
    lines += [f"| {i} | " + " | ".join(f"+{cell[(i, lv)]:.1f} %" for lv in levels) + " |" for i in inputs]
    return "\n".join(lines) + "\n\n"


def memory(results: Mapping[str, Any]) -> str:
    """Peak memory above the input of compose and verify, as a multiple of the body, from
    ``benchmarks/results/memory.json`` (``python benchmarks/memory.py``)."""
    rows = results["rows"]
    cell = {(r["text"], r["call"]): r["x_body"] for r in rows}
    texts = list(dict.fromkeys(r["text"] for r in rows))
    size = max(r["body_MB"] for r in rows)
    lines = ["", f"| one {size:.0f} MB body | compose | verify |", "|---|---|---|"]
    lines += [f"| {t} | {cell[(t, 'compose')]:.2f}x | {cell[(t, 'verify')]:.2f}x |" for t in texts]
    header = results["header"].lstrip("# ")
    return "\n".join([*lines, "", f"({header}.)", ""]) + "\n"


def scaling(results: Mapping[str, Any]) -> str:
    """The speed-up of two threads and two processes over one, for the scan and the busy-loop
    control, from ``benchmarks/results/scaling.json`` (``python benchmarks/scaling.py``)."""
    row = {r["mode"]: r for r in results["rows"]}
    date = results["header"].split("; ")[-1].split(",")[0]
    return (
        f"threads {row['threads']['scan_speedup']:.2f}x (busy loop {row['threads']['busy_speedup']:.2f}x), "
        f"processes {row['processes']['scan_speedup']:.2f}x (busy loop {row['processes']['busy_speedup']:.2f}x; "
        f"{date}, `results/scaling.txt`)"
    )


def _written(reading: str) -> str:
    return reading.replace(" ", "")


def stdlib_reserved(results: Mapping[str, Any]) -> str:
    """What ``reserved`` changes in the standard library's ``*.py`` files, by reason, from
    ``benchmarks/results/benign.json`` (``python benchmarks/benign.py``)."""
    c = results["corpora"]["stdlib-py"]
    changed = c["changed"]["reserved"]
    why = sorted(c["reserved_why"].items(), key=lambda kv: -kv[1]["backslashes"])
    # A reason's commonest readings, "opener name" in the results: shown as written (`<s`, `[args`).
    reasons = [
        f"{v['backslashes']} for {k.replace('<NAME>', '`<NAME>`')} in {v['files']} file{'s' if v['files'] != 1 else ''}"
        f" ({', '.join(f'`{_written(t)}` {n}' for t, n in v['top'][:3])})"
        for k, v in why
    ]
    if c.get("reserved_unexplained"):
        reasons.append(f"{c['reserved_unexplained']} that no listed reason explains")
    reasons_text = ", ".join(reasons)
    return (
        f"measured on CPython {c['version']}'s standard library ({c['files']:,} `*.py` files, site-packages left out; "
        f"`python benchmarks/benign.py`, `benchmarks/results/benign.json`), it changes {changed['files']} files "
        f"({changed['pct']}%) with {c['backslashes']['reserved']} inserted backslashes: {reasons_text}"
    )


def corpus_counts(root: Path = ROOT) -> tuple[int, int]:
    """(payloads, attack classes) of the project corpus."""
    payloads = classes = 0
    for path in sorted((root / "corpus").glob("*.json")):
        payloads += len(json.loads(path.read_text(encoding="utf-8"))["payloads"])
        classes += not path.stem.startswith("benign_")
    return payloads, classes


def corpus_classes(root: Path = ROOT) -> str:
    """corpus/README.md's table: one row per file of ``corpus/``, in name order, and the total."""
    rows = ["", "| class | payloads | as | outcomes (reserved / markup) |", "|---|---|---|---|"]
    total = 0
    for path in sorted((root / "corpus").glob("*.json")):
        payloads = json.loads(path.read_text(encoding="utf-8"))["payloads"]
        total += len(payloads)
        where = ", ".join(sorted({p["as"] for p in payloads}))
        pairs = "; ".join(sorted({f"{p['expect']['reserved']} / {p['expect']['markup']}" for p in payloads}))
        rows.append(f"| `{path.stem}` | {len(payloads)} | {where} | {pairs} |")
    rows.append(f"| **total** | **{total}** | | |")
    return "\n".join(rows) + "\n"


def figures(root: Path = ROOT) -> dict[str, Callable[[], str]]:
    """Every figure by name, computed when asked for."""
    sys.path.insert(0, str(root / "src"))
    from envelock.eye.unicode_tables import LT_LOOKALIKES
    from envelock.scan.rules import RULES

    def corpus() -> str:
        payloads, classes = corpus_counts(root)
        return f"{payloads} payloads in {classes} attack classes"

    def results(name: str) -> Any:
        return json.loads((root / "benchmarks" / "results" / name).read_text(encoding="utf-8"))

    return {
        "lookalikes": lambda: f"{len(LT_LOOKALIKES)} look-alikes",
        "rules": lambda: f"{len(RULES)} rules",
        "corpus": corpus,
        "corpus-payloads": lambda: f"{corpus_counts(root)[0]} in all",
        "corpus-classes": lambda: corpus_classes(root),
        "speed": lambda: speed(results("latest.json")),
        "real-text": lambda: real_text(results("pipeline.json")),
        "verify-floor": lambda: verify_floor(results("hotspots.json")),
        "spotlight": lambda: spotlight(results("spotlight.json")),
        "stdlib-reserved": lambda: stdlib_reserved(results("benign.json")),
        "growth": lambda: growth(results("levels.json")),
        "memory": lambda: memory(results("memory.json")),
        "scaling": lambda: scaling(results("scaling.json")),
    }


def render(text: str, known: Mapping[str, Callable[[], str]]) -> str:
    """``text`` with every figure block rewritten; a block of an unknown name is an error."""

    def block(m: re.Match[str]) -> str:
        name = m.group(2)
        if name not in known:
            raise KeyError(f"unknown figure block {name!r} (known: {', '.join(sorted(known))})")
        return m.group(1) + known[name]() + m.group(4)

    return BLOCK_RE.sub(block, text)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 and show the difference when a file is stale")
    args = ap.parse_args(argv)
    known = figures()
    stale = 0
    for name in FILES:
        path = ROOT / name
        old = path.read_text(encoding="utf-8")
        new = render(old, known)
        if new == old:
            continue
        stale += 1
        if args.check:
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), new.splitlines(True), name, f"{name} (figures)"))
        else:
            path.write_text(new, encoding="utf-8")
            print(f"{name}: figures rewritten")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    raise SystemExit(main())
