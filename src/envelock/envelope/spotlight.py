"""Spotlighting inside sound envelopes: datamark, interleave and base64 bodies, and the turn's nonce.

Opt-in transforms of a body that tell a model, on every word, that the text is retrieved data
(Hines et al., "Defending Against Indirect Prompt Injection Attacks With Spotlighting", 2024,
arXiv:2403.14720). ``spotlight="none"`` (the default) changes nothing, byte for byte.

A body is built in two layers; compose goes down, parse comes back up, and each step is an exact
inverse of the other, so ``parse_preface(compose_preface(x)) == x`` in every mode:

1. ``defang_body(text, level)``: the view a model has once it *undoes* the transform in its head
   (reads the markers as blanks, decodes the base64) holds no envelope tag or control token;
2. the transform (:func:`datamark`, :func:`interleave`, :func:`to_base64`) of that text.

What the model actually reads is the transformed text, and it holds no tag either: a marker
(:func:`marker_problem`) is a visible symbol the model's eye neither reads past nor takes for a
letter, a colon or a structural character, so replacing a blank with it, writing it before a
blank, doubling it or inserting it between two letters can only *end* a reading, never start or
lengthen one; every opener the first layer escaped keeps its ``\\``. The base64 alphabet holds no
opener at all. ``verify_preface`` also reads the transformed text with the model's eye, each
marker as what it stands for (:func:`untransform`), and reports any opener a reader would take for
a tag (``undefanged-tag``).

Marked forms, with ``M`` the marker (one visible code point; see :func:`check_marker`).
"Whitespace" is every blank between words of the generated ``BLANK_RANGES``: Python's
whitespace, Zs/Zl/Zp, and what renders as a blank or as nothing (U+200B, U+2060, U+FEFF,
U+2800 BRAILLE PATTERN BLANK, the Hangul fillers, gap fillers), so that words spaced with a
look-alike blank are marked too:

* ``datamark``: a single space between two non-blanks becomes ``M``; every other run of
  whitespace ``W`` becomes ``M`` + ``W`` (line breaks stay where they were); a literal ``M``
  in the text is written ``MM``. Reading back: ``MM`` is ``M``, ``M`` before whitespace is
  nothing, any other ``M`` is a space. (A single space before a literal ``M`` is written
  ``M`` + space, so the three never collide.)
* ``interleave``: every run of whitespace ``W`` becomes ``M`` + ``W``, a literal ``M`` is
  ``MM``, and ``M`` is inserted between two letters of a script written without spaces
  (``INTERLEAVE_RANGES``: Han, kana, Thai, Lao, Khmer, Myanmar...) with probability
  :data:`INTERLEAVE_RATE`, drawn from ``random.Random(int(seed, 16))`` (its ``random()``
  sequence is stable across Python versions). Reading back: ``MM`` is ``M``, any other ``M``
  is nothing.
* ``base64``: the UTF-8 bytes, RFC 4648 standard alphabet with padding, in lines of 76
  characters (RFC 2045). The alphabet holds no opener, so layer 4 changes nothing.

The marker and the seed travel in the envelope's open tag (``transform``, ``marker``, ``seed``
attributes), so every envelope says how to read it back; the nonce is the ``nonce`` attribute.
"""

from __future__ import annotations

import base64
import binascii
import random
import re
import secrets
import unicodedata
from functools import lru_cache

from ..errors import InvalidOption
from ..eye import backend
from ..eye.charsets import char_class
from ..eye.escape import Level, defang_body, undefang_body
from ..eye.load_tokens import Tokens
from ..eye.tokens import RESERVED_NAMES
from ..eye.unicode_tables import (
    BANG_CHARACTERS,
    BLANK_RANGES,
    CONFUSABLE_TO_ASCII,
    GT_LOOKALIKES,
    INTERLEAVE_RANGES,
    LBRACKET_LOOKALIKES,
    LT_LOOKALIKES,
    MARKER_ALLOWED_RANGES,
    MARKER_CANDIDATES,
    MARKER_REFUSED_ASCII,
    PIPE_LOOKALIKES,
    QUOTE_LOOKALIKES,
    RBRACKET_LOOKALIKES,
    READINGS,
    SLASH_LOOKALIKES,
)
from ..types import Spotlight, SpotlightMode

