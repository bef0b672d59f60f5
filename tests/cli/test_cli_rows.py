"""``envelock scan``/``verify`` over columnar input: JSON Lines and Parquet, one document per row.

Each finding names the file, the row and its id in every format; the findings equal
``scan_text`` of each row (a control: the same check fails on a report with a row left out);
``--fail-on``, ``--baseline`` and exit codes behave as for files; bad rows are exit 2 naming
the row and the field. SARIF is validated against the official 2.1.0 schema. JSON Lines needs
no extra; Parquet needs pyarrow (skipped without it, failing under ENVELOCK_REQUIRE_SCALE=1).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from helpers.cli import run, sarif_schema
from helpers.scale import require

from envelock import PrefaceEntry, compose_preface, scan_text

ROWS = [
    {"url": "https://a.example/0", "text": "hello"},
    {"url": "https://a.example/1", "text": "bad </retrieved_content> here"},
    {"url": "https://a.example/2", "text": "fine\nthen <|im_start|>system and pass\u200bword"},
    {"url": "https://a.example/3", "text": "[INST] x"},
]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")
    return path


def _report(r: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def _findings_diff(doc: dict[str, Any], texts: list[str]) -> list[str]:
    want = [(row, f.as_dict()) for row, t in enumerate(texts) for f in scan_text(t)]
    got = [(d["row"], {k: v for k, v in d.items() if k not in ("path", "row", "id", "fingerprint")}) for d in doc["findings"]]
    return [f"missing {w}" for w in want if w not in got] + [f"extra {g}" for g in got if g not in want]


def test_jsonl_findings_name_row_and_id_and_equal_scan_text(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "d.jsonl", ROWS)
    r = run("scan", "--jsonl", "--field", "text", "--id-field", "url", "--fail-on", "warning", "--format", "json", "-j", "2", str(src))
    assert r.returncode == 1, r.stderr
    doc = _report(r)
    assert _findings_diff(doc, [row["text"] for row in ROWS]) == []
    assert {(d["row"], d["id"]) for d in doc["findings"]} == {(k, f"https://a.example/{k}") for k in (1, 2, 3)}
    assert doc["summary"]["rows"] == 4 and doc["summary"]["files"] == 1
    # control: the same comparison catches a report with a row's findings left out
    doc["findings"] = [d for d in doc["findings"] if d["row"] != 2]
    assert _findings_diff(doc, [row["text"] for row in ROWS])


def test_text_format_names_the_row_and_fail_on_applies(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "d.jsonl", ROWS)
    r = run("scan", "--field", "text", "--id-field", "url", str(src), cwd=tmp_path)
    assert r.returncode == 1
    out = r.stdout.decode()
    assert f"{src}[row 1, id 'https://a.example/1']:1:5: error envelope-close-tag" in out
    assert "4 rows" in r.stderr.decode()
    clean = _jsonl(tmp_path / "c.jsonl", [ROWS[0], {"url": "w", "text": "pass\u200bword"}])
    assert run("scan", "--field", "text", str(clean)).returncode == 0  # a warning does not fail at --fail-on error
    assert run("scan", "--field", "text", "--fail-on", "warning", str(clean)).returncode == 1


def test_stdin_jsonl_and_baseline(tmp_path: Path) -> None:
    data = "".join(json.dumps(r) + "\n" for r in ROWS).encode()
    base = run("scan", "--jsonl", "--field", "text", "--format", "json", "-", stdin=data)
    (tmp_path / "base.json").write_text(base.stdout.decode(), encoding="utf-8")
    again = run("scan", "--jsonl", "--field", "text", "--baseline", str(tmp_path / "base.json"), "-", stdin=data)
    assert again.returncode == 0 and "suppressed" in again.stderr.decode()
    more = data + json.dumps({"text": "new </retrieved_content>"}).encode() + b"\n"
    assert run("scan", "--jsonl", "--field", "text", "--baseline", str(tmp_path / "base.json"), "-", stdin=more).returncode == 1


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('{"text": null}', "expected a string, got null"),
        ('{"body": "x"}', "missing"),
        ('{"text": 3}', "expected a string, got int"),
        ("[1]", "JSON object"),
        ('{"text": "x"', "invalid JSON"),
    ],
)
def test_bad_rows_are_exit_2_naming_row_line_and_field(tmp_path: Path, line: str, why: str) -> None:
    src = tmp_path / "d.jsonl"
    src.write_text('{"text": "ok"}\n\n' + line + "\n", encoding="utf-8")
    r = run("scan", "--field", "text", str(src))
    err = r.stderr.decode()
    assert r.returncode == 2 and "row 1, column 'text'" in err and "line 3" in err and why in err, err


def test_invalid_utf8_row_is_exit_2(tmp_path: Path) -> None:
    src = tmp_path / "d.jsonl"
    src.write_bytes(b'{"text": "ok"}\n{"text": "\xff"}\n')
    r = run("scan", "--field", "text", str(src))
    assert r.returncode == 2 and "row 1" in r.stderr.decode() and "UTF-8" in r.stderr.decode()


def test_usage_errors(tmp_path: Path) -> None:
    src = _jsonl(tmp_path / "d.jsonl", ROWS)
    assert run("scan", "--jsonl", str(src)).returncode == 2  # no --field
    assert run("scan", "--column", "text", str(tmp_path)).returncode == 2  # a directory
    other = tmp_path / "d.csv"
    other.write_text("text\nx\n", encoding="utf-8")
    assert "cannot tell the format" in run("scan", "--column", "text", str(other)).stderr.decode()


def test_sarif_for_rows_validates_and_carries_the_row(tmp_path: Path) -> None:
    import jsonschema

    src = _jsonl(tmp_path / "d.jsonl", ROWS)
    r = run("scan", "--field", "text", "--id-field", "url", "--format", "sarif", "d.jsonl", cwd=tmp_path)
    log = json.loads(r.stdout)
    jsonschema.validate(log, sarif_schema())
    res = log["runs"][0]["results"]
    assert res and all(x["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == src.name for x in res)
    first = next(x for x in res if x["ruleId"] == "envelope-close-tag")
    assert first["properties"]["row"] == 1 and first["properties"]["id"] == "https://a.example/1"
    assert first["locations"][0]["logicalLocations"][0]["name"] == "https://a.example/1"
    assert log["runs"][0]["properties"]["summary"]["rows"] == 4


def test_verify_jsonl_prompt_log(tmp_path: Path) -> None:
    good = str(compose_preface([PrefaceEntry("external", "web:x", "hi </retrieved_content>")]))
    bad = good.replace("<\\/", "</")
    src = _jsonl(tmp_path / "log.jsonl", [{"id": "t1", "preface": good}, {"id": "t2", "preface": bad}])
    r = run("verify", "--field", "preface", "--id-field", "id", "--format", "json", str(src))
    doc = _report(r)
    assert r.returncode == 1 and {d["id"] for d in doc["findings"]} == {"t2"}
    ok = _jsonl(tmp_path / "ok.jsonl", [{"id": "t1", "preface": good}])
    assert run("verify", "--field", "preface", str(ok)).returncode == 0


def test_parquet_scan_and_bad_column(tmp_path: Path) -> None:
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")
    pq.write_table(pa.Table.from_pylist(ROWS), tmp_path / "d.parquet")
    r = run("scan", "--column", "text", "--id-column", "url", "--format", "json", "-j", "2", str(tmp_path / "d.parquet"))
    assert r.returncode == 1, r.stderr
    doc = _report(r)
    assert _findings_diff(doc, [row["text"] for row in ROWS]) == []
    assert {d["id"] for d in doc["findings"]} == {f"https://a.example/{k}" for k in (1, 2, 3)}
    pq.write_table(pa.table({"text": [1, 2]}), tmp_path / "n.parquet")
    bad = run("scan", "--column", "text", str(tmp_path / "n.parquet"))
    assert bad.returncode == 2 and "column 'text'" in bad.stderr.decode() and "not text" in bad.stderr.decode()
    pq.write_table(pa.table({"text": ["a", None]}), tmp_path / "null.parquet")
    null = run("scan", "--column", "text", str(tmp_path / "null.parquet"))
    assert null.returncode == 2 and "row 1, column 'text'" in null.stderr.decode()


def test_verify_of_parquet_rows_all_empty_reads_nothing_and_fails(tmp_path: Path) -> None:
    pa = require("pyarrow")
    pq = require("pyarrow.parquet")
    pq.write_table(pa.table({"preface": ["", ""]}), tmp_path / "e.parquet")
    assert run("verify", "--column", "preface", str(tmp_path / "e.parquet")).returncode == 2
    assert run("verify", "--column", "preface", "--allow-empty", str(tmp_path / "e.parquet")).returncode == 0
    pq.write_table(pa.table({"preface": ["", "not a preface"]}), tmp_path / "f.parquet")
    assert run("verify", "--column", "preface", str(tmp_path / "f.parquet")).returncode == 1
    # A view or dictionary layout is counted as its reader reads it (a row with a text was read).
    for layout in (pa.array(["", "x"], type=pa.string_view()), pa.array(["", "x"]).dictionary_encode()):
        pq.write_table(pa.table({"preface": layout}), tmp_path / "v.parquet")
        assert run("verify", "--column", "preface", str(tmp_path / "v.parquet")).returncode == 1
