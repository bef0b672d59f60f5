"""What one character costs: compose, verify and ``scan_text`` of real-shaped text with one character
in front, as a ratio to the same text without it, in one run.

    python benchmarks/cliffs.py [--size 2097152] [--kinds source,prose,html] [--out DIR]

A character that sends a pass from the native core to Python (or to a regex over the whole text)
multiplies the time of the whole call: a ``K`` (U+212A, which ``re.IGNORECASE`` reads as ``k``)
once cost the scanner 8.5 times, a lone surrogate 46 times. Each row is one character, each cell
the time with it over the time without it (best of several, the same run), so a cliff shows as a
large ratio whatever the machine. The characters: a Latin-1 letter, the four ``re.IGNORECASE``
folds to ASCII, an invisible, a bidi control, a TAG character, U+FFFD, the C0 controls XML cannot
carry, a BOM, an emoji, a lone surrogate, a fullwidth ``<``, line separators and a CJK letter.
The texts are ``benchmarks/run.py``'s classes. Never a timed assertion in tests.
"""

from __future__ import annotations

import argparse
import datetime
import platform
import sys
from pathlib import Path

from _results import write_results
from _timing import best

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from run import make_input  # noqa: E402 -- the benchmark's own text classes

from envelock import PrefaceEntry, compose_preface, scan_text, verify_preface  # noqa: E402

CHARACTERS = [
    "\u00e9", "\u212a", "\u017f", "\u0130", "\u0131", "\u200b", "\u202e", "\U000e0041", "\ufffd", "\x00", "\x0b",
    "\ufeff", "\U0001f600", "\ud800", "\uff1c", "\u2028", "\x85", "\u65e5",
]  # fmt: skip
CALLS = ("compose", "verify", "scan_text")


def times(text: str, repeat: int) -> dict[str, float]:
    entries = [PrefaceEntry("external", "web:https://bench.example/", text)]
    preface = compose_preface(entries)
    return {
        "compose": best(lambda: compose_preface(entries), repeat),
        "verify": best(lambda: verify_preface(preface), repeat),
        "scan_text": best(lambda: scan_text(text), repeat),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--size", type=int, default=2 * 1024 * 1024)
    ap.add_argument("--kinds", default="source,prose,html")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args()
    rows = []
    for kind in args.kinds.split(","):
        text = make_input(kind, args.size)
        base = times(text, args.repeat)
        for ch in CHARACTERS:
            got = times(ch + text, args.repeat)
            rows.append({"kind": kind, "char": f"U+{ord(ch):04X}", **{c: got[c] / base[c] for c in CALLS}})
    head = (
        f"# time with one character in front / time without, {args.size // 1024} KB of each class, best of "
        f"{args.repeat}; {datetime.date.today().isoformat()}, CPython {platform.python_version()}, {platform.machine()}"
    )
    lines = [head, f"{'kind':8} {'char':8} " + " ".join(f"{c:>9}" for c in CALLS)]
    lines += [f"{r['kind']:8} {r['char']:8} " + " ".join(f"{r[c]:9.2f}" for c in CALLS) for r in rows]
    worst = max(rows, key=lambda r: max(r[c] for c in CALLS))
    lines.append(f"# worst: {worst['kind']} {worst['char']} " + " ".join(f"{c}={worst[c]:.2f}" for c in CALLS))
    print("\n".join(lines))
    write_results(args.out, "cliffs", "\n".join(lines), {"header": head, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
