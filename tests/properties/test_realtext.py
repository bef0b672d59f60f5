"""Precision on real text nobody here wrote: the targets, per corpus, with default settings.

For each corpus of ``benchmarks/benign.py`` that states a target (the running interpreter's
standard library, the man pages of Debian's ``manpages-LANG`` packages one language at a time,
``python3-doc``'s HTML, the inputs of html5lib-tests):

* ``defang(level="reserved")`` changes at most ``MAX_CHANGED_PCT`` (2%) of the files;
* ``scan_text`` reports no error.

The measurement is the benchmark's own (``benign.run``), so the test and the committed figures
(``benchmarks/results/benign*.txt``) cannot drift apart. A corpus whose data is not installed is
skipped with the command that installs it; under ``ENVELOCK_REQUIRE_REALTEXT=1`` it fails instead.
The measurements are marked ``slow`` (``pytest -m slow``, about two minutes on 2 cores); the
controls of the harness's own bookkeeping run in the default suite. Negative controls: a defang that also escapes every ``«`` must exceed the bound on the French man
pages; a scanner that reports every warning as an error must be caught on standard-library files
that hold warnings; a corpus of which nothing was read never passes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from helpers.data import skip_unless_required

from envelock import Finding, defang, scan_text

ROOT = Path(__file__).resolve().parents[2]
REQUIRE = "ENVELOCK_REQUIRE_REALTEXT"
#: The corpora with a target (the repository's own tests/data/benign is reported, not asserted).
TARGETS = (
    "stdlib-py",
    "stdlib-other",
    "man-fr",
    "man-de",
    "man-ja",
    "man-ru",
    "man-zh_CN",
    "man-zh_TW",
    "man-es",
    "man-pl",
    "python3-doc",
    "html5lib-tests",
)
#: Standard-library files that hold warning-level findings today (``[args]``, ``<s>``): the scanner control runs on them.
WARNING_FILES = ("subprocess.py", "lib2to3/pgen2/conv.py", "pdb.py", "unittest/loader.py", "test/test_pyexpat.py")


def _load_harness() -> ModuleType:
    name = "envelock_benign_harness"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "benign.py")
    if spec is None or spec.loader is None:  # pragma: no cover - the file is in the repository
        raise ImportError("benchmarks/benign.py not found")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # the worker processes find the functions they run by module name
    spec.loader.exec_module(module)
    return module


benign: Any = _load_harness()


def corpus_report(report: dict[str, Any], name: str) -> dict[str, Any]:
    """The report of one corpus, or skip (fail under ``ENVELOCK_REQUIRE_REALTEXT=1``) saying how to install it."""
    if name in report["missing"]:
        skip_unless_required(f"{name}: {report['missing'][name]}", REQUIRE)
    c: dict[str, Any] = report["corpora"][name]
    return c


_MEASURED: dict[str, dict[str, Any]] = {}


def measured(name: str) -> dict[str, Any]:
    """One corpus measured with the library's defang and scanner (2 workers), once per session."""
    if name not in _MEASURED:
        _MEASURED[name] = benign.run([name], workers=2, long_runs=False)
    return corpus_report(_MEASURED[name], name)


def changed_pct(c: dict[str, Any]) -> float:
    files = int(c["files"])
    return 100.0 * int(c["changed"]["reserved"]["files"]) / files if files else 100.0


def why(c: dict[str, Any]) -> str:
    """The classes of the backslashes, with examples, for a failure message."""
    lines = [f"{c['name']}: {c['changed']['reserved']['files']} of {c['files']} files changed at reserved"]
    for cls, d in c["reserved_why"].items():
        lines.append(f"  {cls}: {d['backslashes']} backslashes in {d['files']} files, e.g. {d['examples'][:2]}")
    return "\n".join(lines)


@pytest.mark.slow
@pytest.mark.parametrize("name", TARGETS)
def test_corpus_was_read(name: str) -> None:
    c = measured(name)
    assert c["files"] > 0, f"{name}: nothing read"
    assert c["unreadable"] == [], f"{name}: unreadable sources {c['unreadable'][:5]}"


