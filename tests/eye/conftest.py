"""Fixtures of the eye's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from envelock.eye import fastpath
from envelock.eye import reader as modeleye


def _clear_caches() -> None:
    modeleye.names_for.cache_clear()
    fastpath._fast_regex.cache_clear()
    fastpath._bracket_prefilter.cache_clear()


@pytest.fixture
def broken_reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """A monkeypatch for a negative control that breaks the reader's tables or rules: the caches built
    from them are cleared before and after, so the broken reader reaches no other test."""
    _clear_caches()
    yield monkeypatch
    monkeypatch.undo()
    _clear_caches()
