"""An ordered, bounded map over worker processes: the batch path's parallelism.

Most of the scanner's passes are native and drop the GIL for long texts, but its reports,
findings and regex windows are Python objects, so threads still queue on the GIL: on this
project's 2-core machine two threads scan the standard library no faster than one, and two
processes faster (``benchmarks/scaling.py``; its figures in docs/INTERNALS.md). The
batch path runs one process per core, each scanning whole tasks (a slice of rows). Results come back in input order; at most
``window`` tasks are in flight, so memory stays bounded however long the input. Workers
are started with ``forkserver`` (``spawn`` where there is none), never forked from a
process that may run threads.
"""

from __future__ import annotations

import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from itertools import chain, islice
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def default_workers() -> int:
    """The cores this process may run on (``os.sched_getaffinity`` where there is one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def check_workers(workers: int | None) -> int:
    if workers is None:
        return default_workers()
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be a positive integer or None; got {workers!r}")
    return workers


def ordered_map(fn: Callable[[T], R], items: Iterable[T], workers: int, *, window: int | None = None) -> Iterator[R]:
    """``map(fn, items)`` on ``workers`` processes, in order, with at most ``window`` tasks in
    flight (default ``2 * workers``). One worker, or fewer than two items, runs in this process.
    ``fn`` and the items must be picklable; an exception in a task is raised here, in order."""
    it = iter(items)
    head = list(islice(it, 2))
    if workers <= 1 or len(head) < 2:
        yield from map(fn, chain(head, it))
        return
    limit = window or 2 * workers
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=context)
    pending: deque[Future[R]] = deque()
    try:
        for item in chain(head, it):
            pending.append(pool.submit(fn, item))
            if len(pending) >= limit:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
