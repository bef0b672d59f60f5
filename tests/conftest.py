"""pytest configuration: hypothesis profiles, the implementation and native fixtures, the slow-test switch."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.data import ROOT, on_native
from hypothesis import HealthCheck, settings

from envelock.eye import backend, fastpath, reader

# The fast implementation hands small amounts of text to the reference until compiling its regex
# pays (fastpath.WARM_OPENERS): every test of it runs the regex. tests/eye/test_fast_warmup.py tests
# the hand-over itself.
fastpath.WARM_OPENERS = 0

settings.register_profile("ci", max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("deep", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


if os.environ.get("ENVELOCK_EXPECT_INSTALLED"):
    # CI's wheel stage: the tests must exercise the installed package, not the source tree.
    import envelock

    if str(ROOT / "src") in str(Path(envelock.__file__).resolve()):
        raise RuntimeError(f"ENVELOCK_EXPECT_INSTALLED: envelock was imported from the source tree ({envelock.__file__})")


def _implementations() -> list[str]:
    """Every implementation this interpreter has; ``ENVELOCK_TEST_IMPLS=native`` (comma-separated)
    keeps those named, for CI's later stages, which test an install of what the first stage tested
    on every implementation. Naming one the install lacks is an error, never an empty run."""
    wanted = [w for w in os.environ.get("ENVELOCK_TEST_IMPLS", "").split(",") if w]
    missing = [w for w in wanted if w not in backend.IMPLEMENTATIONS]
    if missing:
        raise RuntimeError(f"ENVELOCK_TEST_IMPLS names {missing}, not in this install ({list(backend.IMPLEMENTATIONS)})")
    return wanted or list(backend.IMPLEMENTATIONS)


@pytest.fixture(params=_implementations())
def impl(request: pytest.FixtureRequest) -> Iterator[str]:
    """Run a test once per implementation this interpreter has (markupsafe's way): the escape,
    spotlighting, verify and the scanner all ask :mod:`envelock.eye.backend`, so one switch covers
    them. Test modules use it with ``pytestmark = pytest.mark.usefixtures("impl")``."""
    name: str = request.param
    with backend.use(name):
        yield name


@pytest.fixture
def native() -> Iterator[None]:
    """The test on the native core (:func:`helpers.data.on_native`)."""
    with on_native():
        yield


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests marked ``slow`` (the whole standard library and site-packages) are deselected unless
    the run asks for them (``pytest -m slow``; ``.ci/run`` has a stage for them): deselected, not
    skipped, so the default run reports no skip for them."""
    expr = str(config.getoption("markexpr") or "")
    if "slow" in expr and "not slow" not in expr:
        return
    slow = [item for item in items if item.get_closest_marker("slow") is not None]
    if slow:
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if item.get_closest_marker("slow") is None]


def _clear_reader_caches() -> None:
    reader.names_for.cache_clear()
    fastpath._fast_regex.cache_clear()
    fastpath._bracket_prefilter.cache_clear()


@pytest.fixture
def broken_reader(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """A monkeypatch for a negative control that breaks the reader's tables or rules: the caches built
    from them are cleared before and after, so the broken reader reaches no other test."""
    _clear_reader_caches()
    yield monkeypatch
    monkeypatch.undo()
    _clear_reader_caches()
