"""Where compose, verify and ``scan_text`` spend their time on real text: the top functions and their share.

    python benchmarks/hotspots.py [--size BYTES] [--kinds code,prose,...] [--levels ...] [--top N] [--out DIR]

On the real texts of ``benchmarks/pipeline.py`` (2 MB each, one body per preface), native
implementation, for each level: ``cProfile`` over ``--repeat`` calls of ``compose_preface``, then of
``verify_preface`` of the composed preface, then of ``scan_text`` of the body (once per text). Each
row gives the call's time per run and its ``--top`` functions by own time, with their share of that
time. A native call shows as one ``_native.*`` entry (the core, its UTF-8 copy in and its ``str``
out); lxml's parse shows inside the reader function that calls it (``lxml_readers._xml`` /
``_html``: lxml's Cython functions are not profiled), so the parse alone is timed too: ``lxml
parse`` is the best time of the reader's ``etree.fromstring`` on the same preface, and ``floor``
one plus its ratio to compose timed without the profiler (verify, which composes nothing but reads
the body at least once and parses the preface, is taken to cost no less than that while it keeps
lxml's reading). Profiling slows Python calls more than native ones; the shares are for reading, the
ratios of ``benchmarks/pipeline.py`` are the measure. Never a timed assertion in tests.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import re
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from _results import write_results
from lxml import etree
from pipeline import _cut, best, source_text, text_arguments

from envelock import PrefaceEntry, compose_preface, scan_text, verify_preface
from envelock.envelope import lxml_readers
from envelock.escape import Level, check_level
from envelock.eye import backend


def _label(func: tuple[str, int, str]) -> str:
    """``module.function`` for a Python function, the method's name for a built-in."""
    path, _line, name = func
    if path == "~":  # a built-in: "<built-in method envelock._native.defang_body>"
        inner = name.strip("<>{}").removeprefix("built-in method ").removeprefix("method ")
        # A type's ``__new__`` is named with the type's address: left out, so runs compare line by line.
        return re.sub(r" at 0x[0-9a-f]+", "", inner.replace("envelock._native.", "_native."))
    return f"{Path(path).stem}.{name}"


def profiled(fn: Callable[[], object], repeat: int, top: int) -> dict[str, Any]:
    """Seconds per call of ``fn`` under the profiler and its ``top`` functions by own time."""
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(repeat):
        fn()
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    own = {func: row[2] for func, row in stats.items()}  # (cc, nc, tottime, cumtime, callers)
    total = sum(own.values())
    ranked = sorted(own.items(), key=lambda kv: kv[1], reverse=True)[:top]
    return {
        "seconds": total / repeat,
        "top": [{"function": _label(func), "share": t / total if total else 0.0} for func, t in ranked],
    }


def lxml_parse(preface: str, level: Level, budget: float) -> float | None:
    """Best time of the level reader's own parse of ``preface`` (``None`` at ``reserved``: no reader)."""
    data = preface.encode("utf-8")
    if level == "xml":
        wrapped = lxml_readers._PREFIX.encode() + data + lxml_readers._SUFFIX.encode()
        return best(lambda: etree.fromstring(wrapped, lxml_readers.xml_parser()), budget)
    if level == "markup":
        return best(lambda: etree.fromstring(data, lxml_readers.html_parser()), budget)
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    text_arguments(ap)
    ap.add_argument("--repeat", type=int, default=5, help="profiled calls per row")
    ap.add_argument("--top", type=int, default=4)
    ap.add_argument("--budget", type=float, default=0.5, help="seconds per timing of the lxml parse")
    ap.add_argument("--out", type=Path, help="also write hotspots.txt and hotspots.json there")
    args = ap.parse_args()
    if not backend.NATIVE_AVAILABLE:
        raise SystemExit("needs the native core (pip install -e .)")
    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    say(f"# cProfile of compose, verify and scan_text, native; {args.size // 1024} KB bodies, {args.repeat} calls per row")
    say(
        f"# {time.strftime('%Y-%m-%d')}, {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores"
    )
    say("# command: python benchmarks/hotspots.py" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else ""))
    say(f"{'text':<14}{'level':<10}{'call':<8}{'ms':>8}  top functions by own time (share)")
    rows: list[dict[str, Any]] = []
    with backend.use("native"):
        for kind in args.kinds.split(","):
            raw, where = source_text(kind, args.size)
            body = _cut(raw, args.size)
            entry = [PrefaceEntry("external", "web:bench", body)]
            calls: list[tuple[str, str, Callable[[], object], str]] = []
            for name in args.levels.split(","):
                level = check_level(name)
                preface = str(compose_preface(entry, level=level))
                calls.append((name, "compose", partial(compose_preface, entry, level=level), preface))
                calls.append((name, "verify", partial(verify_preface, preface, level=level), preface))
            calls.append(("-", "scan", partial(scan_text, body), ""))
            compose_ms: dict[str, float] = {}
            for name, op, fn, preface in calls:
                fn()  # warm: tables, parsers
                r = profiled(fn, args.repeat, args.top)
                r.update(text=kind, level=name, call=op, source=where)
                ms = r["seconds"] * 1e3
                tops = ", ".join(f"{t['function']} {t['share']:.0%}" for t in r["top"])
                say(f"{kind:<14}{name:<10}{op:<8}{ms:>8.1f}  {tops}")
                if op == "compose":
                    # The floor's compose is timed without the profiler (which slows its Python part).
                    compose_ms[name] = best(fn, args.budget) * 1e3
                    r["compose_seconds"] = compose_ms[name] / 1e3
                if op == "verify":
                    parse = lxml_parse(preface, check_level(name), args.budget)
                    if parse is not None:
                        r["lxml_parse_seconds"] = parse
                        floor = parse * 1e3 / compose_ms[name]
                        r["floor"] = 1 + floor
                        say(
                            f"{'':<24}lxml parse {parse * 1e3:.1f} ms alone = {floor:.2f}x compose "
                            f"({compose_ms[name]:.1f} ms unprofiled; verify's floor {1 + floor:.2f}x)"
                        )
                rows.append(r)
    say("# ms: per call under the profiler (slower than unprofiled); shares of that time")
    if args.out:
        write_results(args.out, "hotspots", "\n".join(lines), {"rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
