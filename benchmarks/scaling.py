"""How the batch scan scales over this machine's cores: threads against processes, with a
pure-Python busy loop as the control of what the machine delivers.

    python benchmarks/scaling.py [--workers 2] [--copies 4] [--repeat 3] [--out DIR]

Scans every ``*.py`` file of the standard library (real text nobody here wrote) with
``scan_text``: one after another in this process, on ``workers`` threads (the native passes drop
the GIL for texts of 64 KB or more; the Python parts hold it), and on ``workers`` processes through
``envelock.batch.pool.ordered_map`` (the batch path; pool start-up and pickling included, as a CLI
run pays them). The control runs a busy loop the same three ways, sized to the scan's serial
time: its thread speed-up shows the GIL (about 1x), its process speed-up what the cores deliver.
The files are scanned ``--copies`` times over, so the pool's start is not the whole run. Best of
``--repeat``, the modes alternating. Never a timed assertion in tests.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
import sysconfig
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _results import write_results
from _timing import best

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "src"))

from envelock.batch.pool import ordered_map  # noqa: E402
from envelock.eye import backend  # noqa: E402
from envelock.scan import scan_text  # noqa: E402


def scan_one(text: str) -> int:
    return len(scan_text(text))


def scan_many(texts: list[str]) -> int:
    return sum(scan_one(t) for t in texts)


def busy(n: int) -> int:
    x = 0
    for i in range(n):
        x += i * i
    return x


def busy_many(ns: list[int]) -> int:
    return sum(busy(n) for n in ns)


def modes(
    one: Callable[[object], int], many: Callable[[list[object]], int], tasks: list[object], workers: int
) -> dict[str, Callable[[], object]]:
    chunks = [tasks[k :: 4 * workers] for k in range(4 * workers)]
    return {
        "serial": lambda: [one(t) for t in tasks],
        "threads": lambda: list(ThreadPoolExecutor(workers).map(one, tasks)),
        "processes": lambda: list(ordered_map(many, chunks, workers)),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts and p.is_file())
    texts: list[object] = [p.read_text(encoding="utf-8", errors="replace") for p in files] * args.copies
    mb = sum(len(str(t).encode()) for t in texts) / 1e6
    scan = modes(scan_one, scan_many, texts, args.workers)  # type: ignore[arg-type]
    times = {m: float("inf") for m in scan}
    for _ in range(args.repeat):
        for m, fn in scan.items():
            times[m] = min(times[m], best(fn, 1))
    # The control: as many tasks, as long in all as the serial scan.
    per = 200_000
    unit = best(lambda: busy(per), 3)
    jobs: list[object] = [max(1, int(per * times["serial"] / unit / len(texts)))] * len(texts)
    ctl = modes(busy, busy_many, jobs, args.workers)  # type: ignore[arg-type]
    ctimes = {m: float("inf") for m in ctl}
    for _ in range(args.repeat):
        for m, fn in ctl.items():
            ctimes[m] = min(ctimes[m], best(fn, 1))
    rows = [
        {
            "mode": m,
            "scan_seconds": times[m],
            "scan_mb_s": mb / times[m],
            "scan_speedup": times["serial"] / times[m],
            "busy_seconds": ctimes[m],
            "busy_speedup": ctimes["serial"] / ctimes[m],
        }
        for m in scan
    ]
    head = (
        f"# scan_text over {len(files)} *.py files of {stdlib}, {args.copies} times ({mb:.1f} MB), implementation {backend.implementation()}, "
        f"{args.workers} workers, best of {args.repeat}; {datetime.date.today()}, CPython {platform.python_version()}, "
        f"{platform.machine()}, {os.cpu_count()} cores"
    )
    lines = [head, f"{'mode':<10} {'scan s':>7} {'MB/s':>6} {'speed-up':>8} {'busy s':>7} {'busy speed-up':>13}"]
    lines += [
        f"{r['mode']:<10} {r['scan_seconds']:>7.2f} {r['scan_mb_s']:>6.1f} {r['scan_speedup']:>7.2f}x {r['busy_seconds']:>7.2f} {r['busy_speedup']:>12.2f}x"
        for r in rows
    ]
    text = "\n".join(lines)
    print(text)
    write_results(args.out, "scaling", text, {"header": head, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
