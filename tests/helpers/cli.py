"""Running the ``envelock`` command in tests: in-process through ``cli.main(argv)`` (fast), or as the
installed entry point in a subprocess (the few smoke tests that must see a real process)."""

from __future__ import annotations

import contextlib
import io
import json
import os
import pty
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from envelock.cli import main
from helpers.data import shared_dir

ENVELOCK = Path(sys.executable).parent / "envelock"


def run_process(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """The installed entry point in a subprocess."""
    assert ENVELOCK.exists(), f"entry point not installed at {ENVELOCK}"
    full_env = None if env is None else {**os.environ, **env}
    return subprocess.run(
        [str(ENVELOCK), *args], input=stdin, capture_output=True, cwd=cwd, timeout=120, check=False, env=full_env
    )


@contextlib.contextmanager
def _environment(cwd: Path | None, env: Mapping[str, str] | None) -> Iterator[None]:
    old_cwd = os.getcwd()
    saved = {k: os.environ.get(k) for k in (env or {})}
    try:
        if cwd is not None:
            os.chdir(cwd)
        os.environ.update(env or {})
        yield
    finally:
        os.chdir(old_cwd)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run(
    *args: str, stdin: bytes | None = None, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``envelock ARGS`` in this process: ``cli.main(argv)`` with byte-level stdin, stdout and stderr."""
    out, err = io.BytesIO(), io.BytesIO()
    streams = (sys.stdin, sys.stdout, sys.stderr)
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin or b""), encoding="utf-8")
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    sys.stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    try:
        with _environment(cwd, env):
            try:
                code = main(list(args))
            except SystemExit as exc:  # argparse: usage errors and --help
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    finally:
        for wrapper in (sys.stdin, sys.stdout, sys.stderr):
            wrapper.flush()
            wrapper.detach()  # so that collecting the wrapper does not close the buffer
        sys.stdin, sys.stdout, sys.stderr = streams
    return subprocess.CompletedProcess(["envelock", *args], code, out.getvalue(), err.getvalue())


def run_on_tty(
    args: list[str], cwd: Path, env: Mapping[str, str] | None = None, *, stream: str = "stderr"
) -> tuple[int, bytes]:
    """The entry point with ``stream`` (``stderr`` or ``stdout``) on a pseudo-terminal, the other one
    discarded; (exit code, what the terminal received)."""
    master, slave = pty.openpty()
    where = {"stdout": slave, "stderr": subprocess.DEVNULL} if stream == "stdout" else {"stdout": subprocess.DEVNULL, "stderr": slave}
    full_env = None if env is None else {**os.environ, **env}
    proc = subprocess.Popen([str(ENVELOCK), *args], cwd=cwd, env=full_env, **where)  # type: ignore[call-overload]
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks)


def sarif_schema() -> dict[str, Any]:
    path = shared_dir() / "schemas" / "sarif-schema-2.1.0.json"
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema
