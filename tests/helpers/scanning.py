"""The scanner run on several implementations (the differential tests of its native passes), and
the encoded-tag findings of a text (the tests of the encoded passes)."""

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


def encoded_findings(text: str) -> list[str]:
    """The messages of the ``encoded-tag`` findings of ``scan_text(text)``."""
    return [f.message for f in scan_text(text) if f.rule == "encoded-tag"]


def missed_encoded(cases: list[str]) -> list[str]:
    """The cases with no ``encoded-tag`` finding."""
    return [t for t in cases if not encoded_findings(t)]
