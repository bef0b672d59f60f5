"""``--tokenizer PATH``: a team's own control tokens, escaped by compose, checked by verify, found by scan.

The token ``<myturn>`` is in no built-in table (the first test proves it), so every other test
has its negative control in the run without ``--tokenizer``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.cli import run

import envelock

TOKEN = "<myturn>"
OTHER = "[MYCALL]"


def _tokenizer(tmp_path: Path, name: str, *tokens: str) -> Path:
    added = [
        {"id": i, "content": t, "special": True, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False}
        for i, t in enumerate(tokens)
    ]
    path = tmp_path / name
    path.write_text(json.dumps({"added_tokens": added, "model": {}}), encoding="utf-8")
    return path


def _entries(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "turn.json"
    path.write_text(json.dumps([{"source": "external", "origin": "web:x", "body": body}]), encoding="utf-8")
    return path


def test_the_token_is_in_no_built_in_table() -> None:
    assert envelock.defang(f"a {TOKEN} b {OTHER}") == f"a {TOKEN} b {OTHER}"
    assert envelock.scan_text(f"a {TOKEN} b {OTHER}") == []


def test_compose_escapes_the_loaded_tokens(tmp_path: Path) -> None:
    tok = _tokenizer(tmp_path, "tokenizer.json", TOKEN)
    entries = _entries(tmp_path, f"hello {TOKEN} there")
    plain = run("compose", str(entries))
    loaded = run("compose", str(entries), "--tokenizer", str(tok), "--verify")
    assert plain.returncode == 0 and loaded.returncode == 0, loaded.stderr
    assert TOKEN.encode() in plain.stdout  # negative control: without the file, untouched
    assert TOKEN.encode() not in loaded.stdout
    assert b"<\\myturn>" in loaded.stdout
    # the same bytes as the library call with the same tokens
    expected = envelock.compose_preface(
        [envelock.PrefaceEntry("external", "web:x", f"hello {TOKEN} there")], tokens=envelock.load_tokens(tok)
    )
    assert loaded.stdout.decode() == str(expected)


def test_wrap_takes_it_too(tmp_path: Path) -> None:
    tok = _tokenizer(tmp_path, "tokenizer.json", TOKEN)
    body = tmp_path / "page.txt"
    body.write_text(f"x {TOKEN} y", encoding="utf-8")
    out = run("wrap", str(body), "--source", "external", "--origin", "o", "--tokenizer", str(tok))
    assert out.returncode == 0 and b"<\\myturn>" in out.stdout


def test_scan_finds_the_loaded_tokens(tmp_path: Path) -> None:
    tok = _tokenizer(tmp_path, "tokenizer.json", TOKEN)
    page = tmp_path / "page.txt"
    page.write_text(f"hello {TOKEN} there\n", encoding="utf-8")
    assert run("scan", str(page)).returncode == 0  # negative control
    found = run("scan", str(page), "--tokenizer", str(tok), "--format", "json")
    assert found.returncode == 1, found.stderr
    rules = [f["rule"] for f in json.loads(found.stdout)["findings"]]
    assert "chat-control-token" in rules


def test_scan_rows_take_it(tmp_path: Path) -> None:
    tok = _tokenizer(tmp_path, "tokenizer.json", TOKEN)
    rows = tmp_path / "rows.jsonl"
    rows.write_text(json.dumps({"text": f"a {TOKEN}"}) + "\n", encoding="utf-8")
    assert run("scan", str(rows), "--column", "text").returncode == 0
    assert run("scan", str(rows), "--column", "text", "--tokenizer", str(tok)).returncode == 1


def test_verify_checks_the_loaded_tokens(tmp_path: Path) -> None:
    tok = _tokenizer(tmp_path, "tokenizer.json", TOKEN)
    # composed without the tokens: the body still holds the raw token
    preface = envelock.compose_preface([envelock.PrefaceEntry("external", "o", f"a {TOKEN} b")])
    path = tmp_path / "preface.txt"
    path.write_text(str(preface), encoding="utf-8")
    assert run("verify", str(path)).returncode == 0  # negative control
    bad = run("verify", str(path), "--tokenizer", str(tok))
    assert bad.returncode == 1, bad.stdout
    good = tmp_path / "good.txt"
    good.write_text(
        str(envelock.compose_preface([envelock.PrefaceEntry("external", "o", f"a {TOKEN} b")], tokens=envelock.load_tokens(tok))),
        encoding="utf-8",
    )
    assert run("verify", str(good), "--tokenizer", str(tok)).returncode == 0


def test_repeated_tokenizers_are_united(tmp_path: Path) -> None:
    one = _tokenizer(tmp_path, "one.json", TOKEN)
    two = _tokenizer(tmp_path, "two.json", OTHER)
    entries = _entries(tmp_path, f"{TOKEN} {OTHER}")
    both = run("compose", str(entries), "--tokenizer", str(one), "--tokenizer", str(two))
    assert both.returncode == 0 and b"<\\myturn>" in both.stdout and b"[\\MYCALL]" in both.stdout
    only = run("compose", str(entries), "--tokenizer", str(two))
    assert TOKEN.encode() in only.stdout and b"[\\MYCALL]" in only.stdout


@pytest.mark.parametrize(
    "content",
    [None, "not json", json.dumps({"model": {}}), json.dumps({"added_tokens": []})],
    ids=["missing", "not-json", "no-tokens-field", "no-tokens"],
)
def test_an_unreadable_tokenizer_is_a_usage_error(tmp_path: Path, content: str | None) -> None:
    path = tmp_path / "tokenizer.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    page = tmp_path / "page.txt"
    page.write_text("hello\n", encoding="utf-8")
    for argv in (["scan", str(page)], ["verify", str(page)], ["compose", str(page)]):
        out = run(*argv, "--tokenizer", str(path))
        assert out.returncode == 2, (argv, out.stdout, out.stderr)
        assert b"--tokenizer" in out.stderr
