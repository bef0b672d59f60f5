"""What a regular expression can match, read off its parse tree by the standard library's own regex
parser: how far an attempt reads (:func:`max_width`) and which characters a match starts with
(:func:`starts`). The encoded pass uses both to search only near the places an escape can start;
deriving them from the very regexes it runs keeps the two from drifting apart (a start table typed
by hand misses whatever the next edit of a regex adds).

The parser is a private module (``re._parser``, ``sre_parse`` before 3.11). Where it cannot be
reached, or a regex uses a construct these functions do not model, they answer ``None`` and the pass
searches the whole text: that only costs time."""

from __future__ import annotations

import importlib
import re
import sys
from typing import Any

#: A position any character may take (a negated class, ``.``, a category such as ``\\d``).
_ANY = None
Chars = frozenset[str] | None
#: A prefix of a match, one set of characters per position, and whether a match may end right there.
Prefix = tuple[tuple[Chars, ...], bool]


def _parser() -> Any:
    return importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")


def max_width(pattern: str) -> int | None:
    """The longest text ``pattern`` can match (the regex parser's own bound), or ``None`` when it is
    unbounded or the parser cannot be reached."""
    try:
        width = int(_parser().parse(pattern).getwidth()[1])
    except (ImportError, AttributeError, TypeError, ValueError, re.error):  # pragma: no cover
        return None
    return width if width < 1 << 16 else None


class _Unmodelled(Exception):
    """A construct :func:`_prefixes` does not follow (a back reference, a case-blind group)."""


def _prefixes(items: Any, k: int, c: Any) -> set[Prefix]:
    """Every way the first ``k`` characters of a match of the sequence ``items`` can look: the
    character sets of a prefix (at most ``k`` long), and whether the match may end after it (a prefix
    ``k`` long reads on: ``False``). An over-approximation: each position may take any character any
    match puts there, whatever its neighbours."""
    out: set[Prefix] = {((), True)}
    for op, av in items:
        step = _item(op, av, k, c)
        nxt: set[Prefix] = set()
        for prefix, ends in out:
            if len(prefix) >= k or not ends:
                nxt.add((prefix, False))
                continue
            for more, more_ends in step:
                joined = (prefix + more)[:k]
                nxt.add((joined, more_ends and len(prefix + more) <= k))
        out = nxt
    return out


def _item(op: Any, av: Any, k: int, c: Any) -> set[Prefix]:
    if op is c.LITERAL:
        return {((frozenset(chr(av)),), True)}
    if op in (c.NOT_LITERAL, c.ANY):
        return {((_ANY,), True)}
    if op is c.IN:
        chars: set[str] = set()
        for kind, value in av:
            if kind is c.LITERAL:
                chars.add(chr(value))
            elif kind is c.RANGE:
                chars.update(map(chr, range(value[0], value[1] + 1)))
            else:  # NEGATE, CATEGORY: any character, as far as a start can tell
                return {((_ANY,), True)}
        return {((frozenset(chars),), True)}
    if op is c.BRANCH:
        return set().union(*(_prefixes(branch, k, c) for branch in av[1]))
    if op is c.SUBPATTERN:
        _group, add_flags, _del_flags, sub = av
        if add_flags & c.SRE_FLAG_IGNORECASE:
            raise _Unmodelled("a case-blind group")
        return _prefixes(sub, k, c)
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", c.MAX_REPEAT)):
        lo, hi, sub = av
        # Past k + 1 copies no new prefix of k characters appears (each copy adds a character or
        # none, and a match ending early needs the same empty copies either way).
        return set().union(*(_prefixes(list(sub) * n, k, c) for n in range(min(lo, k + 1), min(hi, k + 1) + 1)))
    if op is getattr(c, "ATOMIC_GROUP", None):
        return _prefixes(av, k, c)
    if op in (c.AT, c.ASSERT, c.ASSERT_NOT):
        return {((), True)}  # reads nothing of the match
    raise _Unmodelled(str(op))


def starts(pattern: str) -> tuple[str, str, str] | None:
    """What the first characters of every match of ``pattern`` are, as ``_native.scheme_starts`` takes
    them: ``(first, second, third)``, a match being the one character ``first``, then one of
    ``second``, then (when ``third`` is not empty) one of ``third`` (``third`` empty: a match may be
    two characters long, or any character may come third). ``None`` when no such triple holds every
    match (a match of one character, two possible first characters) or the regex uses a construct
    not modelled here."""
    try:
        parser = _parser()
        consts: Any = importlib.import_module("re._constants" if sys.version_info >= (3, 11) else "sre_constants")
        tree = parser.parse(pattern)
        if tree.state.flags & consts.SRE_FLAG_IGNORECASE:
            return None  # a case-blind pattern (``(?i)``) starts with either case
        found = _prefixes(tree, 3, consts)
    except (ImportError, AttributeError, TypeError, ValueError, RecursionError, re.error, _Unmodelled):
        return None
    sets: list[set[str] | None] = [set(), set(), set()]
    for prefix, ends in found:
        if ends and len(prefix) < 2:
            return None  # a match of fewer than two characters
        if ends and len(prefix) < 3:
            sets[2] = None
        for i, chars in enumerate(prefix):
            known = sets[i]
            if chars is None:
                sets[i] = None  # any character (_ANY)
            elif known is not None:
                known.update(chars)
    first, second, third = sets
    if first is None or second is None or len(first) != 1:
        return None
    return next(iter(first)), "".join(sorted(second)), "".join(sorted(third or ()))


def all_starts(patterns: tuple[str, ...]) -> tuple[tuple[str, str, str], ...] | None:
    """:func:`starts` of every pattern, or ``None`` when one of them has none."""
    out = []
    for p in patterns:
        s = starts(p)
        if s is None:
            return None
        out.append(s)
    return tuple(out)
