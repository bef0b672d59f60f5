"""``Preface``: the one way to nest envelopes, and the nesting rules.

A ``Preface`` is the ``str`` subclass ``compose_preface`` returns. Used as a
body it is inserted as-is and parses back as child envelopes; a plain ``str``
body is always data. Building a ``Preface`` from arbitrary text validates it
(it must parse as a sound sequence of envelopes at its level), so a forged one
is refused. Operations inherited from ``str`` (``+``, slicing, ``format``...)
return plain ``str``: trust does not survive editing.
"""

from __future__ import annotations

from typing import Literal, TypeGuard

from .common import DEPTH_CEILING, Transformation
from .errors import EnvelopeBreach, NestingError
from .escape import Level, check_level
from .parse import scan_preface
from .tokens import RESERVED_NAMES

#: ``allow``: a ``Preface`` body nests structurally; ``forbid``: refused.
NestingPolicy = Literal["allow", "forbid"]
NESTING_POLICIES: tuple[NestingPolicy, ...] = ("allow", "forbid")


class Preface(str):
    """Composed, verified envelope text. ``Preface(text)`` validates ``text``.

    Attributes: ``level`` (the defang level its bodies are in), ``reserved``
    (the reserved names), ``depth`` (envelope nesting depth, 0 for ``""``),
    and ``transformations`` (what composition stripped or replaced, empty for
    a validated text).
    """

    level: Level
    reserved: tuple[str, ...]
    depth: int
    transformations: tuple[Transformation, ...]

    def __new__(
        cls,
        text: str = "",
        *,
        level: Level = "reserved",
        reserved: tuple[str, ...] = RESERVED_NAMES,
        max_depth: int = 2,
    ) -> Preface:
        check_level(level)
        if not isinstance(text, str):
            raise TypeError(f"Preface text must be str, got {type(text).__name__}")
        _, problems, depth = scan_preface(text, level=level, reserved=tuple(reserved), max_depth=max_depth)
        if problems:
            if all(p.code == "nesting-depth" for p in problems):
                raise NestingError(str(problems[0]))
            raise EnvelopeBreach("refused to build a Preface from text that is not a sound preface", problems)
        return _make(str.__str__(text), level, tuple(reserved), depth, ())

    def __repr__(self) -> str:
        return f"Preface({str.__repr__(self)}, level={self.level!r})"

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild, (str(self), self.level, self.reserved))


def _rebuild(text: str, level: Level, reserved: tuple[str, ...]) -> Preface:
    return Preface(text, level=level, reserved=reserved, max_depth=DEPTH_CEILING)


def _make(
    text: str,
    level: Level,
    reserved: tuple[str, ...],
    depth: int,
    transformations: tuple[Transformation, ...],
) -> Preface:
    """Build a ``Preface`` without re-validating (for the composer's own output)."""
    p = str.__new__(Preface, text)
    p.level = level
    p.reserved = reserved
    p.depth = depth
    p.transformations = transformations
    return p


def is_preface(body: object) -> TypeGuard[Preface]:
    """Exactly a ``Preface`` (not a subclass: nothing else may claim the trust)."""
    return type(body) is Preface


def check_nested(
    body: Preface, *, index: int, level: Level, reserved: tuple[str, ...], nesting: NestingPolicy, max_depth: int
) -> int:
    """Check a ``Preface`` body against the nesting rules; return the depth it creates."""
    if nesting == "forbid":
        raise NestingError("a Preface body is refused (nesting='forbid')", index=index)
    if body.level != level:
        raise NestingError(f"Preface composed at level {body.level!r} cannot nest in level {level!r}", index=index)
    if tuple(body.reserved) != tuple(reserved):
        raise NestingError("Preface composed with other reserved names cannot nest here", index=index)
    depth = body.depth + 1
    if depth > max_depth:
        raise NestingError(f"nesting depth {depth} exceeds max_depth={max_depth}", index=index)
    return depth
