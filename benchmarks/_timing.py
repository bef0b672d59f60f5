"""The benchmarks' one timer: the best of several calls (``time.perf_counter``), the figure least
disturbed by the rest of a shared machine."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping


def best(fn: Callable[[], object], repeat: int) -> float:
    """The shortest of ``repeat`` timed calls of ``fn``, in seconds."""
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def best_interleaved(fns: Mapping[str, Callable[[], object]], budget: float, least: int = 3, most: int = 30) -> dict[str, float]:
    """The shortest timed call of each of ``fns``, in seconds, called in rounds (one call of each per
    round) for at least ``least`` rounds and more while within ``budget`` seconds. A shared machine
    changes speed for seconds at a time (two to three times, on this 2-core one): timed one after the
    other, two calls can fall in different phases and their ratio with them; in rounds, each best
    comes from the fastest phase of the run."""
    out = dict.fromkeys(fns, float("inf"))
    start = time.perf_counter()
    rounds = 0
    while rounds < least or (time.perf_counter() - start < budget and rounds < most):
        for name, fn in fns.items():
            t = time.perf_counter()
            fn()
            out[name] = min(out[name], time.perf_counter() - t)
        rounds += 1
    return out
