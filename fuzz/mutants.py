"""Deliberately weakened components: the negative controls of the harnesses.

A harness whose mutant survives a bounded run is broken, not green. ``fuzz/ci.sh``
runs every harness against its mutant first and requires a non-zero exit.

Select one with ``--mutant NAME`` or ``ENVELOCK_FUZZ_MUTANT=NAME``. Each mutant
monkeypatches envelock *in this process only*; nothing in ``src/`` changes.
Harness oracles use the real components captured in ``_common.py`` before a
mutant is applied.

| name | harness | the planted weakness |
|---|---|---|
| ``one-regex`` | compose | the original TypeScript defence: one case-insensitive regex for ``</retrieved_content\\s*>`` |
| ``case-sensitive`` | defang | a model's-eye matcher that compares names case-sensitively (no skeleton) |
| ``skip-canonical`` | verify | a verifier that skips the canonical-body check |
| ``nesting-off-by-one`` | nesting | the depth check allows ``max_depth + 1`` |
| ``forget-bang`` | readers | a markup defang that forgets ``<!`` (comments, CDATA, doctype) |
| ``no-lookalikes`` | scan | a scanner that only knows ASCII ``<`` and ``/`` |
| ``reference-forgets-capital-i`` | native | the Python reference loses the readings of ``I`` (the native core keeps them) |
| ``datamark-no-doubling`` | spotlight | a datamark that writes a literal marker as itself instead of doubling it |
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable

_MUTANTS: dict[str, Callable[[], None]] = {}

#: The harness each mutant is the negative control of.
HARNESS = {
    "one-regex": "compose",
    "case-sensitive": "defang",
    "skip-canonical": "verify",
    "nesting-off-by-one": "nesting",
    "forget-bang": "readers",
    "no-lookalikes": "scan",
    "reference-forgets-capital-i": "native",
    "blob-sift-one-shift": "native",
    "plan-without-angle": "native",
    "datamark-no-doubling": "spotlight",
}


def _mutant(name: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    def deco(fn: Callable[[], None]) -> Callable[[], None]:
        _MUTANTS[name] = fn
        return fn

    return deco


def _mod(name: str):
    return sys.modules[name]


@_mutant("one-regex")
def one_regex() -> None:
    """compose: the seed's only defence, ``/<\\/retrieved_content\\s*>/gi`` -> ``<\\/retrieved_content>``."""

    def weak_defang(text: str) -> str:
        return re.sub(r"</retrieved_content\s*>", r"<\\/retrieved_content>", text, flags=re.I)

    # compose's attribute defang (``escape.defang_attribute``, since stop 49 judged with the ``">``
    # that follows a value; the name compose calls it by is what the mutant replaces).
    _mod("envelock.envelope.compose").defang_attribute = weak_defang


@_mutant("case-sensitive")
def case_sensitive() -> None:
    """defang: a matcher that skips ASCII blanks and ``/`` and compares names case-sensitively."""
    from envelock.eye.tokens import RESERVED_NAMES

    def weak_dangerous_after(text: str, pos: int, names: object) -> bool:
        i = pos
        while i < len(text) and text[i] in " \t\r\n/":
            i += 1
        return text.startswith(RESERVED_NAMES, i) or text.startswith("|", i)

    _mod("envelock.eye.reference").dangerous_after = weak_dangerous_after
    _mod("envelock.eye.backend")._impl = _mod("envelock.eye.reference")  # the fast path's regexes would mask it


@_mutant("skip-canonical")
def skip_canonical() -> None:
    """verify: the body is undefanged but never checked to be in canonical defanged form."""
    parse = _mod("envelock.envelope.parse")
    undefang = _mod("envelock.eye.escape").undefang_body

    def weak_body(scan: object, start: int, end: int, path: tuple[int, ...], spot: object = None) -> str:
        return undefang(scan.text[start:end], level=scan.level)  # type: ignore[attr-defined]

    parse._body = weak_body


@_mutant("nesting-off-by-one")
def nesting_off_by_one() -> None:
    """nesting: ``depth > max_depth + 1`` instead of ``depth > max_depth`` in the composer's check."""
    nesting = _mod("envelock.envelope.nesting")
    real = nesting.check_nested

    def weak_check_nested(body, *, index, level, reserved, nesting, max_depth, **rest):
        return real(body, index=index, level=level, reserved=reserved, nesting=nesting, max_depth=max_depth + 1, **rest)

    nesting.check_nested = weak_check_nested
    _mod("envelock.envelope.compose").check_nested = weak_check_nested


