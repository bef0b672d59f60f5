"""The benchmarks' one timer: the best of several calls (``time.perf_counter``), the figure least
disturbed by the rest of a shared machine."""

from __future__ import annotations

import time
from collections.abc import Callable


def best(fn: Callable[[], object], repeat: int) -> float:
    """The shortest of ``repeat`` timed calls of ``fn``, in seconds."""
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out
