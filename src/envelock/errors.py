"""The typed errors envelock raises. Every one is a ``ValueError``."""

from __future__ import annotations

from collections.abc import Sequence

from .types import Problem


class EnvelockError(ValueError):
    """Base class of every error envelock raises on bad input."""


class InvalidEntry(EnvelockError):
    """An entry (or one of its fields) cannot be composed.

    ``index`` is the entry's position in the list given to ``compose_preface``
    (``None`` when the value was checked outside a list) and ``field`` the
    field name (``source``, ``origin``, ``body``, ``fetched_at`` or ``entry``).
    """

    def __init__(self, message: str, *, index: int | None = None, field: str = "entry") -> None:
        where = f"entry {index}" if index is not None else "entry"
        super().__init__(f"{where}, field {field!r}: {message}")
        self.index = index
        self.field = field
        self.reason = message


class InvalidOption(EnvelockError):
    """An option of compose, verify or the policy is refused (``spotlight``, ``marker``, ``nonce``, ``seed``).

    ``option`` names it; the message says what is accepted.
    """

    def __init__(self, message: str, *, option: str) -> None:
        super().__init__(f"option {option!r}: {message}")
        self.option = option
        self.reason = message


class NestingError(EnvelockError):
    """A ``Preface`` body breaks the nesting rules (depth, ``nesting="forbid"``, level)."""

    def __init__(self, message: str, *, index: int | None = None, field: str = "body") -> None:
        where = f"entry {index}" if index is not None else "preface"
        super().__init__(f"{where}, field {field!r}: {message}")
        self.index = index
        self.field = field
        self.reason = message


class EnvelopeBreach(EnvelockError):
    """Text that should be a composed preface is not one (or could break out).

    ``problems`` lists every problem found, each with its position and entry.
    """

    def __init__(self, message: str, problems: Sequence[Problem] = ()) -> None:
        self.problems: tuple[Problem, ...] = tuple(problems)
        detail = "; ".join(str(p) for p in self.problems[:5])
        more = f" (+{len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
        super().__init__(f"{message}: {detail}{more}" if detail else message)


class BatchInputError(EnvelockError):
    """A row of a columnar batch (Arrow table, Parquet file, JSON Lines) cannot be scanned or verified.

    ``row`` is the 0-based row number in the whole input (``None`` when the error is about the
    column itself, such as a missing column or one of the wrong type) and ``column`` the name
    of the column (or JSON Lines field). Raised for a null text, a column that is not text,
    bytes that are not UTF-8 and a text over the size limit: the batch path fails closed and
    never skips a row.
    """

    def __init__(self, message: str, row: int | None = None, column: str = "") -> None:
        where = f"row {row}, column {column!r}" if row is not None else f"column {column!r}"
        super().__init__(f"{where}: {message}")
        self.row = row
        self.column = column
        self.reason = message

    def __reduce__(self) -> tuple[type[BatchInputError], tuple[str, int | None, str]]:
        # Picklable (worker processes, engine tasks): rebuilt from its parts, not from the message.
        return (type(self), (self.reason, self.row, self.column))