@_mutant("forget-bang")
def forget_bang() -> None:
    """readers: the markup defang escapes ``<`` + letter, ``/``, ``?`` but forgets ``!``."""
    defang_mod = _mod("envelock.eye.reference")
    _mod("envelock.eye.backend")._impl = defang_mod  # the fast path's regexes would mask it
    is_ignorable = _mod("envelock.eye.reader").is_ignorable

    def weak_markup_after(text: str, pos: int) -> bool:
        i = pos
        while i < len(text):
            ch = text[i]
            if ch.isspace() or is_ignorable(ch):
                i += 1
                continue
            return ch.isalpha() or ch in "/?"
        return False

    defang_mod.markup_after = weak_markup_after


@_mutant("no-lookalikes")
def no_lookalikes() -> None:
    """scan: a scanner that only matches ASCII ``<``/``</`` + a reserved name (case-insensitive)."""
    import envelock

    scan_mod = sys.modules.get("envelock.scan")
    real = getattr(envelock, "scan_text", None) or getattr(scan_mod, "scan_text", None)
    if real is None:
        raise SystemExit("mutant no-lookalikes: envelock.scan_text does not exist yet")
    pattern = re.compile(r"<\s*/?\s*(?:retrieved_content|external_content)", re.I)

    def weak_scan_text(text: str, *args: object, **kwargs: object) -> list[object]:
        found = real(text, *args, **kwargs)
        keep = {m.start() for m in pattern.finditer(text)}
        return [f for f in found if _finding_start(f) in keep]

    envelock.scan_text = weak_scan_text
    if scan_mod is not None:
        scan_mod.scan_text = weak_scan_text


@_mutant("reference-forgets-capital-i")
def reference_forgets_capital_i() -> None:
    """native: the reference's readings table loses ``I`` (it reads as itself), so the two sides differ."""
    me = _mod("envelock.eye.reader")
    me._READ = {c: r for c, r in me._READ.items() if c != "I"}
    me.names_for.cache_clear()


@_mutant("blob-sift-one-shift")
def blob_sift_one_shift() -> None:
    """native: the scanner's native blob sift reads only the unshifted decoding of a base64 run, so a
    tag at another shift is dropped before the blobs pass sees it (the scan differential differs)."""
    import base64

    backend = _mod("envelock.eye.backend")
    encoded = _mod("envelock.scan.encoded")
    real = backend.native_blob_runs

    def weak_blob_runs(text: str, triggers: tuple[bytes, ...], b64_min: int, hex_min: int) -> list[tuple[int, int]] | None:
        if real(text, triggers, b64_min, hex_min) is None:
            return None
        keep = []
        for m in encoded._B64_RE.finditer(text):
            body = m.group().rstrip("=")
            body = body[: len(body) - len(body) % 4].replace("-", "+").replace("_", "/")
            if any(t in base64.b64decode(body) for t in triggers):
                keep.append(m.span())
        return keep

    backend.native_blob_runs = weak_blob_runs


@_mutant("plan-without-angle")
def plan_without_angle() -> None:
    """native: the native plan of the encoded pass (``encoded._plan_inputs``) is handed the start
    characters without ``<``, so ``_native.escape_plan`` reads ``\\x3c``, ``=3C``, ``%3c`` as starting
    nothing (the scan differential differs: the fast implementation's reference plan reads them)."""
    encoded = _mod("envelock.scan.encoded")
    real = encoded._plan_inputs

    def deaf(starts: frozenset[str]) -> tuple[str, str, str, str, list[tuple[str, str]]] | None:
        got = real(starts)
        return None if got is None else (got[0].replace("<", ""), *got[1:])

    encoded._plan_inputs = deaf


@_mutant("datamark-no-doubling")
def datamark_no_doubling() -> None:
    """spotlight: datamark marks blanks but leaves a literal marker single (``M`` is not written ``MM``)."""
    sp = _mod("envelock.envelope.spotlight")
    real_transform = sp.transform

    def weak_datamark(text: str, marker: str) -> str:
        if not text:
            return text
        single, _, run = sp._marker_res(marker)
        return run.sub(marker + r"\g<0>", single.sub(marker, text))  # no doubling of a literal marker

    def weak_transform(text, spot):
        if spot.mode == "datamark":
            return weak_datamark(text, spot.marker)
        return real_transform(text, spot)

    sp.datamark = weak_datamark
    sp.transform = weak_transform  # the one entry point (the native core's transform is behind it)


def _finding_start(f: object) -> int | None:
    for attr in ("offset", "start"):
        v = getattr(f, attr, None)
        if isinstance(v, int):
            return v
    return None


def apply(name: str) -> None:
    try:
        fn = _MUTANTS[name]
    except KeyError:
        raise SystemExit(f"unknown mutant {name!r}; known: {', '.join(sorted(_MUTANTS))}") from None
    fn()
