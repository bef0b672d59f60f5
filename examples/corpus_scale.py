"""Corpus scale, worked: 100,000 generated documents in Parquet, scanned with the batch API and with Ray.

    pip install '.[scale]' && python examples/corpus_scale.py        # from the repository root

Generates the corpus (examples/corpus_gen.py: paragraphs of this interpreter's standard library,
with an attack from corpus/*.json planted in one document of 50), writes it to Parquet, then
scans it twice: ``envelock.columnar.scan_table`` (one process per core) and
``envelock.integrations.ray.scan_parquet`` (Ray Data in local mode, 2 CPUs, findings written back
as Parquet). Prints the timings and the findings summary; exits 1 if a planted document was
missed, a benign one got an error, or the two results differ.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import corpus_gen  # examples/ is on sys.path above
import pyarrow as pa  # type: ignore[import-untyped, unused-ignore]
import pyarrow.compute as pc  # type: ignore[import-untyped, unused-ignore]  # not loaded by `import pyarrow` alone
import pyarrow.parquet as pq  # type: ignore[import-untyped, unused-ignore]

from envelock import columnar
from envelock.batch.pool import default_workers


def _counts(c: Counter[str]) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(c.items()))


def _summary(name: str, findings: list[dict[str, Any]], planted: dict[str, str], seconds: float, mb: float, n: int) -> list[str]:
    errors = {d["id"] for d in findings if d["severity"] == "error"}
    warned = {d["id"] for d in findings if d["severity"] == "warning"}
    missed = sorted(set(planted) - errors)
    benign_errors = sorted(errors - set(planted))
    print(f"\n{name}: {seconds:.1f} s, {mb / seconds:.1f} MB/s, {n / seconds:,.0f} documents/s")
    print(f"  findings: {len(findings):,} ({_counts(Counter(d['severity'] for d in findings))})")
    print(f"  planted documents found (an error): {len(planted) - len(missed):,} of {len(planted):,}")
    print(
        f"  benign documents with an error: {len(benign_errors)}; "
        f"with a warning: {len(warned - set(planted)):,} of {n - len(planted):,}"
    )
    print("  rules: " + ", ".join(f"{k} {v:,}" for k, v in Counter(d["rule"] for d in findings).most_common()))
    return [f"{name}: planted {i} missed" for i in missed] + [f"{name}: benign {i} has an error" for i in benign_errors]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000, help="documents (default 100,000)")
    ap.add_argument("--workers", type=int, default=min(2, default_workers()), help="processes / Ray CPUs (default 2)")
    ap.add_argument("--no-ray", action="store_true", help="the batch API only")
    args = ap.parse_args()
    out = Path(tempfile.mkdtemp(prefix="envelock-scale-"))
    t = time.perf_counter()
    rows, planted = corpus_gen.generate(args.n)
    table = pa.Table.from_pylist(rows)
    src = out / "corpus"
    src.mkdir()
    parts = 8
    for k in range(parts):
        pq.write_table(
            table.slice(k * args.n // parts, (k + 1) * args.n // parts - k * args.n // parts), src / f"part-{k}.parquet"
        )
    mb = sum(pc.binary_length(table.column("text")).to_pylist()) / 1e6
    print(
        f"corpus: {args.n:,} documents, {mb:.1f} MB of text, {len(planted):,} planted attacks, "
        f"in {src} ({time.perf_counter() - t:.1f} s)"
    )

    t = time.perf_counter()
    data = pq.read_table(src)
    batch = columnar.scan_table(data, "text", id_column="doc_id", origin_column="origin", workers=args.workers)
    problems = _summary(f"batch API ({args.workers} processes)", batch.to_pylist(), planted, time.perf_counter() - t, mb, args.n)
    if not args.no_ray:
        import ray  # type: ignore[import-untyped, unused-ignore]

        from envelock.integrations.ray import scan_parquet

        os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")
        t0 = time.perf_counter()
        ray.init(num_cpus=args.workers, include_dashboard=False, object_store_memory=512 * 1024 * 1024, log_to_driver=False)
        ray.data.DataContext.get_current().enable_progress_bars = False
        started = time.perf_counter() - t0
        t = time.perf_counter()
        scan_parquet(
            str(src),
            str(out / "findings"),
            "text",
            id_column="doc_id",
            origin_column="origin",
            concurrency=args.workers,
            num_blocks=4 * args.workers,
        )
        took = time.perf_counter() - t
        engine = pq.read_table(out / "findings").to_pylist()
        ray.shutdown()
        problems += _summary(
            f"Ray Data, local mode ({args.workers} CPUs; + {started:.1f} s to start Ray)", engine, planted, took, mb, args.n
        )
        key = lambda d: (d["id"], d["offset"], d["rule"], d["end_offset"])  # noqa: E731
        if sorted(engine, key=key) != sorted(batch.drop_columns(["row"]).to_pylist(), key=key):
            problems.append("Ray's findings differ from the batch API's")
        else:
            print("\nRay's findings are identical to the batch API's.")
    for p in problems:
        print("PROBLEM:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
