"""``scan_text``'s cost per text on short texts, where what does not depend on the text dominates:
microseconds per call, optionally before/after in one run.

    python benchmarks/per_text.py                                  # results/per_text.{txt,json}
    python benchmarks/per_text.py --before /tmp/old/src --before-label session-start

The texts: an empty one, one line of prose, and the first 1 KB of real text nobody here wrote (the
standard library's ``os.py``, ``pydoc_data``'s prose). Each call is timed in a loop of ``--calls``,
the best of ``--repeat`` loops, in a fresh process per tree and repetition, the trees alternating
(``_trees.py``). A batch scan of many small files pays this per file (``scaling.py``). Never a timed
assertion in tests.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path
from typing import Any

from _results import show_results
from _trees import in_tree, trees

#: One measurement in a fresh process: ``python -c CHILD calls`` prints {text name: seconds per call}.
CHILD = r"""
import importlib, json, os, sys, time
from envelock import scan_text
calls = int(sys.argv[1])
texts = {
    "empty": "",
    "one line": "The quick brown fox jumps over the lazy dog.\n",
    "1 KB of os.py": open(os.__file__, encoding="utf-8").read()[:1024],
    "1 KB of pydoc prose": "\n".join(importlib.import_module("pydoc_data.topics").topics.values())[:1024],
}
out = {}
for name, text in texts.items():
    scan_text(text)
    t = time.perf_counter()
    for _ in range(calls):
        scan_text(text)
    out[name] = (time.perf_counter() - t) / calls
print(json.dumps(out))
"""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5, help="loops per tree (best)")
    ap.add_argument("--before", type=Path, help="the src directory of another checkout, measured in the same run")
    ap.add_argument("--before-label", default="before", help="its name in the table")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = ap.parse_args(argv)
    measured = trees(args.before, args.before_label)
    runs: dict[str, list[dict[str, float]]] = {t: [] for t in measured}
    for _ in range(args.repeat):
        for t, src in measured.items():
            runs[t].append(in_tree(src, CHILD, str(args.calls)))
    best = {t: {name: min(r[name] for r in rs) for name in rs[0]} for t, rs in runs.items()}
    data: dict[str, Any] = {
        "command": " ".join(["python", "benchmarks/per_text.py", *(argv if argv is not None else sys.argv[1:])]),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "calls": args.calls,
        "repeat": args.repeat,
        "us_per_call": {t: {name: s * 1e6 for name, s in b.items()} for t, b in best.items()},
    }
    labels = list(measured)
    lines = [
        "scan_text, microseconds per call (best of the loops), default settings",
        f"{args.calls} calls per loop, best of {args.repeat} per tree; Python {data['python']}, {data['machine']}",
        f"command: {data['command']}",
        "",
        f"{'text':22}" + "".join(f" {label:>16}" for label in labels),
    ]
    for name in best[labels[0]]:
        lines.append(f"{name:22}" + "".join(f" {data['us_per_call'][t][name]:16.1f}" for t in labels))
    return show_results(args.out, "per_text", "\n".join(lines), data)


if __name__ == "__main__":
    sys.exit(main())
