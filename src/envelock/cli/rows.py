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
:func:`results` gives one :class:`FileResult` per file (its rows counted) and one per row with
findings, each built whole (URI and baseline applied); the command decides the exit code.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from ..batch.pool import ordered_map
from ..batch.rows import MAX_TEXT_BYTES, TASK_ROWS, RowFindings, RowProblems, ScanSpec, finding_of, scan_texts, verify_texts
from ..errors import BatchInputError
from ..eye.escape import Level
from ..eye.load_tokens import Tokens
from ..types import Finding, Problem
from . import strict_json
from .baseline import Baseline, suppress
from .exits import UsageError
from .read import read_input, reason
from .report import FileResult, problem_finding, relative_uri

PARQUET_SUFFIXES = (".parquet", ".pq")
JSONL_SUFFIXES = (".jsonl", ".ndjson")


def wanted(args: argparse.Namespace) -> bool:
    """Do the arguments ask for columnar input?"""
    return bool(args.column is not None or args.jsonl or args.id_column is not None)


def _kind(path: str, args: argparse.Namespace) -> str:
    if args.jsonl or path == "-":
        return "jsonl"
    low = path.lower()
    if low.endswith(PARQUET_SUFFIXES):
        return "parquet"
    if low.endswith(JSONL_SUFFIXES):
        return "jsonl"
    raise UsageError(f"{path}: cannot tell the format: name a .parquet/.jsonl file, or give --jsonl for JSON Lines")


def check(args: argparse.Namespace) -> None:
    """Refuse columnar arguments that cannot work, before anything is read (UsageError)."""
    if args.column is None:
        raise UsageError("columnar input needs --column NAME (--field NAME for JSON Lines): the text to scan")
    for path in args.paths:
        if path == "-":
            if not args.jsonl:
                raise UsageError("'-' with --column is JSON Lines only: add --jsonl")
            continue
        if not os.path.lexists(path):
            raise UsageError(f"{path}: no such file")
        if not Path(path).is_file():
            raise UsageError(f"{path}: not a file (columnar input is one Parquet or JSON Lines file per PATH)")
        _kind(path, args)


class _Rows:
    """How the results of one columnar file are built: its shown path, URI and the baseline."""

    def __init__(self, shown: str, uri: str, baseline: Baseline | None) -> None:
        self.shown, self.uri, self.baseline = shown, uri, baseline

    def file(self, size: int, rows: int, filled: int) -> FileResult:
        return FileResult(self.shown, self.uri, size=size, rows=rows, filled=filled)

    def row(self, row: int, row_id: str | None, findings: Sequence[Finding], prints: Sequence[str]) -> FileResult:
        kept, kept_fp, gone = suppress(self.shown, findings, prints, (), self.baseline)
        return FileResult(self.shown, self.uri, kept, fingerprints=kept_fp, suppressed=gone, row=row, row_id=row_id)

    def problems(self, row: int, row_id: str | None, problems: Sequence[Problem]) -> FileResult:
        # verify has no text at hand here: the fingerprint is the problem's code, offset and message
        findings = [problem_finding(p, None) for p in problems]
        prints = [f"{p.code}:{p.offset}:{k}" for k, p in enumerate(problems)]
        return FileResult(self.shown, self.uri, tuple(findings), fingerprints=tuple(prints), row=row, row_id=row_id)


# ---------------------------------------------------------------------------
# JSON Lines


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
            record = strict_json.loads(line.decode("utf-8"))
        except strict_json.StrictJSONError as e:
            raise BatchInputError(f"{where}invalid JSON ({e})", row, field) from None
        except UnicodeDecodeError as e:
            raise BatchInputError(f"{where}not valid UTF-8 ({e.reason} at byte {e.start})", row, field) from None
        except json.JSONDecodeError as e:
            raise BatchInputError(f"{where}invalid JSON ({e.msg}, column {e.colno})", row, field) from None
        except RecursionError:
            raise BatchInputError(f"{where}invalid JSON (nested too deeply to be read)", row, field) from None
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


def _chunks(
    rows: Iterator[tuple[int, str, str | None]], ids: dict[int, str | None], filled: list[int]
) -> Iterator[tuple[int, list[str]]]:
    """Tasks of up to TASK_ROWS texts; ``ids`` gets every row's id as its task is handed out, and
    ``filled[0]`` counts the rows whose text is not empty."""
    first, texts = 0, list[str]()
    for row, text, rid in rows:
        if not texts:
            first = row
        texts.append(text)
        ids[row] = rid
        filled[0] += text != ""
        if len(texts) >= TASK_ROWS:
            yield first, texts
            texts = []
    if texts:
        yield first, texts


def _scan_chunk(chunk: tuple[int, list[str]], spec: ScanSpec) -> list[RowFindings]:
    return scan_texts(chunk[1], chunk[0], spec)


def _verify_chunk(chunk: tuple[int, list[str]], level: Level, tokens: Tokens | None = None) -> list[RowProblems]:
    return verify_texts(chunk[1], chunk[0], level, tokens)


