"""The progress line of ``envelock scan`` on stderr: by bytes, only when stderr is a terminal.

A daemon thread redraws it every quarter second after :data:`PROGRESS_AFTER` seconds (so one
large file still shows the time running and its name). Worker processes are never forked from
this process while the thread runs (see :mod:`envelock.batch.pool`).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Sequence

from .walk import Target

#: Seconds before a progress line appears (stderr a terminal only); ENVELOCK_PROGRESS_DELAY overrides.
PROGRESS_AFTER = 1.0


def human(n: float) -> str:
    """``1.5 MB``: bytes in decimal units."""
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover


class Progress:
    """A progress line on stderr by bytes, only when stderr is a terminal: refreshed on a timer
    (so one large file still shows the time running and its name), after :data:`PROGRESS_AFTER`."""

    def __init__(self, targets: Sequence[Target], *, enabled: bool) -> None:
        self.total = sum(t.size for t in targets)
        self.files = len(targets)
        self.done_bytes = 0
        self.done_files = 0
        self.current = ""
        self.current_size = 0
        self.start = time.monotonic()
        self.enabled = enabled and sys.stderr.isatty()
        self.delay = float(os.environ.get("ENVELOCK_PROGRESS_DELAY", PROGRESS_AFTER))
        self.shown = False
        self._lock = threading.Lock()
        self._drawing = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if self.enabled:
            self._thread = threading.Thread(target=self._run, name="envelock-progress", daemon=True)
            self._thread.start()

    def working_on(self, target: Target | None) -> None:
        with self._lock:
            self.current = target.path if target else ""
            self.current_size = target.size if target else 0
        # The first line is drawn as soon as a file starts past the delay, not at the next tick: a file
        # scanned in under a tick still shows (and what shows does not depend on the timer's luck).
        if self.enabled and not self.shown and target is not None and time.monotonic() - self.start >= self.delay:
            self._draw()

    def finished(self, size: int) -> None:
        with self._lock:
            self.done_bytes += size
            self.done_files += 1

    def line(self) -> str:
        with self._lock:
            elapsed = int(time.monotonic() - self.start)
            pct = f" ({100 * self.done_bytes // self.total}%)" if self.total else ""
            text = (
                f"envelock: {human(self.done_bytes)} of {human(self.total)}{pct}, "
                f"{self.done_files}/{self.files} files, {elapsed // 60}:{elapsed % 60:02d}"
            )
            if self.current:
                text += f", scanning {self.current} ({human(self.current_size)})"
        return text

    def _run(self) -> None:
        while not self._stop.wait(0.25):
            if time.monotonic() - self.start < self.delay:
                continue
            self._draw()

    def _draw(self) -> None:
        line = self.line()
        try:
            width = os.get_terminal_size(sys.stderr.fileno()).columns or 120
        except OSError:
            width = 120
        with self._drawing:  # the timer's thread and the caller's may both draw
            sys.stderr.write("\r\x1b[K" + line[: max(20, width - 1)])
            sys.stderr.flush()
            self.shown = True

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self.shown:
            sys.stderr.write("\r\x1b[K")
            sys.stderr.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