SPOTLIGHT_MODES: tuple[SpotlightMode, ...] = ("none", "datamark", "interleave", "base64")
#: The modes that use a marker.
MARKED_MODES: tuple[SpotlightMode, ...] = ("datamark", "interleave")
#: The probability that ``interleave`` inserts a marker at one candidate boundary.
INTERLEAVE_RATE = 0.25
#: Base64 line length (RFC 2045).
BASE64_LINE = 76
#: A nonce: 8 to 128 characters of ``[A-Za-z0-9_-]`` (``new_nonce()`` gives 24 hex digits, 96 bits).
NONCE_RE = re.compile(r"[A-Za-z0-9_-]{8,128}")
#: An interleave seed: 16 lowercase hex digits (``new_seed()``).
SEED_RE = re.compile(r"[0-9a-f]{16}")

#: Blanks between words (generated ``BLANK_RANGES``, the ``blanks`` rule): whitespace, and every
#: character the model's eye reads past that does not attach to a neighbour (U+2581, U+2423, middle
#: dots, bullets, word dividers, U+200B...). The turn's marker is never one: :func:`_blank_class`.
_BLANK_RANGES = tuple(BLANK_RANGES)
_INTERLEAVE_RUN_RE = re.compile(f"[{char_class(INTERLEAVE_RANGES)}]{{2,}}")
_INTERLEAVE_CLASS_RE = re.compile(f"[{char_class(INTERLEAVE_RANGES)}]")
_MARKER_ALLOWED_RE = re.compile(f"[{char_class(MARKER_ALLOWED_RANGES)}]")
_EYE_ASCII = frozenset(MARKER_REFUSED_ASCII)
_STRUCTURAL = frozenset(
    chr(cp)
    for table in (LT_LOOKALIKES, GT_LOOKALIKES, SLASH_LOOKALIKES, PIPE_LOOKALIKES, LBRACKET_LOOKALIKES, RBRACKET_LOOKALIKES)
    for cp in table
) | frozenset(chr(cp) for cp in (*QUOTE_LOOKALIKES, *BANG_CHARACTERS))  # '!'/'?' look-alikes are read past after an opener


def check_mode(mode: object) -> SpotlightMode:
    for m in SPOTLIGHT_MODES:
        if mode == m and isinstance(mode, str):
            return m
    raise InvalidOption(f"must be one of {', '.join(SPOTLIGHT_MODES)}; got {mode!r}", option="spotlight")


def marker_problem(marker: object) -> str | None:
    """Why ``marker`` cannot be a datamarking marker, or ``None`` when it can.

    A marker is one non-ASCII code point a reader sees and reads as nothing else: general
    category P*, S* or Lm (``ˆ`` U+02C6, the paper's marker, is Lm); not a blank (the narrow
    blank set ``BLANK_RANGES``: what a reader takes for a space between words); not taken for a
    letter or digit (``READINGS``); not a look-alike of a structural character (the ``LT``/``GT``/``SLASH``/
    ``PIPE``/bracket/quote tables, or ``BANG_CHARACTERS``); neither its NFKC form nor its UTS #39
    prototype holds an ASCII letter, digit or one of ``<>&"'\\/|[]!?:;#=```; not a letter
    interleaving writes markers between (``INTERLEAVE_RANGES``).

    The verdict is the generated ``MARKER_ALLOWED_RANGES`` (that rule over Unicode 17 data), so every
    interpreter accepts the same markers and parses the same prefaces whatever the Unicode version
    of its own :mod:`unicodedata`, which only words the explanation.
    """
    if not isinstance(marker, str):
        return f"expected a one-character str, got {type(marker).__name__}"
    if len(marker) != 1:
        return f"expected exactly one code point, got {len(marker)}: {marker!r}"
    if _MARKER_ALLOWED_RE.match(marker):
        return None
    return _why_not_a_marker(marker)


