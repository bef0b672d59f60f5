"""The scanner run on several implementations (the differential tests of its native passes), and
the encoded-tag findings of a text (the tests of the encoded passes)."""

from __future__ import annotations

import pytest

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


def reference_escape_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The encoded pass's plan made by the Python reference (``encoded._escape_plan_reference``) for
    the rest of a test: the controls that break one of its steps act there, and
    ``tests/scan/test_scan_encoded_plan.py`` holds the native plan equal to it."""
    monkeypatch.setattr(backend, "native_escape_plan", lambda *args: None)
