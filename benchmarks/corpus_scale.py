"""Corpus scale benchmark: the batch API against the one-file-at-a-time CLI, and Ray's overhead.

    pip install '.[scale]' && python benchmarks/corpus_scale.py [--n 2000]

The same generated documents (examples/corpus_gen.py) are scanned as files (``envelock scan
DIR``, -j 1 and -j 2: a process per run, a file read and a report line per document), as one
Parquet file through the CLI (``envelock scan data.parquet --column text``), with the batch API
in this process (``envelock.columnar.scan_table``, 1 and 2 workers), and with Ray Data in local
mode (2 CPUs; Ray's start-up timed apart). One run each (wall clock, ``time.perf_counter``); MB
are UTF-8 bytes of text. Every route must report the same number of findings, or the run fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import corpus_gen
import pyarrow as pa
import pyarrow.parquet as pq

from envelock import columnar

ENVELOCK = str(Path(sys.executable).parent / "envelock")


def _cli(*args: str) -> tuple[float, int]:
    t = time.perf_counter()
    r = subprocess.run([ENVELOCK, "scan", "--format", "json", "--quiet", *args], capture_output=True, check=False)
    took = time.perf_counter() - t
    assert r.returncode in (0, 1), r.stderr.decode()
    return took, len(json.loads(r.stdout)["findings"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()
    rows, _ = corpus_gen.generate(args.n)
    work = Path(tempfile.mkdtemp(prefix="envelock-bench-"))
    (work / "files").mkdir()
    for r in rows:
        (work / "files" / f"{r['doc_id']}.txt").write_text(r["text"], encoding="utf-8")
    table = pa.Table.from_pylist(rows)
    pq.write_table(table, work / "data.parquet")
    mb = sum(len(r["text"].encode("utf-8")) for r in rows) / 1e6
    results: list[tuple[str, float, int]] = []
    results.append(("CLI, one file per document, -j 1", *_cli("-j", "1", str(work / "files"))))
    results.append(("CLI, one file per document, -j 2", *_cli("-j", "2", str(work / "files"))))
    results.append(("CLI, Parquet --column text, -j 2", *_cli("--column", "text", "-j", "2", str(work / "data.parquet"))))
    for w in (1, 2):
        t = time.perf_counter()
        n = columnar.scan_table(table, "text", workers=w).num_rows
        results.append((f"batch API, workers={w}", time.perf_counter() - t, n))
    if not args.no_ray:
        import ray

        from envelock.integrations.ray import scan_dataset

        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        t = time.perf_counter()
        ray.init(num_cpus=2, include_dashboard=False, object_store_memory=256 * 1024 * 1024, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        started = time.perf_counter() - t
        t = time.perf_counter()
        ds = ray.data.from_arrow(table).repartition(8)
        n = scan_dataset(ds, "text", id_column="doc_id", concurrency=2, batch_size=max(1, args.n // 8)).count()
        results.append((f"Ray Data local, 2 CPUs (+{started:.1f} s start-up)", time.perf_counter() - t, n))
        ray.shutdown()
    base = results[0][1]
    print(
        f"{args.n:,} documents, {mb:.1f} MB of text (examples/corpus_gen.py); one run each, this machine ({os.cpu_count()} CPUs)\n"
    )
    print("| route | seconds | MB/s | documents/s | per 100k documents | speed-up vs CLI -j 1 | findings |")
    print("|---|---|---|---|---|---|---|")
    for name, secs, n in results:
        per100k = secs * 100_000 / args.n
        print(f"| {name} | {secs:.2f} | {mb / secs:.1f} | {args.n / secs:,.0f} | {per100k:,.0f} s | {base / secs:.2f}x | {n} |")
    counts = {n for _, _, n in results}
    if len(counts) != 1:
        print(f"PROBLEM: the routes report different numbers of findings: {counts}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
