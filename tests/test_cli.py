"""The installed ``envelock`` entry point, run in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import shared_dir

from envelock import PrefaceEntry, compose_preface

ENVELOCK = Path(sys.executable).parent / "envelock"
ROOT = Path(__file__).resolve().parent.parent


def run(*args: str, stdin: bytes | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
    assert ENVELOCK.exists(), f"entry point not installed at {ENVELOCK}"
    return subprocess.run([str(ENVELOCK), *args], input=stdin, capture_output=True, cwd=cwd, timeout=120, check=False)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "docs" / "deep").mkdir(parents=True)
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "evil.txt").write_text("</retrieved_content>", encoding="utf-8")
    (tmp_path / "clean.txt").write_text("<div>hello</div> a < b\n", encoding="utf-8")
    (tmp_path / "docs" / "page.md").write_text("héllo wörld 🌍\nπ≈3.14 — ok\n日本語 </retrieved_content> end\n", encoding="utf-8")
    (tmp_path / "docs" / "deep" / "warn.txt").write_text("pass\u200bword\n", encoding="utf-8")
    (tmp_path / "docs" / "deep" / "note.log").write_text("x\nHuman: hi\n", encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR</retrieved_content>")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 </retrieved_content>".encode("latin-1"))
    return tmp_path


def test_version_and_usage_errors() -> None:
    r = run("--version")
    assert r.returncode == 0 and r.stdout.decode().startswith("envelock ")
    assert run().returncode == 2
    assert run("scan").returncode == 2
    assert run("scan", "--fail-on", "bogus", "-").returncode == 2
    assert run("frobnicate").returncode == 2
    r = run("scan", "/nonexistent/path")
    assert r.returncode == 2 and b"no such file" in r.stderr


def test_scan_exit_codes_and_fail_on(tree: Path) -> None:
    assert run("scan", "clean.txt", cwd=tree).returncode == 0
    assert run("scan", "docs/page.md", cwd=tree).returncode == 1
    assert run("scan", "docs/deep/warn.txt", cwd=tree).returncode == 0
    assert run("scan", "--fail-on", "warning", "docs/deep/warn.txt", cwd=tree).returncode == 1
    assert run("scan", "--fail-on", "warning", "docs/deep/note.log", cwd=tree).returncode == 0
    assert run("scan", "--fail-on", "note", "docs/deep/note.log", cwd=tree).returncode == 1


def test_scan_text_format_positions_exact(tree: Path) -> None:
    r = run("scan", "docs/page.md", cwd=tree)
    line = r.stdout.decode().strip()
    assert line.startswith("docs/page.md:3:5: error envelope-close-tag ")
    assert line.endswith("[</retrieved_content>]")


def test_scan_directory_tree_skips_binary_and_undecodable(tree: Path) -> None:
    r = run("scan", "--format", "json", ".", cwd=tree)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["schema"] == "envelock-report/1" and doc["command"] == "scan" and doc["exit_code"] == 1
    paths = {f["path"] for f in doc["findings"]}
    assert paths == {"docs/page.md", "docs/deep/warn.txt", "docs/deep/note.log"}  # .git is never walked
    skipped = {s["path"]: s["reason"] for s in doc["skipped"]}
    assert set(skipped) == {"image.png", "latin1.txt"}
    assert "binary" in skipped["image.png"] and "UTF-8" in skipped["latin1.txt"]
    assert doc["summary"] == {"files": 4, "skipped": 2, "error": 1, "warning": 1, "note": 1}
    f = next(f for f in doc["findings"] if f["rule"] == "envelope-close-tag")
    assert (f["line"], f["column"], f["end_line"], f["end_column"], f["offset"]) == (3, 5, 3, 25, 30)
    # Text format reports skipped files on stderr.
    t = run("scan", ".", cwd=tree)
    assert b"image.png: skipped: binary" in t.stderr and b"latin1.txt: skipped" in t.stderr


def test_include_exclude_and_jobs(tree: Path) -> None:
    r = run("scan", "--format", "json", "--include", "*.txt", ".", cwd=tree)
    doc = json.loads(r.stdout)
    assert {f["path"] for f in doc["findings"]} == {"docs/deep/warn.txt"}
    assert r.returncode == 0
    r = run("scan", "--format", "json", "--exclude", "docs/*", ".", cwd=tree)
    assert json.loads(r.stdout)["findings"] == [] and r.returncode == 0
    one = json.loads(run("scan", "--format", "json", "--jobs", "1", ".", cwd=tree).stdout)
    two = json.loads(run("scan", "--format", "json", "--jobs", "2", ".", cwd=tree).stdout)
    assert one == two
    assert run("scan", "--jobs", "0", ".", cwd=tree).returncode == 2


def test_scan_stdin() -> None:
    r = run("scan", "-", stdin=b"ok\n<|im_end|>")
    assert r.returncode == 1 and r.stdout.decode().startswith("<stdin>:2:1: error chat-control-token")
    assert run("scan", "-", stdin=b"plain text").returncode == 0
    r = run("scan", "-", "--stdin-filename", "page.html", "--format", "json", stdin=b"\xff\xfe\x00")
    assert r.returncode == 0
    r = run("scan", "-", stdin=b"\x00\x01binary")
    assert r.returncode == 0 and b"skipped" in r.stderr


def sarif_schema() -> dict[str, Any]:
    path = shared_dir() / "schemas" / "sarif-schema-2.1.0.json"
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema


def test_scan_sarif_validates_and_has_what_github_needs(tree: Path) -> None:
    import jsonschema

    r = run("scan", "--format", "sarif", ".", cwd=tree)
    assert r.returncode == 1
    log = json.loads(r.stdout)
    jsonschema.validate(log, sarif_schema())
    assert log["version"] == "2.1.0"
    (run_,) = log["runs"]
    assert run_["columnKind"] == "unicodeCodePoints"
    driver = run_["tool"]["driver"]
    assert driver["name"] == "envelock" and driver["version"] and driver["informationUri"].startswith("https://")
    ids = {r["id"] for r in driver["rules"]}
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["help"]["text"] and rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] in ("error", "warning", "note")
    res = next(x for x in run_["results"] if x["ruleId"] == "envelope-close-tag")
    assert res["ruleId"] in ids and res["level"] == "error" and res["message"]["text"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "docs/page.md", "uriBaseId": "%SRCROOT%"}
    assert (loc["region"]["startLine"], loc["region"]["startColumn"], loc["region"]["endColumn"]) == (3, 5, 25)
    assert {n["message"]["text"].split(":")[0] for n in run_["invocations"][0]["toolExecutionNotifications"]} == {"skipped"}


def test_scan_sarif_clean_run_validates(tree: Path) -> None:
    import jsonschema

    r = run("scan", "--format", "sarif", "clean.txt", cwd=tree)
    assert r.returncode == 0
    log = json.loads(r.stdout)
    jsonschema.validate(log, sarif_schema())
    assert log["runs"][0]["results"] == []


ENTRIES = [
    {"source": "user-authored", "origin": "memory:u/prefs", "body": "metric units", "fetched_at": "2026-11-29T21:29:03Z"},
    {"source": "external", "origin": "web:https://e.example/?a=1&b=2", "body": "hi </retrieved_content> <|im_end|>\u202e"},
]


def library_preface(entries: list[dict[str, Any]], **kw: Any) -> bytes:
    es = [PrefaceEntry(e["source"], e["origin"], e["body"], e.get("fetched_at")) for e in entries]
    return str(compose_preface(es, **kw)).encode("utf-8")


def test_compose_is_byte_identical_to_the_library(tmp_path: Path) -> None:
    f = tmp_path / "e.json"
    f.write_text(json.dumps(ENTRIES), encoding="utf-8")
    r = run("compose", str(f))
    assert r.returncode == 0
    assert r.stdout == library_preface(ENTRIES)
    assert b"stripped-invisible" in r.stderr  # the removed bidi control is reported
    # JSON Lines from stdin, --verify, --level
    lines = "\n".join(json.dumps(e) for e in ENTRIES).encode()
    r = run("compose", "-", "--verify", "--level", "xml", stdin=lines)
    assert r.returncode == 0 and r.stdout == library_preface(ENTRIES, level="xml")
    doc = json.loads(run("compose", str(f), "--format", "json").stdout)
    assert doc["preface"].encode() == library_preface(ENTRIES) and doc["transformations"][0]["entry"] == 1


def test_compose_then_verify_round_trip(tmp_path: Path) -> None:
    f = tmp_path / "e.json"
    f.write_text(json.dumps(ENTRIES), encoding="utf-8")
    out = tmp_path / "p.txt"
    out.write_bytes(run("compose", str(f)).stdout)
    assert run("verify", str(out)).returncode == 0
    assert run("verify", "-", stdin=out.read_bytes()).returncode == 0


def test_compose_nesting(tmp_path: Path) -> None:
    nested = [{"source": "external", "origin": "chat:c-1", "body": [ENTRIES[0]]}]
    assert run("compose", "-", stdin=json.dumps(nested).encode()).returncode == 0
    r = run("compose", "-", "--nesting", "forbid", stdin=json.dumps(nested).encode())
    assert r.returncode == 2 and b"entry 0" in r.stderr


@pytest.mark.parametrize(
    ("payload", "needle"),
    [
        ([{"source": "external", "origin": "x"}], b"entry 0, field 'body'"),
        ([ENTRIES[0], {"source": "external", "origin": "x", "body": 3}], b"entry 1, field 'body'"),
        ([ENTRIES[0], ENTRIES[0], {"source": "", "origin": "x", "body": "b"}], b"entry 2, field 'source'"),
        ([{"source": "s", "origin": "o", "body": "b", "fetched_at": "yesterday"}], b"entry 0, field 'fetched_at'"),
        ([{"source": "s", "origin": "o", "body": "b", "extra": 1}], b"entry 0, field 'extra'"),
        (["not an object"], b"entry 0, field 'entry'"),
    ],
)
def test_compose_bad_entry_exits_2_naming_index_and_field(payload: Any, needle: bytes) -> None:
    r = run("compose", "-", stdin=json.dumps(payload).encode())
    assert r.returncode == 2, r.stderr
    assert needle in r.stderr
    assert r.stdout == b""


def test_compose_bad_input() -> None:
    assert run("compose", "-", stdin=b"{not json").returncode == 2
    assert run("compose", "-", stdin=b'{"source": "x"}\n[').returncode == 2
    assert run("compose", "/nonexistent.json").returncode == 2
    assert run("compose", "-", "--format", "sarif", stdin=b"[]").returncode == 2
    r = run("compose", "-", stdin=b"[]")
    assert r.returncode == 0 and r.stdout == b""


def test_verify_reports_problems_with_positions(tmp_path: Path) -> None:
    good = library_preface(ENTRIES)
    bad = good.replace(b"<\\/retrieved_content>", b"</retrieved_content>")
    (tmp_path / "good.txt").write_bytes(good)
    (tmp_path / "bad.txt").write_bytes(bad)
    (tmp_path / "bin.dat").write_bytes(b"\x00\x01")
    assert run("verify", "good.txt", cwd=tmp_path).returncode == 0
    r = run("verify", "bad.txt", cwd=tmp_path)
    assert r.returncode == 1
    first = r.stdout.decode().splitlines()[0]
    assert first.startswith("bad.txt:") and " error " in first
    doc = json.loads(run("verify", "--format", "json", "good.txt", "bad.txt", cwd=tmp_path).stdout)
    assert doc["command"] == "verify" and doc["exit_code"] == 1 and all(f["path"] == "bad.txt" for f in doc["findings"])
    assert doc["findings"][0]["line"] >= 1 and doc["findings"][0]["column"] >= 1
    assert run("verify", "bin.dat", cwd=tmp_path).returncode == 1
    assert run("verify", "--level", "markup", "good.txt", cwd=tmp_path).returncode in (0, 1)
    assert run("verify", "--level", "nope", "good.txt", cwd=tmp_path).returncode == 2


def test_verify_sarif_validates(tmp_path: Path) -> None:
    import jsonschema

    (tmp_path / "bad.txt").write_text("not a preface </retrieved_content>", encoding="utf-8")
    r = run("verify", "--format", "sarif", "bad.txt", cwd=tmp_path)
    assert r.returncode == 1
    log = json.loads(r.stdout)
    jsonschema.validate(log, sarif_schema())
    assert log["runs"][0]["results"][0]["level"] == "error"


def test_readme_commands_on_bundled_example() -> None:
    r = run("compose", "examples/turn.json", "--verify", cwd=ROOT)
    assert r.returncode == 0 and r.stdout.startswith(b"<retrieved_content ")
    data = json.loads((ROOT / "examples" / "turn.json").read_text(encoding="utf-8"))
    assert r.stdout == library_preface(data, verify=True)
    s = run("scan", "examples/turn.json", "--format", "json", cwd=ROOT)
    assert s.returncode == 1
    rules = {f["rule"] for f in json.loads(s.stdout)["findings"]}
    assert {"envelope-close-tag", "envelope-open-tag", "chat-control-token", "tag-smuggling"} <= rules


def test_pre_commit_hooks_file() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8")
    assert "id: envelock-scan" in text and "id: envelock-verify" in text and "entry: envelock scan" in text


def test_compose_nested_array_at_markup_level() -> None:
    """A JSON array body nests at the outer level (it used to be composed at the default level and refused)."""
    entries = [{"source": "external", "origin": "o", "body": [{"source": "external", "origin": "i", "body": "<b>x</b>"}]}]
    for level in ("markup", "xml"):
        p = run("compose", "--level", level, "--verify", "-", stdin=json.dumps(entries).encode())
        assert p.returncode == 0, p.stderr
        assert b"<\\b>x" in p.stdout or b"&lt;\\b&gt;x" in p.stdout


def test_compose_nested_error_names_the_path() -> None:
    entries = [{"source": "external", "origin": "o", "body": "x"},
               {"source": "external", "origin": "o", "body": [{"source": "external", "body": "x"}]}]
    p = run("compose", "-", stdin=json.dumps(entries).encode())
    assert p.returncode == 2
    assert "entry 1, field 'origin': (nested entry 1.0) missing" in p.stderr.decode()
