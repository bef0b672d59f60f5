"""``PrefaceEntry`` and the validation of its fields, including ``fetched_at``."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone

from ..errors import InvalidEntry

#: ASCII digits only (``re.ASCII``: ``\d`` of a ``str`` pattern is every Unicode digit, and
#: ``٢٠٢٦-٠١-٠١T٠٠:٠٠:٠٠Z`` passed verify though the composer never writes it; red-team find of stop 42).
_ISO_RE = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,6}))?)?"
    r"([Zz]|[+-]\d{2}(?::?\d{2})?)",
    re.ASCII,
)
#: The one form ``fetched_at`` is rendered in (and the only form a verifier accepts).
CANONICAL_FETCHED_AT_RE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{6})?Z", re.ASCII)


@dataclass(frozen=True)
class PrefaceEntry:
    """One piece of retrieved content.

    ``source`` renders as the ``provenance`` attribute (a trust tier such as
    ``external`` or a content key such as ``web:<url>``); ``origin`` says where
    it came from; ``body`` is a ``str`` (always data, defanged) or a ``Preface``
    (nested structurally); ``fetched_at`` is an aware ``datetime``, an ISO-8601
    string with an offset, or ``None``. Fields are checked when composed.
    """

    source: str
    origin: str
    body: str
    fetched_at: datetime | str | None = None


def format_fetched_at(value: datetime) -> str:
    """Render an aware datetime in UTC as ``YYYY-MM-DDTHH:MM:SS[.ffffff]Z``."""
    d = value.astimezone(timezone.utc)
    frac = f".{d.microsecond:06d}" if d.microsecond else ""
    return f"{d.year:04d}-{d.month:02d}-{d.day:02d}T{d.hour:02d}:{d.minute:02d}:{d.second:02d}{frac}Z"


def parse_iso8601(text: str) -> datetime:
    """Parse an ISO-8601 date-time that carries an offset; raise ``ValueError`` otherwise."""
    m = _ISO_RE.fullmatch(text)
    if m is None:
        raise ValueError("not an ISO-8601 date-time with a UTC offset (e.g. 2026-11-29T21:29:03Z)")
    year, month, day, hour, minute = (int(m.group(i)) for i in range(1, 6))
    second = int(m.group(6) or 0)
    micro = int((m.group(7) or "0").ljust(6, "0"))
    zone = m.group(8)
    if zone in ("Z", "z"):
        tz = timezone.utc
    else:
        sign = -1 if zone[0] == "-" else 1
        digits = zone[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:4] or 0)
        if hours > 23 or minutes > 59:
            raise ValueError("UTC offset out of range")
        tz = timezone(sign * timedelta(hours=hours, minutes=minutes))
    return datetime(year, month, day, hour, minute, second, micro, tzinfo=tz)


def normalize_fetched_at(value: object, *, index: int | None = None) -> str | None:
    """``None``, or the canonical UTC rendering; refuse naive, unparseable or empty values."""
    if value is None:
        return None
    if isinstance(value, datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise InvalidEntry(
                "naive datetime: give a timezone (e.g. datetime.now(timezone.utc))",
                index=index,
                field="fetched_at",
            )
        try:
            return format_fetched_at(value)
        except (OverflowError, ValueError) as exc:
            raise InvalidEntry(f"cannot render in UTC: {exc}", index=index, field="fetched_at") from None
    if isinstance(value, str):
        if value == "":
            raise InvalidEntry("empty string (use None to omit fetched_at)", index=index, field="fetched_at")
        try:
            return format_fetched_at(parse_iso8601(value))
        except (OverflowError, ValueError) as exc:
            shown = value if len(value) <= 40 else value[:40] + "..."
            raise InvalidEntry(f"{shown!r}: {exc}", index=index, field="fetched_at") from None
    raise InvalidEntry(f"expected datetime, str or None, got {type(value).__name__}", index=index, field="fetched_at")


def empty_provenance(source: str) -> bool:
    """No provenance: an entry's ``source`` (before and after invisible characters are stripped) or an
    envelope's ``provenance`` attribute. Compose refuses it; verify reports it (``provenance-empty``)."""
    return not source


def check_entry(entry: object, index: int) -> PrefaceEntry:
    """Type-check one entry; every refusal names the index and field."""
    if not isinstance(entry, PrefaceEntry):
        raise InvalidEntry(f"expected PrefaceEntry, got {type(entry).__name__}", index=index, field="entry")
    for field in ("source", "origin", "body"):
        value = getattr(entry, field)
        if not isinstance(value, str):
            got = "null (None)" if value is None else type(value).__name__
            raise InvalidEntry(f"expected str, got {got}", index=index, field=field)
    if empty_provenance(entry.source):
        raise InvalidEntry("empty source: every envelope needs a provenance", index=index, field="source")
    return entry


def stamp(entries: Iterable[PrefaceEntry], fetched_at: datetime | str | None = None) -> list[PrefaceEntry]:
    """Give every entry of one turn the same ``fetched_at`` (now, in UTC, by default).

    One timestamp per turn keeps the preface byte-stable for prompt caching and
    tells the model the pieces were gathered together. The default (now) is cut to
    whole seconds: microseconds would change the bytes of every preface for nothing.
    """
    now = datetime.now(timezone.utc).replace(microsecond=0)
    when = normalize_fetched_at(fetched_at if fetched_at is not None else now)
    return [replace(e, fetched_at=when) for e in entries]
