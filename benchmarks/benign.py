"""False positives on real text nobody here wrote: ``defang`` and ``scan_text`` over public corpora.

    python benchmarks/benign.py                     # every corpus present; benchmarks/results/benign.{txt,json}
    python benchmarks/benign.py --quick             # an evenly spaced sample of each corpus
    python benchmarks/benign.py --only man-fr,stdlib-py --name try --out /tmp/bench

For each corpus (the running interpreter's standard library, ``*.py`` and its other text files,
site-packages excluded; the man pages of each language of Debian's ``manpages-LANG`` packages,
gzipped roff read decompressed as UTF-8; ``python3-doc``'s HTML; the inputs of html5lib-tests:
the ``#data`` sections of its ``.dat`` files and the ``input`` fields of its tokenizer ``.test``
files; and the repository's own ``tests/data/benign/``) it reports:

* files, and files changed by ``defang`` at each level (count, %), and backslashes inserted;
* why, at ``reserved``: each inserted backslash classified by the reading of its opener
  (``envelock.escape.opener_readings``): escape-the-escape (an opener already followed by ``\\``),
  reserved name, ``<NAME>`` token, bar token, padding (fail closed), bracket token, bracket
  padding; with the opener characters and names involved and real examples (file:line);
* ``scan_text`` findings by severity and by rule, the 20 most frequent error findings and the
  10 most frequent warnings, each with a file:line and its snippet;
* the long-run measure: how many openers are followed by 32 or more characters the reader
  would read past if it also skipped every non-ASCII character that is neither a letter nor a
  number nor structural (an opener, closer, slash, bar, bracket, quote or ``!``/``?`` look-alike),
  how many of those are not escaped today, and how many files that would newly change.

Files that are not UTF-8 are counted and listed as undecodable (never skipped silently); in the
standard library a file holding a NUL byte is counted as binary. Man-page symbolic links (the
same text as another page) are counted, not read twice.

Data (not in the repository): ``apt-get install manpages-fr manpages-de manpages-ja manpages-ru
manpages-zh manpages-es manpages-pl python3-doc``; html5lib-tests from the html5lib sdist on PyPI,
which ships them (``pip download --no-deps --no-binary :all: --no-build-isolation html5lib==1.1
-d ~/.cache/envelock/realtext``, needs setuptools and wheel), or any directory holding
``tree-construction/`` and ``tokenizer/`` (``--html5lib-tests PATH`` or ``ENVELOCK_HTML5LIB_TESTS``).

The defang implementation is ``ENVELOCK_IMPL`` (``native`` unless set, when run as a script); at most 2 worker
processes. ``tests/properties/test_realtext.py`` runs the same measurement and asserts the
targets (:data:`MAX_CHANGED_PCT`, no scan error).
"""

from __future__ import annotations

import argparse
import bisect
import datetime
import gzip
import json
import multiprocessing
import os
import platform
import re
import string
import subprocess
import sys
import sysconfig
import tarfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

if __name__ == "__main__":
    # As a script only, before envelock is imported (it chooses its implementation then): a module
    # imported by the tests must not change their environment (their subprocesses would ask for a
    # native core that a machine without Rust does not have).
    os.environ.setdefault("ENVELOCK_IMPL", "native")

import envelock
from envelock import RESERVED_NAMES, defang, scan_text
from envelock.escape import implementation, opener_readings, xml_escape_text

try:  # the reader and its tables, in the package layout that has them
    from envelock.eye import reader as _eye  # type: ignore[import-not-found,unused-ignore]
    from envelock.eye import unicode_tables as _tables  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    from envelock.eye import reader as _eye
    from envelock.eye import unicode_tables as _tables

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
LEVEL_NAMES = ("reserved", "markup", "xml")
#: The targets ``tests/properties/test_realtext.py`` asserts per corpus (default settings).
MAX_CHANGED_PCT = 2.0
MAX_SCAN_ERRORS = 0
#: Debian's man-page packages read, one corpus per language directory they install.
MAN_PACKAGES = ("manpages-fr", "manpages-de", "manpages-ja", "manpages-ru", "manpages-zh", "manpages-es", "manpages-pl")
MAN_ROOT = "/usr/share/man/"
PYDOC_HTML = Path("/usr/share/doc/python3-doc/html")
HTML5LIB_CACHE = Path.home() / ".cache" / "envelock" / "realtext"
#: The run of read-past characters after an opener at which the reader fails closed.
LONG_RUN = int(_eye.MAX_RUN)
#: Most examples kept per class and per corpus, and most error findings kept per item.
EXAMPLES = 6
ERRORS_PER_ITEM = 200
#: ``--quick``: at most this many sources (files; a ``.dat`` file is one source) per corpus.
QUICK_SOURCES = 60

Defang = Callable[[str, str], str]
Scan = Callable[[str], list[envelock.Finding]]


def real_defang(text: str, level: str) -> str:
    """``envelock.defang`` with default settings at ``level``."""
    return defang(text, level=level)  # type: ignore[arg-type]


def real_scan(text: str) -> list[envelock.Finding]:
    """``envelock.scan_text`` with default settings."""
    return scan_text(text)


# --- corpora ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One unit of work: a file (or one member of a tarball) holding one or more items."""

    corpus: str
    path: str
    label: str
    kind: str  # "text" | "gzip" | "dat" | "tokenizer"
    member: str = ""  # a tarball member, when ``path`` is a tarball


@dataclass
class Corpus:
    name: str
    description: str
    sources: list[Source] = field(default_factory=list)
    missing: str = ""  # why the corpus is not available here ("" when it is)
    links: int = 0  # symbolic links not read (the same text as another file)
    version: str = ""


def _dpkg(args: list[str]) -> str | None:
    try:
        out = subprocess.run(["dpkg-query", *args], capture_output=True, text=True, check=False)
    except OSError:
        return None
    return out.stdout if out.returncode == 0 else None


def _package_version(pkg: str) -> str:
    out = _dpkg(["-W", "-f=${Version}", pkg])
    return out.strip() if out else ""


