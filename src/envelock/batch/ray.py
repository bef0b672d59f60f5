"""Ray Data: scan a dataset's text column in Arrow batches, on every worker of the cluster.

``scan_dataset(ds, "text", id_column="url")`` is a lazy ``Dataset`` of findings (the columns of
:func:`envelock.columnar.findings_schema` without ``row``: on an engine, blocks are read and
mapped in parallel and a global row number does not exist, so every document is named by its
``id_column``, which is required). ``scan_parquet(src, dst, ...)`` reads Parquet, scans and
writes the findings back out as Parquet. Each batch goes through the same per-batch work as
:func:`envelock.columnar.scan_table` (``map_batches(batch_format="pyarrow")``: Arrow in, Arrow
out, zero-copy where Ray can), so the findings are those of the single-process batch API
(``tests/test_ray.py`` holds them equal). Bad input raises
:class:`~envelock.errors.BatchInputError` in the task, naming the column and the row's id.

Needs ``pip install 'envelock[ray]'``. Start Ray yourself (``ray.init(...)``, or a cluster
address); local mode with ``ray.init(num_cpus=2)`` is what the tests and the example use.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from ..errors import BatchInputError
from ..eye.tokens import RESERVED_NAMES
from .columnar import _Columns, _scan_task, _tasks
from .rows import MAX_TEXT_BYTES, TASK_ROWS, ScanSpec

__all__ = ["scan_dataset", "scan_parquet"]


def _scan_batch(batch: Any, cols: _Columns, spec: ScanSpec, max_bytes: int) -> Any:
    """One engine batch (a ``pyarrow.Table``) -> its findings, without ``row``."""
    import pyarrow as pa

    try:
        out = [_scan_task(task, spec) for task in _tasks(batch, cols, TASK_ROWS, max_bytes)]
    except BatchInputError as e:
        if e.row is None:
            raise
        ids = batch.column(cols.id).cast(pa.string())
        raise BatchInputError(f"{e.reason} (the row with id {ids[e.row].as_py()!r})", None, e.column) from None
    table = pa.Table.from_batches(out, schema=out[0].schema) if out else _empty()
    return table.drop_columns(["row"])


def _empty() -> Any:
    from .columnar import findings_schema

    return findings_schema().empty_table()


def scan_dataset(
    ds: Any,
    column: str,
    *,
    id_column: str,
    source_column: str | None = None,
    origin_column: str | None = None,
    reserved: tuple[str, ...] = RESERVED_NAMES,
    disable: Iterable[str] = (),
    batch_size: int = 4096,
    concurrency: int | None = None,
    max_bytes: int = MAX_TEXT_BYTES,
) -> Any:
    """A lazy ``ray.data.Dataset`` of the findings of ``ds[column]`` (one row per finding).

    ``id_column`` names each document (required: see the module docstring); ``source_column``
    and ``origin_column`` are carried along; ``reserved`` and ``disable`` are ``scan_text``'s.
    ``batch_size`` rows go to one task (one CPU each); ``concurrency`` caps the tasks running
    at once (default: Ray's, bounded by the cluster's CPUs).
    """
    if not isinstance(id_column, str):
        raise TypeError("id_column is required: on an engine, documents are named by an id column, not a row number")
    spec = ScanSpec(tuple(reserved), frozenset(disable))
    cols = _Columns(column, id_column, source_column, origin_column)
    # A task pool of ``concurrency`` tasks (``compute=``: Ray 2.51 deprecates ``concurrency=``).
    if concurrency is None:
        pool: dict[str, Any] = {}
    else:
        import ray.data

        pool = {"compute": ray.data.TaskPoolStrategy(size=concurrency)}
    return ds.map_batches(
        partial(_scan_batch, cols=cols, spec=spec, max_bytes=max_bytes),
        batch_format="pyarrow",
        batch_size=batch_size,
        zero_copy_batch=True,
        num_cpus=1,
        **pool,
    )


def scan_parquet(
    src: str | list[str],
    dst: str,
    column: str,
    *,
    id_column: str,
    concurrency: int | None = None,
    num_blocks: int | None = None,
    **options: Any,
) -> None:
    """Read Parquet ``src`` (files or directories) with Ray Data, scan ``column`` and write the
    findings as Parquet files under the directory ``dst`` (options as :func:`scan_dataset`).
    ``num_blocks`` repartitions what was read (without a shuffle): Ray reads a small input as one
    block, which one task then scans alone; ask for at least as many blocks as tasks you want."""
    import ray.data

    cols = [c for c in dict.fromkeys((column, id_column, options.get("source_column"), options.get("origin_column"))) if c]
    ds = ray.data.read_parquet(src).select_columns(cols)  # the projection is pushed down to the reader
    if num_blocks is not None:
        ds = ds.repartition(num_blocks)
    scan_dataset(ds, column, id_column=id_column, concurrency=concurrency, **options).write_parquet(dst)
