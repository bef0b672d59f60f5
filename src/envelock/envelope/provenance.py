"""Trust tiers and ``trust_of`` (the system-prompt text that names them is in :mod:`envelock.hygiene`)."""

from __future__ import annotations

from enum import IntEnum
from functools import lru_cache

from ..eye.reader import Names, is_stand_in, read_after, reads_as_letter, skeleton


class Trust(IntEnum):
    """Provenance tiers, most trusted first (a higher value is more trusted)."""

    EXTERNAL = 0
    MODEL_INFERRED = 1
    USER_AUTHORED = 2
    SYSTEM_CONFIG = 3

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", "-")


#: Tier names as they appear in ``provenance`` attributes.
TIER_BY_NAME: dict[str, Trust] = {t.label: t for t in Trust}

#: Content-key kinds (``kind:rest``) and the tier their kind implies. Anything a
#: third party or a model can write is not ``user-authored``: memory and
#: artifacts can be written by the model or by tools (see SECURITY.md).
TIER_BY_KIND: dict[str, Trust] = {
    "web": Trust.EXTERNAL,
    "http": Trust.EXTERNAL,
    "https": Trust.EXTERNAL,
    "mcp": Trust.EXTERNAL,
    "tool": Trust.EXTERNAL,
    "webhook": Trust.EXTERNAL,
    "email": Trust.EXTERNAL,
    "file": Trust.EXTERNAL,
    "artifact": Trust.MODEL_INFERRED,
    "artifacts": Trust.MODEL_INFERRED,
    "memory": Trust.MODEL_INFERRED,
    "persona": Trust.MODEL_INFERRED,
    "inference": Trust.MODEL_INFERRED,
    "note": Trust.USER_AUTHORED,
    "user": Trust.USER_AUTHORED,
    "chat": Trust.USER_AUTHORED,
    "config": Trust.SYSTEM_CONFIG,
    "workspace": Trust.SYSTEM_CONFIG,
    "temporal": Trust.SYSTEM_CONFIG,
    "system": Trust.SYSTEM_CONFIG,
}


def trust_of(source: str) -> Trust:
    """The tier of a ``source``: a tier name, or a content key ``kind:rest``.

    Exact tier names map to themselves; content keys map by kind (case-sensitive,
    as written by the application); anything else, including look-alikes such as
    ``System-Config`` or ``system-config `` and unknown kinds, is ``EXTERNAL``.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be str, got {type(source).__name__}")
    if source in TIER_BY_NAME:
        return TIER_BY_NAME[source]
    kind, sep, rest = source.partition(":")
    if sep and rest and kind in TIER_BY_KIND:
        return TIER_BY_KIND[kind]
    return Trust.EXTERNAL


#: ASCII punctuation and blanks a skeleton keeps at its ends (``skeleton`` folds letters, digits and look-alikes).
_AROUND = "".join(chr(c) for c in range(0x20, 0x7F) if not chr(c).isalnum())


@lru_cache(maxsize=1)
def _skeletons() -> tuple[dict[str, Trust], dict[str, Trust]]:
    """The model's-eye skeletons of the tier names and of the content-key kinds, with their tiers."""
    return {skeleton(k): t for k, t in TIER_BY_NAME.items()}, {skeleton(k): t for k, t in TIER_BY_KIND.items()}


def read_tier(source: str) -> Trust:
    """The highest tier a reader may take ``source`` for: :func:`trust_of`, or the tier whose name (or
    a content key of whose kind) ``source`` reads as to the model's eye (its skeleton: case, look-alikes,
    separators and invisible characters folded). ``trust_of`` is exact by design; this is what a model
    sees: ``System-Config``, ``system-config\u200b`` and ``\u0455ystem-config`` read as ``system-config``."""
    names, kinds = _skeletons()
    # Punctuation around a tier name changes nothing a reader sees: ``(system-config)``, ``system-config:``.
    skel = skeleton(source).strip(_AROUND)
    kind, sep, rest = skel.partition(":")
    return max(
        trust_of(source),
        _tier_named_first(skel, names),
        kinds.get(kind, Trust.EXTERNAL) if sep and rest else Trust.EXTERNAL,
        _tier_read(source),
    )


@lru_cache(maxsize=1)
def _tier_names() -> tuple[Names, dict[str, Trust]]:
    """The tier names as the eye's reserved names (no token, no bar), and each one's tier by skeleton."""
    tiers = {skeleton(k): t for k, t in TIER_BY_NAME.items()}
    return Names(tuple(sorted(tiers)), (), pipes=False, spelled=tuple(sorted(TIER_BY_NAME))), tiers