def man_corpora() -> list[Corpus]:
    """One corpus per language directory of each ``manpages-LANG`` package (``man-fr``, ``man-zh_CN``...)."""
    out: list[Corpus] = []
    for pkg in MAN_PACKAGES:
        version = _package_version(pkg)
        listing = _dpkg(["-L", pkg]) if version else None
        if not listing:
            out.append(
                Corpus(f"man-{pkg.split('-', 1)[1]}", f"Debian {pkg}", missing=f"{pkg} is not installed (apt-get install {pkg})")
            )
            continue
        by_lang: dict[str, Corpus] = {}
        for line in sorted(listing.splitlines()):
            if not (line.startswith(MAN_ROOT) and line.endswith(".gz")):
                continue
            lang = line[len(MAN_ROOT) :].split("/", 1)[0]
            c = by_lang.setdefault(lang, Corpus(f"man-{lang}", f"Debian {pkg} {version}, /usr/share/man/{lang}", version=version))
            p = Path(line)
            if p.is_symlink():
                c.links += 1
            elif p.is_file():
                c.sources.append(Source(c.name, line, line[len(MAN_ROOT) :], "gzip"))
        out.extend(by_lang[k] for k in sorted(by_lang))
    return out


def stdlib_corpora() -> list[Corpus]:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    py = Corpus("stdlib-py", f"*.py of the standard library {stdlib} (site-packages excluded)", version=platform.python_version())
    other = Corpus("stdlib-other", f"other files of {stdlib} (site-packages excluded)", version=platform.python_version())
    skip_dirs = {"site-packages", "dist-packages", "__pycache__"}
    for dirpath, dirnames, filenames in os.walk(stdlib):
        dirnames[:] = sorted(d for d in dirnames if d not in skip_dirs)
        for fn in sorted(filenames):
            p = Path(dirpath) / fn
            if p.is_symlink() or not p.is_file():
                continue
            c = py if fn.endswith(".py") else other
            c.sources.append(Source(c.name, str(p), str(p.relative_to(stdlib)), "text"))
    return [py, other]


def pydoc_corpus() -> Corpus:
    version = _package_version("python3-doc")
    c = Corpus("python3-doc", f"Debian python3-doc {version}: the HTML of the Python documentation", version=version)
    if not PYDOC_HTML.is_dir():
        c.missing = f"{PYDOC_HTML} not found (apt-get install python3-doc)"
        return c
    root = PYDOC_HTML.resolve()
    for p in sorted(root.rglob("*.html")):
        if p.is_file():
            c.sources.append(Source(c.name, str(p), str(p.relative_to(root)), "text"))
    return c


def _html5lib_location(given: str | None) -> tuple[str, Path | None]:
    """(how it was found, a directory with ``tree-construction/`` or a tarball), or None."""
    path = Path(given or os.environ.get("ENVELOCK_HTML5LIB_TESTS") or HTML5LIB_CACHE).expanduser()
    if path.is_file():
        return str(path), path
    if (path / "tree-construction").is_dir():
        return str(path), path
    for sub in sorted(path.glob("html5lib-*/html5lib/tests/testdata")):
        if (sub / "tree-construction").is_dir():
            return str(sub), sub
    tarballs = sorted(path.glob("html5lib-*.tar.gz"))
    if tarballs:
        return str(tarballs[-1]), tarballs[-1]
    return str(path), None


def html5lib_corpus(given: str | None = None) -> Corpus:
    where, found = _html5lib_location(given)
    c = Corpus("html5lib-tests", f"html5lib-tests inputs (.dat #data sections, tokenizer .test input) from {where}")
    if found is None:
        c.missing = (
            f"html5lib-tests not found at {where} (pip download --no-deps --no-binary :all: --no-build-isolation "
            f"html5lib==1.1 -d {HTML5LIB_CACHE}, or set ENVELOCK_HTML5LIB_TESTS to a directory with tree-construction/)"
        )
        return c
    m = re.search(r"html5lib-([0-9][0-9.]*[0-9])", where)
    c.version = f"html5lib {m.group(1)} sdist" if m else ""
    if found.is_file():
        with tarfile.open(found) as tar:
            names = sorted(n.name for n in tar.getmembers() if n.isfile())
        for name in names:
            rel = name.split("/testdata/", 1)[1] if "/testdata/" in name else ""
            if rel.endswith(".dat"):
                c.sources.append(Source(c.name, str(found), rel, "dat", member=name))
            elif rel.startswith("tokenizer/") and rel.endswith(".test"):
                c.sources.append(Source(c.name, str(found), rel, "tokenizer", member=name))
        return c
    for p in sorted(found.rglob("*.dat")):
        c.sources.append(Source(c.name, str(p), str(p.relative_to(found)), "dat"))
    for p in sorted((found / "tokenizer").glob("*.test")):
        c.sources.append(Source(c.name, str(p), str(p.relative_to(found)), "tokenizer"))
    return c


def benign_corpus() -> Corpus:
    d = ROOT / "tests" / "data" / "benign"
    c = Corpus("tests-benign", "the repository's own tests/data/benign/")
    if not d.is_dir():
        c.missing = f"{d} not found"
        return c
    c.sources = [Source(c.name, str(p), p.name, "text") for p in sorted(d.iterdir()) if p.is_file()]
    return c


def all_corpora(html5lib_tests: str | None = None) -> list[Corpus]:
    """Every corpus this harness knows, each with its sources or the reason it is missing."""
    return [*stdlib_corpora(), *man_corpora(), pydoc_corpus(), html5lib_corpus(html5lib_tests), benign_corpus()]


# --- reading items ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    label: str
    base_line: int  # line of the item's first line in its file (1-based)
    text: str


#: Section headings of html5lib-tests ``.dat`` files (tree-construction and encoding tests).
_DAT_HEADINGS = frozenset(
    ("data", "errors", "new-errors", "document-fragment", "document", "script-off", "script-on", "encoding")
)
_DOUBLE_ESCAPE_RE = re.compile(r"\\u([0-9A-Fa-f]{4})")


