"""Fixtures of the scanner's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.data import NATIVE_HOW, skip_unless_required

from envelock.eye import backend


@pytest.fixture
def native() -> Iterator[None]:
    """The test on the native core (skipped only where it is not built, failing then under
    ``ENVELOCK_REQUIRE_NATIVE=1``)."""
    if "native" not in backend.IMPLEMENTATIONS:
        skip_unless_required(f"needs envelock._native ({NATIVE_HOW})", "ENVELOCK_REQUIRE_NATIVE")
    with backend.use("native"):
        yield
