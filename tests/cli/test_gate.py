"""``envelock scan`` as a gate teams can adopt: fail-closed decoding, the walk,
``--fail-on-skip``, ``--quiet``, progress by bytes, inline suppressions and baselines.

Every check has a negative control: the same input without the feature (or with the
feature turned off) must give the other answer.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import ENVELOCK, run, run_on_tty
from helpers.data import shared_dir

from envelock import scan_text
from envelock.cli.decode import Decoded, declared_encoding, decode
from envelock.scan.suppress import inline_ignores

CLOSE = "</retrieved_content>"


def report(*args: str, cwd: Path, stdin: bytes | None = None) -> tuple[int, dict[str, Any]]:
    r = run("scan", "--format", "json", *args, cwd=cwd, stdin=stdin)
    assert r.stdout, r.stderr
    doc: dict[str, Any] = json.loads(r.stdout)
    return r.returncode, doc


def validate_sarif(log: dict[str, Any]) -> None:
    import jsonschema

    schema = json.loads((shared_dir() / "schemas" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.validate(log, schema)


def paths_of(doc: dict[str, Any]) -> set[str]:
    return {f["path"] for f in doc["findings"]}


# ---------------------------------------------------------------------------
# Fail closed: undecodable bytes are decoded and scanned


def test_a_stray_byte_no_longer_hides_a_close_tag() -> None:
    """The issue's reproduction: ``printf '\\xff</retrieved_content>' | envelock scan -`` exited 0."""
    r = run("scan", "-", stdin=b"\xff" + CLOSE.encode())
    assert r.returncode == 1
    assert r.stdout.decode().startswith("<stdin>:1:2: error envelope-close-tag")
    assert b"decoded: not valid UTF-8" in r.stderr and b"replaced with U+FFFD" in r.stderr
    # Negative control: the stray byte alone is not a finding (it is the tag that fails the gate).
    assert run("scan", "-", stdin=b"\xff plain text").returncode == 0


def test_latin1_and_declared_encodings() -> None:
    latin = "café </retrieved_content>".encode("latin-1")
    d = decode(latin)
    assert d.text is not None and CLOSE in d.text and d.text.startswith("caf\ufffd") and d.skipped is None
    cookie = b"# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n"
    assert declared_encoding(cookie) == "iso8859-1"
    assert decode(cookie).text == "# -*- coding: latin-1 -*-\ns = 'café'\n" and "declares" in (decode(cookie).how or "")
    xml = b'<?xml version="1.0" encoding="ISO-8859-1"?><a>\xe9</a>'
    assert decode(xml).text == '<?xml version="1.0" encoding="ISO-8859-1"?><a>é</a>'
    html = b'<html><head><meta charset="windows-1252"></head>\x93quoted\x94</html>'
    assert "\u201cquoted\u201d" in (decode(html).text or "")
    # Negative controls: no declaration -> replacement characters; a bogus declaration is ignored.
    assert decode(b"s = 'caf\xe9'").text == "s = 'caf\ufffd'"
    assert declared_encoding(b"# coding: no-such-codec\n") is None
    assert decode("plain UTF-8 é".encode()) == Decoded("plain UTF-8 é")


def test_boms_and_binary_by_nul_only() -> None:
    for enc in ("utf-16", "utf-32", "utf-8-sig"):
        d = decode(CLOSE.encode(enc))
        assert d.text == CLOSE and d.skipped is None and d.how is None, enc
    # High bytes, controls, anything without a NUL is text and scanned...
    junk = bytes(range(1, 256)) + CLOSE.encode()
    d = decode(junk)
    assert d.text is not None and d.skipped is None and scan_text(d.text)
    # ...and one NUL in the first 8 KiB makes a file binary.
    assert decode(b"\x00" + CLOSE.encode()).skipped == "binary file (NUL byte)"
    assert decode(b"x" * 9000 + b"\x00" + CLOSE.encode()).text is not None  # past the sniff: text


