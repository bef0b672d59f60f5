"""The native core against the Python implementations and the C anchor, in one run.

    python benchmarks/native.py [--quick] [--size BYTES] [--no-memory] [--json PATH]

On the input classes of ``benchmarks/run.py`` (and the issue's ``&lt;`` + ZWSP + ``/``
class), times (best of N, ``time.perf_counter``) at level ``reserved``:

* ``native``: ``envelock._native.defang`` (Rust);
* ``reference``: ``envelock.eye.reference.defang`` (one Python reading per opener, the oracle);
* ``fast``: ``envelock.eye.fastpath.defang`` (generated regexes, Python 3.11+);
* ``markupsafe``: ``markupsafe.escape`` (the C anchor);
* ``openers``: ``envelock._native.openers`` (every reading, what a scanner consumes);

and prints MB/s (of the UTF-8 text; ``ms``: markupsafe) and the ratios native/markupsafe
(time), reference/native, fast/native, openers/markupsafe, the
scaling time(8n)/time(n) of native, ``defang_many`` on every core against one core, and
the peak memory of native ``defang`` and ``defang_body`` on a 100 MB body (a child
process per measurement; the peak RSS, VmHWM reset through ``/proc/self/clear_refs`` once the
input is built, above the RSS with the input built, as a multiple of the input's UTF-8 size). Never a timed assertion in tests.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import markupsafe

from envelock import _native
from envelock.eye import fastpath as _fastpath
from envelock.eye import reference as _reference
from envelock.eye.tokens import RESERVED_NAMES

_fastpath.WARM_OPENERS = 0  # the regex from the first call (not the reference until it pays)

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("envelock_bench_run", HERE / "run.py")
assert _spec is not None and _spec.loader is not None
RUN = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(RUN)

KB = 1024
MB = 1024 * KB
EXTRA = {"adv-ltref-zwsp": "&lt;\u200b/"}  # the slowest class (0.9 MB/s in Python)
CLASSES = (*RUN.TEXT_CLASSES, *RUN.ADVERSARIAL, *EXTRA)


def make(kind: str, size: int) -> str:
    if kind in EXTRA:
        unit = EXTRA[kind]
        return (unit * (size // len(unit) + 1))[:size]
    return str(RUN.make_input(kind, size))


def best(fn: Callable[[], object], budget: float = 0.4, least: int = 3, most: int = 50) -> float:
    """Best wall time of ``fn`` over at least ``least`` runs (more while within ``budget`` seconds)."""
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < least or (time.perf_counter() - start < budget and len(times) < most):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def mbps(size: int, t: float) -> float:
    return size / MB / t if t > 0 else float("inf")


def row(kind: str, size: int) -> dict[str, Any]:
    text = make(kind, size)
    nbytes = len(text.encode("utf-8"))
    out = _native.defang(text, "reserved", RESERVED_NAMES)
    if out != _reference.defang(text, "reserved", RESERVED_NAMES):  # pragma: no cover - caught by tests/test_native.py
        raise SystemExit(f"native and reference differ on {kind}")
    t = {
        "native": best(lambda: _native.defang(text, "reserved", RESERVED_NAMES)),
        "reference": best(lambda: _reference.defang(text, "reserved", RESERVED_NAMES), budget=0.2, least=1),
        "markupsafe": best(lambda: markupsafe.escape(text)),
        "openers": best(lambda: _native.openers(text, RESERVED_NAMES)),
    }
    if _fastpath.AVAILABLE:
        t["fast"] = best(lambda: _fastpath.defang(text, "reserved", RESERVED_NAMES), budget=0.2, least=1)
    big = text * 8
    t8 = best(lambda: _native.defang(big, "reserved", RESERVED_NAMES), least=2)
    return {"kind": kind, "size": size, "bytes": nbytes, "times": t, "native_8x": t8}


def batch(size: int, count: int) -> dict[str, float]:
    """``defang_many`` over ``count`` bodies against one ``defang`` call after another."""
    texts = [make(k, size) for k in ("html", "source", "multilingual", "adv-close")] * (count // 4)
    one = best(lambda: [_native.defang(x, "reserved", RESERVED_NAMES) for x in texts], least=2)
    many = best(lambda: _native.defang_many(texts, "reserved", RESERVED_NAMES), least=2)
    total = sum(len(x.encode()) for x in texts)
    return {"bodies": len(texts), "MB": total / MB, "one_core_s": one, "defang_many_s": many, "speedup": one / many}


_MEMORY_CHILD = r"""
import sys
sys.path.insert(0, {here!r})
from envelock import _native
from envelock.eye.tokens import RESERVED_NAMES
import importlib.util
spec = importlib.util.spec_from_file_location("r", {run!r}); r = importlib.util.module_from_spec(spec); spec.loader.exec_module(r)
kind, fn, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
unit = {extra!r}.get(kind)
text = (unit * (size // len(unit) + 1))[:size] if unit else r.make_input(kind, size)
def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))
nbytes = len(text.encode("utf-8"))
base = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:  # reset the peak (VmHWM) to the current RSS
    f.write("5")
