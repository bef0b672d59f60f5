"""The benign real-code set: the interpreter's own standard library (and, in the slow run, its
site-packages), scanned with default settings, must give zero error-level findings.

The set is built at test time from ``sysconfig``, so it is whatever CI's interpreter ships:
the default run scans a deterministic quick subset (every 12th file of the standard library
up to 256 KB, plus the files that held the false errors the issue names); ``-m slow`` runs
``envelock scan`` over the whole standard library and the venv's site-packages, as a user
would. Negative controls: a planted close tag in a copy of a real file is an error, and with
the code-context rules of :mod:`envelock.scan.context` turned off, the files that needed
them report warnings again.
"""

from __future__ import annotations

import json
import subprocess
import sys
import sysconfig
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from envelock import defang, scan_text
from envelock.cli.scanning import ScanOptions, scan_bytes
from envelock.cli.walk import Target, Walk, expand
from envelock.scan import context
from envelock.types import Finding

STDLIB = Path(sysconfig.get_paths()["stdlib"])
PURELIB = Path(sysconfig.get_paths()["purelib"])
ENVELOCK = Path(sys.executable).parent / "envelock"
#: Files whose ordinary code held the false findings the gate once reported (those present in this interpreter).
TRICKY = (
    "_strptime.py",  # (?P<S>...) read as the Llama <s>
    "datetime.py",  # 'if offset < 0:' then a deeply indented block read as a padded opener
    "re/_parser.py",
    "sre_parse.py",
    "importlib/_bootstrap.py",  # args.append('origin={!r}') read as attribute injection
    "subprocess.py",  # [args] read as the Mistral [ARGS]
    "typing.py",
    "unittest/loader.py",  # [inst]
    "lib2to3/pgen2/conv.py",  # states_<s>[<t>]
    "test/test_builtin.py",  # msg=f"source={source}"
)


def stdlib_files(*, every: int = 12, max_size: int = 256_000) -> list[Target]:
    targets = [t for t in expand([str(STDLIB)], Walk(exclude=["site-packages", "dist-packages"])) if t.skipped is None]
    quick = [t for t in targets[::every] if t.size <= max_size]
    named = {str(STDLIB / rel) for rel in TRICKY}
    return quick + [t for t in targets if t.path in named and t not in quick]


QUICK = stdlib_files()


def scan_targets(targets: list[Target]) -> Iterator[tuple[str, Finding]]:
    for t in targets:
        result = scan_bytes(Path(t.path).read_bytes(), ScanOptions(inline_ignore=False))
        for f in result.findings:
            yield t.path, f


def test_quick_set_is_real_code() -> None:
    assert len(QUICK) >= 100, f"the stdlib at {STDLIB} looks too small to be a benign set"
    assert sum(t.size for t in QUICK) > 1_000_000
    assert sum(1 for t in QUICK if t.path.endswith(".py")) >= 50
    assert any(t.path.endswith("_strptime.py") for t in QUICK)


def test_quick_stdlib_set_has_no_errors() -> None:
    findings = list(scan_targets(QUICK))
    errors = [(p, f.line, f.rule, f.snippet) for p, f in findings if f.severity == "error"]
    assert errors == []
    # The context rules keep the named files below warning for the constructs they cover.
    covered = {"padded-opener", "forged-attribute"}
    noisy = [(p, f.line, f.rule) for p, f in findings if f.rule in covered and f.severity != "note"]
    assert noisy == []