def dat_items(label: str, text: str) -> Iterator[Item]:
    """The ``#data`` sections of an html5lib-tests ``.dat`` file (the final newline is the line's, not the data's)."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "#data":
            start = i + 1
            j = start
            while j < len(lines) and not (lines[j].startswith("#") and lines[j][1:] in _DAT_HEADINGS):
                j += 1
            yield Item(f"{label}:{start + 1}", start + 1, "\n".join(lines[start:j]))
            i = j
        else:
            i += 1


def tokenizer_items(label: str, text: str) -> Iterator[Item]:
    """The ``input`` of every tokenizer test (``\\uXXXX`` decoded where the test is ``doubleEscaped``)."""
    data = json.loads(text)
    for key in sorted(data):
        tests = data[key]
        if not isinstance(tests, list):
            continue
        for k, t in enumerate(tests):
            if isinstance(t, dict) and isinstance(t.get("input"), str):
                inp = t["input"]
                if t.get("doubleEscaped"):
                    inp = _DOUBLE_ESCAPE_RE.sub(lambda m: chr(int(m.group(1), 16)), inp)
                yield Item(f"{label}#{key}[{k}]", 1, inp)


def _raw_bytes(src: Source) -> bytes:
    if src.member:
        with tarfile.open(src.path) as tar:
            f = tar.extractfile(src.member)
            if f is None:
                raise OSError(f"{src.member}: not a regular file in {src.path}")
            return f.read()
    data = Path(src.path).read_bytes()
    return gzip.decompress(data) if src.kind == "gzip" else data


@dataclass
class SourceOutcome:
    """What reading one source gave: its items, or why it gave none."""

    items: list[Item] = field(default_factory=list)
    binary: bool = False
    undecodable: str = ""  # the bytes are not UTF-8: why (the text was decoded with U+FFFD and measured)
    unreadable: str = ""  # no text at all: why (a corpus with such a file misses its target)


def read_source(src: Source) -> SourceOutcome:
    """The items of one source.

    A file holding a NUL byte in the standard library's other files is binary (counted, not read).
    Bytes that are not UTF-8 are said so and decoded with U+FFFD for each bad sequence (as
    ``envelock scan`` does), then measured like the rest; a source that cannot be read at all
    (or a tokenizer file that is not its JSON) is unreadable.
    """
    try:
        data = _raw_bytes(src)
    except (OSError, EOFError, gzip.BadGzipFile, tarfile.TarError) as exc:
        return SourceOutcome(unreadable=f"{type(exc).__name__}: {exc}")
    if src.corpus == "stdlib-other" and b"\0" in data:
        return SourceOutcome(binary=True)
    undecodable = ""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        undecodable = f"not UTF-8: {exc.reason} at byte {exc.start}"
        text = data.decode("utf-8", "replace")
    if src.kind == "dat":
        return SourceOutcome(items=list(dat_items(src.label, text)), undecodable=undecodable)
    if src.kind == "tokenizer":
        try:
            return SourceOutcome(items=list(tokenizer_items(src.label, text)), undecodable=undecodable)
        except (ValueError, TypeError) as exc:
            return SourceOutcome(unreadable=f"not tokenizer JSON: {exc}")
    return SourceOutcome(items=[Item(src.label, 1, text)], undecodable=undecodable)


# --- measuring one item ----------------------------------------------------------------------

CLASSES = (
    "escape-the-escape",
    "reserved name",
    "<NAME> token",
    "bar token",
    "padding (fail closed)",
    "bracket token",
    "bracket bar token",
    "bracket reserved name",
    "bracket padding (fail closed)",
)
_ANGLE_CLASS = {"reserved": "reserved name", "token": "<NAME> token", "bar": "bar token", "padding": "padding (fail closed)"}
_BRACKET_CLASS = {
    "token": "bracket token",
    "bar": "bracket bar token",
    "reserved": "bracket reserved name",
    "padding": "bracket padding (fail closed)",
}

#: What the planned reader keeps reading: the opener, closer, slash, bar, bracket, quote, ``!``/``?`` and colon look-alikes.
_STRUCTURAL = frozenset(
    _eye.LT_CHARS
    + _eye.GT_CHARS
    + _eye.SLASH_CHARS
    + _eye.PIPE_CHARS
    + _eye.LBRACKET_CHARS
    + _eye.RBRACKET_CHARS
    + "".join(chr(c) for c in (*_tables.BANG_CHARACTERS, *_tables.QUOTE_LOOKALIKES))
    + "!?\"'"
    + "".join(chr(cp) for cp, rs in _tables.READINGS.items() if ":" in rs)  # the colon of a namespace prefix
)
_SLASHES = frozenset(_eye.SLASH_CHARS)
_BANGS = frozenset(chr(c) for c in _tables.BANG_CHARACTERS) | {"!", "?"}
_ASCII_KEPT = frozenset(string.ascii_letters + string.digits + string.punctuation)


@cache
def _plan_extra(ch: str) -> bool:
    """Read past under the planned reader, on top of today's skip set: non-ASCII, not a letter or number, not structural."""
    return ord(ch) > 0x7F and not _eye.is_alnum(ch) and ch not in _STRUCTURAL


@cache
def _plan_lead_angle(ch: str) -> bool:
    """Read past right after an angle opener under the planned reader (today: skipped, slashes, ``!``/``?``)."""
    return bool(_eye.is_skip(ch)) or ch in _SLASHES or ch in _BANGS or _plan_extra(ch)


@cache
def _plan_lead_bracket(ch: str) -> bool:
    """Read past right after a bracket opener under the planned reader (today: skipped, slashes)."""
    return bool(_eye.is_skip(ch)) or ch in _SLASHES or _plan_extra(ch)


class _PlannedSkip:
    """Today's skip set plus :func:`_plan_extra`: what the planned reader reads past (a set for ``in``)."""

    def __init__(self, base: frozenset[str]) -> None:
        self.base = base

    def __contains__(self, ch: object) -> bool:
        return isinstance(ch, str) and (ch in self.base or _plan_extra(ch))


