"""Does compose refuse a source (the tier rules of ``envelock.envelope.provenance``)?"""

from __future__ import annotations

from envelock import EnvelockError, PrefaceEntry, compose_preface


def refused(source: str) -> bool:
    """Compose (with verify) refuses an entry with this ``source``."""
    try:
        compose_preface([PrefaceEntry(source, "web:x", "x")], verify=True)
    except EnvelockError:
        return True
    return False