def _why_not_a_marker(marker: str) -> str:
    """The first clause of the ``marker_allowed`` rule that ``marker`` breaks, in words."""
    cp = ord(marker)
    if marker.isascii():
        return f"{marker!r} is ASCII: a marker is a non-ASCII symbol (ASCII punctuation is everywhere in text and code)"
    if unicodedata.category(marker)[0] in "ZCM" or unicodedata.category(marker) in ("Pd", "Pc"):
        return f"U+{cp:04X} renders as nothing, a blank, a mark or a separator: a marker must be a visible symbol"
    if marker in _STRUCTURAL:
        return f"U+{cp:04X} {marker!r} is (or looks like) a structural character of the format"
    if cp in READINGS:
        return f"U+{cp:04X} may be read as {READINGS[cp][0]!r}: a marker must not extend a name"
    if _INTERLEAVE_CLASS_RE.match(marker):
        return f"U+{cp:04X} is a letter interleaving writes markers between"
    forms = unicodedata.normalize("NFKC", marker) + CONFUSABLE_TO_ASCII.get(cp, "")
    if any(c in _EYE_ASCII for c in forms):
        return f"U+{cp:04X} folds or looks like ASCII {forms!r}, which the model's eye reads"
    return (
        f"U+{cp:04X} is not a visible symbol or punctuation of Unicode 17 (categories P*, S*, Lm; "
        "the generated MARKER_ALLOWED_RANGES)"
    )


def options_problem(
    mode: SpotlightMode, marker: str | None, seed: str | None, *, need_marker: bool, need_seed: bool
) -> tuple[str, str] | None:
    """(option, why) when ``mode``, ``marker`` and ``seed`` do not go together, else ``None``: the one
    rule for compose, the policy, :func:`~envelock.hygiene_rule` and the parser of open tags.

    Only the marked modes take a marker, only ``interleave`` a seed. ``need_marker`` /
    ``need_seed`` also require them (a rendered envelope needs both; a hygiene rule the marker),
    where compose may still choose them.
    """
    marked = mode in MARKED_MODES
    if marker is not None and not marked:
        return "marker", f"spotlight={mode!r} takes no marker (only {' and '.join(MARKED_MODES)} do)"
    if seed is not None and mode != "interleave":
        return "seed", f"spotlight={mode!r} takes no seed (only interleave does)"
    if need_marker and marked and marker is None:
        return "marker", f"spotlight={mode!r} needs its marker"
    if need_seed and mode == "interleave" and seed is None:
        return "seed", f"spotlight={mode!r} needs its seed"
    if marker is not None and (why := marker_problem(marker)):
        return "marker", why
    if seed is not None and not SEED_RE.fullmatch(seed):
        return "seed", f"expected 16 lowercase hex digits (see new_seed()); got {seed[:40]!r}"
    return None


def check_options(mode: object, marker: object, seed: object, *, need_marker: bool = False) -> Spotlight:
    """:func:`options_problem` as a :class:`~envelock.InvalidOption`; the checked :class:`Spotlight`."""
    m = check_mode(mode)
    for name, value in (("marker", marker), ("seed", seed)):
        if value is not None and not isinstance(value, str):
            raise InvalidOption(f"expected a str, got {type(value).__name__}", option=name)
    assert marker is None or isinstance(marker, str)
    assert seed is None or isinstance(seed, str)
    problem = options_problem(m, marker, seed, need_marker=need_marker, need_seed=False)
    if problem is not None:
        raise InvalidOption(problem[1], option=problem[0])
    return Spotlight(m, marker, seed)


def check_marker(marker: object) -> str:
    problem = marker_problem(marker)
    if problem is not None:
        raise InvalidOption(problem, option="marker")
    assert isinstance(marker, str)
    return marker


def check_nonce(nonce: object) -> str:
    if not isinstance(nonce, str) or not NONCE_RE.fullmatch(nonce):
        shown = repr(nonce)[:40]
        raise InvalidOption(f"expected 8 to 128 characters of [A-Za-z0-9_-] (see new_nonce()); got {shown}", option="nonce")
    return nonce