out = getattr(_native, fn)(text, "reserved", RESERVED_NAMES)
peak = status("VmHWM")
print(len(text), nbytes, base, peak, len(out))
"""


def memory(kind: str, fn: str, size: int) -> dict[str, Any]:
    code = _MEMORY_CHILD.format(here=str(HERE.parent / "src"), run=str(HERE / "run.py"), extra=EXTRA)
    proc = subprocess.run([sys.executable, "-c", code, kind, fn, str(size)], capture_output=True, text=True, check=True)
    chars, nbytes, base, peak, _ = (int(x) for x in proc.stdout.split())
    return {
        "kind": kind,
        "fn": fn,
        "chars": chars,
        "utf8_MB": nbytes / MB,
        "peak_above_input_MB": (peak - base) / MB,
        "peak_total_MB": peak / MB,
        "peak_above_input_x": (peak - base) / nbytes,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="64 KB inputs, no memory runs")
    ap.add_argument("--size", type=int, default=512 * KB)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--memory-size", type=int, default=100 * MB)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    size = 64 * KB if args.quick else args.size
    print(f"# envelock native core vs Python and markupsafe.escape, level reserved, {size // KB} KB inputs")
    print(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores")
    head = f"{'class':<16}{'native MB/s':>12}{'ms MB/s':>12}{'native/ms':>10}{'ref/native':>11}{'fast/native':>12}"
    head += f"{'openers/ms':>11}{'8x time':>9}"
    print(head)
    rows = []
    for kind in CLASSES:
        r = row(kind, size)
        rows.append(r)
        t = r["times"]
        fast = t.get("fast")
        print(
            f"{kind:<16}{mbps(r['bytes'], t['native']):>12.1f}{mbps(r['bytes'], t['markupsafe']):>12.1f}"
            f"{t['native'] / t['markupsafe']:>10.2f}{t['reference'] / t['native']:>11.0f}"
            f"{(fast / t['native']) if fast else float('nan'):>12.0f}{t['openers'] / t['markupsafe']:>11.2f}"
            f"{r['native_8x'] / t['native']:>9.2f}",
            flush=True,
        )
    b = batch(size if not args.quick else 64 * KB, 64)
    print(
        f"# defang_many: {b['bodies']} bodies, {b['MB']:.1f} MB: one core {b['one_core_s'] * 1000:.0f} ms, "
        f"defang_many {b['defang_many_s'] * 1000:.0f} ms, speedup {b['speedup']:.2f}x"
    )
    mem: list[dict[str, Any]] = []
    if not (args.quick or args.no_memory):
        for kind, fn in (
            ("prose", "defang"),
            ("prose", "defang_body"),
            ("multilingual", "defang"),
            ("adv-close", "defang"),
            ("adv-close", "defang_body"),
        ):
            m = memory(kind, fn, args.memory_size)
            mem.append(m)
            print(
                f"# memory {fn}({kind}, {m['utf8_MB']:.0f} MB UTF-8): peak {m['peak_total_MB']:.0f} MB, "
                f"{m['peak_above_input_MB']:.0f} MB above the input ({m['peak_above_input_x']:.2f}x the input)",
                flush=True,
            )
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "batch": b, "memory": mem}, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
