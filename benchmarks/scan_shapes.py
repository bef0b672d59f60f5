"""``scan_text`` on hostile repeated shapes: MB/s and linearity in one run, optionally before/after.

    python benchmarks/scan_shapes.py                          # results/scan_shapes.{txt,json}
    python benchmarks/scan_shapes.py --repeat 3 --out /tmp/bench
    python benchmarks/scan_shapes.py --before /tmp/old/src --before-label main   # same run, interleaved

Each shape is repeated to 256 KB and to 2 MB (code points; the shapes are ASCII but for ``a`` + U+200B
and ``« ``) and scanned with the default settings. Per shape: the median over ``--repeat`` runs of the
CPU time (``time.process_time``; the machine is shared, so descheduled time is left out) and of the wall
time of one ``scan_text`` at 2 MB, as MB/s; the ratio time(2 MB) / time(256 KB) (8 times the input:
linear is about 8); the findings at 2 MB; ``html.escape`` of the same text as an anchor (the ratio
``scan_text / html.escape`` moves less with the load than MB/s do); and the CPU time with the garbage
collector disabled for the call (what the collector's passes over hundreds of thousands of live
findings cost; envelock does not disable it). With ``--before`` the same measurements run on another
source tree (``PYTHONPATH``) in the same run, one process per tree and repetition, alternating.
Never a timed assertion: tests/properties/test_complexity.py counts the work of the same shapes.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

from _results import show_results
from _trees import in_tree, trees

#: The shapes: the five the availability target names, then three that must not get slower, then
#: a base64 run the blob sift must keep (it decodes to ``<x></x>``: harmless, but read by the eye),
#: repeated (0.5 MB/s before each distinct run was judged once), and an encoded ``<|`` (0.4 MB/s
#: before each window after an encoded opener was read once; every escape is a Python step still).
SHAPES: dict[str, str] = {
    "%3C": "%3C",
    "\\u003c": "\\u003c",
    "a+ZWSP": "a\u200b",
    "<|im_end|>": "<|im_end|>",
    "[INST]": "[INST]",
    "<|": "<|",
    "&lt;": "&lt;",
    "« ": "« ",
    "prose": "The quick brown fox jumps over the lazy dog. ",
    "b64 <x>": "PHg+PC94Pg== ",
    "%3C%7C": "%3C%7C",
}
#: ``--red-team``: the slow shapes a red-team pass found (stop 38), each far below the issue's 20 MB/s:
#: bar shapes (a Gemma block opener per 4 characters), hex and base64 of a tag, dense escapes, UTF-7,
#: a run of ``+``. Written to ``results/scan_shapes_red_team.{txt,json}``.
RED_TEAM: dict[str, str] = {
    "<|a>": "<|a>",
    "<|turn>": "<|turn>",
    "hex 3c7c": "3c7c",
    "hex 3c2f": "3c2f",
    "b64 PC9y": "PC9y",
    "%3Cs%3E": "%3Cs%3E",
    "=3Cs=3E": "=3Cs=3E",
    "\\x3cs\\x3e": "\\x3cs\\x3e",
    "%5BINST%5D": "%5BINST%5D",
    "+ADw-s+AD4-": "+ADw-s+AD4-",
    "+": "+",
    # stop 48's red team: a padded opener, then one whose padding hides a tag.
    "< 40 NBSP": "<" + "\u00a0" * 40,
    "< 40 NBSP tag": "<" + "\u00a0" * 40 + "retrieved_content>",
    # stop 49's red team: names in letter symbols (circled), read again for the reserved names.
    "<|circled turn>": "<|\u24e3\u24e4\u24e1\u24dd>",
    "<circled s>": "<\u24e2>",
    "</circled tag>": "</\u24e1\u24d4\u24e3\u24e1\u24d8\u24d4\u24e5\u24d4\u24d3_\u24d2\u24de\u24dd\u24e3\u24d4\u24dd\u24e3>",
}
SMALL, BIG = 256_000, 2_000_000

#: One measurement, in a fresh process: ``python -c CHILD`` prints a JSON object.
CHILD = r"""
import gc, html, json, sys, time
from envelock import scan_text
shapes = json.loads(sys.argv[1])
sizes = json.loads(sys.argv[2])
out = {}
for name, unit in shapes.items():
    row = {}
    for size in sizes:
        text = (unit * (size // len(unit) + 1))[:size]
        c, w = time.process_time(), time.perf_counter()
        found = scan_text(text)
        row[str(size)] = [time.process_time() - c, time.perf_counter() - w]
        del found
    row["findings"] = len(scan_text(text))
    gc.disable()
    try:
        c = time.process_time(); scan_text(text); row["nogc"] = time.process_time() - c
    finally:
        gc.enable()
    c = time.process_time(); html.escape(text); row["anchor"] = time.process_time() - c
    out[name] = row
print(json.dumps(out))
"""


def measure(src: Path, shapes: dict[str, str]) -> dict[str, Any]:
    got: dict[str, Any] = in_tree(src, CHILD, json.dumps(shapes), json.dumps([SMALL, BIG]))
    return got


def summarize(runs: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for name in runs[0]:
        rows = [r[name] for r in runs]
        cpu = statistics.median(r[str(BIG)][0] for r in rows)
        out[name] = {
            "cpu_mb_s": BIG / 1e6 / cpu,
            "wall_mb_s": BIG / 1e6 / statistics.median(r[str(BIG)][1] for r in rows),
            "ratio_8x": statistics.median(r[str(BIG)][0] / r[str(SMALL)][0] for r in rows),
            "findings": rows[0]["findings"],
            "vs_anchor": statistics.median(r[str(BIG)][0] / r["anchor"] for r in rows),
            "nogc_mb_s": BIG / 1e6 / statistics.median(r["nogc"] for r in rows),
        }
    return out


COLUMNS = (
    ("cpu_mb_s", "MB/s cpu", "{:.2f}"),
    ("wall_mb_s", "MB/s wall", "{:.2f}"),
    ("ratio_8x", "t(8n)/t(n)", "{:.2f}"),
    ("vs_anchor", "x html.escape", "{:.0f}"),
    ("nogc_mb_s", "MB/s gc off", "{:.2f}"),
    ("findings", "findings", "{:.0f}"),
)


def report(data: dict[str, Any]) -> str:
    trees = list(data["trees"])
    lines = [
        f"scan_text on shapes repeated to {BIG:,} code points, default settings",
        f"median of {data['repeat']} runs per tree; Python {data['python']}, {data['machine']}",
        f"command: {data['command']}",
    ]
    if len(trees) > 1:
        lines.append("cells: " + " -> ".join(trees) + " (the same run, one process per tree and repetition, alternating)")
    lines.append("")
    width = max(14, 7 * len(trees) + 4)
    lines.append(f"{'shape':14}" + "".join(f" {label:>{width}}" for _, label, _ in COLUMNS))
    for name in data["trees"][trees[0]]:
        cells = (" -> ".join(fmt.format(data["trees"][t][name][key]) for t in trees) for key, _, fmt in COLUMNS)
        lines.append(f"{name:14}" + "".join(f" {cell:>{width}}" for cell in cells))
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5, help="runs per tree (median)")
    ap.add_argument("--only", default="", help="comma-separated shape names")
    ap.add_argument("--before", type=Path, help="the src directory of another checkout, measured in the same run")
    ap.add_argument("--before-label", default="before", help="its name in the table")
    ap.add_argument("--red-team", action="store_true", help="the red team's slow shapes (RED_TEAM) instead")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = ap.parse_args(argv)
    table = RED_TEAM if args.red_team else SHAPES
    shapes = {k: v for k, v in table.items() if not args.only or k in args.only.split(",")}
    measured = trees(args.before, args.before_label)
    runs: dict[str, list[dict[str, Any]]] = {t: [] for t in measured}
    for _ in range(args.repeat):
        for t, src in measured.items():
            runs[t].append(measure(src, shapes))
    data = {
        "command": " ".join(["python", "benchmarks/scan_shapes.py", *(argv if argv is not None else sys.argv[1:])]),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "repeat": args.repeat,
        "trees": {t: summarize(r) for t, r in runs.items()},
    }
    return show_results(args.out, "scan_shapes_red_team" if args.red_team else "scan_shapes", report(data), data)


if __name__ == "__main__":
    sys.exit(main())
