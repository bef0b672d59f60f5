"""``envelock scan`` / ``envelock verify`` over columnar input: Parquet files and JSON Lines.

``envelock scan data.parquet --column text --id-column url`` and ``envelock scan data.jsonl
--jsonl --field text --id-field id``: every row's text is one document; each finding is
reported with the file, the row (0-based) and its id, in every output format (text, JSON,
SARIF: a logical location and ``properties`` carry the row). ``--baseline``, ``--fail-on``,
``--disable``, ``--jobs`` and the exit codes behave as for files. Rows are third-party text:
``envelock: ignore[...]`` comments in them are not applied.

Bad input is exit 2 naming the row and column (field): a null or missing text, a value that is
not a string, bytes that are not UTF-8, invalid JSON, a text over the size limit. Parquet
needs ``pyarrow`` (``pip install 'envelock[arrow]'``); JSON Lines needs nothing more.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

from ..batch.pool import ordered_map
from ..batch.rows import MAX_TEXT_BYTES, TASK_ROWS, RowFindings, RowProblems, ScanSpec, finding_of, scan_texts, verify_texts
from ..errors import BatchInputError
from ..eye.escape import Level
from ..scan.rules import SEVERITY_RANK
from ..types import Problem
from .report import Baseline, FileResult, emit, problem_finding, srcroot_for

PARQUET_SUFFIXES = (".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


class RowsUsageError(Exception):
    """Bad columnar arguments or input: the CLI turns it into exit 2."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The columnar options of ``scan`` and ``verify``."""
    g = p.add_argument_group("columnar input (Parquet, JSON Lines): one document per row")
    g.add_argument("--column", "--field", dest="column", metavar="NAME", help="the text column (Parquet) or field (JSON Lines)")
    g.add_argument(
        "--id-column", "--id-field", dest="id_column", metavar="NAME", help="a column/field naming each row in reports"
    )
    g.add_argument("--jsonl", action="store_true", help="read JSON Lines (one object per line; also '-'); else by suffix")


def wanted(args: argparse.Namespace) -> bool:
    return bool(args.column is not None or args.jsonl or args.id_column is not None)


def _kind(path: str, args: argparse.Namespace) -> str:
    if args.jsonl:
        return "jsonl"
    low = path.lower()
    if low.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if low.endswith(JSONL_SUFFIXES):
        return "jsonl"
    raise RowsUsageError(f"{path}: cannot tell the format: name a .parquet/.jsonl file, or give --jsonl for JSON Lines")


def _check(args: argparse.Namespace) -> None:
    if args.column is None:
        raise RowsUsageError("columnar input needs --column NAME (--field NAME for JSON Lines): the text to scan")
    for path in args.paths:
        if path == "-":
            if not args.jsonl:
                raise RowsUsageError("'-' with --column is JSON Lines only: add --jsonl")
            continue
        if not Path(path).is_file():
            raise RowsUsageError(f"{path}: not a file (columnar input is one Parquet or JSON Lines file per PATH)")
        _kind(path, args)


# ---------------------------------------------------------------------------
# Reading


def _jsonl_rows(data: bytes, field: str, id_field: str | None) -> Iterator[tuple[int, str, str | None]]:
    """(row, text, id) of every record; blank lines are not records. Raises BatchInputError."""
    row = 0
    for n, line in enumerate(data.split(b"\n"), 1):
        if not line.strip():
            continue
        where = f"line {n}: "
        if len(line) > MAX_TEXT_BYTES:
            raise BatchInputError(f"{where}record of {len(line)} bytes is over the limit of {MAX_TEXT_BYTES} bytes", row, field)
        try:
            record = json.loads(line.decode("utf-8"))
        except UnicodeDecodeError as e:
            raise BatchInputError(f"{where}not valid UTF-8 ({e.reason} at byte {e.start})", row, field) from None
        except json.JSONDecodeError as e:
            raise BatchInputError(f"{where}invalid JSON ({e.msg}, column {e.colno})", row, field) from None
        if not isinstance(record, dict):
            raise BatchInputError(f"{where}a record must be a JSON object", row, field)
        if field not in record:
            raise BatchInputError(f"{where}missing (a record without its text is not an empty document)", row, field)
        text = record[field]
        if not isinstance(text, str):
            what = "null" if text is None else type(text).__name__
            raise BatchInputError(f"{where}expected a string, got {what}", row, field)
        rid = record.get(id_field) if id_field is not None else None
        yield row, text, None if rid is None else rid if isinstance(rid, str) else json.dumps(rid)
        row += 1


def _chunks(rows: Iterator[tuple[int, str, str | None]], ids: dict[int, str | None]) -> Iterator[tuple[int, list[str]]]:
    first, texts = 0, list[str]()
    for row, text, rid in rows:
        if not texts:
            first = row
        texts.append(text)
        ids[row] = rid
        if len(texts) >= TASK_ROWS:
            yield first, texts
            texts = []
    if texts:
        yield first, texts


def _scan_chunk(chunk: tuple[int, list[str]], spec: ScanSpec) -> list[RowFindings]:
    return scan_texts(chunk[1], chunk[0], spec)


def _verify_chunk(chunk: tuple[int, list[str]], level: Level) -> list[RowProblems]:
    return verify_texts(chunk[1], chunk[0], level)


