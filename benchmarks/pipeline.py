"""compose and verify on real text, with and without one non-ASCII character, in one run.

    python benchmarks/pipeline.py [--size BYTES] [--levels reserved,markup,xml] [--kinds code,prose,...] [--out DIR]

On real text envelock did not write, cut to ``--size`` UTF-8 bytes (2 MB): ``code`` (the
interpreter's stdlib ``*.py`` files that are ASCII, sorted by name), ``prose`` (``pydoc_data.topics``, the Python docs'
topic texts), ``markdown`` (the Markdown READMEs of the installed distributions, by name),
``html`` (Debian ``python3-doc``'s HTML pages, in path order) and ``multilingual`` (the Debian man
pages under ``/usr/share/man/<lang>/`` when they are installed, else ``tests/data/benign/prose_*.txt``);
an ASCII text also with one ``é`` prepended (``+é``: the text is no longer ASCII, so every ASCII
shortcut is off). One body per preface. The last column is native verify time / native compose time.

For each, at each level, it times (best of N, ``time.perf_counter``) ``compose_preface`` and
``verify_preface`` (of the composed preface) on two configurations of the same process, and
``markupsafe.escape`` in the same rounds as the native calls (``_timing.best_interleaved``: one call
of each per round, so that a change of the shared machine's speed mid-run moves all of them):

* ``python``: the best pure-Python implementation (``ENVELOCK_IMPL=python``);
* ``native``: everything native.

(A ``before`` configuration, the native defang with the sanitize pass and the XML unescape in
Python, measured their port; it was dropped once those calls no longer fell back on their own.)

It prints MB/s (of the body's UTF-8 bytes) and the
time ratio to ``markupsafe.escape`` (``x ms``: how many escapes of the text one call costs).
Never a timed assertion in tests.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.metadata
import os
import platform
import sys
import sysconfig
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import markupsafe
from _results import write_results
from _timing import best_interleaved

from envelock import PrefaceEntry, compose_preface, verify_preface
from envelock.escape import Level, check_level
from envelock.eye import backend, fastpath

HERE = Path(__file__).resolve().parent
BENIGN = HERE.parent / "tests" / "data" / "benign"
STDLIB = Path(sysconfig.get_paths()["stdlib"])
MAN = Path("/usr/share/man")
#: Debian's python3-doc: the Python documentation as HTML (``apt-get install python3-doc``).
PYDOC_HTML = Path("/usr/share/doc/python3-doc/html")
#: The man page languages read, in this order (the page sets differ per language).
MAN_LANGS = ("de", "fr", "ru", "ja", "zh_CN", "pl", "es", "uk", "cs", "pt_BR")
MB = 1024 * 1024


def _cut(text: str, size: int) -> str:
    """``text`` repeated or cut to at most ``size`` UTF-8 bytes (on a character boundary)."""
    raw = text.encode("utf-8")
    if len(raw) < size:
        raw = raw * (size // max(len(raw), 1) + 1)
    return raw[:size].decode("utf-8", errors="ignore")


def _files(paths: list[Path]) -> str:
    return "\n\n".join(p.read_text(encoding="utf-8", errors="replace") for p in paths if p.is_file())


def _man_pages(size: int) -> tuple[str, str] | None:
    """Man page sources in several languages, round robin over the languages until ``size`` bytes."""
    per_lang: list[Iterator[Path]] = []
    for lang in MAN_LANGS:
        pages = sorted((MAN / lang).glob("man*/*.gz"))
        if pages:
            per_lang.append(iter(pages))
    parts: list[str] = []
    total = 0
    used: set[str] = set()
    while per_lang and total < size:
        for it in list(per_lang):
            page = next(it, None)
            if page is None:
                per_lang.remove(it)
                continue
            try:
                text = gzip.decompress(page.read_bytes()).decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if text.isascii():
                continue
            parts.append(text)
            used.add(page.parent.parent.name)
            total += len(text.encode("utf-8"))
    if total < size // 4:
        return None
    return "\n\n".join(parts), f"/usr/share/man/{{{','.join(sorted(used))}}}/man*/*.gz (troff sources)"


def source_text(kind: str, size: int) -> tuple[str, str]:
    """The real text of ``kind`` and where it came from."""
    if kind == "code":
        # The ASCII files only: the base row is then ASCII text, and ``+é`` is the cliff.
        files = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(STDLIB.glob("*.py"))]
        return "\n\n".join(f for f in files if f.isascii()), "<stdlib>/*.py, the ASCII files (sorted by name)"
    if kind == "prose":
        from pydoc_data.topics import topics

        return "\n\n".join(topics[k] for k in sorted(topics)), "pydoc_data.topics"
    if kind == "multilingual":
        man = _man_pages(size)
        if man is not None:
            return man
        names = ["prose_fr.txt", "prose_de.txt", "prose_vi.txt", "prose_el.txt", "prose_ru.txt", "prose_ja.txt"]
        return _files([BENIGN / n for n in names]), "tests/data/benign/prose_*.txt"
    if kind == "html":
        pages = sorted(PYDOC_HTML.rglob("*.html"))
        if not pages:
            raise SystemExit(f"html: {PYDOC_HTML} not found (apt-get install python3-doc)")
        parts: list[str] = []
        total = 0
        for page in pages:  # in path order, until the size (the whole set is ~50 MB)
            parts.append(page.read_text(encoding="utf-8", errors="replace"))
            total += len(parts[-1].encode("utf-8"))
            if total >= size:
                break
        return "\n\n".join(parts), f"{PYDOC_HTML}/**/*.html (Debian python3-doc, path order)"
    if kind == "markdown":
        return _markdown_readmes()
    raise ValueError(kind)


def _markdown_readmes() -> tuple[str, str]:
    """The Markdown long descriptions (READMEs) of the installed distributions, by name."""
    found: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        meta = dist.metadata
        if not (meta.get("Description-Content-Type") or "").startswith("text/markdown"):
            continue
        body = meta.get_payload() or meta.get("Description") or ""  # type: ignore[attr-defined]
        name = meta.get("Name") or ""
        if body.strip() and name and name.lower() != "envelock":
            found[name.lower()] = body
    if not found:
        raise SystemExit("markdown: no installed distribution has a Markdown README")
    names = sorted(found)
    where = f"the Markdown READMEs of {len(names)} installed distributions ({', '.join(names[:6])}, ...)"
    return "\n\n".join(found[n] for n in names), where


@contextmanager
def configuration(name: str) -> Iterator[None]:
    if name == "python":
        fastpath.WARM_OPENERS = 0  # the regex from the first call (not the reference until it pays)
        with backend.use("fast" if "fast" in backend.IMPLEMENTATIONS else "reference"):
            yield
        return
    with backend.use("native"):
        yield


def best(fn: Callable[[], object], budget: float, least: int = 2, most: int = 20) -> float:
    """Best wall time of ``fn`` over at least ``least`` runs (more while within ``budget`` seconds)."""
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < least or (time.perf_counter() - start < budget and len(times) < most):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def measure(body: str, level: Level, configs: tuple[str, ...], budget: float) -> dict[str, Any]:
    entry = [PrefaceEntry("external", "web:bench", body)]
    nbytes = len(body.encode("utf-8"))
    out: dict[str, Any] = {"bytes": nbytes}
    composed: dict[str, str] = {}
    for cfg in configs:
        with configuration(cfg):
            composed[cfg] = str(compose_preface(entry, level=level))
            if not verify_preface(composed[cfg], level=level).ok:
                raise SystemExit(f"{cfg}: the composed preface does not verify")
    if len(set(composed.values())) != 1:
        raise SystemExit("the configurations compose different prefaces")
    preface = composed[configs[0]]
    for cfg in configs:
        calls = {
            f"compose/{cfg}": lambda: compose_preface(entry, level=level),
            f"verify/{cfg}": lambda: verify_preface(preface, level=level),
        }
        with configuration(cfg):
            if cfg == "native":
                # The anchor in the same rounds as the calls it is the anchor of (_timing.best_interleaved).
                out.update(best_interleaved({"markupsafe": lambda: markupsafe.escape(body), **calls}, budget))
            else:
                out.update(best_interleaved(calls, budget, least=2, most=20))
    return out


def text_arguments(ap: argparse.ArgumentParser) -> None:
    """The options that choose the real texts and levels (shared by the benchmarks that read them)."""
    ap.add_argument("--size", type=int, default=2 * MB, help="bytes of each text")
    ap.add_argument("--kinds", default="code,prose,markdown,html,multilingual")
    ap.add_argument("--levels", default="reserved,markup,xml")


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    text_arguments(ap)
    ap.add_argument("--budget", type=float, default=1.0, help="seconds per timing (at least 2 runs)")
    ap.add_argument("--out", type=Path, help="also write pipeline.txt and pipeline.json there")
    args = ap.parse_args()
    if not backend.NATIVE_AVAILABLE:
        raise SystemExit("needs the native core (pip install -e .)")
    configs = ("python", "native")
    lines: list[str] = []

    def say(line: str) -> None:
        lines.append(line)
        print(line, flush=True)

    say(f"# compose/verify MB/s of body text (x ms: time / markupsafe.escape of the same text), {args.size // 1024} KB bodies")
    say(f"# {platform.python_implementation()} {platform.python_version()}, {platform.machine()}, {os.cpu_count()} cores")
    rows: list[dict[str, Any]] = []
    sources: dict[str, str] = {}
    head = f"{'text':<24}{'level':<9}{'ms MB/s':>9}"
    for op in ("compose", "verify"):
        for cfg in configs:
            head += f"{op[:3] + '/' + cfg:>17}"
    say(head + f"{'ver/com':>9}")
    for kind in args.kinds.split(","):
        raw, where = source_text(kind, args.size)
        sources[kind] = where
        text = _cut(raw, args.size)
        # ``+é`` only where the text is ASCII: elsewhere the shortcuts are off already.
        variants = ((kind, text), (kind + " +é", "é" + text[:-1])) if text.isascii() else ((kind, text),)
        for label, body in variants:
            for level in args.levels.split(","):
                r = measure(body, check_level(level), configs, args.budget)
                r.update(text=label, level=level)
                rows.append(r)
                shown = label + (" (ascii)" if body.isascii() else "")
                line = f"{shown:<24}{level:<9}{r['bytes'] / MB / r['markupsafe']:>9.0f}"
                for op in ("compose", "verify"):
                    for cfg in configs:
                        t = r[f"{op}/{cfg}"]
                        line += f"{r['bytes'] / MB / t:>9.0f} {t / r['markupsafe']:>5.1f}x"
                say(line + f"{r['verify/native'] / r['compose/native']:>9.2f}")
    for kind, where in sources.items():
        say(f"# {kind}: {where}")
    say(
        f"# python: {backend.IMPLEMENTATIONS['fast' if 'fast' in backend.IMPLEMENTATIONS else 'reference'].NAME}; budget {args.budget} s per timing"
    )
    if args.out:
        meta = {
            "date": time.strftime("%Y-%m-%d"),
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpus": os.cpu_count(),
            "size": args.size,
            "command": "python benchmarks/pipeline.py" + (" " + " ".join(sys.argv[1:]) if sys.argv[1:] else ""),
        }
        write_results(args.out, "pipeline", "\n".join(lines), {"rows": rows, "sources": sources, "meta": meta})
    return 0


if __name__ == "__main__":
    sys.exit(main())
