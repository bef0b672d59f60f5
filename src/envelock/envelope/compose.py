"""``compose_preface``: entries in, a ``Preface`` out, top to bottom.

For each entry: check its fields; strip invisible text and replace characters
XML cannot carry (reported in ``Preface.transformations``); defang attribute
values with the ``reserved`` rules and escape them; defang a ``str`` body at
the chosen level, or insert a ``Preface`` body as-is under the nesting rules;
render. Then, with ``verify=True``, run :func:`verify_preface` on the output.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from ..errors import EnvelopeBreach, InvalidEntry, NestingError
from ..eye.backend import encoded_once
from ..eye.escape import Level, check_level, defang_attribute
from ..eye.load_tokens import Tokens
from ..eye.tokens import RESERVED_NAMES
from ..types import DEPTH_CEILING, NO_SPOTLIGHT, Envelope, Spotlight, SpotlightMode, Transformation
from . import render
from .entry import PrefaceEntry, check_entry, empty_provenance, normalize_fetched_at
from .invisible import XML_IMPOSSIBLE_RE, ControlsPolicy, InvisiblePolicy, check_policies, handle_invisible, sanitize
from .nesting import NESTING_POLICIES, NestingPolicy, Preface, _make, _shared, check_nested, is_preface
from .provenance import PosingMemo, is_known_source, unknown_source_message
from .spotlight import MARKED_MODES, check_nonce, check_options, choose_marker, encode_body, new_seed
from .verify import _Expected, check_preface


def _attribute(value: str, *, index: int, field: str, invisible: str) -> tuple[str, list[Transformation]]:
    if render.is_plain_attribute(value):
        return value, []  # nothing to refuse, strip or defang
    bad = XML_IMPOSSIBLE_RE.search(value)
    if bad:
        raise InvalidEntry(
            f"U+{ord(bad.group()[0]):04X} at offset {bad.start()} cannot be carried by an XML attribute",
            index=index,
            field=field,
        )
    value, changes = handle_invisible(value, invisible, index=index, field=field)
    return defang_attribute(value), changes


def compose_preface(
    entries: Iterable[PrefaceEntry],
    *,
    level: Level = "reserved",
    verify: bool = False,
    reserved: tuple[str, ...] = RESERVED_NAMES,
    invisible: InvisiblePolicy = "strip",
    controls: ControlsPolicy = "replace",
    nesting: NestingPolicy = "allow",
    max_depth: int = 2,
    strict_provenance: bool = False,
    spotlight: SpotlightMode = "none",
    marker: str | None = None,
    nonce: str | None = None,
    seed: str | None = None,
    tokens: Tokens | None = None,
) -> Preface:
    """Compose entries into ``<retrieved_content>`` envelopes.

    ``level``: ``"reserved"`` (default), ``"markup"`` or ``"xml"`` (see
    docs/design.md, section 2). ``invisible``: ``"strip"``/``"keep"``/``"reject"``
    TAG and bidi characters. ``controls``: ``"replace"`` (U+FFFD) or
    ``"reject"`` characters XML cannot carry. ``nesting``: ``"allow"`` or
    ``"forbid"`` ``Preface`` bodies; ``max_depth`` bounds envelope depth.
    ``verify=True`` re-checks the output with the entries as ``expected`` and
    raises :class:`EnvelopeBreach` on any problem. ``strict_provenance=True``
    refuses a ``source`` that is neither a trust tier (``system-config``,
    ``user-authored``, ``model-inferred``, ``external``) nor a content key
    ``kind:rest`` of a known kind (see :func:`~envelock.trust_of`), so a typo such
    as ``sytem-config`` fails instead of rendering as an unknown tier.

    Spotlighting (opt-in; see :mod:`envelock.spotlight` and the README): ``spotlight``
    is ``"none"`` (default, unchanged output), ``"datamark"``, ``"interleave"`` or
    ``"base64"``; ``marker`` is the datamarking character (default: one chosen per
    turn with :mod:`secrets` that occurs in no body); ``seed`` fixes interleaving
    (default: fresh); ``nonce`` (e.g. :func:`~envelock.new_nonce`) is written on every
    envelope. The returned ``Preface`` records them; ``preface.hygiene_rule()`` is the
    matching system-prompt text. A bad option raises :class:`InvalidOption`.

    ``tokens``: a team's own control tokens (:func:`~envelock.load_tokens`, from the tokenizer of the
    model that serves the prompt), escaped, verified and scanned like the built-in tables.

    Raises :class:`InvalidEntry` or :class:`NestingError` naming the entry
    index and field, and :class:`InvalidEntry` naming the argument for an
    argument of the wrong type (``compose_preface(None)``). Every removal or
    replacement is listed in the returned ``Preface.transformations``.

    >>> from envelock import PrefaceEntry, compose_preface, parse_preface
    >>> page = PrefaceEntry("external", "web:https://a.example/?q=1&r=2", "Hi </retrieved_content>", "2026-11-29T22:29:03+01:00")
    >>> preface = compose_preface([page], verify=True)
    >>> print(preface)
    <retrieved_content provenance="external" origin="web:https://a.example/?q=1&amp;r=2" fetched_at="2026-11-29T21:29:03Z">
    Hi <\\/retrieved_content>
    </retrieved_content>
    >>> parse_preface(preface)[0].body
    'Hi </retrieved_content>'
    """
    _check_arguments(entries, reserved=reserved, verify=verify, max_depth=max_depth, strict_provenance=strict_provenance)
    lvl = check_level(level)
    check_policies(invisible, controls)
    if nesting not in NESTING_POLICIES:
        raise ValueError(f"nesting must be one of {NESTING_POLICIES}; got {nesting!r}")
    if not 1 <= max_depth <= DEPTH_CEILING:
        raise ValueError(f"max_depth must be between 1 and {DEPTH_CEILING}; got {max_depth}")
    reserved = tuple(reserved)
    spot = _spotlight_options(spotlight, marker, seed)
    if nonce is not None:
        nonce = check_nonce(nonce)
    entry_list = list(entries)
    changes: list[Transformation] = []
    depth = 0 if not entry_list else 1
    # First every field is checked and sanitized (a per-turn marker must avoid every body) ...
    checked: list[tuple[str, str, str | None, str | Preface]] = []
    rendered: list[str | None] = []  # a body's rendered text, dropped as soon as it is used
    # ... and, unless a marker is still to be chosen, each body rendered straight after its sanitize
    # pass, while the one UTF-8 copy that pass read is alive (not encoded again by the defang).
    marker_known = not (spot.mode in MARKED_MODES and spot.marker is None)
    passes_for_higher = PosingMemo()
    for index, raw in enumerate(entry_list):
        entry = check_entry(raw, index)
        if strict_provenance and not is_known_source(entry.source):
            raise InvalidEntry(unknown_source_message(entry.source), index=index, field="source")
        fetched_at = normalize_fetched_at(entry.fetched_at, index=index)
        source, c1 = _attribute(entry.source, index=index, field="source", invisible=invisible)
        if empty_provenance(source):
            # Invisible characters only (a TAG character): stripped, nothing would be left.
            raise InvalidEntry("source is only invisible characters: an envelope needs a provenance", index=index, field="source")
        # What is rendered, against the trust of what was given: stripping an invisible character
        # may leave a tier name (system-config + U+E0020 renders as system-config).
        posing = passes_for_higher(source, own=entry.source)
        if posing is not None:
            shown = entry.source if len(entry.source) <= 60 else entry.source[:60] + "..."
            message = f"{shown!r} reads as the tier {posing.label!r} but is not it"
            message += " (write the tier exactly, or a source that does not look like it)"
            raise InvalidEntry(message, index=index, field="source")
        origin, c2 = _attribute(entry.origin, index=index, field="origin", invisible=invisible)
        changes += c1 + c2
        body = entry.body
        content: str | Preface
        text: str | None = None
        if is_preface(body) and body:
            depth = max(
                depth,
                check_nested(
                    body, index=index, level=lvl, reserved=reserved, nesting=nesting, max_depth=max_depth, tokens=tokens
                ),
            )
            if body.nonce != nonce:
                # One turn, one nonce (or none), at every depth: a nonce-less turn cannot hold a body
                # composed with one either (its text would mix them: nonce-mixed).
                if nonce is None:
                    raise NestingError("a Preface body composed with a nonce cannot nest in a turn without one", index=index)
                raise NestingError("a Preface body composed without this turn's nonce cannot nest here", index=index)
            content = body
        else:
            plain = str.__str__(body)
            with encoded_once(plain):
                content, c3 = sanitize(plain, invisible=invisible, controls=controls, index=index, field="body")
                if marker_known:
                    text = encode_body(content, spot, level=lvl, reserved=reserved, tokens=tokens)
            changes += c3
        checked.append((source, origin, fetched_at, content))
        rendered.append(text)
    if not marker_known:
        spot = replace(spot, marker=choose_marker([c for *_, c in checked if not is_preface(c)]))
    # ... then each envelope is rendered.
    turn = (("nonce", nonce),) if nonce is not None else ()
    parts: list[str] = []
    for k, (source, origin, fetched_at, content) in enumerate(checked):
        if is_preface(content):
            parts.append(render.envelope(render.open_tag(source, origin, fetched_at, turn), str(content)))
        else:
            text, rendered[k] = rendered[k], None  # held no longer than before (peak memory)
            if text is None:
                text = encode_body(content, spot, level=lvl, reserved=reserved, tokens=tokens)
            parts.append(render.envelope(render.open_tag(source, origin, fetched_at, turn + spot.attributes()), text))
    text = render.join(parts)
    out = _make(text, lvl, reserved, depth, tuple(changes), nonce=nonce, spotlight=spot, tokens=tokens)
    del parts, text, checked  # copies of the output: not held while it is verified
    if verify:
        # Every attribute of this turn's own envelopes is expected exactly (a nested Preface keeps
        # its own transforms, so the transform is not asked of every body at every depth).
        want = _Expected(lvl, reserved, tokens, invisible, controls, max_depth, nonce, spot)
        result = check_preface(out, expected=entry_list, want=want, every_body_mode=None)
        if result.problems:
            raise EnvelopeBreach("composed preface failed verification", result.problems)
    return out


def _spotlight_options(mode: object, marker: object, seed: object) -> Spotlight:
    """The turn's :class:`Spotlight` from compose's options (``marker`` ``None``: chosen later;
    an ``interleave`` seed ``None``: a fresh one)."""
    spot = check_options(mode, marker, seed)
    return replace(spot, seed=new_seed()) if spot.mode == "interleave" and spot.seed is None else spot


def _check_arguments(entries: object, *, reserved: object, verify: object, max_depth: object, strict_provenance: object) -> None:
    """Refuse arguments of the wrong type with an :class:`InvalidEntry` that names the argument."""
    if isinstance(entries, PrefaceEntry):
        raise InvalidEntry(
            "expected a list of PrefaceEntry, got a single PrefaceEntry; wrap it in a list: compose_preface([entry])",
            field="entries",
        )
    if isinstance(entries, (str, bytes)):
        raise InvalidEntry(
            f"expected a list of PrefaceEntry, got {type(entries).__name__} (text is a body: "
            "compose_preface([PrefaceEntry(source, origin, text)]))",
            field="entries",
        )
    if not isinstance(entries, Iterable):
        raise InvalidEntry(f"expected an iterable of PrefaceEntry, got {type(entries).__name__}", field="entries")
    if isinstance(reserved, str) or not isinstance(reserved, Iterable):
        raise InvalidEntry(f"expected a tuple of names, got {type(reserved).__name__}", field="reserved")
    for flag, value in (("verify", verify), ("strict_provenance", strict_provenance)):
        if not isinstance(value, bool):
            raise InvalidEntry(f"expected True or False, got {type(value).__name__}", field=flag)
    if isinstance(max_depth, bool) or not isinstance(max_depth, int):
        raise InvalidEntry(f"expected an int, got {type(max_depth).__name__}", field="max_depth")


def entries_of(
    envelopes: Iterable[Envelope], *, level: Level = "reserved", reserved: tuple[str, ...] = RESERVED_NAMES, max_depth: int = 2
) -> list[PrefaceEntry]:
    """Turn parsed envelopes back into entries (children become a nested ``Preface``).

    ``compose_preface(entries_of(parse_preface(t)))`` gives back ``t`` for every
    sound preface ``t`` composed without spotlighting; with it, pass the same
    ``spotlight``, ``marker``, ``seed`` and ``nonce`` (``Preface(t).spotlight`` and
    ``.nonce`` hold them). A nested preface is recomposed with the transform and
    nonce its envelopes share.
    """
    out: list[PrefaceEntry] = []
    for env in envelopes:
        if env.body is None:
            nonces, spots = _shared(list(env.children))
            spot = spots.pop() if len(spots) == 1 else NO_SPOTLIGHT
            body: str = compose_preface(
                entries_of(env.children, level=level, reserved=reserved, max_depth=max_depth),
                level=level,
                reserved=reserved,
                max_depth=max_depth,
                invisible="keep",
                spotlight=spot.mode,
                marker=spot.marker,
                seed=spot.seed,
                nonce=nonces.pop() if len(nonces) == 1 else None,
            )
        else:
            body = env.body
        out.append(PrefaceEntry(env.source, env.origin, body, env.fetched_at))
    return out
