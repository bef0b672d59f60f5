"""The scanner run on several implementations (the differential tests of its native passes)."""

from __future__ import annotations

from envelock import Finding, scan_text
from envelock.eye import backend


def scanned(text: str, *impls: str) -> tuple[list[Finding], ...]:
    """``scan_text(text)`` on each of ``impls`` (``native``, ``fast``, ``reference``), in order."""
    out: list[list[Finding]] = []
    for impl in impls:
        with backend.use(impl):
            out.append(scan_text(text))
    return tuple(out)
