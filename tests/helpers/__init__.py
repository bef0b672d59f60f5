"""Helpers shared by the test modules (data folders, strategies, CLI runner, reader checks)."""
