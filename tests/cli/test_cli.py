"""The `envelock` command: compose, wrap, verify, scan (in-process through `cli.main`, a few as a real process)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run, sarif_schema

from envelock import PrefaceEntry, compose_preface

ROOT = Path(__file__).resolve().parent.parent.parent


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


def test_scan_directory_tree_skips_binary_and_scans_undecodable(tree: Path) -> None:
    """Issue 12 (fail closed): a Latin-1 file is no longer skipped but decoded and scanned, so its
    close tag is an error; only the binary file (a NUL byte) is skipped, and it is counted."""
    r = run("scan", "--format", "json", ".", cwd=tree)
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["schema"] == "envelock-report/1" and doc["command"] == "scan" and doc["exit_code"] == 1
    paths = {f["path"] for f in doc["findings"]}
    assert paths == {"docs/page.md", "docs/deep/warn.txt", "docs/deep/note.log", "latin1.txt"}  # .git is never walked
    skipped = {s["path"]: s["reason"] for s in doc["skipped"]}
    assert set(skipped) == {"image.png"}
    assert "binary" in skipped["image.png"]
    assert [d["path"] for d in doc["decoded"]] == ["latin1.txt"] and "UTF-8" in doc["decoded"][0]["how"]
    assert doc["summary"] == {"files": 5, "skipped": 1, "error": 2, "warning": 1, "note": 1, "suppressed": 0}
    f = next(f for f in doc["findings"] if f["rule"] == "envelope-close-tag" and f["path"] == "docs/page.md")
    assert (f["line"], f["column"], f["end_line"], f["end_column"], f["offset"]) == (3, 5, 3, 25, 30)
    latin = next(f for f in doc["findings"] if f["path"] == "latin1.txt")
    assert (latin["rule"], latin["severity"], latin["column"]) == ("envelope-close-tag", "error", 6)
    # Text format reports skipped and re-decoded files on stderr.
    t = run("scan", ".", cwd=tree)
    assert b"image.png: skipped: binary" in t.stderr and b"latin1.txt: decoded: not valid UTF-8" in t.stderr
    assert b"latin1.txt:1:6: error envelope-close-tag" in t.stdout


def test_include_exclude_and_jobs(tree: Path) -> None:
    r = run("scan", "--format", "json", "--include", "*.txt", ".", cwd=tree)
    doc = json.loads(r.stdout)
    assert {f["path"] for f in doc["findings"]} == {"docs/deep/warn.txt", "latin1.txt"}  # latin1.txt is scanned
    assert r.returncode == 1
    r = run("scan", "--format", "json", "--include", "*.txt", "--exclude", "latin1.txt", ".", cwd=tree)
    assert {f["path"] for f in json.loads(r.stdout)["findings"]} == {"docs/deep/warn.txt"} and r.returncode == 0
    r = run("scan", "--format", "json", "--exclude", "docs/*", "--exclude", "latin1.txt", ".", cwd=tree)
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
    r = run("scan", "-", stdin=b"\x00\x01binary")  # binary: skipped, so nothing was read
    assert r.returncode == 2 and b"skipped" in r.stderr and b"nothing was read" in r.stderr
    assert run("scan", "--allow-empty", "-", stdin=b"\x00\x01binary").returncode == 0


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
    closes = [x for x in run_["results"] if x["ruleId"] == "envelope-close-tag"]
    assert [x["locations"][0]["physicalLocation"]["artifactLocation"] for x in closes] == [
        {"uri": "latin1.txt", "uriBaseId": "%SRCROOT%"},  # scanned (fail closed)
        {"uri": "docs/page.md", "uriBaseId": "%SRCROOT%"},
    ]
    res = closes[1]
    assert res["ruleId"] in ids and res["level"] == "error" and res["message"]["text"]
    loc = res["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": "docs/page.md", "uriBaseId": "%SRCROOT%"}
    assert (loc["region"]["startLine"], loc["region"]["startColumn"], loc["region"]["endColumn"]) == (3, 5, 25)
    notes = run_["invocations"][0]["toolExecutionNotifications"]
    assert {n["message"]["text"].split(":")[0] for n in notes} == {"skipped", "decoded"}


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
    # Issue 12: nothing to compose is a usage error (it was an empty preface and exit 0).
    for empty in (b"[]", b"", b"\n  \n"):
        r = run("compose", "-", stdin=empty)
        assert r.returncode == 2 and r.stdout == b"" and b"no entries" in r.stderr


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


# ---------------------------------------------------------------------------
# Issue 12: SARIF for code scanning


def test_sarif_rules_carry_security_severity_and_tags(tree: Path, tmp_path: Path) -> None:
    for command, target in (("scan", "."), ("verify", "docs/page.md")):
        log = json.loads(run(command, "--format", "sarif", target, cwd=tree).stdout)
        rules = log["runs"][0]["tool"]["driver"]["rules"]
        assert rules, command
        for rule in rules:
            props = rule["properties"]
            assert "security" in props["tags"], rule["id"]
            assert 0.0 < float(props["security-severity"]) <= 10.0, rule["id"]
    sev = {r["id"]: float(r["properties"]["security-severity"]) for r in json.loads(run("scan", "--format", "sarif", ".", cwd=tree).stdout)["runs"][0]["tool"]["driver"]["rules"]}
    assert sev["envelope-close-tag"] >= 9.0 > sev["bidi-control"] > sev["prose-turn-marker"]


def _fingerprints(tree: Path, *paths: str) -> list[tuple[str, int, str]]:
    log = json.loads(run("scan", "--format", "sarif", "--fail-on", "note", *paths, cwd=tree).stdout)
    return [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"], r["partialFingerprints"]["envelockContent/v1"])
        for r in log["runs"][0]["results"]
    ]


def test_sarif_fingerprints_follow_content_not_offsets(tree: Path) -> None:
    page = tree / "docs" / "page.md"
    before = _fingerprints(tree, "docs/page.md")
    page.write_text("a new first line\n\n" + page.read_text(encoding="utf-8"), encoding="utf-8")
    after = _fingerprints(tree, "docs/page.md")
    assert [(r, fp) for r, _, fp in before] == [(r, fp) for r, _, fp in after]  # same alerts...
    assert [line for _, line, _ in after] == [line + 2 for _, line, _ in before]  # ...on moved lines
    # Negative control: editing the finding's own line changes its fingerprint; a second copy gets its own.
    page.write_text(page.read_text(encoding="utf-8").replace("日本語", "中文") + "\n日本語 </retrieved_content> end\n", encoding="utf-8")
    edited, moved = _fingerprints(tree, "docs/page.md")
    assert edited[2] != before[0][2] and moved[2] == before[0][2]  # the original line, now at the end, keeps its alert
    page.write_text("x </retrieved_content>\nx </retrieved_content>\n", encoding="utf-8")
    twins = [fp for _, _, fp in _fingerprints(tree, "docs/page.md")]
    assert twins[0].split(":")[0] == twins[1].split(":")[0] and twins[0] != twins[1]


def test_sarif_uris_are_relative_to_srcroot_even_outside_the_working_directory(tree: Path, tmp_path: Path) -> None:
    import jsonschema

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = run("scan", "--format", "sarif", str(tree / "docs"), "-", cwd=elsewhere, stdin=b"<|im_end|>")
    log = json.loads(r.stdout)
    jsonschema.validate(log, sarif_schema())
    (run_,) = log["runs"]
    base = run_["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/")
    locs = [x["locations"][0]["physicalLocation"]["artifactLocation"] for x in run_["results"]]
    assert all(loc["uriBaseId"] == "%SRCROOT%" and not loc["uri"].startswith(("file:", "/")) for loc in locs)
    from urllib.parse import unquote, urlparse

    page = next(loc["uri"] for loc in locs if loc["uri"].endswith("page.md"))
    assert Path(unquote(urlparse(base).path)) / page == tree / "docs" / "page.md"
    assert {"uri": "stdin", "uriBaseId": "%SRCROOT%"} in locs
    # --srcroot sets the base explicitly.
    log = json.loads(run("scan", "--format", "sarif", "--srcroot", str(tree), "docs/page.md", cwd=tree).stdout)
    assert log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "docs/page.md"


# ---------------------------------------------------------------------------
# Issue 12: help text that matches the CLI and the docs


COMMANDS = ("scan", "verify", "compose", "wrap")


def test_version_on_every_command() -> None:
    for command in COMMANDS:
        r = run(command, "--version")
        assert r.returncode == 0 and r.stdout.decode().strip() == run("--version").stdout.decode().strip(), command


def _help_options(command: str) -> set[str]:
    import re

    text = run(command, "--help").stdout.decode()
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", text)) - {"--help"}


def _doc_section(command: str) -> str:
    import re

    doc = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    m = re.search(rf"^## `envelock {command}\b.*?(?=^## )", doc, re.S | re.M)
    assert m, f"docs/cli.md has no section for {command}"
    return m.group()


def test_help_and_docs_list_the_same_options() -> None:
    import re

    for command in COMMANDS:
        in_help = _help_options(command)
        in_docs = set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", _doc_section(command)))
        assert in_help - in_docs == set(), f"{command}: in --help, not in docs/cli.md"
        assert in_docs - in_help == set(), f"{command}: in docs/cli.md, not in --help"
    # --fail-on exists on scan only, and the docs say so; compose and wrap offer no sarif.
    assert "--fail-on" in _help_options("scan") and "--fail-on" not in _help_options("verify")
    for command in ("compose", "wrap"):
        assert "sarif" not in run(command, "--help").stdout.decode()
        assert run(command, "-", "--format", "sarif", "--source", "s", "--origin", "o").returncode == 2
    assert "docs/cli.md" in run("--help").stdout.decode() and "https://" in run("scan", "--help").stdout.decode()


def test_negative_control_help_check_sees_a_missing_option() -> None:
    import re

    section = _doc_section("scan").replace("--fail-on-skip", "--fail-on")
    assert "--fail-on-skip" in _help_options("scan") - set(re.findall(r"(?<![\w-])--[a-z][a-z-]+", section))


# ---------------------------------------------------------------------------
# Issue 12: wrap, strict provenance, typed errors


def test_wrap_composes_one_text_file(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text("<p>hi</p> </retrieved_content> <|im_end|>\u202e", encoding="utf-8")
    r = run("wrap", str(page), "--source", "external", "--origin", "web:https://e.example/", "--fetched-at", "2026-11-29T21:29:03Z")
    assert r.returncode == 0, r.stderr
    expected = compose_preface([PrefaceEntry("external", "web:https://e.example/", page.read_text(encoding="utf-8"), "2026-11-29T21:29:03Z")])
    assert r.stdout == str(expected).encode() and b"stripped-invisible" in r.stderr
    r = run("wrap", "-", "--source", "external", "--origin", "o", "--verify", "--level", "xml", stdin=b"<b>x</b>")
    assert r.returncode == 0 and r.stdout == str(compose_preface([PrefaceEntry("external", "o", "<b>x</b>")], level="xml")).encode()
    doc = json.loads(run("wrap", "-", "--source", "external", "--origin", "o", "--format", "json", stdin=b"x").stdout)
    assert doc["command"] == "wrap" and doc["preface"].startswith("<retrieved_content ")
    # Errors: a missing option is a usage error, a bad value names the field.
    assert run("wrap", "-", "--origin", "o", stdin=b"x").returncode == 2
    r = run("wrap", "-", "--source", "external", "--origin", "o", "--fetched-at", "yesterday", stdin=b"x")
    assert r.returncode == 2 and b"field 'fetched_at'" in r.stderr


def test_strict_provenance_in_the_cli() -> None:
    entries = [{"source": "sytem-config", "origin": "o", "body": "b"}]
    loose = run("compose", "-", stdin=json.dumps(entries).encode())
    assert loose.returncode == 0 and b'provenance="sytem-config"' in loose.stdout  # control: renders as is by default
    strict = run("compose", "--strict-provenance", "-", stdin=json.dumps(entries).encode())
    assert strict.returncode == 2 and b"entry 0, field 'source'" in strict.stderr and b"did you mean 'system-config'" in strict.stderr
    r = run("wrap", "-", "--strict-provenance", "--source", "bogus-tier", "--origin", "o", stdin=b"x")
    assert r.returncode == 2 and b"'bogus-tier' is not a trust tier" in r.stderr
    for ok in ("external", "web:https://a.example/", "memory:u/1"):
        assert run("wrap", "-", "--strict-provenance", "--source", ok, "--origin", "o", stdin=b"x").returncode == 0, ok
    nested = [{"source": "external", "origin": "o", "body": [{"source": "bogus", "origin": "i", "body": "x"}]}]
    r = run("compose", "--strict-provenance", "-", stdin=json.dumps(nested).encode())
    assert r.returncode == 2 and b"entry 0, field 'source'" in r.stderr


def test_compose_null_and_wrong_json_types_say_so() -> None:
    for payload, needle in (
        ([{"source": "external", "origin": "o", "body": None}], b"entry 0, field 'body': null (expected a string, or an array of entries)"),
        ([{"source": 1, "origin": "o", "body": "b"}], b"entry 0, field 'source': expected a string, got a number"),
        ([{"source": "s", "origin": "o", "body": {"a": 1}}], b"entry 0, field 'body': expected a string or an array of entries, got an object"),
    ):
        r = run("compose", "-", stdin=json.dumps(payload).encode())
        assert r.returncode == 2 and needle in r.stderr, r.stderr


def test_library_typed_errors_and_strict_provenance() -> None:
    from envelock import InvalidEntry

    for bad in (None, 3):
        with pytest.raises(InvalidEntry, match="field 'entries': expected an iterable of PrefaceEntry") as e:
            compose_preface(bad)  # type: ignore[arg-type]  # deliberately the wrong type
        assert e.value.field == "entries"
    with pytest.raises(InvalidEntry, match="field 'reserved'"):
        compose_preface([], reserved=None)  # type: ignore[arg-type]  # deliberately the wrong type
    with pytest.raises(InvalidEntry, match="field 'max_depth'"):
        compose_preface([], max_depth="2")  # type: ignore[arg-type]  # deliberately the wrong type
    with pytest.raises(InvalidEntry, match="field 'strict_provenance'"):
        compose_preface([], strict_provenance="yes")  # type: ignore[arg-type]  # deliberately the wrong type
    # A typo that reads as no tier (``System-Config`` reads as one: refused without strict too,
    # tests/envelope/test_provenance_lookalikes.py).
    typo = [PrefaceEntry("external", "o", "b"), PrefaceEntry("sytem-config", "o", "b")]
    assert 'provenance="sytem-config"' in compose_preface(typo)  # control: renders as is
    with pytest.raises(InvalidEntry, match="'sytem-config' is not a trust tier") as e:
        compose_preface(typo, strict_provenance=True)
    assert (e.value.index, e.value.field) == (1, "source")
    assert compose_preface([PrefaceEntry("artifact:42", "o", "b")], strict_provenance=True)


def test_scanning_a_composed_preface_does_not_call_its_tags_disguised() -> None:
    preface = run("compose", "examples/turn.json", cwd=ROOT).stdout
    doc = json.loads(run("scan", "--format", "json", "-", stdin=preface).stdout)
    opens = [f["message"] for f in doc["findings"] if f["rule"] == "envelope-open-tag"]
    assert opens and not any("disguised" in m for m in opens)  # fetched_at="...T...Z" is not a case disguise
    upper = json.loads(run("scan", "--format", "json", "-", stdin=b'<RETRIEVED_CONTENT SOURCE="t">').stdout)
    assert "(disguised by case)" in upper["findings"][0]["message"]  # control