def _read(path: str, stdin_name: str) -> tuple[str, bytes]:
    if path == "-":
        return stdin_name, sys.stdin.buffer.read()
    return path, Path(path).read_bytes()


def _jsonl_results(path: str, args: argparse.Namespace, command: str) -> list[FileResult]:
    shown, data = _read(path, args.stdin_filename)
    ids: dict[int, str | None] = {}  # every row read, with its id (None without --id-field)
    rows = _jsonl_rows(data, args.column, args.id_column)
    out: list[FileResult] = []
    if command == "scan":
        spec = ScanSpec(disable=frozenset(args.disable))
        for found in ordered_map(partial(_scan_chunk, spec=spec), _chunks(rows, ids), args.jobs):
            out.extend(FileResult(shown, "", list(rf.findings), fingerprints=list(rf.fingerprints), row=rf.row) for rf in found)
    else:
        for probs in ordered_map(partial(_verify_chunk, level=args.level), _chunks(rows, ids), args.jobs):
            out.extend(_problem_result(shown, rp.row, list(rp.problems)) for rp in probs)
    for r in out:
        r.row_id = ids.get(r.row) if r.row is not None else None
    return [FileResult(shown, "", size=len(data), rows=len(ids)), *out]


def _problem_result(shown: str, row: int, problems: list[Problem]) -> FileResult:
    # verify has no text at hand here: the fingerprint is the problem's code, offset and message
    findings = [problem_finding(p, None) for p in problems]
    prints = [f"{p.code}:{p.offset}:{k}" for k, p in enumerate(problems)]
    return FileResult(shown, "", findings, fingerprints=prints, row=row)


def _parquet_results(path: str, args: argparse.Namespace, command: str) -> list[FileResult]:
    try:
        import pyarrow.parquet as pq

        from ..batch import columnar
    except ImportError:
        raise RowsUsageError(f"{path}: reading Parquet needs pyarrow: pip install 'envelock[arrow]'") from None
    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises ArrowInvalid/OSError for a file that is not Parquet
        raise RowsUsageError(f"{path}: not a readable Parquet file ({e})") from None
    names = pf.schema_arrow.names
    cols = [c for c in dict.fromkeys((args.column, args.id_column)) if c is not None]
    for c in cols:
        if c not in names:
            raise BatchInputError(f"no such column (columns: {', '.join(repr(n) for n in names[:20])})", None, c)
    batches = pf.iter_batches(batch_size=TASK_ROWS * 4, columns=cols)
    out: list[FileResult] = []
    if command == "scan":
        stream = columnar.scan_batches(batches, args.column, id_column=args.id_column, disable=args.disable, workers=args.jobs)
        for batch in stream:
            out.extend(_grouped_findings(path, batch.to_pylist()))
    else:
        stream = columnar.verify_batches(batches, args.column, id_column=args.id_column, level=args.level, workers=args.jobs)
        for batch in stream:
            out.extend(_grouped_problems(path, batch.to_pylist()))
    return [FileResult(path, "", size=Path(path).stat().st_size, rows=pf.metadata.num_rows), *out]


def _grouped_findings(path: str, records: list[dict[str, Any]]) -> Iterator[FileResult]:
    current: FileResult | None = None
    for d in records:
        if current is None or current.row != d["row"]:
            if current is not None:
                yield current
            current = FileResult(path, "", row=d["row"], row_id=d["id"])
        current.findings.append(finding_of(d))
        current.fingerprints.append(d["fingerprint"])
    if current is not None:
        yield current


def _grouped_problems(path: str, records: list[dict[str, Any]]) -> Iterator[FileResult]:
    by_row: dict[int, list[dict[str, Any]]] = {}
    for d in records:
        by_row.setdefault(d["row"], []).append(d)
    for row, ds in by_row.items():
        r = _problem_result(
            path,
            row,
            [Problem(d["code"], d["message"], d["offset"], d["line"], d["column"], d["entry"], tuple(d["path"])) for d in ds],
        )
        r.row_id = ds[0]["id"]
        yield r


# ---------------------------------------------------------------------------
# Commands


def run(args: argparse.Namespace, command: str, baseline: Baseline | None, finish: Any) -> int:
    """Scan or verify columnar input; returns the exit code (raises RowsUsageError for exit 2)."""
    _check(args)
    results: list[FileResult] = []
    try:
        for path in args.paths:
            kind = "jsonl" if path == "-" else _kind(path, args)
            results += _jsonl_results(path, args, command) if kind == "jsonl" else _parquet_results(path, args, command)
    except BatchInputError as e:
        raise RowsUsageError(f"{'<stdin>' if path == '-' else path}: {e}") from e
    except OSError as e:
        raise RowsUsageError(f"{path}: {e.strerror or e}") from e
    if baseline is not None:
        for r in results:
            baseline.apply(r)
    srcroot = srcroot_for([p for p in args.paths if p != "-"], Path(args.srcroot) if args.srcroot else None)
    finish(results, srcroot)
    if command == "scan":
        threshold = SEVERITY_RANK[args.fail_on]
        failed = any(SEVERITY_RANK[f.severity] >= threshold for r in results for f in r.findings)
    else:
        failed = any(r.findings for r in results)
    code = 1 if failed else 0
    emit(args.format, command, results, code, quiet=args.quiet, srcroot=srcroot)
    return code