def new_nonce() -> str:
    """A fresh per-turn nonce from :mod:`secrets`: 24 hex digits (96 bits)."""
    return secrets.token_hex(12)


def new_seed() -> str:
    """A fresh interleave seed from :mod:`secrets`: 16 hex digits."""
    return secrets.token_hex(8)


def choose_marker(bodies: list[str]) -> str:
    """A marker for one turn: a random ``MARKER_CANDIDATES`` character found in none of ``bodies``.

    Drawn with :mod:`secrets`, so a body cannot be written to contain the marker in advance. If
    every candidate occurs (a hostile turn), one is taken anyway: a literal marker is written
    doubled, so the transform stays injective. Every candidate is an allowed marker on every
    interpreter (the generator checks ``MARKER_CANDIDATES`` against ``MARKER_ALLOWED_RANGES``, and
    :func:`marker_problem` decides by that table, not by the interpreter's ``unicodedata``).
    """
    rng = secrets.SystemRandom()
    for _ in range(16):  # almost always the first draw: a turn holds few of 758 symbols
        c = chr(rng.choice(MARKER_CANDIDATES))
        if not any(c in b for b in bodies):
            return c
    pool = [chr(cp) for cp in MARKER_CANDIDATES]
    rng.shuffle(pool)
    for c in pool:
        if not any(c in b for b in bodies):
            return c
    return pool[0]


# -- the transforms ----------------------------------------------------------------------


def _blank_class(marker: str) -> str:
    """The body of a regex class for the blanks of a turn marked with ``marker`` (every blank but it)."""
    cp = ord(marker)
    ranges: list[tuple[int, int]] = []
    for lo, hi in _BLANK_RANGES:
        if lo <= cp <= hi:
            ranges += [r for r in ((lo, cp - 1), (cp + 1, hi)) if r[0] <= r[1]]
        else:
            ranges.append((lo, hi))
    return char_class(tuple(ranges))


@lru_cache(maxsize=64)
def _marker_res(marker: str) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    m = re.escape(marker)
    blank = _blank_class(marker)
    single = re.compile(f"(?<![{blank}]) (?![{blank}]|{m})")  # a lone space, not before a literal marker
    before_space = re.compile(f"{m}(?=[{blank}])")
    run = re.compile(f"[{blank}]+")
    return single, before_space, run


def datamark(text: str, marker: str) -> str:
    """Mark ``text`` (see the module docstring): a single space -> ``M``, a run ``W`` -> ``M`` + ``W``, ``M`` -> ``MM``."""
    if not text:
        return text
    single, _, run = _marker_res(marker)
    # A marker is never a backslash (check_marker), so it is a literal replacement template.
    out = single.sub(marker, text.replace(marker, marker + marker))
    return run.sub(marker + r"\g<0>", out)


def undatamark(text: str, marker: str) -> str:
    """The inverse of :func:`datamark` on its image (any text decodes; compose checks canonical form)."""
    if marker not in text:
        return text
    _, before_space, _ = _marker_res(marker)
    parts = text.split(marker + marker)  # left to right, as a reader pairs them
    return marker.join(before_space.sub("", p).replace(marker, " ") for p in parts)


def interleave(text: str, marker: str, seed: str) -> str:
    """Mark whitespace (``M`` + ``W``), double ``M``, and insert ``M`` between no-space-script letters."""
    if not text:
        return text
    out = _marker_res(marker)[2].sub(marker + r"\g<0>", text.replace(marker, marker + marker))
    rng = random.Random(int(seed, 16))  # noqa: S311 -- placement, not a secret; reproducible by design
    pieces: list[str] = []
    last = 0
    for run in _INTERLEAVE_RUN_RE.finditer(out):
        s, e = run.span()
        for i in range(s + 1, e):
            if rng.random() < INTERLEAVE_RATE:
                pieces.append(out[last:i])
                pieces.append(marker)
                last = i
    if not pieces:
        return out
    pieces.append(out[last:])
    return "".join(pieces)