def planned_readings(text: str, skip_angle: set[int], skip_bracket: set[int]) -> Iterator[tuple[str, int, int, Any]]:
    """(family, start, end, reading) of every opener not escaped today that the planned reader would escape.

    The reader itself (``read_after``, ``read_bracket``, in Python) with its skip set widened to
    every non-ASCII character that is neither a letter or number nor structural; restored after.
    """
    names = _eye.names_for(RESERVED_NAMES)
    base = _eye._SKIP
    found: list[tuple[str, int, int, Any]] = []
    _eye._SKIP = _PlannedSkip(base)
    try:
        for m in _eye.OPENER_RE.finditer(text):
            if m.start() not in skip_angle:
                r = _eye.read_after(text, m.end(), names)
                if r:
                    found.append(("angle", m.start(), m.end(), r))
        for m in _eye.BRACKET_OPENER_RE.finditer(text):
            if m.start() not in skip_bracket:
                r = _eye.read_bracket(text, m.end(), names)
                if r:
                    found.append(("bracket", m.start(), m.end(), r))
    finally:
        _eye._SKIP = base
    yield from found


#: Whether this reader has the skip set the planned-reader simulation widens.
PLAN_SIMULATION = isinstance(getattr(_eye, "_SKIP", None), frozenset)


def _not_ascii_kept(ch: str) -> bool:
    """The literal upper bound: anything but an ASCII letter, digit or punctuation character."""
    return ch not in _ASCII_KEPT


def _run_at(text: str, i: int, pred: Callable[[str], bool]) -> int:
    """Length of the run of ``pred`` characters from ``i``, counted up to :data:`LONG_RUN`."""
    end = min(len(text), i + LONG_RUN)
    k = i
    while k < end and pred(text[k]):
        k += 1
    return k - i


def show(s: str) -> str:
    """``s`` on one line, controls and invisible characters as ``U+XXXX``."""
    return str(_eye.visible(s.replace("\n", "⏎")))


@dataclass
class ItemResult:
    corpus: str
    label: str
    chars: int
    changed: dict[str, bool]
    backslashes: dict[str, int]
    classes: Counter[str]  # class -> backslashes
    details: Counter[str]  # "class | detail" -> backslashes
    unexplained: int  # backslashes inserted at reserved that no reading explains (or the reverse, negative)
    escape_of_none: int  # escape-the-escape backslashes after an opener whose reading (past the backslash) is none
    lookalikes: Counter[str]  # "U+XXXX c | what" -> look-alike openers (not '<', not a reference)
    examples: dict[str, list[str]]  # class -> "label:line: text"
    severities: Counter[str]
    rules: Counter[str]  # "severity rule" -> findings
    errors: list[tuple[str, str, int, int, str]]  # (rule, snippet, line, column, message)
    warnings: Counter[tuple[str, str]]  # (rule, snippet) -> findings
    warning_first: dict[tuple[str, str], int]  # (rule, snippet) -> first line
    long_runs: Counter[str]
    long_examples: list[str]
    planned_examples: list[str]
    seconds: float


class _Lines:
    def __init__(self, text: str, base: int) -> None:
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self.base = base

    def line(self, offset: int) -> int:
        return self.base + bisect.bisect_right(self.starts, offset) - 1


def _context(text: str, start: int, end: int) -> str:
    return show(text[max(0, start - 24) : end + 24])


_LOOKALIKE_RE = re.compile("[" + re.escape(_eye.LT_CHARS.replace("<", "")) + "]")


def lookalike_census(text: str, escaped: set[int]) -> Counter[str]:
    """Each ``<`` look-alike written as itself: how often, how often a letter follows it (past spaces
    and today's skipped characters), and how often the defang escapes it."""
    out: Counter[str] = Counter()
    n = len(text)
    for m in _LOOKALIKE_RE.finditer(text):
        c = m.group()
        key = f"U+{ord(c):04X} {c}"
        out[f"{key} | all"] += 1
        k = m.end()
        while k < n and k - m.end() < LONG_RUN and _eye.is_skip(text[k]):
            k += 1
        if k < n and _eye.is_alpha(text[k]):
            out[f"{key} | then a letter"] += 1
            script = "ASCII" if text[k].isascii() else "non-ASCII"
            out[f"{key} | then a letter ({script})"] += 1
        if m.start() in escaped:
            out[f"{key} | escaped"] += 1
    return out


def measure_long_runs(
    item: Item, lines: _Lines, escaped_angle: set[int], escaped_bracket: set[int], changed_reserved: bool
) -> tuple[Counter[str], list[str], list[str]]:
    """The long-run measure of one item: openers followed by :data:`LONG_RUN` characters the planned
    reader would read past, and (where the reader allows it) the planned reader simulated."""
    text = item.text
    long_runs: Counter[str] = Counter()
    long_examples: list[str] = []
    new_in_item = False
    for m in _eye.OPENER_RE.finditer(text):
        e = m.end()
        long_runs["angle openers"] += 1
        if _run_at(text, e, _not_ascii_kept) >= LONG_RUN:
            long_runs["angle: 32+ not ASCII letter/digit/punctuation"] += 1
        if _run_at(text, e, _plan_lead_angle) >= LONG_RUN:
            long_runs["angle: 32+ read past (planned)"] += 1
            if m.start() not in escaped_angle:
                long_runs["angle: 32+ read past (planned), not escaped today"] += 1
                new_in_item = True
                if len(long_examples) < 3:
                    long_examples.append(
                        f"{item.label.split(':')[0]}:{lines.line(m.start())}: {_context(text, m.start(), e + LONG_RUN)}"
                    )
    for m in _eye.BRACKET_OPENER_RE.finditer(text):
        e = m.end()
        long_runs["bracket openers"] += 1
        if _run_at(text, e, _plan_lead_bracket) >= LONG_RUN:
            run = text[e : e + LONG_RUN]
            if run.isascii() and not run.strip():
                continue  # layout: plain ASCII whitespace after a bracket is never fail-closed
            long_runs["bracket: 32+ read past (planned)"] += 1
            if m.start() not in escaped_bracket:
                long_runs["bracket: 32+ read past (planned), not escaped today"] += 1
                new_in_item = True
                if len(long_examples) < 3:
                    long_examples.append(
                        f"{item.label.split(':')[0]}:{lines.line(m.start())}: {_context(text, m.start(), e + LONG_RUN)}"
                    )
    if new_in_item and not changed_reserved:
        long_runs["files newly changed at reserved (planned)"] = 1
    planned_examples: list[str] = []
    if PLAN_SIMULATION:
        for family, start, end, r in planned_readings(text, escaped_angle, escaped_bracket):
            long_runs[f"simulated planned reader: new escapes, {family} {r.kind}"] += 1
            if len(planned_examples) < 3:
                planned_examples.append(
                    f"{item.label.split(':')[0]}:{lines.line(start)}: {r.kind} {r.name} {_context(text, start, max(end, r.end))}".rstrip()
                )
        if planned_examples and not changed_reserved:
            long_runs["simulated planned reader: files newly changed at reserved"] = 1

    return long_runs, long_examples, planned_examples


