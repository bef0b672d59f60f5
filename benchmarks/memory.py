"""Peak memory of ``compose_preface`` and ``verify_preface`` on one large body of real text.

    python benchmarks/memory.py [--size MB] [--out DIR]

The body is the standard library's ``*.py`` source (``code``: ASCII only) and the same with one ``é``
in front (``code +é``: the string is no longer ASCII, so the native core converts it to UTF-8 and
back), repeated to ``--size`` MB (100). Each measurement runs in a child process: the input is
built (for verify, the preface is composed first), the peak RSS (VmHWM) is reset through
``/proc/self/clear_refs``, the call runs, and the new peak above the RSS before the call is printed,
in MB and as a multiple of the body's UTF-8 size. Level ``reserved`` only: at ``markup`` and ``xml``
the parsers refuse a text node over 10 MB (lxml's ``huge_tree=False``), so verify reports a problem
instead of reading a 100 MB body. Linux only (``/proc``). Never a timed assertion in tests.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import subprocess
import sys
from pathlib import Path

from _results import write_results

HERE = Path(__file__).resolve().parent

_CHILD = r"""
import sys, sysconfig
from pathlib import Path
sys.path.insert(0, {src!r})
from envelock import PrefaceEntry, compose_preface, verify_preface
from envelock.eye import backend
kind, what, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
stdlib = Path(sysconfig.get_paths()["stdlib"])
unit = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(stdlib.glob("*.py")) if p.read_text(encoding="utf-8").isascii())
if kind == "code +é":
    unit = "é" + unit
body = (unit * (size // len(unit) + 1))[:size]
del unit
entries = [PrefaceEntry("external", "web:bench", body)]
text = compose_preface(entries) if what == "verify" else None

def status(key):
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))

base = status("VmRSS")
with open("/proc/self/clear_refs", "w") as f:  # reset the peak (VmHWM) to the current RSS
    f.write("5")
if what == "verify":
    result = verify_preface(text)
    assert result.ok, result.problems[:2]
else:
    result = compose_preface(entries)
peak = status("VmHWM")
print(len(body.encode("utf-8")), peak - base, backend.implementation())
"""


def measure(kind: str, what: str, size: int) -> dict[str, object]:
    code = _CHILD.format(src=str(HERE.parent / "src"))
    proc = subprocess.run([sys.executable, "-c", code, kind, what, str(size)], capture_output=True, text=True, check=True)
    nbytes, above, impl = proc.stdout.split()
    return {
        "text": kind,
        "call": what,
        "body_MB": int(nbytes) / 2**20,
        "peak_above_MB": int(above) / 2**20,
        "x_body": int(above) / int(nbytes),
        "implementation": impl,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--size", type=int, default=100, help="body size in MB (default 100)")
    ap.add_argument("--out", type=Path, default=HERE / "results", help="directory for memory.txt / memory.json")
    args = ap.parse_args()
    rows = [measure(kind, what, args.size * 2**20) for kind in ("code", "code +é") for what in ("compose", "verify")]
    head = (
        f"# peak memory above the input, level reserved, one {args.size} MB body; "
        f"{datetime.date.today().isoformat()}, CPython {platform.python_version()}, {platform.machine()}, "
        f"implementation {rows[0]['implementation']}"
    )
    lines = [head, f"{'text':10} {'call':8} {'body MB':>8} {'peak MB':>8} {'x body':>7}"]
    lines += [f"{r['text']:10} {r['call']:8} {r['body_MB']:8.0f} {r['peak_above_MB']:8.0f} {r['x_body']:7.2f}" for r in rows]
    print("\n".join(lines))
    write_results(args.out, "memory", "\n".join(lines), {"rows": rows, "header": head})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