def test_verify_fails_on_undecodable_input(tmp_path: Path) -> None:
    (tmp_path / "p.txt").write_bytes(b"\xff" + CLOSE.encode())
    r = run("verify", "p.txt", cwd=tmp_path)
    assert r.returncode == 1 and b"not valid UTF-8" in r.stderr


def test_fail_on_skip_and_skips_counted_in_every_format(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_text("fine\n", encoding="utf-8")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01" + CLOSE.encode())
    assert run("scan", ".", cwd=tmp_path).returncode == 0  # control: a skip alone does not fail
    assert run("scan", "--fail-on-skip", ".", cwd=tmp_path).returncode == 1
    code, doc = report("--fail-on-skip", ".", cwd=tmp_path)
    assert code == 1 and doc["summary"]["skipped"] == 1 and doc["skipped"] == [{"path": "blob.bin", "reason": "binary file (NUL byte)"}]
    sarif = json.loads(run("scan", "--format", "sarif", ".", cwd=tmp_path).stdout)
    validate_sarif(sarif)
    assert sarif["runs"][0]["properties"]["summary"]["skipped"] == 1
    assert any(n["message"]["text"].startswith("skipped: binary") for n in sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"])
    text = run("scan", ".", cwd=tmp_path)
    assert b"1 skipped" in text.stderr and b"blob.bin: skipped: binary" in text.stderr


# ---------------------------------------------------------------------------
# The walk


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A checkout after the README install: a .venv, node_modules, caches, ignored build output."""
    root = tmp_path / "repo"
    for d in (".git", ".venv/lib", "node_modules/pkg", "src/__pycache__", "env2", "build", "data/vendor", "data/keep"):
        (root / d).mkdir(parents=True)
    for f in (".venv/lib/page.md", "node_modules/pkg/x.html", "src/__pycache__/m.txt", "env2/x.txt", "build/out.txt",
              "data/vendor/v.txt", "data/page.log"):
        (root / f).write_text(CLOSE, encoding="utf-8")
    (root / "env2" / "pyvenv.cfg").write_text("home = /usr\n", encoding="utf-8")
    (root / ".gitignore").write_text("build/\n*.log\n", encoding="utf-8")
    (root / "data" / ".gitignore").write_text("!page.log\n", encoding="utf-8")
    (root / "data" / "keep" / "fine.txt").write_text("fine\n", encoding="utf-8")
    (root / "src" / "ok.py").write_text("x = 1\n", encoding="utf-8")
    return root


def test_default_excludes_and_gitignore(repo: Path) -> None:
    code, doc = report(".", cwd=repo)
    # page.log is re-included by data/.gitignore (negation in a deeper file); vendor is not ignored.
    assert paths_of(doc) == {"data/page.log", "data/vendor/v.txt"} and code == 1
    # Negative controls: each switch brings its files back.
    _, doc = report("--no-default-excludes", ".", cwd=repo)
    assert {".venv/lib/page.md", "node_modules/pkg/x.html", "src/__pycache__/m.txt", "env2/x.txt"} <= paths_of(doc)
    _, doc = report("--no-gitignore", ".", cwd=repo)
    assert "build/out.txt" in paths_of(doc)


def test_gitignore_of_the_repository_applies_to_a_subdirectory(repo: Path) -> None:
    (repo / "data" / "x.log").write_text(CLOSE, encoding="utf-8")
    _, doc = report("data", cwd=repo)
    assert paths_of(doc) == {"data/page.log", "data/vendor/v.txt"}  # x.log ignored by ../.gitignore
    (repo / ".git").rmdir()  # control: outside a repository the parent's .gitignore does not apply
    _, doc = report("data", cwd=repo)
    assert "data/x.log" in paths_of(doc)


def test_exclude_prunes_directories(repo: Path) -> None:
    _, doc = report("--exclude", "vendor", ".", cwd=repo)
    assert paths_of(doc) == {"data/page.log"}
    _, doc = report("--exclude", "data/vendor", ".", cwd=repo)
    assert paths_of(doc) == {"data/page.log"}
    _, doc = report("--exclude", "vend", ".", cwd=repo)  # control: a pattern that matches nothing prunes nothing
    assert "data/vendor/v.txt" in paths_of(doc)


def test_without_pathspec_the_cli_says_gitignore_is_not_applied(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "pathspec", None)  # import pathspec raises ImportError
        r = run("scan", "--format", "json", ".", cwd=repo)
    assert b".gitignore is NOT applied" in r.stderr and b"envelock[gitignore]" in r.stderr
    assert "build/out.txt" in paths_of(json.loads(r.stdout))  # fails open towards scanning more, and says so
    r = run("scan", "--format", "json", ".", cwd=repo)  # control: with pathspec, nothing to say
    assert b"NOT applied" not in r.stderr


def test_special_files_are_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "sock"))
        (tmp_path / "a.txt").write_text(CLOSE, encoding="utf-8")
        start = time.monotonic()
        code, doc = report(".", cwd=tmp_path)
        assert time.monotonic() - start < 60  # a FIFO used to hang the scan forever
        assert code == 1 and paths_of(doc) == {"a.txt"}
        assert {s["path"]: s["reason"] for s in doc["skipped"]} == {
            "pipe": "not a regular file (FIFO), not opened",
            "sock": "not a regular file (socket), not opened",
        }
    finally:
        sock.close()


def test_a_named_pipe_given_explicitly_is_read(tmp_path: Path) -> None:
    """``envelock scan <(command)``: an explicit FIFO is read like ``-`` (only walks never open one)."""
    fifo = tmp_path / "p"
    os.mkfifo(fifo)
    proc = subprocess.Popen([str(ENVELOCK), "scan", str(fifo)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # The writer's end is opened without blocking, retried while the command runs: a blocking open
    # waits forever for a reader that has already gone (this test once hung a worker that way), and
    # this way the test fails with the command's own output instead.
    deadline = time.monotonic() + 60
    fd = -1
    while fd < 0 and proc.poll() is None and time.monotonic() < deadline:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader yet
            time.sleep(0.01)
    if fd < 0:
        out, err = proc.communicate(timeout=60)
        pytest.fail(f"the command never opened the pipe: exit {proc.returncode}, stdout {out!r}, stderr {err!r}")
    with os.fdopen(fd, "wb") as w:
        os.set_blocking(fd, True)
        w.write(CLOSE.encode())
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and b"envelope-close-tag" in out, (proc.returncode, out, err)


def test_symlinks_are_reported_and_followed_on_request(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text(CLOSE, encoding="utf-8")
    (outside / "back").symlink_to(outside)  # a loop
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "ok.txt").write_text("fine\n", encoding="utf-8")
    (tree / "ext").symlink_to(outside)
    (tree / "dangling").symlink_to(tmp_path / "nowhere")
    code, doc = report(".", cwd=tree)
    assert code == 0 and {s["path"]: s["reason"] for s in doc["skipped"]} == {
        "dangling": "broken symbolic link",
        "ext": "symbolic link to a directory, not followed (--follow-symlinks)",
    }
    code, doc = report("--follow-symlinks", ".", cwd=tree)
    assert code == 1 and paths_of(doc) == {"ext/x.txt"}
    assert any("loop" in s["reason"] for s in doc["skipped"])


def test_nothing_to_scan_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "empty").mkdir()
    r = run("scan", "empty", cwd=tmp_path)
    assert r.returncode == 2 and b"no files to read" in r.stderr
    r = run("scan", "--include", "*.md", ".", cwd=tmp_path)
    assert r.returncode == 2 and b"--include '*.md'" in r.stderr
    assert run("scan", "--include", "*.txt", ".", cwd=tmp_path).returncode == 0  # control
    assert run("verify", "empty", cwd=tmp_path).returncode == 2


# ---------------------------------------------------------------------------
# --quiet and progress


def test_quiet_prints_findings_only(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(CLOSE, encoding="utf-8")
    (tmp_path / "b.bin").write_bytes(b"\x00")
    (tmp_path / "c.txt").write_bytes(b"\xff")
    loud = run("scan", ".", cwd=tmp_path)
    assert b"skipped" in loud.stderr and b"decoded" in loud.stderr and b"envelock scan:" in loud.stderr
    quiet = run("scan", "--quiet", ".", cwd=tmp_path)
    assert quiet.returncode == 1 and quiet.stderr == b"" and quiet.stdout == loud.stdout


def test_progress_by_bytes_on_a_terminal_only(tmp_path: Path) -> None:
    big = tmp_path / "big.txt"
    big.write_text(("ordinary prose, a < b and [x] and <div>\n" * 30000) * 4, encoding="utf-8")  # ~4.8 MB, one file
    env = {**os.environ, "ENVELOCK_PROGRESS_DELAY": "0"}
    code, tty = run_on_tty(["scan", "big.txt"], tmp_path, env)
    assert code == 0
    assert b"0 B of 4.8 MB (0%), 0/1 files" in tty and b"scanning big.txt (4.8 MB)" in tty  # the one file shows while it runs
    # Negative controls: not with --quiet, and never when stderr is not a terminal.
    _, quiet = run_on_tty(["scan", "--quiet", "big.txt"], tmp_path, env)
    assert b"MB" not in quiet
    piped = run("scan", "big.txt", cwd=tmp_path, env=env)
    assert b"MB" not in piped.stderr and b"\r" not in piped.stderr


def test_progress_shows_a_file_scanned_in_under_a_tick(tmp_path: Path) -> None:
    """The first line is drawn when the file starts, not at the timer's first tick (0.25 s): what the
    terminal shows does not depend on how fast the scan is (the test above once failed when it got faster)."""
    (tmp_path / "small.txt").write_text("ordinary prose\n", encoding="utf-8")
    code, tty = run_on_tty(["scan", "small.txt"], tmp_path, {**os.environ, "ENVELOCK_PROGRESS_DELAY": "0"})
    assert code == 0
    assert b"0 B of 15 B (0%), 0/1 files" in tty and b"scanning small.txt (15 B)" in tty


# ---------------------------------------------------------------------------
# Inline suppressions


def test_inline_ignore_same_line_and_next_line(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        f'x = "{CLOSE}"  # envelock: ignore[envelope-close-tag]\n'
        f'y = "{CLOSE}"  # envelock: ignore[chat-control-token]\n',  # the wrong rule: still reported
        encoding="utf-8",
    )
    (tmp_path / "b.md").write_text(
        f"<!-- envelock: ignore[envelope-close-tag, chat-control-token] -->\n\nThe tag {CLOSE} and <|im_end|>.\n"
        f"Again {CLOSE}\n",
        encoding="utf-8",
    )
    code, doc = report(".", cwd=tmp_path)
    assert code == 1
    assert [(f["path"], f["line"]) for f in doc["findings"]] == [("a.py", 2), ("b.md", 4)]
    assert sorted((s["path"], s["line"], s["rule"], s["how"]) for s in doc["suppressed"]) == [
        ("a.py", 1, "envelope-close-tag", "inline"),
        ("b.md", 3, "chat-control-token", "inline"),
        ("b.md", 3, "envelope-close-tag", "inline"),
    ]
    assert doc["summary"]["suppressed"] == 3
    # Negative control: --no-inline-ignore reports them all.
    _, doc = report("--no-inline-ignore", ".", cwd=tmp_path)
    assert len(doc["findings"]) == 5 and doc["suppressed"] == []
    # SARIF carries them as suppressed results.
    sarif = json.loads(run("scan", "--format", "sarif", ".", cwd=tmp_path).stdout)
    kinds = [r["suppressions"][0]["kind"] for r in sarif["runs"][0]["results"] if "suppressions" in r]
    assert kinds == ["inSource"] * 3
    validate_sarif(sarif)


def test_inline_ignore_is_for_the_gate_not_for_scan_text() -> None:
    """Third-party text could carry the comment: the library never applies it."""
    text = f"{CLOSE} <!-- envelock: ignore[envelope-close-tag] -->"
    assert [f.rule for f in scan_text(text)] == ["envelope-close-tag"]
    ignores = inline_ignores(text)
    assert ignores.by_line == {1: frozenset({"envelope-close-tag"})}
    assert inline_ignores("envelock: ignore[envelope-close-tag]").by_line == {}  # not in a comment
    assert inline_ignores("# envelock: ignore[]").by_line == {}  # no blanket form
    assert inline_ignores("# envelock: ignore[no-such-rule]").unknown == ((1, "no-such-rule"),)


def test_unknown_rule_in_a_suppression_is_said(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text(f"{CLOSE} # envelock: ignore[envelope-close]\n", encoding="utf-8")
    r = run("scan", "a.txt", cwd=tmp_path)
    assert r.returncode == 1 and b"envelock: ignore[envelope-close] names no rule" in r.stderr


# ---------------------------------------------------------------------------
# Baselines


def test_baseline_hides_known_findings_and_reports_new_ones(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    page = data / "page.md"
    page.write_text(f"intro\nknown {CLOSE}\nand <|im_end|>\n", encoding="utf-8")
    base = tmp_path / "baseline.json"
    base.write_bytes(run("scan", "--format", "json", "data", cwd=tmp_path).stdout)
    code, doc = report("--baseline", "baseline.json", "data", cwd=tmp_path)
    assert code == 0 and doc["findings"] == [] and doc["summary"]["suppressed"] == 2
    sarif = json.loads(run("scan", "--format", "sarif", "--baseline", "baseline.json", "data", cwd=tmp_path).stdout)
    validate_sarif(sarif)
    assert [r["suppressions"][0]["kind"] for r in sarif["runs"][0]["results"]] == ["external", "external"]
    assert {s["how"] for s in doc["suppressed"]} == {"baseline"}
    # Lines inserted above do not change the fingerprints (content, not offsets)...
    page.write_text(f"new first line\n\nintro\nknown {CLOSE}\nand <|im_end|>\n", encoding="utf-8")
    assert report("--baseline", "baseline.json", "data", cwd=tmp_path)[0] == 0
    # ...a new finding is reported, and so is a second copy of a known one.
    page.write_text(f"intro\nknown {CLOSE}\nand <|im_end|>\nknown {CLOSE}\nfresh <|eot_id|>\n", encoding="utf-8")
    code, doc = report("--baseline", "baseline.json", "data", cwd=tmp_path)
    assert code == 1 and [(f["line"], f["rule"]) for f in doc["findings"]] == [(4, "envelope-close-tag"), (5, "chat-control-token")]
    # The same report through ./data matches (paths are normalised).
    assert report("--baseline", "baseline.json", "./data", cwd=tmp_path)[1]["summary"]["suppressed"] == 2
    # Negative control: without the baseline everything is reported.
    assert len(report("data", cwd=tmp_path)[1]["findings"]) == 4


def test_bad_baseline_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("fine", encoding="utf-8")
    (tmp_path / "b.json").write_text('{"not": "a report"}', encoding="utf-8")
    for arg, needle in (("missing.json", b"cannot read baseline"), ("b.json", b"not an envelock JSON report"), ("a.txt", b"not JSON")):
        r = run("scan", "--baseline", arg, "a.txt", cwd=tmp_path)
        assert r.returncode == 2 and needle in r.stderr, r.stderr
