"""The exit codes of every ``envelock`` command, and the one exception that means exit 2.

0 clean; 1 findings at or above ``--fail-on`` (``scan``; skipped files with ``--fail-on-skip``)
or a problem (``verify``, ``compose --verify``, ``wrap --verify``); 2 the command could not do
its job: a usage error, an input that could not be read (missing, unreadable, a symbolic link
loop, a named pipe with no writer), a run that read nothing (unless ``--allow-empty``), or a bad
entry (``compose``, ``wrap``). 2 wins over 1: a gate that did not read everything did not pass.
"""

from __future__ import annotations

EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
#: Interrupted (Ctrl-C), as a shell reports SIGINT.
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad arguments, unreadable input, nothing to read, a bad entry: exit 2 with this message."""
