"""Reading one input's bytes: a regular file, ``-`` (stdin), or a named pipe, with a bound.

A named pipe (``envelock scan <(curl -s ...)``, or a FIFO named on the command line) is opened
without blocking and read while data keeps coming: when no data arrives for ``pipe_timeout``
seconds (a FIFO nobody writes to, a writer that stalls) the read fails with
:class:`PipeTimeout`, which the commands report as an unreadable input (exit 2). Without the
bound, ``open()`` of a FIFO with no writer blocks forever. Stdin is read as it comes, unbounded:
the caller chose what feeds it.
"""

from __future__ import annotations

import errno
import os
import selectors
import stat
import sys

#: Seconds a named pipe may stay silent (no writer, or no data) before its read fails.
PIPE_TIMEOUT = 30.0
_CHUNK = 1 << 20


class PipeTimeout(TimeoutError):
    """A named pipe delivered no data for the timeout (no writer, or a stalled one)."""


def read_input(path: str, *, pipe_timeout: float = PIPE_TIMEOUT) -> bytes:
    """The bytes of ``path`` (``-``: stdin). Raises :class:`OSError` (and :class:`PipeTimeout`)."""
    if path == "-":
        if sys.stdin is None:  # a closed stdin (``envelock scan - <&-``)
            raise OSError(errno.EBADF, "standard input is closed")
        return sys.stdin.buffer.read()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISFIFO(st.st_mode):
            return _read_pipe(fd, pipe_timeout)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def _read_pipe(fd: int, timeout: float) -> bytes:
    chunks: list[bytes] = []
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while True:
            if not sel.select(timeout):
                waited = "no writer" if not chunks else "the writer stopped sending"
                raise PipeTimeout(f"named pipe: no data for {timeout:g} s ({waited}; see --pipe-timeout)")
            try:
                chunk = os.read(fd, _CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)


def reason(e: OSError) -> str:
    """The one-line reason of an I/O error (``Permission denied``), without the path."""
    return e.strerror or str(e)