def uninterleave(text: str, marker: str) -> str:
    """The inverse of :func:`interleave` on its image: ``MM`` is ``M``, any other ``M`` is nothing."""
    if marker not in text:
        return text
    return marker.join(p.replace(marker, "") for p in text.split(marker + marker))


def untransform_offsets(raw: str, spot: Spotlight) -> list[int]:
    """For each character of ``untransform(raw, spot)`` (a marked mode), its offset in ``raw``: the
    walk :func:`undatamark` and :func:`uninterleave` make, written out (``MM`` pairs left to right;
    a datamark ``M`` before a blank, and any other interleave ``M``, stands for nothing; another
    datamark ``M`` for the space at its own offset). Where verify reports what it read on that text."""
    marker = spot.marker
    assert marker is not None and spot.mode in MARKED_MODES
    blank = _blank_re(marker) if spot.mode == "datamark" else None
    offsets: list[int] = []
    k, n = 0, len(raw)
    while k < n:
        if raw[k] == marker:
            if k + 1 < n and raw[k + 1] == marker:
                offsets.append(k)
                k += 2
                continue
            if blank is not None and not (k + 1 < n and blank.match(raw, k + 1)):
                offsets.append(k)
        else:
            offsets.append(k)
        k += 1
    return offsets


@lru_cache(maxsize=64)
def _blank_re(marker: str) -> re.Pattern[str]:
    return re.compile(f"[{_blank_class(marker)}]")


def to_base64(text: str) -> str:
    """UTF-8, RFC 4648 base64 with padding, lines of 76 characters joined by ``\\n``."""
    data = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return "\n".join(data[i : i + BASE64_LINE] for i in range(0, len(data), BASE64_LINE))


def from_base64(text: str) -> str:
    """The inverse of :func:`to_base64`; ``ValueError`` when ``text`` is not base64 of UTF-8."""
    if not text.isascii():
        raise ValueError("a base64 body holds only ASCII")
    try:
        data = base64.b64decode(text.replace("\n", ""), validate=True)
    except binascii.Error as exc:
        raise ValueError(f"not base64: {exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"base64 of something that is not UTF-8 ({exc.reason} at byte {exc.start})") from None


def transform(text: str, spot: Spotlight) -> str:
    """The transform of ``spot`` (natively when the native core is in use: the functions above are the
    reference, held equal by the differential tests)."""
    if spot.mode == "base64":
        return to_base64(text)
    if spot.mode == "none":
        return text
    assert spot.marker is not None
    if spot.mode == "datamark":
        return backend.native_or("datamark", datamark, text, spot.marker)
    assert spot.seed is not None
    return backend.native_or("interleave", _interleave_seeded, text, spot.marker, int(spot.seed, 16))


def _interleave_seeded(text: str, marker: str, seed: int) -> str:
    """:func:`interleave` with the seed as an integer (the native core's signature)."""
    return interleave(text, marker, f"{seed:016x}")


def untransform(text: str, spot: Spotlight) -> str:
    """The inverse of :func:`transform`; ``ValueError`` for a base64 body that does not decode."""
    if spot.mode == "base64":
        return from_base64(text)
    if spot.mode == "none":
        return text
    assert spot.marker is not None
    if spot.mode == "datamark":
        return backend.native_or("undatamark", undatamark, text, spot.marker)
    return backend.native_or("uninterleave", uninterleave, text, spot.marker)


def encode_body(text: str, spot: Spotlight, *, level: Level, reserved: tuple[str, ...], tokens: Tokens | None = None) -> str:
    """The rendered content of a text body: ``transform(defang_body(text))`` (the layers above)."""
    return transform(defang_body(text, level=level, reserved=reserved, tokens=tokens), spot)


def decode_body(
    raw: str, spot: Spotlight, *, level: Level, reserved: tuple[str, ...] = RESERVED_NAMES, tokens: Tokens | None = None
) -> str:
    """The inverse of :func:`encode_body` on its image; ``ValueError`` when the transform cannot be undone."""
    return undefang_body(untransform(raw, spot), level=level, reserved=reserved, tokens=tokens)