def measure_item(
    corpus: str, item: Item, defang_fn: Defang = real_defang, scan_fn: Scan = real_scan, with_long_runs: bool = True
) -> ItemResult:
    """Every number of the report for one item."""
    t0 = time.process_time()
    text = item.text
    n = len(text)
    lines = _Lines(text, item.base_line)
    changed: dict[str, bool] = {}
    backslashes: dict[str, int] = {}
    for level in LEVEL_NAMES:
        out = defang_fn(text, level)
        changed[level] = out != (xml_escape_text(text) if level == "xml" else text)
        backslashes[level] = len(out) - len(xml_escape_text(text) if level == "xml" else text)

    classes: Counter[str] = Counter()
    details: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    escaped_angle: set[int] = set()
    escaped_bracket: set[int] = set()

    def note(cls: str, detail: str, start: int, end: int) -> None:
        classes[cls] += 1
        details[f"{cls} | {detail}"] += 1
        ex = examples.setdefault(cls, [])
        if len(ex) < 3:
            ex.append(f"{item.label.split(':')[0]}:{lines.line(start)}: {_context(text, start, end)}")

    for start, end, reading in opener_readings(text, RESERVED_NAMES, "angle"):
        if reading.kind == "none":
            continue  # an opener followed by a backslash is escaped only for a dangerous reading
        opener = text[start:end]
        escaped_angle.add(start)
        if end < n and text[end] == "\\":
            sub = "" if reading.kind == "none" else f" (reading: {reading.kind} {reading.name})".rstrip()
            note("escape-the-escape", f"{show(opener)} then {show(text[end : end + 2])}{sub}", start, end + 2)
        else:
            note(_ANGLE_CLASS[reading.kind], f"{show(opener)} {reading.name}".rstrip(), start, max(end, reading.end))
    for start, end, reading in opener_readings(text, RESERVED_NAMES, "bracket"):
        if reading.kind == "none":
            continue  # a bracket opener is escaped for its reading only, not for a following backslash
        escaped_bracket.add(start)
        note(_BRACKET_CLASS[reading.kind], f"{show(text[start:end])} {reading.name}".rstrip(), start, max(end, reading.end))
    unexplained = backslashes["reserved"] - sum(classes.values())
    escape_of_none = sum(k for d, k in details.items() if d.startswith("escape-the-escape | ") and "(reading:" not in d)
    lookalikes = lookalike_census(text, escaped_angle)

    long_runs: Counter[str] = Counter()
    long_examples: list[str] = []
    planned_examples: list[str] = []
    if with_long_runs:
        long_runs, long_examples, planned_examples = measure_long_runs(
            item, lines, escaped_angle, escaped_bracket, changed["reserved"]
        )

    severities: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    errors: list[tuple[str, str, int, int, str]] = []
    warnings: Counter[tuple[str, str]] = Counter()
    warning_first: dict[tuple[str, str], int] = {}
    for f in scan_fn(text):
        severities[f.severity] += 1
        rules[f"{f.severity} {f.rule}"] += 1
        line = item.base_line + f.line - 1
        if f.severity == "error" and len(errors) < ERRORS_PER_ITEM:
            errors.append((f.rule, f.snippet, line, f.column, f.message))
        elif f.severity == "warning":
            warnings[(f.rule, f.snippet)] += 1
            warning_first.setdefault((f.rule, f.snippet), line)
    return ItemResult(
        corpus,
        item.label,
        n,
        changed,
        backslashes,
        classes,
        details,
        unexplained,
        escape_of_none,
        lookalikes,
        examples,
        severities,
        rules,
        errors,
        warnings,
        warning_first,
        long_runs,
        long_examples,
        planned_examples,
        time.process_time() - t0,
    )


@dataclass
class SourceResult:
    source: Source
    items: list[ItemResult]
    binary: bool
    undecodable: str
    unreadable: str


def measure_source(args: tuple[Source, Defang, Scan, bool]) -> SourceResult:
    src, defang_fn, scan_fn, with_long_runs = args
    got = read_source(src)
    items = [measure_item(src.corpus, it, defang_fn, scan_fn, with_long_runs) for it in got.items]
    return SourceResult(src, items, got.binary, got.undecodable, got.unreadable)


# --- the run and its aggregation -------------------------------------------------------------


def quick_sample(sources: list[Source], limit: int = QUICK_SOURCES) -> list[Source]:
    """At most ``limit`` sources, evenly spaced (deterministic)."""
    if len(sources) <= limit:
        return sources
    step = len(sources) / limit
    return [sources[int(k * step)] for k in range(limit)]


def _pct(k: int, n: int) -> float:
    return round(100.0 * k / n, 2) if n else 0.0


