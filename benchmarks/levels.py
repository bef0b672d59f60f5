"""Throughput of compose and verify at levels ``markup`` and ``xml`` relative to ``reserved``.

Two inputs of about 1 MB each: English-like prose, and tag-dense HTML (a
scraped-page shape: nested div/p/a/span/script/table markup with attributes).
Each is split into entries of ~64 KB (a realistic retrieval size) between two
trusted envelopes. Reports the best of ``--repeat`` runs (MB/s of input) and
the output size (the token cost: markup adds one backslash per markup opener,
xml adds the entity escapes).

    python benchmarks/levels.py [--repeat 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import time
from collections.abc import Callable

from envelock import PrefaceEntry, compose_preface, verify_preface

MB = 1_000_000
WORDS = (
    "the of and to in is that for it as was with be by on not he this are or his from at which but have an they you "
    "were her she there been one all we their has would when if so no will can more about said what out up into "
    "retrieval model prompt context envelope security content document page source"
).split()


def prose(size: int, rng: random.Random) -> str:
    out: list[str] = []
    n = 0
    while n < size:
        sentence = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 20))).capitalize() + ". "
        if rng.random() < 0.08:
            sentence += "\n\n"
        out.append(sentence)
        n += len(sentence)
    return "".join(out)[:size]


def tag_dense_html(size: int, rng: random.Random) -> str:
    blocks = [
        '<div class="card" id="c{i}"><p>Item {i} &amp; more <a href="https://a.example/p?{i}&amp;x=1">link</a></p></div>\n',
        "<ul><li><span>{i}</span></li><li><em>x</em> &lt; y</li></ul>\n",
        '<table><tr><td class="n">{i}</td><td><b>bold</b></td></tr></table>\n',
        "<script>var x{i} = a < b && c > d; /* </div> */</script>\n",
        "<!-- comment {i} --><br/><img src=\"/i/{i}.png\" alt='pic'>\n",
        "<style>.c{i} > p {{ color: red }}</style><pre><code>if (a<b) {{ }}</code></pre>\n",
    ]
    out: list[str] = []
    n = 0
    i = 0
    while n < size:
        block = rng.choice(blocks).format(i=i)
        out.append(block)
        n += len(block)
        i += 1
    return "".join(out)[:size]


def entries_for(text: str, chunk: int = 64_000) -> list[PrefaceEntry]:
    parts = [text[i : i + chunk] for i in range(0, len(text), chunk)]
    stamp = "2026-11-29T21:29:03Z"
    body = [PrefaceEntry("external", f"web:https://a.example/{k}", p, fetched_at=stamp) for k, p in enumerate(parts)]
    return [PrefaceEntry("system-config", "policy", "trusted"), *body, PrefaceEntry("user-authored", "chat", "question")]


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", type=int, default=MB)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rng = random.Random(20261129)
    inputs = {"prose": prose(args.size, rng), "tag-dense HTML": tag_dense_html(args.size, rng)}
    rows = []
    for name, text in inputs.items():
        entries = entries_for(text)
        base: dict[str, float] = {}
        for level in ("reserved", "markup", "xml"):
            out = compose_preface(entries, level=level)
            assert verify_preface(out, level=level, expected=entries).ok
            t_compose = best(lambda e=entries, lv=level: compose_preface(e, level=lv), args.repeat)
            t_verify = best(lambda o=out, lv=level: verify_preface(o, level=lv), args.repeat)
            if level == "reserved":
                base = {"compose": t_compose, "verify": t_verify, "size": len(out)}
            rows.append(
                {
                    "input": name,
                    "level": level,
                    "compose_MBps": len(text) / MB / t_compose,
                    "verify_MBps": len(text) / MB / t_verify,
                    "compose_x": t_compose / base["compose"],
                    "verify_x": t_verify / base["verify"],
                    "output_chars": len(out),
                    "growth_pct": 100 * (len(out) - len(text)) / len(text),
                }
            )
    if args.json:
        print(json.dumps({"python": sys.version.split()[0], "machine": platform.machine(), "rows": rows}, indent=2))
        return 0
    print(f"Python {sys.version.split()[0]} on {platform.machine()}, {args.size:,} chars per input, best of {args.repeat}")
    head = ("input", "level", "compose MB/s", "x reserved", "verify MB/s", "x reserved", "output growth")
    print(f"{head[0]:<15} {head[1]:<9} {head[2]:>12} {head[3]:>10} {head[4]:>12} {head[5]:>10} {head[6]:>14}")
    for r in rows:
        print(
            f"{r['input']:<15} {r['level']:<9} {r['compose_MBps']:>12.1f} {r['compose_x']:>10.2f} "
            f"{r['verify_MBps']:>12.1f} {r['verify_x']:>10.2f} {r['growth_pct']:>13.1f}%"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
