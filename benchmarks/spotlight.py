"""What spotlighting costs: characters, bytes, LLM tokens and compose/verify speed per mode.

    python benchmarks/spotlight.py [--size 256] [--chunk 4096] [--repeat 5] [--tokenizer-python PY]

For each text class (real text nobody wrote for envelock: ``prose`` = the Python docs topics in
``pydoc_data``, ``code`` = the interpreter's stdlib ``.py`` files, ``multilingual`` = the repo's
``tests/data/benign/prose_*.txt`` in six languages, ``cjk`` = the stdlib's CJK codec test texts,
``html`` = IDLE's Sphinx help page; each repeated up to ``--size`` KB when shorter), cut into
entries of ``--chunk`` characters, composes one preface per mode (``none``, ``datamark`` with a
per-turn marker and with the paper's ``ˆ`` U+02C6, ``interleave`` likewise, ``base64``; each also
with a nonce) and reports, relative to ``none``:

* characters and UTF-8 bytes of the composed preface;
* tokens, with each offline tokenizer ``tokencount.py`` finds (in this interpreter, or in
  ``--tokenizer-python``'s venv; the project depends on none): a per-turn marker is drawn at
  random from ``MARKER_CANDIDATES``, so its rows are the median (and range) over a fixed spread
  sample of candidates;
* compose, verify and compose(verify=True) speed in MB/s of body text (median of ``--repeat``),
  as ratios to ``none`` and to ``markupsafe.escape`` of the same text in the same run;
* the fixed per-turn cost: tokens of ``preface.hygiene_rule()`` for the mode.

Writes ``results/spotlight.json`` and ``results/spotlight.txt``. Never a timed assertion.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.metadata
import json
import os
import platform
import statistics
import subprocess
import sys
import sysconfig
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import markupsafe
from _results import write_results

import envelock
from envelock import PrefaceEntry, compose_preface, verify_preface
from envelock.eye.unicode_tables import MARKER_CANDIDATES

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
STDLIB = Path(sysconfig.get_paths()["stdlib"])
BENIGN = REPO / "tests" / "data" / "benign"
KB = 1024
PAPER_MARKER = "\u02c6"  # ˆ MODIFIER LETTER CIRCUMFLEX ACCENT, the marker of Hines et al. 2024
NONCE = "0123456789abcdef01234567"  # the shape of new_nonce(): 24 hex digits
SEED = "5eed5eed5eed5eed"  # interleave placement, fixed so runs are comparable
#: Per-turn markers measured for tokens: a fixed spread over the candidate table.
SAMPLE = 12
CLASSES = ("prose", "code", "multilingual", "cjk", "html")


@dataclass(frozen=True)
class Mode:
    name: str
    spotlight: str
    marker: str | None  # None: chosen per turn by compose (timing) / the candidate sample (sizes)
    nonce: bool


def modes() -> list[Mode]:
    out: list[Mode] = []
    for nonce in (False, True):
        out += [
            Mode("none", "none", None, nonce),
            Mode("datamark", "datamark", None, nonce),
            Mode("datamark ˆ", "datamark", PAPER_MARKER, nonce),
            Mode("interleave", "interleave", None, nonce),
            Mode("interleave ˆ", "interleave", PAPER_MARKER, nonce),
            Mode("base64", "base64", None, nonce),
        ]
    return out


def label(m: Mode) -> str:
    return m.name + (" +nonce" if m.nonce else "")


# -- the text ------------------------------------------------------------------------------


def _docs_prose() -> str:
    from pydoc_data.topics import topics

    return "\n\n".join(topics[k] for k in sorted(topics))


def _docstrings() -> str:
    """Fallback prose: the docstrings of the stdlib's top-level modules."""
    parts: list[str] = []
    for path in sorted(STDLIB.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = ast.get_docstring(node)
                if doc:
                    parts.append(doc)
    return "\n\n".join(parts)


def _files(paths: list[Path]) -> str:
    return "\n\n".join(p.read_text(encoding="utf-8", errors="replace") for p in paths if p.is_file())


def source_text(kind: str) -> tuple[str, str]:
    """The real text of ``kind`` and where it came from."""
    if kind == "prose":
        try:
            return _docs_prose(), "pydoc_data.topics (the Python docs' topic texts)"
        except ImportError:
            return _docstrings(), "docstrings of <stdlib>/*.py"
    if kind == "code":
        return _files(sorted(STDLIB.glob("*.py"))), "<stdlib>/*.py (sorted by name)"
    if kind == "multilingual":
        names = [
            "prose_fr.txt",
            "prose_de.txt",
            "prose_vi.txt",
            "prose_el.txt",
            "prose_ru.txt",
            "prose_ja.txt",
            "multilingual.txt",
        ]
        return _files([BENIGN / n for n in names]), "tests/data/benign/prose_{fr,de,vi,el,ru,ja}.txt + multilingual.txt"
    if kind == "cjk":
        paths = sorted((STDLIB / "test" / "cjkencodings").glob("*-utf8.txt"))
        if paths:
            return _files(
                [*paths, BENIGN / "prose_ja.txt"]
            ), "<stdlib>/test/cjkencodings/*-utf8.txt + tests/data/benign/prose_ja.txt"
        return _files([BENIGN / "prose_ja.txt"]), "tests/data/benign/prose_ja.txt (no stdlib test/cjkencodings here)"
    if kind == "html":
        page = STDLIB / "idlelib" / "help.html"
        if page.is_file():
            return _files([page]), "<stdlib>/idlelib/help.html (IDLE's Sphinx help page)"
        return _files([BENIGN / "page.html", BENIGN / "source_html.txt"]), "tests/data/benign/page.html + source_html.txt"
    raise ValueError(kind)


def make_text(kind: str, size: int) -> tuple[str, str, float]:
    """``size`` characters of ``kind`` (the real text repeated when shorter), its source, and how often it repeats."""
    text, where = source_text(kind)
    reps = size / max(1, len(text))
    while len(text) < size:
        text = text + "\n\n" + text
    return text[:size], where, reps


def entries_for(text: str, chunk: int) -> list[PrefaceEntry]:
    stamp = "2026-11-29T21:29:03Z"
    return [
        PrefaceEntry("external", f"web:https://docs.example/{k}", text[i : i + chunk], fetched_at=stamp)
        for k, i in enumerate(range(0, len(text), chunk))
    ]


def compose(entries: list[PrefaceEntry], m: Mode, marker: str | None = None, verify: bool = False) -> str:
    kw: dict[str, Any] = {"spotlight": m.spotlight, "verify": verify}
    mk = marker if marker is not None else m.marker
    if mk is not None:
        kw["marker"] = mk
    if m.spotlight == "interleave":
        kw["seed"] = SEED
    if m.nonce:
        kw["nonce"] = NONCE
    return str(compose_preface(entries, **kw))


def sample_markers(bodies: str) -> list[str]:
    """``SAMPLE`` candidates spread over ``MARKER_CANDIDATES`` that occur nowhere in ``bodies`` (as compose would pick)."""
    free = [chr(c) for c in MARKER_CANDIDATES if chr(c) not in bodies]
    step = max(1, len(free) // SAMPLE)
    return free[::step][:SAMPLE]


# -- tokens --------------------------------------------------------------------------------


def count_tokens(texts: list[str], python: str | None) -> dict[str, Any]:
    """``tokencount.count`` in this interpreter, or in ``python`` (another venv) through a pipe."""
    if python:
        proc = subprocess.run(
            [python, str(HERE / "tokencount.py")], input=json.dumps(texts), capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            return {"info": {"all": {"absent": f"{python} tokencount.py failed: {proc.stderr.strip()[-300:]}"}}, "counts": {}}
        return json.loads(proc.stdout)  # type: ignore[no-any-return]
    sys.path.insert(0, str(HERE))
    tokencount = importlib.import_module("tokencount")
    return tokencount.count(texts)  # type: ignore[no-any-return]


# -- timing --------------------------------------------------------------------------------


def median_time(fn: Callable[[], object], repeat: int) -> float:
    fn()  # warm up (regexes, marker tables)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def run(args: argparse.Namespace) -> dict[str, Any]:
    size = args.size * KB
    all_modes = modes()
    texts: list[str] = []  # every composed preface whose tokens are counted
    rows: list[dict[str, Any]] = []
    hygiene: dict[str, int] = {}
    classes: dict[str, Any] = {}
    for kind in args.only.split(",") if args.only else CLASSES:
        text, where, reps = make_text(kind, size)
        entries = entries_for(text, args.chunk)
        nbytes = len(text.encode("utf-8"))
        markers = sample_markers(text)
        classes[kind] = {
            "source": where,
            "chars": len(text),
            "bytes": nbytes,
            "entries": len(entries),
            "times_repeated": round(reps, 2),
            "sample_markers": "".join(markers),
        }
        t_escape = median_time(lambda text=text: markupsafe.escape(text), args.repeat)
        print(
            f"{kind:13} {nbytes / 1e3:7.0f} kB in {len(entries)} entries; markupsafe.escape {nbytes / t_escape / 1e6:.0f} MB/s",
            flush=True,
        )
        for m in all_modes:
            variants = [m.marker] if m.marker is not None or m.spotlight not in ("datamark", "interleave") else markers
            composed = [compose(entries, m, marker=v) for v in variants]
            first = len(texts)
            texts += composed
            row: dict[str, Any] = {
                "class": kind,
                "mode": label(m),
                "chars": [len(c) for c in composed],
                "bytes": [len(c.encode("utf-8")) for c in composed],
                "text_index": list(range(first, len(texts))),
            }
            if not args.no_timing:
                seconds = {
                    "compose": median_time(lambda m=m, e=entries: compose(e, m), args.repeat),
                    "verify": median_time(
                        lambda c=composed[0], m=m: verify_preface(c, nonce=NONCE if m.nonce else None, spotlight=m.spotlight),
                        args.repeat,
                    ),
                    "compose+verify": median_time(lambda m=m, e=entries: compose(e, m, verify=True), args.repeat),
                    "markupsafe.escape": t_escape,
                }
                row["seconds"] = seconds
                row["mb_s"] = {k: nbytes / v / 1e6 for k, v in seconds.items()}
            rows.append(row)
            print(
                f"  {label(m):22}"
                + (
                    ""
                    if args.no_timing
                    else "  ".join(f"{k}={v:.1f}" for k, v in row["mb_s"].items() if k != "markupsafe.escape")
                ),
                flush=True,
            )
    for m in all_modes:
        if m.spotlight in ("datamark", "interleave") and m.marker is None:
            continue
        p = compose_preface(
            [PrefaceEntry("external", "web:x", "x")],
            **({"spotlight": m.spotlight, "marker": m.marker} if m.marker else {"spotlight": m.spotlight}),
            **({"nonce": NONCE} if m.nonce else {}),
        )
        hygiene[label(m)] = len(texts)
        texts.append(p.hygiene_rule())
    tokens = count_tokens(texts, args.tokenizer_python)
    for row in rows:
        idx = row.pop("text_index")
        row["tokens"] = {name: [counts[i] for i in idx] for name, counts in tokens["counts"].items()}
    hygiene_tokens = {
        lbl: {name: counts[i] for name, counts in tokens["counts"].items()} | {"chars": len(texts[i])}
        for lbl, i in hygiene.items()
    }
    return {"classes": classes, "rows": rows, "tokenizers": tokens["info"], "hygiene_rule": hygiene_tokens}


# -- report --------------------------------------------------------------------------------


def _ratio(values: list[int], base: list[int]) -> tuple[float, float, float]:
    rs = sorted(v / base[0] for v in values)
    return statistics.median(rs), rs[0], rs[-1]


def _fmt(r: tuple[float, float, float]) -> str:
    med, lo, hi = r
    return f"{med:.3f}" if hi - lo < 0.0005 else f"{med:.3f} ({lo:.2f}-{hi:.2f})"


def report(data: dict[str, Any]) -> str:
    rows = data["rows"]
    toks = [n for n, i in data["tokenizers"].items() if "absent" not in i]
    base = {r["class"]: r for r in rows if r["mode"] == "none"}
    timed = "seconds" in rows[0]
    lines = ["Spotlighting cost per text class and mode, relative to spotlight='none' of the same entries", ""]
    head = ["class", "mode", "chars x", "bytes x", *[f"tokens x {t}" for t in toks]]
    if timed:
        head += ["compose MB/s", "x none", "x escape", "verify MB/s", "x none", "c+v MB/s", "x none", "x escape"]
    table = [head]
    for r in rows:
        b = base[r["class"]]
        cells = [r["class"], r["mode"], _fmt(_ratio(r["chars"], b["chars"])), _fmt(_ratio(r["bytes"], b["bytes"]))]
        cells += [_fmt(_ratio(r["tokens"][t], b["tokens"][t])) for t in toks]
        if timed:
            s, bs = r["seconds"], b["seconds"]
            cells += [
                f"{r['mb_s']['compose']:.1f}",
                f"{bs['compose'] / s['compose']:.2f}",
                f"{s['markupsafe.escape'] / s['compose']:.3f}",
                f"{r['mb_s']['verify']:.1f}",
                f"{bs['verify'] / s['verify']:.2f}",
                f"{r['mb_s']['compose+verify']:.1f}",
                f"{bs['compose+verify'] / s['compose+verify']:.2f}",
                f"{s['markupsafe.escape'] / s['compose+verify']:.3f}",
            ]
        table.append(cells)
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for k, row in enumerate(table):
        lines.append("  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += [
        "",
        "x none: speed relative to spotlight='none' (no nonce) of the same class; x escape: relative to markupsafe.escape of the same text",
        "(both > 1 is faster). MB/s are of body text (UTF-8), median of the repeats. Per-turn-marker rows: median (min-max) over",
        f"{SAMPLE} candidates spread over MARKER_CANDIDATES; its timing lets compose choose the marker, as in use.",
        "",
        "Fixed per-turn cost: the system-prompt text preface.hygiene_rule() for the mode",
    ]
    hy = data["hygiene_rule"]
    for lbl, v in hy.items():
        lines.append(f"  {lbl:22} {v['chars']:5} chars  " + "  ".join(f"{t} {v[t]:4} tokens" for t in toks if t in v))
    lines.append("")
    lines.append("Tokenizers")
    for name, info in data["tokenizers"].items():
        if "absent" in info:
            lines.append(f"  {name}: absent ({info['absent']})")
        else:
            lines.append(
                f"  {name}: {info['package']}, {info['n_vocab']} tokens, {info['vocabulary']} (sha256 {info['sha256'][:16]}...)"
            )
    lines.append("")
    lines.append("Text classes")
    for kind, c in data["classes"].items():
        lines.append(
            f"  {kind}: {c['bytes']} bytes, {c['chars']} chars in {c['entries']} entries; {c['source']} (x{c['times_repeated']} of the source)"
        )
    meta = data["meta"]
    lines.append("")
    lines.append(
        f"envelock {meta['envelock']} impl={meta['impl']}, Python {meta['python']}, markupsafe {meta['markupsafe']}, {meta['platform']}, {meta['cpus']} CPUs ({meta['date']})"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=256, help="KB of text per class (default 256)")
    ap.add_argument("--chunk", type=int, default=4096, help="characters per entry (default 4096, about 1,000 tokens of prose)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per measurement; the median is reported")
    ap.add_argument("--only", default="", help=f"comma-separated classes of {','.join(CLASSES)}")
    ap.add_argument("--no-timing", action="store_true", help="sizes and tokens only")
    ap.add_argument(
        "--tokenizer-python", default="", help="an interpreter (another venv) with tiktoken/tokenizers to count tokens in"
    )
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)
    t0 = time.time()
    data = run(args)
    data["meta"] = {
        "envelock": getattr(envelock, "__version__", "?"),
        "impl": importlib.import_module("envelock.escape").implementation(),
        "python": sys.version.split()[0],
        "markupsafe": importlib.metadata.version("markupsafe"),
        "platform": platform.platform(),
        "stdlib": str(STDLIB),
        "cpus": os.cpu_count(),
        "size_kb": args.size,
        "chunk": args.chunk,
        "repeat": args.repeat,
        "nonce": NONCE,
        "seed": SEED,
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "wall_seconds": round(time.time() - t0, 1),
    }
    text = report(data)
    print()
    print(text)
    write_results(args.out, "spotlight", text, data)
    print(f"\nwrote {args.out / 'spotlight.json'} and {args.out / 'spotlight.txt'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