def aggregate(corpus: Corpus, results: list[SourceResult], sampled: int) -> dict[str, Any]:
    """The report of one corpus (JSON-ready)."""
    results = sorted(results, key=lambda r: r.source.label)
    items = [it for r in results for it in r.items]
    files = len(items)
    out: dict[str, Any] = {
        "name": corpus.name,
        "description": corpus.description,
        "version": corpus.version,
        "sources": len(corpus.sources),
        "sources_read": sampled,
        "links_not_read": corpus.links,
        "binary": sum(1 for r in results if r.binary),
        "undecodable": [{"file": r.source.label, "why": r.undecodable} for r in results if r.undecodable],
        "unreadable": [{"file": r.source.label, "why": r.unreadable} for r in results if r.unreadable],
        "files": files,
        "chars": sum(it.chars for it in items),
        "seconds": round(sum(it.seconds for it in items), 2),
    }
    out["changed"] = {
        lvl: {"files": sum(it.changed[lvl] for it in items), "pct": _pct(sum(it.changed[lvl] for it in items), files)}
        for lvl in LEVEL_NAMES
    }
    out["backslashes"] = {lvl: sum(it.backslashes[lvl] for it in items) for lvl in LEVEL_NAMES}
    classes: Counter[str] = Counter()
    class_files: Counter[str] = Counter()
    details: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    for it in items:
        classes.update(it.classes)
        class_files.update(set(it.classes))
        details.update(it.details)
        for cls, ex in it.examples.items():
            bucket = examples.setdefault(cls, [])
            if len(bucket) < EXAMPLES:
                bucket.extend(ex[: EXAMPLES - len(bucket)])
    out["reserved_why"] = {
        cls: {
            "backslashes": classes[cls],
            "files": class_files[cls],
            "top": [[d.split(" | ", 1)[1], k] for d, k in details.most_common() if d.startswith(cls + " | ")][:12],
            "examples": examples.get(cls, []),
        }
        for cls in CLASSES
        if classes[cls]
    }
    out["reserved_unexplained"] = sum(it.unexplained for it in items)
    sole: Counter[str] = Counter()
    for it in items:
        if len(it.classes) == 1:
            sole.update(it.classes.keys())
    for cls, d in out["reserved_why"].items():
        d["sole_reason_files"] = sole[cls]
    still = sum(1 for it in items if it.changed["reserved"] and it.backslashes["reserved"] - it.escape_of_none > 0)
    out["what_if"] = {
        "escape-the-escape only where the reading past the backslash is dangerous": {
            "backslashes_removed": sum(it.escape_of_none for it in items),
            "files_changed": still,
            "pct": _pct(still, files),
        }
    }
    looks: Counter[str] = Counter()
    for it in items:
        looks.update(it.lookalikes)
    out["lookalike_openers"] = dict(sorted(looks.items()))
    sev: Counter[str] = Counter()
    rules: Counter[str] = Counter()
    for it in items:
        sev.update(it.severities)
        rules.update(it.rules)
    out["scan"] = {
        "by_severity": {s: sev[s] for s in ("error", "warning", "note")},
        "files_with_errors": sum(1 for it in items if it.severities["error"]),
        "by_rule": dict(sorted(rules.items(), key=lambda kv: (-kv[1], kv[0]))),
    }
    groups: dict[tuple[str, str], list[str]] = {}
    counts: Counter[tuple[str, str]] = Counter()
    for it in items:
        for rule, snippet, line, col, _msg in it.errors:
            counts[(rule, snippet)] += 1
            where = groups.setdefault((rule, snippet), [])
            if len(where) < 3:
                where.append(f"{it.label.split(':')[0]}:{line}:{col}")
    out["top_errors"] = [{"rule": r, "snippet": s, "count": k, "where": groups[(r, s)]} for (r, s), k in counts.most_common(20)]
    wcounts: Counter[tuple[str, str]] = Counter()
    wfirst: dict[tuple[str, str], str] = {}
    for it in items:
        wcounts.update(it.warnings)
        for key, line in it.warning_first.items():
            wfirst.setdefault(key, f"{it.label.split(':')[0]}:{line}")
    out["top_warnings"] = [
        {"rule": r, "snippet": s, "count": k, "where": wfirst[(r, s)]} for (r, s), k in wcounts.most_common(10)
    ]
    runs: Counter[str] = Counter()
    long_examples: list[str] = []
    planned_examples: list[str] = []
    for it in items:
        runs.update(it.long_runs)
        if len(long_examples) < EXAMPLES:
            long_examples.extend(it.long_examples[: EXAMPLES - len(long_examples)])
        if len(planned_examples) < EXAMPLES:
            planned_examples.extend(it.planned_examples[: EXAMPLES - len(planned_examples)])
    today = out["changed"]["reserved"]["files"]
    newly = runs["files newly changed at reserved (planned)"]
    simulated = runs["simulated planned reader: files newly changed at reserved"]
    out["long_runs"] = {
        **{k: runs[k] for k in sorted(runs)},
        "projected changed at reserved (planned)": {"files": today + newly, "pct": _pct(today + newly, files)},
        "simulated": PLAN_SIMULATION,
        "simulated changed at reserved (planned reader)": {"files": today + simulated, "pct": _pct(today + simulated, files)},
        "examples": long_examples,
        "simulated_examples": planned_examples,
    }
    return out


