"""What the UTF-8 conversions cost a native call, on real text: the measure behind the abi3 decision
(docs/INTERNALS.md, "Transcoding").

    python benchmarks/transcode.py [--size 2097152] [--out DIR]

The core reads UTF-8. A ``str`` that is not ASCII crosses as a copy (``_native.Utf8``, CPython's own
encoder), and a changed result comes back through CPython's UTF-8 decoder. Reading the string's
UCS-1/2/4 storage and writing the result's would remove both, at the price of the non-limited API
(one wheel per Python version, ``unsafe`` glue). For each real text (the stdlib's ASCII source with
one ``é``, ``pydoc_data`` prose with one ``é``, multilingual man pages) this times, best of several:
the copy, a decode of the body's UTF-8, and ``scan_text``, ``compose_preface`` (reserved) and
``verify_preface`` of it, and reports the copy's share of each (and, for compose, copy plus decode):
the most that reading the storage directly could save. Never a timed assertion in tests.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import sys
from pathlib import Path

from _results import write_results

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "src"))

from pipeline import _cut, best, source_text  # noqa: E402

from envelock import PrefaceEntry, _native, compose_preface, verify_preface  # noqa: E402
from envelock.scan import scan_text  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--size", type=int, default=2 * 1024 * 1024)
    ap.add_argument("--budget", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()
    rows = []
    for kind, extra in (("code", "é"), ("prose", "é"), ("multilingual", "")):
        text, where = source_text(kind, args.size)
        body = _cut(text, args.size) + extra
        data = body.encode("utf-8")
        entry = [PrefaceEntry("external", "web:bench", body)]
        preface = str(compose_preface(entry, level="reserved"))
        b = args.budget
        t = {
            "copy": best(lambda body=body: _native.Utf8(body), b, least=5),
            "decode": best(lambda data=data: data.decode("utf-8"), b, least=5),
            "scan": best(lambda body=body: scan_text(body), b),
            "compose": best(lambda entry=entry: compose_preface(entry, level="reserved"), b),
            "verify": best(lambda preface=preface: verify_preface(preface, level="reserved"), b),
        }
        rows.append(
            {"text": kind, "source": where, "bytes": len(data), "non_ascii": sum(1 for c in body if ord(c) > 127), "seconds": t}
        )
    head = f"# UTF-8 copy and decode against the calls that pay them; best of runs within {args.budget}s each; {datetime.date.today()}, CPython {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores"
    lines = [
        head,
        f"{'text':<13} {'MB':>5} {'copy ms':>8} {'decode ms':>9} {'scan ms':>8} {'copy/scan':>9} {'compose ms':>10} {'(copy+decode)/compose':>21} {'verify ms':>9} {'copy/verify':>11}",
    ]
    for r in rows:
        s = r["seconds"]
        lines.append(
            f"{r['text']:<13} {r['bytes'] / 1e6:>5.1f} {s['copy'] * 1e3:>8.2f} {s['decode'] * 1e3:>9.2f} {s['scan'] * 1e3:>8.1f} {s['copy'] / s['scan']:>9.0%} "
            f"{s['compose'] * 1e3:>10.1f} {(s['copy'] + s['decode']) / s['compose']:>21.0%} {s['verify'] * 1e3:>9.1f} {s['copy'] / s['verify']:>11.0%}"
        )
    text = "\n".join(lines)
    print(text)
    write_results(args.out, "transcode", text, {"header": head, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
