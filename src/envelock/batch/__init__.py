"""Corpus scale: per-row scan/verify, an ordered process pool, Arrow tables and Ray Data."""