def run(
    names: Iterable[str] | None = None,
    *,
    quick: bool = False,
    workers: int = 2,
    html5lib_tests: str | None = None,
    defang_fn: Defang = real_defang,
    scan_fn: Scan = real_scan,
    long_runs: bool = True,
    select: Callable[[Source], bool] | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Measure the corpora ``names`` (default: all); the whole report as a JSON-ready dict.

    ``defang_fn`` and ``scan_fn`` replace the library's (the negative controls of the test); ``long_runs``
    turns the long-run measure off; ``select`` keeps only the sources it accepts.
    """
    if not 1 <= workers <= 2:
        raise ValueError("workers must be 1 or 2 (the machine is shared)")
    corpora = all_corpora(html5lib_tests)
    known = {c.name for c in corpora}
    wanted = list(names) if names is not None else [c.name for c in corpora]
    unknown = [w for w in wanted if w not in known]
    if unknown:
        raise ValueError(f"unknown corpus: {', '.join(unknown)} (known: {', '.join(sorted(known))})")
    chosen = [c for c in corpora if c.name in wanted]
    plan: dict[str, list[Source]] = {}
    for c in chosen:
        if not c.missing:
            sources = [s for s in c.sources if select is None or select(s)]
            plan[c.name] = quick_sample(sources) if quick else sources
    tasks = [(s, defang_fn, scan_fn, long_runs) for c in chosen for s in plan.get(c.name, [])]
    t0 = time.perf_counter()
    done: list[SourceResult] = []
    if workers == 1:
        done = [measure_source(t) for t in tasks]
    else:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            for k, r in enumerate(pool.imap_unordered(measure_source, tasks, chunksize=4), 1):
                done.append(r)
                if progress and k % 500 == 0:
                    progress(f"{k}/{len(tasks)} sources")
    by_corpus: dict[str, list[SourceResult]] = {}
    for r in done:
        by_corpus.setdefault(r.source.corpus, []).append(r)
    report: dict[str, Any] = {
        "meta": meta(quick, workers, time.perf_counter() - t0, long_runs),
        "targets": {"max_changed_pct_reserved": MAX_CHANGED_PCT, "max_scan_errors": MAX_SCAN_ERRORS},
        "corpora": {},
        "missing": {c.name: c.missing for c in chosen if c.missing},
    }
    for c in chosen:
        if not c.missing:
            report["corpora"][c.name] = aggregate(c, by_corpus.get(c.name, []), len(plan[c.name]))
    report["combined"] = {g: combined(report["corpora"], members) for g, members in GROUPS.items()}
    return report


#: Sums over several corpora: the five man-page packages first measured together.
GROUPS = {"man fr de ja ru zh": ("man-fr", "man-de", "man-ja", "man-ru", "man-zh_CN", "man-zh_TW")}


def combined(corpora: dict[str, Any], members: Iterable[str]) -> dict[str, Any]:
    """Files, files changed at reserved, backslashes and their classes, summed over ``members`` present."""
    present = [corpora[m] for m in members if m in corpora]
    files = sum(c["files"] for c in present)
    changed = sum(c["changed"]["reserved"]["files"] for c in present)
    why: Counter[str] = Counter()
    for c in present:
        why.update({cls: d["backslashes"] for cls, d in c["reserved_why"].items()})
    return {
        "corpora": [c["name"] for c in present],
        "files": files,
        "changed_reserved": {"files": changed, "pct": _pct(changed, files)},
        "backslashes_reserved": sum(c["backslashes"]["reserved"] for c in present),
        "reserved_why": dict(why.most_common()),
        "scan_errors": sum(c["scan"]["by_severity"]["error"] for c in present),
    }


def violations(corpus: dict[str, Any]) -> list[str]:
    """How one corpus's report misses the targets (a corpus with nothing read, or with an unreadable file,
    misses them: a gate that read nothing does not pass)."""
    out: list[str] = []
    files = corpus["files"]
    if files == 0:
        out.append("no file read")
    if corpus["unreadable"]:
        out.append(f"{len(corpus['unreadable'])} sources unreadable, first {corpus['unreadable'][0]}")
    changed = corpus["changed"]["reserved"]["files"]
    if files and 100.0 * changed / files > MAX_CHANGED_PCT:
        out.append(
            f"defang(level='reserved') changes {changed} of {files} files ({100.0 * changed / files:.2f}% > {MAX_CHANGED_PCT}%)"
        )
    errors = corpus["scan"]["by_severity"]["error"]
    if errors > MAX_SCAN_ERRORS:
        out.append(f"scan_text reports {errors} errors in {corpus['scan']['files_with_errors']} files")
    return out


def meta(quick: bool, workers: int, seconds: float, long_runs: bool = True) -> dict[str, Any]:
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": {
            "platform": platform.platform(),
            "processor": platform.machine(),
            "cpus": os.cpu_count(),
        },
        "python": sys.version.split()[0],
        "python_implementation": platform.python_implementation(),
        "envelock": envelock.__version__,
        "envelock_path": str(Path(envelock.__file__).parent),
        "defang_implementation": implementation(),
        "git_commit": _git_commit(),
        "packages": {p: _package_version(p) for p in (*MAN_PACKAGES, "python3-doc")},
        "lxml": _lxml_version(),
        "command": (
            f"ENVELOCK_IMPL={os.environ.get('ENVELOCK_IMPL', '')} " + " ".join(["python", *sys.argv])
            if sys.argv and sys.argv[0].endswith("benign.py")
            else ""
        ),
        "quick": quick,
        "workers": workers,
        "long_runs": long_runs,
        "wall_seconds": round(seconds, 1),
    }


def _lxml_version() -> str:
    try:
        from lxml import etree
    except ImportError:
        return ""
    return ".".join(map(str, etree.LXML_VERSION))


def _git_commit() -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
        )
    except OSError:
        return ""
    return out.stdout.strip()


# --- the text report -------------------------------------------------------------------------


def render(report: dict[str, Any]) -> str:
    m = report["meta"]
    w: list[str] = []
    w.append("False positives on real text: defang and scan_text with default settings")
    w.append(f"date {m['date']}  machine {m['machine']['platform']} {m['machine']['processor']} ({m['machine']['cpus']} CPUs)")
    w.append(
        f"Python {m['python']}  envelock {m['envelock']} (commit {m['git_commit']}, defang {m['defang_implementation']})  lxml {m['lxml']}"
        f"  workers {m['workers']}  quick {m['quick']}  wall {m['wall_seconds']} s"
    )
    w.append("packages: " + ", ".join(f"{k} {v or '-'}" for k, v in m["packages"].items()))
    if m["command"]:
        w.append(f"command: {m['command']}")
    for name, why in report["missing"].items():
        w.append(f"MISSING {name}: {why}")
    w.append("")
    hdr = f"{'corpus':<15}{'files':>7}{'undec':>6}{'reserved':>15}{'markup':>15}{'xml':>15}{'bs reserved':>12}{'bs markup':>11}{'errors':>8}{'warn':>7}{'notes':>7}  target"
    w.append(hdr)
    w.append("-" * len(hdr))
    for name, c in report["corpora"].items():
        ch = c["changed"]
        cells = "".join(f"{ch[lvl]['files']:>7} {ch[lvl]['pct']:>6.2f}%" for lvl in LEVEL_NAMES)
        bad = violations(c)
        sev = c["scan"]["by_severity"]
        w.append(
            f"{name:<15}{c['files']:>7}{len(c['undecodable']):>6}{cells}{c['backslashes']['reserved']:>12}{c['backslashes']['markup']:>11}"
            f"{sev['error']:>8}{sev['warning']:>7}{sev['note']:>7}  {'FAIL' if bad else 'ok'}"
        )
    for g, d in report.get("combined", {}).items():
        if d["files"]:
            w.append(
                f"{g}: {d['files']} files, {d['changed_reserved']['files']} changed at reserved ({d['changed_reserved']['pct']}%),"
                f" {d['backslashes_reserved']} backslashes {d['reserved_why']}, {d['scan_errors']} scan errors"
            )
    w.append("")
    w.append("files: items read (a man page, a source file, an HTML page, one html5lib #data section or tokenizer input);")
    w.append("changed: files defang changes at that level (xml: beyond the XML text escape); bs: backslashes inserted.")
    for name, c in report["corpora"].items():
        w.append("")
        w.append(f"== {name}: {c['description']}")
        w.append(
            f"   {c['files']} files ({c['chars']:,} characters) from {c['sources_read']} of {c['sources']} sources;"
            f" {c['links_not_read']} links not read; {c['binary']} binary; {len(c['undecodable'])} undecodable; {c['seconds']} s CPU"
        )
        for u in c["undecodable"][:10]:
            w.append(f"   undecodable (decoded with U+FFFD, measured): {u['file']}: {u['why']}")
        if len(c["undecodable"]) > 10:
            w.append(f"   ... and {len(c['undecodable']) - 10} more undecodable (all in the JSON)")
        for u in c["unreadable"]:
            w.append(f"   UNREADABLE: {u['file']}: {u['why']}")
        for v in violations(c):
            w.append(f"   TARGET MISSED: {v}")
        if c["reserved_why"]:
            w.append(
                f"   why, at reserved ({c['backslashes']['reserved']} backslashes; unexplained {c['reserved_unexplained']}):"
            )
            for cls, d in c["reserved_why"].items():
                w.append(
                    f"     {cls:<30}{d['backslashes']:>7} backslashes in {d['files']} files"
                    f" ({d['sole_reason_files']} files changed for this reason only)"
                )
                for detail, k in d["top"][:8]:
                    w.append(f"         {k:>6}  {detail}")
                for ex in d["examples"][:3]:
                    w.append(f"         e.g. {ex}")
        for what, d in c["what_if"].items():
            if d["backslashes_removed"]:
                w.append(
                    f"   what if {what}: {d['backslashes_removed']} fewer backslashes, {d['files_changed']} files changed ({d['pct']}%)"
                )
        looks = c["lookalike_openers"]
        chars = sorted({k.split(" | ")[0] for k in looks}, key=lambda ch: -looks[f"{ch} | all"])
        if chars:
            w.append("   '<' look-alikes written as themselves (count / then a letter, non-ASCII / escaped at reserved):")
            w.append(
                "     "
                + ";  ".join(
                    f"{ch} {looks[ch + ' | all']}/{looks.get(ch + ' | then a letter', 0)},"
                    f"{looks.get(ch + ' | then a letter (non-ASCII)', 0)}/{looks.get(ch + ' | escaped', 0)}"
                    for ch in chars[:8]
                )
            )
        s = c["scan"]
        w.append(f"   scan: {s['by_severity']} ({s['files_with_errors']} files with errors)")
        for rule, k in list(s["by_rule"].items())[:12]:
            w.append(f"     {k:>7}  {rule}")
        if c["top_errors"]:
            w.append("   top errors:")
            for e in c["top_errors"]:
                w.append(f"     {e['count']:>6}  {e['rule']:<20} {e['snippet']!s:<40} {', '.join(e['where'])}")
        if c["top_warnings"]:
            w.append("   top warnings:")
            for e in c["top_warnings"]:
                w.append(f"     {e['count']:>6}  {e['rule']:<20} {e['snippet']!s:<40} {e['where']}")
        if not m["long_runs"]:
            continue
        lr = c["long_runs"]
        proj = lr["projected changed at reserved (planned)"]
        w.append(
            f"   long runs ({LONG_RUN}+ read past after an opener if every non-ASCII non-letter/number/structural character were skipped):"
        )
        for k, v in lr.items():
            if isinstance(v, int) and not isinstance(v, bool):
                w.append(f"     {v:>8}  {k}")
        w.append(f"     projected files changed at reserved (32+ run right after an opener): {proj['files']} ({proj['pct']}%)")
        for ex in lr["examples"][:3]:
            w.append(f"         e.g. {ex}")
        if lr["simulated"]:
            sim = lr["simulated changed at reserved (planned reader)"]
            w.append(f"     simulated planned reader, files changed at reserved: {sim['files']} ({sim['pct']}%)")
            for ex in lr["simulated_examples"][:3]:
                w.append(f"         e.g. {ex}")
        else:
            w.append("     (no planned-reader simulation: this reader has no skip set to widen)")
    return "\n".join(w) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--quick", action="store_true", help=f"at most {QUICK_SOURCES} evenly spaced sources per corpus")
    ap.add_argument("--only", default="", help="comma-separated corpus names (default: all)")
    ap.add_argument("--workers", type=int, default=2, choices=(1, 2))
    ap.add_argument(
        "--html5lib-tests",
        default=None,
        help="html5lib-tests directory or html5lib sdist (default: $ENVELOCK_HTML5LIB_TESTS or ~/.cache/envelock/realtext)",
    )
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--name", default="benign", help="output file stem (NAME.txt, NAME.json)")
    ap.add_argument("--list", action="store_true", help="list the corpora and exit")
    args = ap.parse_args(argv)
    if args.list:
        for c in all_corpora(args.html5lib_tests):
            print(f"{c.name:<15} {len(c.sources):>6} sources  {c.missing or c.description}")
        return 0
    names = [n for n in args.only.split(",") if n] or None
    report = run(
        names,
        quick=args.quick,
        workers=args.workers,
        html5lib_tests=args.html5lib_tests,
        progress=lambda s: print(s, file=sys.stderr),
    )
    text = render(report)
    out = Path(args.out)
    from _results import write_results  # benchmarks/ is on sys.path when run as a script

    write_results(out, args.name, text, report)
    print(text)
    print(f"wrote {out / (args.name + '.txt')} and {out / (args.name + '.json')}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
