"""First contact without the native core: what the README's first command costs per implementation,
and the numbers behind ``fastpath.WARM_OPENERS`` (docs/INTERNALS.md cites this script's results).

    python benchmarks/first_call.py            # results/first_call.{txt,json}

Each row is a fresh process (the fast path's regex is compiled once per process and configuration):

* ``envelock compose examples/turn.json --verify`` on ``native``, ``fast``, ``reference``, and on
  ``fast`` with ``WARM_OPENERS = 0`` (the regex compiled at the first defang, as before the hand-over);
* the compile of one fast configuration (the default names, level ``reserved``);
* the reference defang's cost per ``<`` on 2 MB of Debian ``python3-doc`` HTML (``pipeline.py``'s
  ``html`` text), which with the compile gives the hand-over bound: compile time / cost per ``<``.

Wall time of each process (``time.perf_counter`` around ``subprocess.run``), best of ``--repeat``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _results import show_results

ROOT = Path(__file__).resolve().parents[1]
TURN = ROOT / "examples" / "turn.json"

#: The README's first command, run in-process by a child (``ENVELOCK_IMPL`` picks the implementation;
#: ``warm0`` compiles the fast regex at the first defang).
COMPOSE = r"""
import sys
from envelock.eye import fastpath
if sys.argv[1] == "warm0":
    fastpath.WARM_OPENERS = 0
from envelock.cli import main
code = main(["compose", sys.argv[2], "--verify"])
assert code == 0, code
"""

#: The compile of one configuration, and the reference's cost per '<' on HTML (seconds, microseconds).
COSTS = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pipeline import source_text
from envelock.eye import fastpath, reference
from envelock.eye.reader import names_for
t = time.perf_counter(); fastpath._fast_regex(names_for(), False); compile_s = time.perf_counter() - t
html, _ = source_text("html", 2_000_000)
t = time.perf_counter(); reference.defang(html); ref_s = time.perf_counter() - t
print(json.dumps({"compile_s": compile_s, "reference_us_per_lt": ref_s / html.count("<") * 1e6, "html_lt": html.count("<")}))
"""


def _run(args: list[str], env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", *args], env={**os.environ, **env}, capture_output=True, text=True, check=True)
    return time.perf_counter() - t, proc.stdout


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="processes per row (best)")
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = ap.parse_args(argv)
    from envelock.eye import backend, fastpath

    rows: dict[str, float] = {}
    for label, impl, mode in (
        ("native", "native", "-"),
        ("fast", "fast", "-"),
        ("fast, compiled at once", "fast", "warm0"),
        ("reference", "reference", "-"),
    ):
        if impl not in backend.IMPLEMENTATIONS:
            continue
        rows[label] = min(_run([COMPOSE, mode, str(TURN)], {"ENVELOCK_IMPL": impl})[0] for _ in range(args.repeat))
    costs: dict[str, Any] = json.loads(_run([COSTS, str(Path(__file__).resolve().parent)], {})[1])
    bound = costs["compile_s"] / (costs["reference_us_per_lt"] / 1e6)
    data = {
        "command": " ".join(["python", "benchmarks/first_call.py", *(argv if argv is not None else sys.argv[1:])]),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "compose_s": rows,
        **costs,
        "bound_lt": bound,
        "warm_openers": fastpath.WARM_OPENERS,
    }
    lines = [
        "first contact: `envelock compose examples/turn.json --verify`, one fresh process per run (best of"
        f" {args.repeat}); Python {data['python']}, {data['machine']}",
        f"command: {data['command']}",
        "",
        *(f"{label:24} {seconds:8.2f} s" for label, seconds in rows.items()),
        "",
        f"compile of one fast configuration (default names, reserved): {costs['compile_s']:.2f} s",
        f"reference defang per '<' on python3-doc HTML ({costs['html_lt']:,} '<'): {costs['reference_us_per_lt']:.1f} us",
        f"hand-over bound those give (compile / cost per '<'): {bound:,.0f} '<'; fastpath.WARM_OPENERS = {fastpath.WARM_OPENERS:,}",
    ]
    return show_results(args.out, "first_call", "\n".join(lines), data)


if __name__ == "__main__":
    sys.exit(main())