def test_negative_control_a_planted_tag_in_real_code_is_an_error(tmp_path: Path) -> None:
    source = next(t for t in QUICK if t.path.endswith("_strptime.py"))
    text = Path(source.path).read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    lines.insert(len(lines) // 2, "# see </retrieved_content> here\n")
    planted = tmp_path / "planted.py"
    planted.write_text("".join(lines), encoding="utf-8")
    found = [(f.rule, f.severity) for _, f in scan_targets([Target(str(planted), planted.stat().st_size)])]
    assert ("envelope-close-tag", "error") in found


def test_negative_control_without_context_rules_the_named_files_warn(monkeypatch: pytest.MonkeyPatch) -> None:
    named = [t for t in QUICK if any(t.path.endswith(rel) for rel in ("_strptime.py", "datetime.py"))]
    assert named
    with_rules = Counter(f.severity for _, f in scan_targets(named))
    monkeypatch.setattr(context, "regex_group_or_arrow", lambda *a: False)
    monkeypatch.setattr(context, "layout_padding", lambda *a, **k: False)
    without = Counter(f.severity for _, f in scan_targets(named))
    assert with_rules["warning"] == 0 and without["warning"] > 0


def _cli_report(*args: str) -> dict[str, object]:
    r = subprocess.run([str(ENVELOCK), "scan", "--format", "json", "-j", "2", *args], capture_output=True, timeout=3600, check=False)
    assert r.returncode in (0, 1), r.stderr
    doc: dict[str, object] = json.loads(r.stdout)
    return doc


#: Packages whose data are control tokens (globs for --exclude).
TOKENIZER_LIBS = ("tiktoken*", "tokenizers*")


@pytest.mark.slow
def test_whole_stdlib_and_site_packages_have_no_errors() -> None:
    """What the issue measured: ``envelock scan`` over the standard library (with whatever
    site-packages it holds) and over this venv's site-packages, default settings. envelock's
    own dist-info is left out: its METADATA is the README, whose attack examples are real."""
    doc = _cli_report(str(STDLIB))
    summary = doc["summary"]
    assert isinstance(summary, dict) and summary["files"] > 1000
    findings = doc["findings"]
    assert isinstance(findings, list)
    assert [f for f in findings if f["severity"] == "error"] == [], summary
    if PURELIB.resolve() != STDLIB.resolve() and STDLIB.resolve() not in PURELIB.resolve().parents:
        # The tokenizer libraries the test group installs (tests/eye/test_tokenizers.py) hold control
        # tokens as their data (<|endoftext|>, [CLS]): true findings, left out here and checked below.
        tokenizer_libs = [x for pkg in TOKENIZER_LIBS for x in ("--exclude", pkg)]
        doc = _cli_report("--exclude", "envelock-*.dist-info", "--exclude", "_envelock*", *tokenizer_libs, str(PURELIB))
        findings = doc["findings"]
        assert isinstance(findings, list)
        assert [f for f in findings if f["severity"] == "error"] == [], doc["summary"]
        present = [PURELIB / name for name in ("tiktoken", "tokenizers") if (PURELIB / name).is_dir()]
        if present:  # control: what was left out really holds tokens the scanner reports
            real = _cli_report(*map(str, present))["findings"]
            assert isinstance(real, list) and any(f["severity"] == "error" for f in real)


#: What ``defang`` at ``reserved`` changes in ordinary code: at most this share of the standard
#: library's files (measured 29 of 2,265 files, 1.3 %, on CPython 3.11; README.md, "What each level costs").
DEFANG_CHANGED_FILES_MAX = 0.02


@pytest.mark.slow
def test_defang_on_the_stdlib_changes_few_files() -> None:
    """The README's number for ``reserved`` on ordinary code, re-measured."""
    targets = [t for t in expand([str(STDLIB)], Walk(exclude=["site-packages", "dist-packages"])) if t.skipped is None]
    changed = 0
    read = 0
    for t in targets:
        try:
            text = Path(t.path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        read += 1
        changed += defang(text) != text
    assert read > 1000
    assert changed / read <= DEFANG_CHANGED_FILES_MAX, f"{changed}/{read}"


def test_scan_text_on_the_issue_examples() -> None:
    """The constructs the issue quotes, one by one: no error, and the context-ruled ones at most notes."""
    cases = {
        "return [inst]": "warning",
        "def f(x: list[Mark]) -> None: ...": "warning",
        "(?P<S>\\d\\d?)": "note",
        "s->size < s->len": "note",
        "if offset < 0:\n" + " " * 40 + "offset = -offset\n": "note",
        '<edge id="e0" source="n0" target="n1"/>': "",
        "user: bool = False\n": "",
        "# [" + "-" * 60 + "]\n": "note",
        "sha256=VyQbTx6Qm0h6bzdwqPFM-9NRPTOB36Fe7_kofYVUBgI,1234\n": "",
    }
    order = {"": 0, "note": 1, "warning": 2, "error": 3}
    for text, worst in cases.items():
        got = max((order[f.severity] for f in scan_text(text)), default=0)
        assert got == order[worst], (text, [(f.rule, f.severity) for f in scan_text(text)])