def _jsonl_results(path: str, args: argparse.Namespace, command: str, build: _Rows) -> list[FileResult]:
    data = read_input(path, pipe_timeout=args.pipe_timeout)
    ids: dict[int, str | None] = {}  # every row handed out so far, with its id (None without --id-field)
    filled = [0]
    chunks = _chunks(_jsonl_rows(data, args.column, args.id_column), ids, filled)
    out: list[FileResult] = []
    if command == "scan":
        spec = ScanSpec(disable=frozenset(args.disable), tokens=args.tokenizer)
        for found in ordered_map(partial(_scan_chunk, spec=spec), chunks, args.jobs):
            out.extend(build.row(rf.row, ids[rf.row], rf.findings, rf.fingerprints) for rf in found)
    else:
        for probs in ordered_map(partial(_verify_chunk, level=args.level, tokens=args.tokenizer), chunks, args.jobs):
            out.extend(build.problems(rp.row, ids[rp.row], rp.problems) for rp in probs)
    return [build.file(len(data), len(ids), filled[0]), *out]


# ---------------------------------------------------------------------------
# Parquet


def _parquet_results(path: str, args: argparse.Namespace, command: str, build: _Rows) -> list[FileResult]:
    try:
        import pyarrow.parquet as pq

        from ..batch import columnar
    except ImportError:
        raise UsageError(f"{path}: reading Parquet needs pyarrow: pip install 'envelock[arrow]'") from None
    try:
        pf = pq.ParquetFile(path)
    except Exception as e:  # pyarrow raises ArrowInvalid/OSError for a file that is not Parquet
        raise UsageError(f"{path}: not a readable Parquet file ({e})") from None
    names = pf.schema_arrow.names
    cols = [c for c in dict.fromkeys((args.column, args.id_column)) if c is not None]
    for c in cols:
        if c not in names:
            raise BatchInputError(f"no such column (columns: {', '.join(repr(n) for n in names[:20])})", None, c)
    filled = [0]
    batches = _counted(pf.iter_batches(batch_size=TASK_ROWS * 4, columns=cols), args.column, filled)
    out: list[FileResult] = []
    if command == "scan":
        stream = columnar.scan_batches(
            batches, args.column, id_column=args.id_column, disable=args.disable, tokens=args.tokenizer, workers=args.jobs
        )
        for batch in stream:
            out.extend(_grouped_findings(batch.to_pylist(), build))
    else:
        stream = columnar.verify_batches(
            batches, args.column, id_column=args.id_column, level=args.level, tokens=args.tokenizer, workers=args.jobs
        )
        for batch in stream:
            out.extend(_grouped_problems(batch.to_pylist(), build))
    return [build.file(Path(path).stat().st_size, pf.metadata.num_rows, filled[0]), *out]


def _counted(batches: Iterator[Any], column: str, filled: list[int]) -> Iterator[Any]:
    """``batches``, with ``filled[0]`` counting the rows whose ``column`` holds a non-empty text."""
    from ..batch.columnar import filled_rows

    for batch in batches:
        filled[0] += filled_rows(batch, column)
        yield batch


def _grouped_findings(records: list[dict[str, Any]], build: _Rows) -> Iterator[FileResult]:
    """One result per row: the records of a row are consecutive."""
    by_row: dict[int, list[dict[str, Any]]] = {}
    for d in records:
        by_row.setdefault(d["row"], []).append(d)
    for row, ds in by_row.items():
        yield build.row(row, ds[0]["id"], [finding_of(d) for d in ds], [d["fingerprint"] for d in ds])


def _grouped_problems(records: list[dict[str, Any]], build: _Rows) -> Iterator[FileResult]:
    by_row: dict[int, list[dict[str, Any]]] = {}
    for d in records:
        by_row.setdefault(d["row"], []).append(d)
    for row, ds in by_row.items():
        problems = [
            Problem(d["code"], d["message"], d["offset"], d["line"], d["column"], d["entry"], tuple(d["path"])) for d in ds
        ]
        yield build.problems(row, ds[0]["id"], problems)


# ---------------------------------------------------------------------------
# The command path


def results(args: argparse.Namespace, command: str, baseline: Baseline | None, srcroot: Path) -> list[FileResult]:
    """Scan or verify every columnar PATH; raises UsageError (exit 2) for bad input, naming the row."""
    check(args)
    out: list[FileResult] = []
    for path in args.paths:
        shown = args.stdin_filename if path == "-" else path
        build = _Rows(shown, relative_uri(shown, srcroot), baseline)
        try:
            if _kind(path, args) == "jsonl":
                out += _jsonl_results(path, args, command, build)
            else:
                out += _parquet_results(path, args, command, build)
        except BatchInputError as e:
            raise UsageError(f"{'<stdin>' if path == '-' else path}: {e}") from e
        except OSError as e:
            raise UsageError(f"{path}: {reason(e)}") from e
    return out
