"""Columnar batches: scan or verify a text column of an Apache Arrow table (the optional ``pyarrow``).

``scan_table(table, "text", id_column="url")`` is ``scan_text`` of every row, as a table of
findings (one row per finding, with the input's row number and id); ``verify_table`` is
``verify_preface`` of every row, as a table of problems (a prompt-log audit: every stored
preface must verify). The ``*_batches`` forms stream record batches in and out, for inputs
larger than memory (``pyarrow.parquet.ParquetFile(...).iter_batches()``).

The work: each row is scanned by :func:`envelock.scan_text` itself (:mod:`envelock.rows`),
so the result is identical to the per-row call (``tests/test_columnar.py`` holds them equal
and catches a broken batch path). Rows are sliced into tasks of ``task_rows`` rows (zero-copy
Arrow slices) and spread over ``workers`` processes (:mod:`envelock.pool`; default every
core): the scanner's families are Python regular expressions that hold the GIL, and only the
opener reading is native, so processes, not threads, use the cores (docs/scale.md has the
measurements behind that choice).

Bad input fails closed with :class:`~envelock.errors.BatchInputError` naming the row and
column, before any of that batch is scanned, never a skipped row: a missing column, a column
that is not text (``string``, ``large_string``, ``string_view``, or ``binary`` holding UTF-8;
a dictionary of those is decoded), a null text, bytes that are not UTF-8, a text over
``max_bytes``. The id, source and origin columns may hold any type Arrow casts to
``string`` (nulls stay null).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import BatchInputError
from ..eye.escape import Level
from ..eye.levels import check_level
from ..eye.load_tokens import Tokens
from ..eye.tokens import RESERVED_NAMES
from ..types import Finding, Problem
from .pool import check_workers, ordered_map
from .rows import MAX_TEXT_BYTES, TASK_ROWS, ScanSpec, finding_of, scan_texts, verify_texts

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = [
    "findings_of",
    "findings_schema",
    "problems_of",
    "problems_schema",
    "scan_batches",
    "scan_table",
    "verify_batches",
    "verify_table",
]

#: The finding fields, in the order of :meth:`envelock.Finding.as_dict` (the table's columns after row, id, source, origin).
_FINDING_INTS = ("offset", "line", "column", "end_offset", "end_line", "end_column")


def _pa() -> Any:
    try:
        import pyarrow
        import pyarrow.compute  # pyarrow.compute is a submodule: load it for pa.compute
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError("envelock.columnar needs pyarrow: pip install 'envelock[arrow]'") from e
    return pyarrow


def findings_schema() -> pa.Schema:
    """The schema of a findings table: ``row`` (0-based, in the whole input), ``id``, ``source``,
    ``origin`` (from the optional columns, as strings; null without them), then the fields of
    :class:`envelock.Finding` and the content ``fingerprint`` (as ``envelock scan`` reports it)."""
    pa = _pa()
    s, i64 = pa.string(), pa.int64()
    return pa.schema(
        [
            pa.field("row", i64, nullable=False),
            ("id", s),
            ("source", s),
            ("origin", s),
            pa.field("rule", s, nullable=False),
            pa.field("severity", s, nullable=False),
            pa.field("message", s, nullable=False),
            *(pa.field(name, i64, nullable=False) for name in _FINDING_INTS),
            pa.field("snippet", s, nullable=False),
            pa.field("fingerprint", s, nullable=False),
        ]
    )


def problems_schema() -> pa.Schema:
    """The schema of a problems table: ``row``, ``id``, then the fields of :class:`envelock.Problem`
    (``entry`` null outside any envelope; ``path`` the index path through nested envelopes)."""
    pa = _pa()
    s, i64 = pa.string(), pa.int64()
    return pa.schema(
        [
            pa.field("row", i64, nullable=False),
            ("id", s),
            pa.field("code", s, nullable=False),
            pa.field("message", s, nullable=False),
            *(pa.field(name, i64, nullable=False) for name in ("offset", "line", "column")),
            ("entry", i64),
            pa.field("path", pa.list_(i64), nullable=False),
        ]
    )


# ---------------------------------------------------------------------------
# Input: the checks that fail closed


def _batches(data: Any) -> Iterator[Any]:
    pa = _pa()
    if isinstance(data, pa.Table):
        yield from data.to_batches()
    elif isinstance(data, pa.RecordBatch):
        yield data
    else:
        for b in data:
            if isinstance(b, pa.Table):
                yield from b.to_batches()
            elif isinstance(b, pa.RecordBatch):
                yield b
            else:
                raise TypeError(f"expected a pyarrow Table, RecordBatch or an iterable of them; got {type(b).__name__}")


def _field(batch: Any, column: str) -> Any:
    if not isinstance(column, str):
        raise TypeError(f"column names are strings; got {type(column).__name__}")
    idx = batch.schema.get_field_index(column)
    if idx < 0:
        names = ", ".join(repr(n) for n in batch.schema.names[:20])
        raise BatchInputError(f"no such column (columns: {names})", None, column)
    return batch.column(idx)


def _first(mask: Any) -> int:
    pc = _pa().compute
    return int(pc.index(mask, True).as_py())


def _bad_utf8_row(arr: Any) -> tuple[int, str]:
    """The first row of a binary-layout array whose bytes are not UTF-8, and why."""
    for i, value in enumerate(arr.cast(_pa().large_binary()).to_pylist()):
        if value is None:
            continue
        try:
            value.decode("utf-8")
        except UnicodeDecodeError as e:
            return i, f"not valid UTF-8 ({e.reason} at byte {e.start})"
    return 0, "not valid UTF-8"  # pragma: no cover - Arrow and Python agree on UTF-8


def _unpacked(arr: Any) -> tuple[Any, Any, bool]:
    """``arr`` without a dictionary or view layout (a view read as bytes, checked as UTF-8 by its
    reader), its type as text, and whether it holds bytes."""
    pa = _pa()
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_string_view(t) or pa.types.is_binary_view(t):
        return arr.cast(pa.large_binary()), pa.large_binary() if pa.types.is_binary_view(t) else pa.large_string(), True
    return arr, t, pa.types.is_binary(t) or pa.types.is_large_binary(t)


def filled_rows(batch: Any, column: str) -> int:
    """How many rows of ``batch`` hold a non-empty value in ``column`` (a null or an empty text does
    not); 0 for a column that is not text, which :func:`text_column` refuses."""
    pa = _pa()
    arr, t, binary = _unpacked(_field(batch, column))
    if not len(arr) or not (binary or pa.types.is_string(t) or pa.types.is_large_string(t)):
        return 0
    return int(pa.compute.sum(pa.compute.greater(pa.compute.binary_length(arr), 0)).as_py() or 0)


def text_column(batch: Any, column: str, first_row: int, max_bytes: int) -> Any:
    """The ``column`` of ``batch`` as an Arrow string array, checked: text type, no null, valid
    UTF-8, no row over ``max_bytes``. Raises :class:`BatchInputError` naming the row (counted from
    ``first_row``) and column."""
    pa = _pa()
    pc = pa.compute
    arr, t, binary = _unpacked(_field(batch, column))
    if not (binary or pa.types.is_string(t) or pa.types.is_large_string(t)):
        raise BatchInputError(f"type {t} is not text (string, large_string, string_view, or binary holding UTF-8)", None, column)
    if arr.null_count:
        raise BatchInputError(
            "null text (filter or fill nulls before scanning: a null is not an empty document)",
            first_row + _first(pc.is_null(arr)),
            column,
        )
    if len(arr):
        lengths = pc.binary_length(arr)
        if pc.max(lengths).as_py() > max_bytes:
            i = _first(pc.greater(lengths, max_bytes))
            raise BatchInputError(
                f"text of {lengths[i].as_py()} bytes is over the limit of {max_bytes} bytes", first_row + i, column
            )
    if binary:
        try:
            arr = arr.cast(pa.large_string())
        except pa.ArrowInvalid:
            i, why = _bad_utf8_row(arr)
            raise BatchInputError(why, first_row + i, column) from None
    else:
        try:
            arr.validate(full=True)  # Arrow strings built from raw buffers may hold any bytes
        except pa.ArrowInvalid:
            i, why = _bad_utf8_row(arr)
            raise BatchInputError(why, first_row + i, column) from None
    return arr


def label_column(batch: Any, column: str | None) -> Any:
    """An optional id/source/origin column as strings (nulls stay null), or ``None``."""
    if column is None:
        return None
    pa = _pa()
    arr = _field(batch, column)
    try:
        return arr.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
        raise BatchInputError(f"type {arr.type} cannot be cast to string ({e})", None, column) from None


def _cut(arr: Any, start: int, n: int, compact: bool) -> Any:
    part = arr.slice(start, n)
    return _pa().concat_arrays([part]) if compact and n < len(arr) else part


@dataclass(frozen=True)
class _Columns:
    text: str
    id: str | None = None
    source: str | None = None
    origin: str | None = None


def _tasks(
    data: Any, cols: _Columns, task_rows: int, max_bytes: int, *, compact: bool = False
) -> Iterator[tuple[int, Any, Any, Any, Any]]:
    """(first row, texts, ids, sources, origins) slices of at most ``task_rows`` rows, checked.

    A slice is zero-copy, but pickling one sends its parent's whole buffers (measured: a
    100-row slice of a 10 MB array pickles to 10 MB): with ``compact`` (for worker processes)
    each slice is copied into buffers of its own first."""
    if not isinstance(task_rows, int) or task_rows < 1:
        raise ValueError(f"task_rows must be a positive integer; got {task_rows!r}")
    row = 0
    for batch in _batches(data):
        texts = text_column(batch, cols.text, row, max_bytes)
        labels = [label_column(batch, c) for c in (cols.id, cols.source, cols.origin)]
        for start in range(0, len(texts), task_rows):
            n = min(task_rows, len(texts) - start)
            ids, sources, origins = (None if a is None else _cut(a, start, n, compact) for a in labels)
            yield row + start, _cut(texts, start, n, compact), ids, sources, origins
        row += len(texts)


# ---------------------------------------------------------------------------
# Workers (module level: picklable)


def _scan_task(task: tuple[int, Any, Any, Any, Any], spec: ScanSpec) -> Any:
    pa = _pa()
    first, texts, ids, sources, origins = task
    found = scan_texts(texts.to_pylist(), first, spec)
    cols: dict[str, list[Any]] = {name: [] for name in findings_schema().names}
    for rf in found:
        k = rf.row - first
        labels = [None if a is None else a[k].as_py() for a in (ids, sources, origins)]
        for f, fp in zip(rf.findings, rf.fingerprints, strict=True):
            cols["row"].append(rf.row)
            for name, value in zip(("id", "source", "origin"), labels, strict=True):
                cols[name].append(value)
            for name, value in f.as_dict().items():
                cols[name].append(value)
            cols["fingerprint"].append(fp)
    return pa.RecordBatch.from_pydict(cols, schema=findings_schema())


def _verify_task(task: tuple[int, Any, Any, Any, Any], level: Level, tokens: Tokens | None = None) -> Any:
    pa = _pa()
    first, texts, ids, _, _ = task
    found = verify_texts(texts.to_pylist(), first, level, tokens)
    cols: dict[str, list[Any]] = {name: [] for name in problems_schema().names}
    for rp in found:
        row_id = None if ids is None else ids[rp.row - first].as_py()
        for p in rp.problems:
            for name, value in (("row", rp.row), ("id", row_id), ("code", p.code), ("message", p.message), ("offset", p.offset)):
                cols[name].append(value)
            for name, value in (("line", p.line), ("column", p.column), ("entry", p.entry), ("path", list(p.path))):
                cols[name].append(value)
    return pa.RecordBatch.from_pydict(cols, schema=problems_schema())


# ---------------------------------------------------------------------------
# The API


def scan_batches(
    data: Any,
    column: str,
    *,
    id_column: str | None = None,
    source_column: str | None = None,
    origin_column: str | None = None,
    reserved: tuple[str, ...] = RESERVED_NAMES,
    disable: Iterable[str] = (),
    tokens: Tokens | None = None,
    workers: int | None = None,
    task_rows: int = TASK_ROWS,
    max_bytes: int = MAX_TEXT_BYTES,
) -> Iterator[pa.RecordBatch]:
    """Findings of ``data`` (a ``pyarrow.Table``, a ``RecordBatch``, or an iterable of them) as
    record batches of :func:`findings_schema`, one per task, in row order. Streams: at most
    ``2 * workers`` tasks are in flight. See :func:`scan_table`."""
    spec = ScanSpec(tuple(reserved), frozenset(disable), tokens)
    n = check_workers(workers)
    tasks = _tasks(data, _Columns(column, id_column, source_column, origin_column), task_rows, max_bytes, compact=n > 1)
    yield from ordered_map(partial(_scan_task, spec=spec), tasks, n)


def scan_table(
    data: Any,
    column: str,
    *,
    id_column: str | None = None,
    source_column: str | None = None,
    origin_column: str | None = None,
    reserved: tuple[str, ...] = RESERVED_NAMES,
    disable: Iterable[str] = (),
    tokens: Tokens | None = None,
    workers: int | None = None,
    task_rows: int = TASK_ROWS,
    max_bytes: int = MAX_TEXT_BYTES,
) -> pa.Table:
    """``scan_text`` of every row of ``data[column]``, as one findings table (:func:`findings_schema`).

    ``data`` is a ``pyarrow.Table``, a ``RecordBatch`` or an iterable of them; ``id_column``,
    ``source_column`` and ``origin_column`` are carried into the findings as strings.
    ``reserved``, ``disable`` and ``tokens`` are ``scan_text``'s. ``workers`` processes (default: every
    core; 1 scans in this process) take ``task_rows`` rows at a time. A row over ``max_bytes``
    UTF-8 bytes, a null, a non-text column or bytes that are not UTF-8 raise
    :class:`~envelock.errors.BatchInputError` naming the row and column.
    """
    batches = list(
        scan_batches(
            data,
            column,
            id_column=id_column,
            source_column=source_column,
            origin_column=origin_column,
            reserved=reserved,
            disable=disable,
            tokens=tokens,
            workers=workers,
            task_rows=task_rows,
            max_bytes=max_bytes,
        )
    )
    return _pa().Table.from_batches(batches, schema=findings_schema())


def verify_batches(
    data: Any,
    column: str,
    *,
    id_column: str | None = None,
    level: Level = "reserved",
    tokens: Tokens | None = None,
    workers: int | None = None,
    task_rows: int = TASK_ROWS,
    max_bytes: int = MAX_TEXT_BYTES,
) -> Iterator[pa.RecordBatch]:
    """Problems of ``verify_preface`` over every row, as record batches of :func:`problems_schema`."""
    lvl = check_level(level)
    n = check_workers(workers)
    tasks = _tasks(data, _Columns(column, id_column), task_rows, max_bytes, compact=n > 1)
    yield from ordered_map(partial(_verify_task, level=lvl, tokens=tokens), tasks, n)


def verify_table(
    data: Any,
    column: str,
    *,
    id_column: str | None = None,
    level: Level = "reserved",
    tokens: Tokens | None = None,
    workers: int | None = None,
    task_rows: int = TASK_ROWS,
    max_bytes: int = MAX_TEXT_BYTES,
) -> pa.Table:
    """``verify_preface(text, level=level)`` of every row of ``data[column]`` (stored prefaces), as
    one problems table (:func:`problems_schema`); empty when every row verifies. Input checks
    and ``workers`` as for :func:`scan_table`."""
    batches = list(
        verify_batches(
            data,
            column,
            id_column=id_column,
            level=level,
            tokens=tokens,
            workers=workers,
            task_rows=task_rows,
            max_bytes=max_bytes,
        )
    )
    return _pa().Table.from_batches(batches, schema=problems_schema())


def findings_of(table: Any) -> list[tuple[int, Finding]]:
    """(row, :class:`~envelock.Finding`) for every row of a findings table, in table order."""
    return [(d["row"], finding_of(d)) for d in table.to_pylist()]


def problems_of(table: Any) -> list[tuple[int, Problem]]:
    """(row, :class:`~envelock.Problem`) for every row of a problems table, in table order."""
    return [
        (d["row"], Problem(d["code"], d["message"], d["offset"], d["line"], d["column"], d["entry"], tuple(d["path"])))
        for d in table.to_pylist()
    ]
