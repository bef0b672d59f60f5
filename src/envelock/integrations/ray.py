"""``envelock.integrations.ray``: Ray Data, where users import it from (see :mod:`envelock.batch.ray`)."""

from ..batch.ray import scan_dataset, scan_parquet

__all__ = ["scan_dataset", "scan_parquet"]
