"""The ``envelock`` command: ``main(argv)`` parses the arguments and runs one command. See docs/cli.md.

Exit codes (:mod:`envelock.cli.exits`): 0 clean; 1 findings or problems; 2 the command could not
do its job (usage, an input that could not be read, nothing read, a bad entry).
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Sequence

from ..eye import backend
from .args import build_parser
from .commands import COMMANDS
from .exits import EXIT_INTERRUPTED, EXIT_USAGE, UsageError


def _silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null, so that the interpreter's last flush cannot fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout is not a file (in-process runs)
        pass


def _escape_lone_surrogates() -> None:
    """A report may name a lone surrogate (a file name that is not UTF-8, an id read from JSON):
    stdout and stderr write it as its ``\\udcff`` escape (in a JSON or SARIF string, the same escape)
    instead of failing."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


#: What writing the report may fail with that is not a bug: no space, a quota, a file too large, an I/O error.
_WRITE_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def main(argv: Sequence[str] | None = None) -> int:
    try:
        backend.check()  # ENVELOCK_IMPL naming an implementation this interpreter lacks: exit 2, one line
    except ImportError as e:
        print(f"envelock: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if sys.stdout is None or sys.stderr is None:
        # A closed stdout (``envelock scan x >&-``): no report can be written (stop 51, a CLI-probe find:
        # an internal error). Said on stderr where it is open; the status says so in any case.
        if sys.stderr is not None:
            print("envelock: error: standard output is closed: no report can be written", file=sys.stderr)
        return EXIT_USAGE
    args = build_parser().parse_args(argv)
    _escape_lone_surrogates()
    try:
        return COMMANDS[args.command](args)
    except UsageError as e:
        print(f"envelock {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader went away before the whole report was written: it cannot count as a pass.
        _silence_stdout()
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except Exception as e:  # a bug: it must not read as "findings" (1), nor pass (0)
        if isinstance(e, MemoryError):
            # An input too large to hold (a character device read whole, under a memory limit): not a bug.
            print(f"envelock {args.command}: error: out of memory (an input too large to hold)", file=sys.stderr)
            return EXIT_USAGE
        if isinstance(e, OSError) and e.errno in _WRITE_FAILURES:
            # The report could not be written (a full disk: ``> /dev/full``): not a pass, and no bug.
            _silence_stdout()
            print(f"envelock {args.command}: error: the report could not be written: {e.strerror or e}", file=sys.stderr)
            return EXIT_USAGE
        print(f"envelock {args.command}: internal error: {type(e).__name__}: {e}", file=sys.stderr)
        if os.environ.get("ENVELOCK_TRACEBACK") == "1":
            traceback.print_exc()
        return EXIT_USAGE


if __name__ == "__main__":
    raise SystemExit(main())
