"""envelock benchmarks against the anchors, as one command.

    python benchmarks/run.py [--quick] [--out benchmarks/results]

Times (best of N, ``time.perf_counter``) envelock's ``defang``, ``compose_preface``
and ``verify_preface`` at each level, and ``scan_text``, against the original
one-regex defang, ``markupsafe.escape``, ``html.escape``, lxml HTML parsing and
lxml strict XML parsing of the same text, on deterministic generated inputs
(prose, tag-dense HTML, Markdown with code, source code, multilingual text,
adversarial inputs, and prefaces of many envelopes or many problems) from 64 KB
to 16 MB. Writes a table of MB/s and ratios to
the anchors (terminal and ``latest.json``) and a log-log chart
``throughput.png``. Never used as a timed assertion in tests.
"""

from __future__ import annotations

import argparse
import html
import importlib
import os
import platform
import random
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import markupsafe
from lxml import etree

import envelock
from envelock import EnvelopeBreach, PrefaceEntry, compose_preface, parse_preface, verify_preface

DEFANG = importlib.import_module("envelock.escape")
KB = 1024
MB = 1024 * KB
FULL_SIZES = [64 * KB, 512 * KB, 4 * MB]
#: One 16 MB body, for these classes only (keeps the full run to minutes on 2 cores).
HUGE = 16 * MB
HUGE_KINDS = ("prose", "html", "adv-close")
QUICK_SIZES = [64 * KB, 512 * KB]
ORIGINAL_RE = re.compile(r"</retrieved_content\s*>", re.I)
TEXT_CLASSES = ("prose", "html", "markdown", "source", "multilingual")
ADVERSARIAL = ("adv-lt", "adv-conten", "adv-ltref", "adv-ignorables", "adv-close", "adv-colons", "adv-lookalike", "adv-lt-letter")
#: Prefaces of many small envelopes (``size`` bytes of composed text): verify is timed on the preface itself.
#: ``preface-entries``: empty bodies, all sound; ``preface-problems``: every body holds a raw ``<|im_start|>``,
#: so verify reports one problem per envelope.
PREFACES = ("preface-entries", "preface-problems")
#: Inputs for ``scan_text`` alone (with ``defang`` and ``markupsafe.escape`` as anchors): hostile shapes
#: repeated (one finding per repetition, or none at all), and real text nobody here wrote.
SCAN_SHAPES: dict[str, str] = {
    "scan-im-end": "<|im_end|>",  # one control token per 10 characters: 100,000 findings per MB
    "scan-pipe": "<|",  # an F#/Elm pipe: a ``<|`` with no closing ``|>``, no finding
    "scan-inst": "[INST]",  # one bracket token per 6 characters
    "scan-zwsp": "a\u200b",  # one word of letters joined by ZERO WIDTH SPACE
    "scan-pct": "%3C",  # percent-encoded openers, nothing after them
    "scan-uesc": "\\u003c",  # JSON/JS-escaped openers
}
#: Real text: the Python documentation's topics (``pydoc_data``) and the standard library's ``*.py``.
SCAN_REAL = ("scan-pydoc", "scan-stdlib")
#: The standard library's text after one KELVIN SIGN, a character ``re.IGNORECASE`` folds to ``k``
#: (the case-insensitive passes once fell back to their regexes over the whole text for it).
SCAN_FOLD = ("scan-fold",)
SCAN_CLASSES = (*SCAN_SHAPES, *SCAN_REAL, *SCAN_FOLD)
#: The metrics whose time(8n) / time(n) is reported for each class.
SCALING: dict[str, tuple[str, ...]] = {
    **{k: ("compose[reserved]",) for k in ADVERSARIAL},
    **{k: ("verify[reserved]", "verify+expected[reserved]") for k in PREFACES},
    **{k: ("scan_text",) for k in SCAN_CLASSES},
}

WORDS = (
    "the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not "
    "what all were we when your can said there use an each which she do how their if will up other about out many then "
    "them these so some her would make like him into time has look two more write go see number no way could people my "
    "than first water been call who oil its now find long down day did get come made may part retrieval content system"
).split()


