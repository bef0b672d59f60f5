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

from ..errors import EnvelopeBreach, NestingError
from ..eye.escape import Level, check_level
from ..eye.load_tokens import Tokens
from ..eye.tokens import RESERVED_NAMES
from ..types import DEPTH_CEILING, NO_SPOTLIGHT, Envelope, Spotlight, Transformation
from .hygiene import hygiene_rule
from .parse import scan_preface

#: ``allow``: a ``Preface`` body nests structurally; ``forbid``: refused.
NestingPolicy = Literal["allow", "forbid"]
NESTING_POLICIES: tuple[NestingPolicy, ...] = ("allow", "forbid")


class Preface(str):
    """Composed, verified envelope text. ``Preface(text)`` validates ``text``.

    Attributes: ``level`` (the defang level its bodies are in), ``reserved``
    (the reserved names), ``depth`` (envelope nesting depth, 0 for ``""``),
    ``transformations`` (what composition stripped or replaced, empty for
    a validated text), ``nonce`` and ``spotlight`` (the turn's nonce and body
    transform; for a validated text, the ones every envelope shares, else
    ``None`` and ``NO_SPOTLIGHT``).
    """

    level: Level
    reserved: tuple[str, ...]
    depth: int
    transformations: tuple[Transformation, ...]
    nonce: str | None
    spotlight: Spotlight
    tokens: Tokens | None

    def __new__(
        cls,
        text: str = "",
        *,
        level: Level = "reserved",
        reserved: tuple[str, ...] = RESERVED_NAMES,
        max_depth: int = 2,
        tokens: Tokens | None = None,
    ) -> Preface:
        check_level(level)
        if not isinstance(text, str):
            raise TypeError(f"Preface text must be str, got {type(text).__name__}")
        envelopes, problems, depth = scan_preface(text, level=level, reserved=tuple(reserved), max_depth=max_depth, tokens=tokens)
        if problems:
            if all(p.code == "nesting-depth" for p in problems):
                raise NestingError(str(problems[0]))
            raise EnvelopeBreach("refused to build a Preface from text that is not a sound preface", problems)
        nonces, spots = _shared(envelopes)
        nonce = nonces.pop() if len(nonces) == 1 else None
        spot = spots.pop() if len(spots) == 1 else NO_SPOTLIGHT
        return _make(str.__str__(text), level, tuple(reserved), depth, (), nonce=nonce, spotlight=spot, tokens=tokens)

    def hygiene_rule(self) -> str:
        """The system-prompt text for this preface's transform and nonce (:func:`~envelock.hygiene_rule`)."""
        return hygiene_rule(spotlight=self.spotlight.mode, marker=self.spotlight.marker, nonce=self.nonce)

    def __repr__(self) -> str:
        return f"Preface({str.__repr__(self)}, level={self.level!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # The text is validated again on unpickling; what composition recorded travels with it.
        meta = (self.transformations, self.nonce, self.spotlight)
        return (_rebuild, (str.__str__(self), self.level, self.reserved, meta, self.tokens))


def _shared(envelopes: list[Envelope]) -> tuple[set[str | None], set[Spotlight]]:
    """The nonces of every envelope and the transforms of every text body, at every depth."""
    nonces: set[str | None] = set()
    spots: set[Spotlight] = set()
    stack = list(envelopes)
    while stack:
        env = stack.pop()
        nonces.add(env.nonce)
        if env.body is None:
            stack.extend(env.children)
        else:
            spots.add(env.spotlight)
    return nonces, spots


def _rebuild(
    text: str,
    level: Level,
    reserved: tuple[str, ...],
    meta: tuple[tuple[Transformation, ...], str | None, Spotlight] | None = None,
    tokens: Tokens | None = None,
) -> Preface:
    """Unpickle: validate ``text`` again, then restore what composition recorded (``meta``: the
    transformations, nonce and spotlight; absent from pickles made before it was kept)."""
    p = Preface(text, level=level, reserved=reserved, max_depth=DEPTH_CEILING, tokens=tokens)
    if meta is None:
        return p
    transformations, nonce, spotlight = meta
    if not all(isinstance(t, Transformation) for t in transformations) or not isinstance(spotlight, Spotlight):
        raise TypeError("a pickled Preface carries transformations and a spotlight of the wrong type")
    return _make(
        str.__str__(p), p.level, p.reserved, p.depth, tuple(transformations), nonce=nonce, spotlight=spotlight, tokens=tokens
    )


def _make(
    text: str,
    level: Level,
    reserved: tuple[str, ...],
    depth: int,
    transformations: tuple[Transformation, ...],
    *,
    nonce: str | None = None,
    spotlight: Spotlight = NO_SPOTLIGHT,
    tokens: Tokens | None = None,
) -> Preface:
    """Build a ``Preface`` without re-validating (for the composer's own output)."""
    p = str.__new__(Preface, text)
    p.level = level
    p.reserved = reserved
    p.depth = depth
    p.transformations = transformations
    p.nonce = nonce
    p.spotlight = spotlight
    p.tokens = tokens
    return p


def is_preface(body: object) -> TypeGuard[Preface]:
    """Exactly a ``Preface`` (not a subclass: nothing else may claim the trust)."""
    return type(body) is Preface


def check_nested(
    body: Preface,
    *,
    index: int,
    level: Level,
    reserved: tuple[str, ...],
    nesting: NestingPolicy,
    max_depth: int,
    tokens: Tokens | None = None,
) -> int:
    """Check a ``Preface`` body against the nesting rules; return the depth it creates."""
    if nesting == "forbid":
        raise NestingError("a Preface body is refused (nesting='forbid')", index=index)
    if body.level != level:
        raise NestingError(f"Preface composed at level {body.level!r} cannot nest in level {level!r}", index=index)
    if tuple(body.reserved) != tuple(reserved):
        raise NestingError("Preface composed with other reserved names cannot nest here", index=index)
    if body.tokens != tokens:
        raise NestingError("Preface composed with other control tokens cannot nest here", index=index)
    depth = body.depth + 1
    if depth > max_depth:
        raise NestingError(f"nesting depth {depth} exceeds max_depth={max_depth}", index=index)
    return depth
