"""A run that read nothing still writes its report; report options that name nothing are refused.

Red-team finds of stop 42: ``envelock scan EMPTYDIR --format sarif`` exited 2 with an empty stdout,
so a CI job that uploads the SARIF (the documented recipe) uploaded an empty file; ``--srcroot``
given a file made every URI ``.`` relative to ``file:///…/a.txt/``; ``--stdin-filename ''`` reported
stdin as ``.``. Now the JSON and SARIF reports are written before exit 2 (the run's paths as inputs
not read, ``executionSuccessful: false``), and the two options are usage errors. Control: a command
that raises before writing its report leaves stdout empty, which the tests notice.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from helpers.cli import run, sarif_schema
from helpers.data import shared_dir

from envelock.cli import commands


@pytest.fixture
def empty(tmp_path: Path) -> Path:
    (tmp_path / "empty").mkdir()
    return tmp_path


def report(fmt: str, command: str, cwd: Path) -> tuple[int, dict[str, Any]]:
    r = run(command, "empty", "--format", fmt, cwd=cwd)
    assert r.returncode == 2, r
    assert b"the gate checked nothing" in r.stderr
    assert r.stdout, "no report on stdout"
    doc: dict[str, Any] = json.loads(r.stdout)
    return r.returncode, doc


@pytest.mark.parametrize("command", ["scan", "verify"])
def test_sarif_says_the_gate_checked_nothing(empty: Path, command: str) -> None:
    _, log = report("sarif", command, empty)
    (invocation,) = log["runs"][0]["invocations"]
    assert invocation["executionSuccessful"] is False
    (note,) = invocation["toolExecutionNotifications"]
    assert note["level"] == "error" and "the gate checked nothing" in note["message"]["text"]
    assert note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "empty"


def test_the_sarif_of_nothing_read_is_valid(empty: Path) -> None:
    shared_dir()  # the schema is in ../shared: skip without it (fail under ENVELOCK_REQUIRE_SHARED)
    _, log = report("sarif", "scan", empty)
    jsonschema.validate(log, sarif_schema())


@pytest.mark.parametrize("command", ["scan", "verify"])
def test_json_says_the_gate_checked_nothing(empty: Path, command: str) -> None:
    _, doc = report("json", command, empty)
    assert doc["exit_code"] == 2 and doc["summary"]["errors"] == 1
    assert doc["errors"][0]["path"] == "empty"


def test_text_writes_nothing_on_stdout(empty: Path) -> None:
    r = run("scan", "empty", cwd=empty)
    assert r.returncode == 2 and not r.stdout and b"the gate checked nothing" in r.stderr


def test_control_a_command_that_raises_before_its_report_is_caught(empty: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(commands, "emit", lambda *a, **k: None)
    with pytest.raises(AssertionError, match="no report on stdout"):
        report("sarif", "scan", empty)


def test_srcroot_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n", encoding="utf-8")
    r = run("scan", "a.txt", "--srcroot", "a.txt", "--format", "sarif", cwd=tmp_path)
    assert r.returncode == 2 and b"--srcroot a.txt: not a directory" in r.stderr
    assert run("scan", "a.txt", "--srcroot", ".", cwd=tmp_path).returncode == 0


def test_an_empty_stdin_filename_is_refused(tmp_path: Path) -> None:
    r = run("scan", "-", "--stdin-filename", "", cwd=tmp_path, stdin=b"hello\n")
    assert r.returncode == 2 and b"--stdin-filename: must not be empty" in r.stderr