@pytest.mark.slow
@pytest.mark.parametrize("name", TARGETS)
def test_defang_reserved_changes_few_files(name: str) -> None:
    c = measured(name)
    assert changed_pct(c) <= benign.MAX_CHANGED_PCT, why(c)


@pytest.mark.slow
@pytest.mark.parametrize("name", TARGETS)
def test_scan_reports_no_error(name: str) -> None:
    c = measured(name)
    errors = c["scan"]["by_severity"]["error"]
    assert errors <= benign.MAX_SCAN_ERRORS, f"{name}: {errors} errors; most frequent: {c['top_errors'][:5]}"


@pytest.mark.slow
@pytest.mark.parametrize("name", TARGETS)
def test_violations_agree_with_the_assertions(name: str) -> None:
    """The benchmark's own verdict (the FAIL column of benign.txt) is the one these tests assert."""
    c = measured(name)
    expected = changed_pct(c) > benign.MAX_CHANGED_PCT or c["scan"]["by_severity"]["error"] > benign.MAX_SCAN_ERRORS
    assert bool(benign.violations(c)) == (expected or c["files"] == 0 or bool(c["unreadable"]))


# --- negative controls ------------------------------------------------------------------------


def defang_every_guillemet(text: str, level: str) -> str:
    """An over-eager defang: the library's, then a backslash after every « (a `<` look-alike)."""
    return defang(text, level=level).replace("«", "«\\")  # type: ignore[arg-type]


def scan_warnings_as_errors(text: str) -> list[Finding]:
    """A scanner that cries wolf: every warning reported as an error."""
    return [dataclasses.replace(f, severity="error") if f.severity == "warning" else f for f in scan_text(text)]


@pytest.mark.slow
def test_control_guillemet_defang_exceeds_the_bound() -> None:
    got = benign.run(["man-fr"], quick=True, workers=1, long_runs=False, defang_fn=defang_every_guillemet)
    c = corpus_report(got, "man-fr")
    assert c["files"] >= 20
    assert changed_pct(c) > benign.MAX_CHANGED_PCT, why(c)
    assert any("changes" in v for v in benign.violations(c))


@pytest.mark.slow
def test_control_warnings_as_errors_are_caught() -> None:
    def held(src: Any) -> bool:
        return str(src.label) in WARNING_FILES

    real = benign.run(["stdlib-py"], workers=1, long_runs=False, select=held)["corpora"]["stdlib-py"]
    assert real["files"] >= 3, f"the warning files are not in this standard library: {WARNING_FILES}"
    assert real["scan"]["by_severity"]["warning"] > 0, "no warnings left in these files: choose others for this control"
    got = benign.run(["stdlib-py"], workers=1, long_runs=False, select=held, scan_fn=scan_warnings_as_errors)
    c = got["corpora"]["stdlib-py"]
    assert c["scan"]["by_severity"]["error"] == real["scan"]["by_severity"]["error"] + real["scan"]["by_severity"]["warning"]
    assert any("errors" in v for v in benign.violations(c))


def test_control_nothing_read_never_passes() -> None:
    empty = benign.aggregate(benign.Corpus("empty", "no files"), [], 0)
    assert "no file read" in benign.violations(empty)
    unreadable = benign.SourceResult(benign.Source("x", "/nonexistent", "x", "text"), [], False, "", "FileNotFoundError")
    c = benign.aggregate(benign.Corpus("x", "one unreadable file"), [unreadable], 1)
    assert any("unreadable" in v for v in benign.violations(c))


def test_control_unreadable_source_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "bad.1.gz"
    bad.write_bytes(b"not gzip")
    got = benign.read_source(benign.Source("man-xx", str(bad), "bad.1.gz", "gzip"))
    assert got.items == [] and got.unreadable
    latin = tmp_path / "latin.txt"
    latin.write_bytes("caf\xe9 <s>".encode("latin-1"))
    got = benign.read_source(benign.Source("stdlib-other", str(latin), "latin.txt", "text"))
    assert got.undecodable and got.items[0].text == "caf\ufffd <s>"
