"""``envelock.columnar``: the Arrow batch API, where users import it from (see :mod:`envelock.batch.columnar`)."""

from .batch.columnar import (
    findings_of,
    findings_schema,
    problems_of,
    problems_schema,
    scan_batches,
    scan_table,
    verify_batches,
    verify_table,
)

__all__ = [
    "findings_of",
    "findings_schema",
    "problems_of",
    "problems_schema",
    "scan_batches",
    "scan_table",
    "verify_batches",
    "verify_table",
]