def _fill(size: int, make: Callable[[random.Random], str]) -> str:
    rng = random.Random(size)
    parts: list[str] = []
    n = 0
    while n < size:
        p = make(rng)
        parts.append(p)
        n += len(p)
    return "".join(parts)[:size]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(6, 18))]
    s = " ".join(words).capitalize()
    return s + rng.choice([". ", ". ", "? ", "! ", ", \"quoted\" and 'single'. ", ".\n\n"])


def _html(rng: random.Random) -> str:
    tag = rng.choice(["div", "p", "span", "a", "b", "em", "strong", "td", "tr", "li", "section", "script", "table", "footer"])
    attrs = rng.choice(
        ["", ' class="c1"', ' id="x9" class="btn btn-primary"', ' href="https://a.example/?q=1&amp;r=2"', ' style="color:red"']
    )
    return f"<{tag}{attrs}>{' '.join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))}</{tag}>"


def _markdown(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.15:
        return "\n```python\ndef f(x: int) -> list[int]:\n    return [i * 2 for i in range(x) if i < 10]\n```\n\n"
    if r < 0.3:
        return f"## {rng.choice(WORDS).title()} {rng.choice(WORDS)}\n\n- [{rng.choice(WORDS)}](https://x.example/{rng.choice(WORDS)}) `code`\n"
    return _sentence(rng)


def _source(rng: random.Random) -> str:
    return rng.choice(
        [
            "    if (a < b && b > c) { return a << 2; }\n",
            "def run(self, items: list[str]) -> dict[str, int]:\n        return {k: len(k) for k in items if k}\n",
            '    printf("%d\\n", x[i] <= y ? 1 : 0);\n',
            "#include <stdio.h>\n#include <vector>\nstd::vector<std::string> v;\n",
            "        # comment: keep < and > and & here\n",
            "    let re = /<\\/?[a-z]+>/g; // tags\n",
        ]
    )


def _multilingual(rng: random.Random) -> str:
    return rng.choice(
        [
            "Съешь же ещё этих мягких французских булок, да выпей чаю. ",
            "敏捷的棕色狐狸跳过了懒狗。《书名》和〈篇名〉。 ",
            "いろはにほへと ちりぬるを わかよたれそ つねならむ。 ",
            "Ο γρήγορος καφέ αλεπού πηδά πάνω από το τεμπέλικο σκυλί. ",
            "الثعلب البني السريع يقفز فوق الكلب الكسول. ",
            "Le « renard » brun ‹ rapide › saute. Größe – Maß. ",
            "हिन्दी पाठ का एक वाक्य यहाँ है। 😀👍🏽 ",
        ]
    )


def _real_text(kind: str) -> str:
    """The Python documentation's topics, or the standard library's top-level ``*.py`` in name order."""
    if kind == "scan-pydoc":
        return "\n".join(importlib.import_module("pydoc_data.topics").topics.values())
    stdlib = Path(os.__file__).parent
    return "".join(p.read_text(encoding="utf-8", errors="surrogateescape") for p in sorted(stdlib.glob("*.py")))


def make_input(kind: str, size: int) -> str:
    if kind in SCAN_REAL:
        real = _real_text(kind)
        return (real * (size // len(real) + 1))[:size]
    if kind in SCAN_FOLD:
        return "\u212a" + make_input("scan-stdlib", size)[1:]
    if kind in SCAN_SHAPES:
        unit = SCAN_SHAPES[kind]
        return (unit * (size // len(unit) + 1))[:size]
    if kind == "prose":
        return _fill(size, _sentence)
    if kind == "html":
        return _fill(size, _html)
    if kind == "markdown":
        return _fill(size, _markdown)
    if kind == "source":
        return _fill(size, _source)
    if kind == "multilingual":
        return _fill(size, _multilingual)
    unit = {
        "adv-lt": "<",
        "adv-conten": "</retrieved_conten",
        "adv-ltref": "&lt;&#x3c;",
        "adv-ignorables": "<\u200b\u200d\u2060/x ",
        "adv-close": "</retrieved_content>",
        "adv-colons": "<:",  # namespace look-past after every opener (``T <: Animal`` is Scala)
        "adv-lookalike": "\uff1c\u00e9",  # fullwidth less-than, then an accented letter
        "adv-lt-letter": "<a",
    }[kind]
    return (unit * (size // len(unit) + 1))[:size]


PREFACE_ENTRY = PrefaceEntry("external", "web:https://bench.example/", "")
PREFACE_TOKEN = "<|im_start|>"


def make_preface(kind: str, size: int) -> tuple[str, list[PrefaceEntry]]:
    """A preface of about ``size`` bytes of small envelopes, and the entries it is composed of."""
    body = "" if kind == "preface-entries" else PREFACE_TOKEN
    entry = PrefaceEntry(PREFACE_ENTRY.source, PREFACE_ENTRY.origin, body)
    one = len(str(compose_preface([entry]))) + 2  # + the separator
    entries = [entry] * max(1, size // one)
    text = str(compose_preface(entries))
    if kind == "preface-problems":
        text = text.replace("<\\" + PREFACE_TOKEN[1:], PREFACE_TOKEN)  # undo the escape: one problem per envelope
    return text, entries


def original_defang(s: str) -> str:
    return ORIGINAL_RE.sub(r"<\\/retrieved_content>", s)


def _readers_available(level: str) -> bool:
    if level == "reserved":
        return True
    try:
        p = compose_preface([PrefaceEntry("external", "web:x", "<b>x</b>")], level=level)
        verify_preface(p, level=level)
        return True
    except NotImplementedError:
        return False


def _scan_text() -> Callable[[str], Any] | None:
    try:
        from envelock import scan_text

        scan_text("<retrieved_content>")
        return scan_text  # type: ignore[no-any-return]
    except (ImportError, NotImplementedError):
        return None


def best_of(fn: Callable[[], Any], repeat: int, budget: float) -> float:
    """Best wall time of up to ``repeat`` runs (fewer when one run exceeds ``budget`` seconds)."""
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        dt = time.perf_counter() - t
        best = min(best, dt)
        if dt > budget:
            break
    return best


def implementations(
    text: str, notes: list[str], preface: list[PrefaceEntry] | None = None, kind: str = ""
) -> dict[str, Callable[[], Any]]:
    """What is timed on ``text``; with ``preface`` (its entries), ``text`` is a composed preface and is verified as such."""
    if kind in SCAN_CLASSES:
        scan = _scan_text()
        return {"markupsafe.escape": lambda: markupsafe.escape(text), "defang": lambda: DEFANG.defang(text)} | (
            {"scan_text": lambda: scan(text)} if scan is not None else {}
        )
    entries = preface if preface is not None else [PrefaceEntry("external", "web:https://bench.example/", text)]
    impls: dict[str, Callable[[], Any]] = {
        "original-regex": lambda: original_defang(text),
        "markupsafe.escape": lambda: markupsafe.escape(text),
        "html.escape": lambda: html.escape(text),
        "defang": lambda: DEFANG.defang(text),
    }
    xml_src = "<r>" + html.escape(text, quote=False) + "</r>"
    html_parser = etree.HTMLParser()
    impls["lxml-html"] = lambda: etree.fromstring("<html><body><pre>" + text + "</pre></body></html>", html_parser)
    xml_parser = etree.XMLParser(resolve_entities=False, load_dtd=False, no_network=True, huge_tree=True)
    impls["lxml-xml-strict"] = lambda: etree.fromstring(xml_src.encode("utf-8"), xml_parser)
    if preface is not None:
        impls["compose[reserved]"] = lambda: compose_preface(entries)
        impls["verify[reserved]"] = lambda: verify_preface(text)
        if verify_preface(text).ok:  # expected entries are compared only when the grammar finds no problem
            impls["verify+expected[reserved]"] = lambda: verify_preface(text, expected=entries)
        impls["parse"] = lambda: _parse_or_problems(text)
        return impls
    for level in ("reserved", "markup", "xml"):
        impls[f"compose[{level}]"] = lambda level=level: compose_preface(entries, level=level)  # type: ignore[misc]
        if _readers_available(level):
            composed = compose_preface(entries, level=level)
            impls[f"verify[{level}]"] = lambda c=composed, level=level: verify_preface(c, level=level)  # type: ignore[misc]
        elif f"verify[{level}]" not in " ".join(notes):
            notes.append(f"verify[{level}] skipped: reader checks raise NotImplementedError")
    scan = _scan_text()
    if scan is not None:
        impls["scan_text"] = lambda: scan(text)
    elif "scan_text skipped" not in " ".join(notes):
        notes.append("scan_text skipped: envelock.scan_text not available")
    return impls


def _parse_or_problems(text: str) -> Any:
    try:
        return parse_preface(text)
    except EnvelopeBreach as exc:
        return exc


def run(sizes: list[int], repeat: int, out: Path, kinds: tuple[str, ...]) -> dict[str, Any]:
    notes: list[str] = []
    results: list[dict[str, Any]] = []
    for kind in kinds:
        for size in [*sizes, *([HUGE] if sizes[-1] < HUGE and kind in HUGE_KINDS and len(sizes) > 2 else [])]:
            if kind in PREFACES:
                text, entries = make_preface(kind, size)
                impls = implementations(text, notes, preface=entries)
            else:
                text = make_input(kind, size)
                impls = implementations(text, notes, kind=kind)
            row: dict[str, float] = {}
            for name, fn in impls.items():
                if name.startswith("lxml") and kind.startswith("adv") and size > 4 * MB:
                    continue  # lxml's own limits / slow error paths on pathological text
                try:
                    fn()  # warm up (builds the regexes once)
                    row[name] = best_of(fn, repeat, budget=2.0)
                except Exception as exc:
                    notes.append(f"{name} on {kind}/{size}: {type(exc).__name__}: {str(exc)[:80]}")
            nbytes = len(text.encode("utf-8"))
            results.append({"input": kind, "size": size, "bytes": nbytes, "seconds": row})
            print(
                f"  {kind:15} {size // KB:>6} KB  " + "  ".join(f"{k}={nbytes / v / 1e6:.2f}" for k, v in row.items() if v > 0),
                flush=True,
            )
    return {"results": results, "notes": sorted(set(notes))}


RATIOS = [
    ("compose[reserved]", "markupsafe.escape"),
    ("verify[reserved]", "compose[reserved]"),
    ("defang", "markupsafe.escape"),
    ("defang", "original-regex"),
    ("compose[markup]", "markupsafe.escape"),
    ("compose[xml]", "lxml-xml-strict"),
    ("verify[reserved]", "lxml-xml-strict"),
    ("verify+expected[reserved]", "compose[reserved]"),
    ("scan_text", "markupsafe.escape"),
]


def report(data: dict[str, Any]) -> str:
    lines: list[str] = []
    results = data["results"]
    names = sorted({n for r in results for n in r["seconds"]})
    lines.append("Throughput, MB/s of UTF-8 input (higher is better)")
    head = f"{'input':15} {'size':>7} " + " ".join(f"{n[:17]:>17}" for n in names)
    lines.append(head)
    for r in results:
        cells = [f"{r['bytes'] / r['seconds'][n] / 1e6:17.1f}" if n in r["seconds"] else f"{'-':>17}" for n in names]
        lines.append(f"{r['input']:15} {r['size'] // KB:>5}KB " + " ".join(cells))
    lines.append("")
    lines.append("Time ratios (A / B; lower is better; target in brackets)")
    lines.append(f"{'input':15} {'size':>7} " + " ".join(f"{a[:12]}/{b[:12]:>12}" for a, b in RATIOS))
    for r in results:
        s = r["seconds"]
        cells = [f"{s[a] / s[b]:25.2f}" if a in s and b in s else f"{'-':>25}" for a, b in RATIOS]
        lines.append(f"{r['input']:15} {r['size'] // KB:>5}KB " + " ".join(cells))
    lines.append("")
    lines.append(
        "Scaling: time(8n) / time(n) (target <= 10) of compose on adversarial inputs, of verify on prefaces, of scan_text on scan-*"
    )
    by = {(r["input"], r["size"]): r["seconds"] for r in results}
    sizes = sorted({r["size"] for r in results})
    for kind, metrics in SCALING.items():
        for a in sizes:
            small, big = by.get((kind, a), {}), by.get((kind, a * 8), {})
            for metric in metrics:
                if metric in small and metric in big:
                    ratio = big[metric] / small[metric]
                    lines.append(f"  {kind:20} {a // KB:>6}KB -> {a * 8 // KB:>6}KB: {ratio:.2f}  ({metric})")
    for n in data["notes"]:
        lines.append(f"note: {n}")
    return "\n".join(lines)


def chart(data: dict[str, Any], path: Path) -> bool:
    """Write the chart; ``False`` (nothing written) when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        return False

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    results = data["results"]
    kinds = list(dict.fromkeys(r["input"] for r in results))
    shown = [
        "compose[reserved]",
        "verify[reserved]",
        "defang",
        "markupsafe.escape",
        "original-regex",
        "html.escape",
        "lxml-xml-strict",
        "scan_text",
    ]
    styles = {n: (f"C{i}", "-o" if i < 3 else "--s") for i, n in enumerate(shown)}
    cols = 4
    rows = (len(kinds) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 4 * rows), squeeze=False)
    for ax, kind in zip(axes.flat, kinds, strict=False):
        rs = [r for r in results if r["input"] == kind]
        for n in shown:
            pts = [(r["bytes"], r["bytes"] / r["seconds"][n] / 1e6) for r in rs if n in r["seconds"]]
            if pts:
                color, style = styles[n]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], style, color=color, label=n, markersize=4)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_title(kind)
        ax.set_xlabel("input size (bytes)")
        ax.set_ylabel("MB/s")
        ax.grid(True, which="both", alpha=0.3)
    for ax in list(axes.flat)[len(kinds) :]:
        ax.axis("off")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower right", ncol=2, fontsize=10)
    fig.suptitle("envelock throughput vs input size (log-log; one panel per input class)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


_SIZE_RE = re.compile(r"\s*(\d+)\s*(b|k|kb|kib|m|mb|mib)?\s*", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "k": KB, "kb": KB, "kib": KB, "m": MB, "mb": MB, "mib": MB}


def parse_sizes(text: str) -> list[int]:
    """``--sizes``: comma-separated sizes, each bytes (``4194304``) or with a unit (``64KB``, ``4M``,
    ``4MiB``; K and M are 1024 and 1024**2, as in the rest of this script)."""
    sizes = []
    for part in text.split(","):
        m = _SIZE_RE.fullmatch(part)
        if m is None or int(m.group(1)) == 0:
            raise argparse.ArgumentTypeError(f"not a size: {part.strip()!r} (give bytes, or a number with KB or MB: 64KB,4MB)")
        sizes.append(int(m.group(1)) * _UNITS[(m.group(2) or "").lower()])
    return sorted(set(sizes))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="fewer sizes and repeats (for development)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    ap.add_argument("--only", default="", help="comma-separated input classes")
    ap.add_argument(
        "--sizes",
        type=parse_sizes,
        default=None,
        help="comma-separated sizes (64KB, 4MB, 4M or bytes), instead of the default ones (for development)",
    )
    args = ap.parse_args(argv)
    sizes = QUICK_SIZES if args.quick else FULL_SIZES
    if args.sizes:
        sizes = args.sizes
    repeat = 3 if args.quick else 5
    kinds = tuple(
        k for k in (*TEXT_CLASSES, *ADVERSARIAL, *PREFACES, *SCAN_CLASSES) if not args.only or k in args.only.split(",")
    )
    args.out.mkdir(parents=True, exist_ok=True)
    print(
        f"envelock {getattr(envelock, '__version__', '?')} defang impl={DEFANG.implementation()}; sizes {[s // KB for s in sizes]} KB; best of {repeat}"
    )
    data = run(sizes, repeat, args.out, kinds)
    data["meta"] = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "markupsafe": markupsafe.__version__ if hasattr(markupsafe, "__version__") else "?",
        "lxml": etree.__version__,
        "impl": DEFANG.implementation(),
        "quick": args.quick,
        "repeat": repeat,
        "sizes": sizes,
        "machine": platform.machine(),
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    text = report(data)
    print()
    print(text)
    from _results import write_results  # benchmarks/ is on sys.path when run as a script

    write_results(args.out, "latest", text, data)
    charted = chart(data, args.out / "throughput.png")
    print(f"\nwrote {args.out / 'latest.json'}, {args.out / 'latest.txt'}", end="")
    print(f" and {args.out / 'throughput.png'}" if charted else " (no chart: matplotlib is not installed)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