def _tier_read(source: str) -> Trust:
    """The tier the eye reads ``source`` as when it is read as a tag name: the envelope name's rules
    apply to a tier name too, a symbol standing in for a letter (``system-c°nfig``) and a letter with no
    fitting reading mixed with ASCII (``system-coпfig``), which the skeleton alone does not read
    (red-team find of stop 49)."""
    names, tiers = _tier_names()
    # Up to a colon: the eye reads past a namespace prefix (``ns:name``), and ``web:system-config`` is a
    # content key of kind ``web`` (the skeleton rule above reads it as written).
    head = source.partition(":")[0]
    # From its first letter, and from a stand-in before it: punctuation stops no reader
    # (``(system-c°nfig)``, ``°(system-c°nfig)``, ``°ystem-config``).
    letter = next((k for k, c in enumerate(head) if reads_as_letter(c)), len(head))
    stand = next((k for k, c in enumerate(head[:letter]) if is_stand_in(c)), letter)
    read = [Trust.EXTERNAL]
    for first in sorted({stand, letter}):
        reading = read_after("<" + head[first:], 1, names)
        if reading.kind == "reserved":
            read.append(tiers.get(reading.name, Trust.EXTERNAL))
    return max(read)


def _tier_named_first(skel: str, names: dict[str, Trust]) -> Trust:
    """The highest tier whose name the skeleton starts with: the name itself, or the name with
    anything after it (``system-config (verified)``, ``system-config;x``, ``user-authored notes``
    read as that tier with a remark; red-team find of stop 43). The skeleton drops blanks and
    separators, so where a word ends is not known: fail closed, a longer word counts too
    (``system-configuration guide`` is refused; SECURITY.md names the price)."""
    return max((tier for name, tier in names.items() if skel.startswith(name)), default=Trust.EXTERNAL)


def passes_for_higher(source: str, *, own: str | None = None) -> Trust | None:
    """The tier ``source`` passes for when a reader takes it for one above its own, ``trust_of(own)``
    (``own``: the source as given, when ``source`` is what compose renders of it; ``None`` when it does
    not pass for a higher one): compose refuses such a source and verify reports it, whatever
    ``strict_provenance`` is (red-team finds of stop 43: ``system-config\u200b`` rendered a provenance
    that reads as the top tier, and ``system-config`` + a TAG character rendered exactly it)."""
    tier = read_tier(source)
    return tier if tier > trust_of(source if own is None else own) else None


class PosingMemo:
    """:func:`passes_for_higher` with its answers kept for one compose or one verify: a turn repeats a
    few sources over many entries, and each answer is a reading by the reference reader (tens of
    microseconds). Kept per call, never across calls, so a test that replaces the reader sees it."""

    #: Distinct sources kept; past it every answer is worked out afresh.
    MAX = 4096

    def __init__(self) -> None:
        self._answers: dict[tuple[str, str | None], Trust | None] = {}

    def __call__(self, source: str, *, own: str | None = None) -> Trust | None:
        key = (source, own)
        if key in self._answers:
            return self._answers[key]
        answer = passes_for_higher(source, own=own)
        if len(self._answers) < self.MAX:
            self._answers[key] = answer
        return answer


def is_known_source(source: str) -> bool:
    """Is ``source`` inside the trust tiers: a tier name, or a content key ``kind:rest`` of a kind
    in :data:`TIER_BY_KIND` (exactly as written: ``System-Config`` and ``sytem-config`` are not)?"""
    if source in TIER_BY_NAME:
        return True
    kind, sep, rest = source.partition(":")
    return bool(sep and rest) and kind in TIER_BY_KIND


def unknown_source_message(source: str) -> str:
    """Why ``source`` is refused under ``strict_provenance``, with the nearest tier or content key.

    A known kind without the part after the colon (``web``, ``web:``) is told to write a content
    key (``web:...``); a near miss of a tier name gets the tier (``sytem-config``: ``system-config``);
    a near miss of a kind gets the content key with that kind (``webb:x``: ``web:x``). The hint is
    never the refused source itself.
    """
    import difflib

    shown = source if len(source) <= 60 else source[:60] + "..."
    kind, _, rest = source.partition(":")
    tiers = ", ".join(t.label for t in sorted(Trust, reverse=True))
    hint = ""
    near_tier = difflib.get_close_matches(source, list(TIER_BY_NAME), n=1, cutoff=0.6)
    if kind in TIER_BY_KIND:
        hint = f"; {kind!r} is a known kind: a content key needs what follows the colon, e.g. {kind + ':<where>'!r}"
    elif near_tier:
        hint = f"; did you mean {near_tier[0]!r}?"
    else:
        near_kind = difflib.get_close_matches(kind, list(TIER_BY_KIND), n=1, cutoff=0.6)
        if near_kind:
            suggestion = f"{near_kind[0]}:{rest or '<where>'}"
            hint = f"; did you mean {suggestion if len(suggestion) <= 60 else suggestion[:60] + '...'!r}?"
    return f"{shown!r} is not a trust tier ({tiers}) or a content key 'kind:rest' of a known kind (strict_provenance){hint}"
