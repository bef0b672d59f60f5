"""The columnar batch API: ``scan_table``/``verify_table`` equal ``scan_text``/``verify_preface`` row by row.

Parity is differential: every finding of the batch path (row, rule, severity, message,
offsets, lines, columns, snippet, fingerprint) against the per-row call, on the project corpus,
benign files, generated documents and hypothesis text, over several record batches, small tasks
and two worker processes. Negative controls: a batch path whose scanner lost a family, one that
drops a row, one that shifts row numbers, and one that drops the last row of each task must
each be caught by the same comparison. Bad input fails closed, naming row and column.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from helpers.data import ROOT, load_corpus
from helpers.scale import corpus_gen, require
from helpers.strategies import any_text
from hypothesis import given, settings
from hypothesis import strategies as st

from envelock import PrefaceEntry, compose_preface, scan_text, verify_preface
from envelock.errors import BatchInputError, EnvelockError
from envelock.scan.fingerprints import fingerprints

pa = require("pyarrow")
columnar = require("envelock.batch.columnar")  # the module itself: tests patch its internals
rows_mod = require("envelock.batch.rows")


def _texts() -> list[str]:
    corpus = [p["payload"] for p in load_corpus() if p["as"] == "body"]
    benign = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tests" / "data" / "benign").iterdir()) if p.is_file()]
    generated = [r["text"] for r in corpus_gen().generate(300, every=7)[0]]
    return corpus + benign + generated + ["", "\n", "plain"]


TEXTS = _texts()


def _table(texts: Sequence[str], per_batch: int = 97) -> Any:
    batches = [
        pa.record_batch({"text": pa.array(texts[i : i + per_batch], pa.large_string()), "id": [f"d{k}" for k in range(i, i + len(texts[i : i + per_batch]))]})
        for i in range(0, len(texts), per_batch)
    ]
    return pa.Table.from_batches(batches) if batches else pa.table({"text": pa.array([], pa.large_string()), "id": pa.array([], pa.string())})


def parity_diff(table: Any, texts: Sequence[str]) -> list[str]:
    """Every difference between a findings table and ``scan_text`` of each text (empty: identical)."""
    want = [(row, f, fp) for row, t in enumerate(texts) for f, fp in zip(scan_text(t), fingerprints(scan_text(t), t), strict=True)]
    got = [(row, f, fp) for (row, f), fp in zip(columnar.findings_of(table), table.column("fingerprint").to_pylist(), strict=True)]
    diffs = [f"only per-row: {w}" for w in want if w not in got] + [f"only batch: {g}" for g in got if g not in want]
    if not diffs and want != got:
        diffs.append("same findings, different order")
    return diffs


def _surrogate_free(texts: Sequence[str]) -> list[str]:
    # Arrow strings are UTF-8: a lone surrogate cannot be in one (the corpus has a few, as Python str).
    return [t for t in texts if not any("\ud800" <= c <= "\udfff" for c in t)]


def test_batch_equals_per_row_on_corpus_benign_and_generated_with_two_workers() -> None:
    texts = _surrogate_free(TEXTS)
    table = columnar.scan_table(_table(texts), "text", id_column="id", workers=2, task_rows=41)
    assert parity_diff(table, texts) == []
    sev = table.column("severity").to_pylist()
    assert sev.count("error") > 400 and sev.count("warning") > 50  # not vacuous
    assert table.column("id").to_pylist() == [f"d{r}" for r in table.column("row").to_pylist()]


def test_lone_surrogates_cannot_be_arrow_strings() -> None:
    assert len(_surrogate_free(TEXTS)) < len(TEXTS)  # the corpus has some: they are left out above, by necessity
    with pytest.raises((pa.ArrowException, UnicodeEncodeError)):
        pa.array(["\ud800"], pa.string())


@settings(max_examples=60, deadline=None)
@given(st.lists(any_text, max_size=12), st.integers(1, 5))
def test_batch_equals_per_row_on_hypothesis_text(texts: list[str], task_rows: int) -> None:
    texts = _surrogate_free(texts)
    table = columnar.scan_table(_table(texts, per_batch=4), "text", workers=1, task_rows=task_rows)
    assert parity_diff(table, texts) == []


# --- negative controls: a broken batch path must be caught by parity_diff


def _broken(monkeypatch: pytest.MonkeyPatch, name: str, fn: Callable[..., Any]) -> Any:
    monkeypatch.setattr(columnar, name, fn)
    texts = _surrogate_free(TEXTS)
    return texts, columnar.scan_table(_table(texts), "text", workers=1, task_rows=50)


def test_control_scanner_missing_a_family_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = rows_mod.scan_text
    monkeypatch.setattr(rows_mod, "scan_text", lambda t, **kw: [f for f in real(t, **kw) if f.rule != "encoded-tag"])
    texts = _surrogate_free(TEXTS)
    table = columnar.scan_table(_table(texts), "text", workers=1)
    assert any("encoded-tag" in d for d in parity_diff(table, texts))


def test_control_dropped_row_is_caught() -> None:
    texts = _surrogate_free(TEXTS)
    k = next(i for i, t in enumerate(texts) if scan_text(t))
    table = columnar.scan_table(_table(texts[:k] + texts[k + 1 :]), "text", workers=1)
    assert parity_diff(table, texts)


def test_control_shifted_row_numbers_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = columnar.scan_texts
    texts, table = _broken(monkeypatch, "scan_texts", lambda ts, first, spec: real(ts, first + (first > 0), spec))
    assert parity_diff(table, texts)


def test_control_task_that_drops_its_last_row_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = columnar.scan_texts
    texts, table = _broken(monkeypatch, "scan_texts", lambda ts, first, spec: real(ts[:-1], first, spec))
    assert parity_diff(table, texts)


# --- input: fail closed, naming the row and column


def _err(data: Any, column: str = "text", **kw: Any) -> BatchInputError:
    with pytest.raises(BatchInputError) as e:
        columnar.scan_table(data, column, workers=1, **kw)
    assert isinstance(e.value, EnvelockError) and isinstance(e.value, ValueError)
    return e.value


def test_null_text_names_its_row_in_the_whole_input() -> None:
    data = [pa.record_batch({"text": ["a", "b"]}), pa.record_batch({"text": pa.array(["c", None, "d"])})]
    e = _err(data)
    assert (e.row, e.column) == (3, "text") and "null" in str(e) and "row 3" in str(e)


def test_non_text_and_missing_columns_are_refused() -> None:
    e = _err(pa.table({"text": [1, 2]}))
    assert e.row is None and e.column == "text" and "int64" in str(e)
    e = _err(pa.table({"body": ["x"]}))
    assert e.column == "text" and "no such column" in str(e) and "'body'" in str(e)
    e = _err(pa.table({"text": ["x"], "id": pa.array([[1]], pa.list_(pa.int64()))}), id_column="id")
    assert e.column == "id"


def test_binary_must_be_utf8_and_invalid_bytes_name_the_row() -> None:
    e = _err(pa.table({"text": pa.array([b"ok", b"fine", b"\xff</retrieved_content>"], pa.binary())}))
    assert (e.row, e.column) == (2, "text") and "UTF-8" in str(e)
    good = pa.array([b"x </retrieved_content>"], pa.large_binary())
    assert columnar.scan_table(pa.table({"text": good}), "text", workers=1).num_rows == 1


def test_string_array_with_invalid_utf8_buffers_is_refused() -> None:
    raw = pa.array([b"ok", b"\xc3("], pa.binary())
    bad = pa.Array.from_buffers(pa.string(), 2, raw.buffers())
    e = _err(pa.table({"text": bad}))
    assert (e.row, e.column) == (1, "text")


def test_oversize_text_names_its_row() -> None:
    e = _err(pa.table({"text": ["short", "x" * 11]}), max_bytes=10)
    assert (e.row, e.column) == (1, "text") and "11 bytes" in str(e)


def test_dictionary_and_view_columns_scan_like_strings() -> None:
    texts = ["a </retrieved_content>", "b", "a </retrieved_content>"]
    plain = columnar.scan_table(pa.table({"text": texts}), "text", workers=1)
    for arr in (pa.array(texts).dictionary_encode(), pa.array(texts, pa.string_view())):
        assert columnar.scan_table(pa.table({"text": arr}), "text", workers=1).equals(plain)


def test_error_pickles_with_row_and_column() -> None:
    e = BatchInputError("null text", 7, "body")
    back = pickle.loads(pickle.dumps(e))
    assert (type(back), back.row, back.column, str(back)) == (BatchInputError, 7, "body", str(e))


def test_bad_options_are_refused_before_any_work() -> None:
    t = pa.table({"text": ["x"]})
    with pytest.raises(ValueError, match="unknown rule"):
        columnar.scan_table(t, "text", disable={"no-such-rule"})
    with pytest.raises(ValueError, match="workers"):
        columnar.scan_table(t, "text", workers=0)
    with pytest.raises(ValueError, match="level"):
        columnar.verify_table(t, "text", level="bogus")
    with pytest.raises(TypeError):
        columnar.scan_table([1, 2], "text")


def test_empty_input_gives_an_empty_table_of_the_schema() -> None:
    out = columnar.scan_table(pa.table({"text": pa.array([], pa.string())}), "text")
    assert out.num_rows == 0 and out.schema == columnar.findings_schema()


# --- verify: a prompt-log audit


def _prefaces() -> list[str]:
    good = [compose_preface([PrefaceEntry("external", f"web:https://a.example/{i}", t)]) for i, t in enumerate(_surrogate_free(TEXTS)[:200])]
    bad = [p.replace("\\", "", 1) for p in good[::9]] + ["not a preface", '<retrieved_content provenance="x" origin="y">\nz\n</retrieved_content>']
    # every ninth row also loses the end of its close tag: a problem whatever its body (the controls
    # below skip the first row of each task, and must find a problem there)
    return [str(p)[:-3] if i % 9 == 0 else str(p) for i, p in enumerate(good)] + bad


def problems_diff(table: Any, texts: Sequence[str]) -> list[str]:
    want = [(row, p) for row, t in enumerate(texts) for p in verify_preface(t).problems]
    got = columnar.problems_of(table)
    return [f"only per-row: {w}" for w in want if w not in got] + [f"only batch: {g}" for g in got if g not in want]


def test_verify_table_equals_verify_preface_row_by_row() -> None:
    texts = _prefaces()
    table = columnar.verify_table(pa.table({"preface": texts}), "preface", workers=2, task_rows=17)
    assert problems_diff(table, texts) == []
    assert len(set(table.column("row").to_pylist())) >= 10  # tampered rows were found: not vacuous


def test_control_verify_path_that_skips_rows_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = columnar.verify_texts
    monkeypatch.setattr(columnar, "verify_texts", lambda ts, first, level, tokens=None: real(ts[1:], first + 1, level, tokens))
    texts = _prefaces()
    assert problems_diff(columnar.verify_table(pa.table({"preface": texts}), "preface", workers=1, task_rows=9), texts)


def test_tasks_sent_to_workers_carry_only_their_rows() -> None:
    # A zero-copy slice pickles with its parent's whole buffers; tasks for worker processes are
    # compacted. Counted in bytes, not seconds. Control: the uncompacted task is the whole table.
    table = pa.table({"text": ["x" * 1000] * 4000})
    compact = next(columnar._tasks(table, columnar._Columns("text"), 100, 1 << 20, compact=True))
    loose = next(columnar._tasks(table, columnar._Columns("text"), 100, 1 << 20, compact=False))
    assert len(pickle.dumps(compact)) < 2 * 100 * 1000 < 4000 * 1000 <= len(pickle.dumps(loose))


def test_corpus_scale_example_runs_small() -> None:
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "corpus_scale.py"), "--n", "400", "--no-ray", "--workers", "1"],
        capture_output=True, text=True, cwd=ROOT, timeout=300, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "planted documents found (an error): 8 of 8" in r.stdout and "benign documents with an error: 0;" in r.stdout
