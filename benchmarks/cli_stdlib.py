"""``envelock scan`` over the interpreter's standard library, as a CI gate would run it.

    python benchmarks/cli_stdlib.py [--jobs 1,2] [--repeat 2] [--out DIR]

Runs ``envelock scan FILES --format json --quiet --jobs N`` on every ``*.py`` file of the standard
library (``site-packages`` left out; the files are named on the command line, so the bytes read
are known), once per ``--jobs`` value, best of ``--repeat`` wall times (start-up included), and
reports files, MB, seconds, MB/s and findings by severity (from the JSON report). Real text nobody here wrote; 2 shared cores. Never a timed assertion in tests.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import platform
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

from _results import write_results

HERE = Path(__file__).resolve().parent


def run(files: list[str], jobs: int) -> tuple[float, dict[str, object]]:
    exe = shutil.which("envelock") or sys.executable
    cmd = [exe] if exe != sys.executable else [sys.executable, "-m", "envelock"]
    cmd += ["scan", *files, "--format", "json", "--quiet", "--jobs", str(jobs)]
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    if proc.returncode not in (0, 1):
        raise SystemExit(f"envelock scan failed ({proc.returncode}): {proc.stderr[-500:]}")
    return wall, json.loads(proc.stdout)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(str(p) for p in stdlib.rglob("*.py") if "site-packages" not in p.parts and p.is_file())
    nbytes = sum(Path(f).stat().st_size for f in files)
    rows = []
    for jobs in (int(j) for j in args.jobs.split(",")):
        best = None
        for _ in range(args.repeat):
            wall, report = run(files, jobs)
            best = wall if best is None else min(best, wall)
        assert best is not None
        sev = collections.Counter(f["severity"] for f in report["findings"])
        scanned = report["summary"]["files"]
        rows.append({"jobs": jobs, "seconds": best, "files": scanned, "bytes": nbytes, "severities": dict(sorted(sev.items()))})
    head = (
        f"# envelock scan <{len(files)} *.py files of {stdlib}> --format json --quiet; best of {args.repeat}; "
        f"{datetime.date.today().isoformat()}, CPython {platform.python_version()}, {platform.machine()}, 2 cores"
    )
    lines = [head, f"{'jobs':>4} {'files':>6} {'MB':>7} {'s':>6} {'MB/s':>6}  findings"]
    for r in rows:
        mb = r["bytes"] / 2**20
        lines.append(
            f"{r['jobs']:>4} {r['files']!s:>6} {mb:7.1f} {r['seconds']:6.1f} {mb / r['seconds']:6.1f}  {r['severities']}"
        )
    print("\n".join(lines))
    write_results(args.out, "cli_stdlib", "\n".join(lines), {"header": head, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
