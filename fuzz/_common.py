"""Shared plumbing for the envelock atheris harnesses.

Every harness is a standalone script::

    python fuzz/fuzz_NAME.py [--mutant NAME] [libFuzzer flags] [corpus dirs]

and also importable (``check(data: bytes)`` is the property; the regression
tests call it directly, without atheris).

Input format (shared by all harnesses, so ``make_seeds.py`` can encode seeds):
``FuzzedDataProvider`` consumes integers from the *end* of the input and bytes
from the *front*. Each harness reads a few header bytes from the end
(``ConsumeIntInRange(0, 255)``), then takes the rest of the input as text:
UTF-8, decoded with ``surrogateescape`` so invalid bytes become lone
surrogates (characters XML cannot carry, which envelock must refuse or
replace). Dictionary tokens are UTF-8, so the libFuzzer dictionary reaches
look-alike and invisible characters directly.

Records and fields inside the text are split on ``\\x1e`` (entries) and
``\\x1f`` (fields); both are C0 controls, so the other C0 controls still reach
envelock as content.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

FUZZ_DIR = Path(__file__).resolve().parent
if str(FUZZ_DIR) not in sys.path:
    sys.path.insert(0, str(FUZZ_DIR))

RS = "\x1e"  # entry separator
US = "\x1f"  # field separator
LEVELS = ("reserved", "markup", "xml")

try:  # atheris is optional for the regression tests (they only call check()).
    import atheris
except ImportError:  # pragma: no cover - atheris missing on this Python
    atheris = None


def instrumented_import() -> None:
    """Import envelock (all submodules) under ``atheris.instrument_imports()``.

    A module imported before this (e.g. by pytest) is not instrumented; that is
    fine for replaying inputs.
    """
    mods = [
        "envelock",
        "envelock.eye.reader",
        "envelock.eye.levels",
        "envelock.eye.reference",
        "envelock.eye.fastpath",
        "envelock.escape",
        "envelock.envelope.invisible",
        "envelock.envelope.entry",
        "envelock.envelope.render",
        "envelock.envelope.spotlight",
        "envelock.envelope.hygiene",
        "envelock.envelope.parse",
        "envelock.envelope.nesting",
        "envelock.envelope.compose",
        "envelock.envelope.verify",
        "envelock.envelope.lxml_readers",
    ]
    optional = ["envelock.scan"]
    import importlib
    import importlib.util

    ctx = atheris.instrument_imports(include=["envelock"]) if atheris is not None else None
    if ctx is not None:
        ctx.__enter__()
    try:
        for m in mods:
            importlib.import_module(m)
        for m in optional:
            if importlib.util.find_spec(m) is not None:
                importlib.import_module(m)
    finally:
        if ctx is not None:
            ctx.__exit__(None, None, None)


instrumented_import()

import envelock  # noqa: E402
from envelock.envelope import lxml_readers as _readers  # noqa: E402

# The fast implementation runs its regex from the first call (it hands small amounts of text to the
# reference otherwise: fastpath.WARM_OPENERS), so the harnesses that switch to it test the regex.
sys.modules["envelock.eye.fastpath"].WARM_OPENERS = 0

#: The real components, captured before any mutant is applied (oracles use these).
_defang_mod = sys.modules["envelock.eye.reference"]  # the reference defang (the oracle)
_modeleye = sys.modules["envelock.eye.reader"]

REAL_DANGEROUS_AFTER = _modeleye.dangerous_after
REAL_MARKUP_AFTER = _defang_mod.markup_after


def readers_available() -> bool:
    """True when ``envelock.envelope.lxml_readers.reader_problems`` is implemented."""
    try:
        _readers.reader_problems("", [], level="markup")
    except NotImplementedError:
        return False
    except Exception:
        return True
    return True


READERS = readers_available()
_readers_note_printed = False


def neutralise_missing_readers() -> None:
    """When readers.py is still a stub, let verify_preface skip the reader stage (printed once)."""
    global _readers_note_printed
    if READERS:
        return
    import envelock.envelope.lxml_readers as r

    r.reader_problems = lambda text, envelopes, *, level: []  # type: ignore[assignment]
    if not _readers_note_printed:
        print("fuzz: envelock.envelope.lxml_readers is missing; verify_preface's reader stage is skipped", file=sys.stderr)
        _readers_note_printed = True


def scan_available() -> bool:
    return hasattr(envelock, "scan_text") or _has_module("envelock.scan")


def _has_module(name: str) -> bool:
    return name in sys.modules


# ---------------------------------------------------------------- input helpers


def text_of(raw: bytes) -> str:
    """Bytes to ``str``: UTF-8, invalid bytes become lone surrogates U+DC80..U+DCFF."""
    return raw.decode("utf-8", "surrogateescape")


def bytes_of(text: str) -> bytes:
    """Inverse of :func:`text_of` (for seeds). A lone surrogate outside U+DC80..U+DCFF
    is written as its 3 UTF-8-style bytes, which decode back to lone surrogates too."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return b"".join(
            c.encode("utf-8", "surrogateescape")
            if not 0xD800 <= ord(c) < 0xDC80 and not 0xDD00 <= ord(c) <= 0xDFFF
            else c.encode("utf-8", "surrogatepass")
            for c in text
        )


class Input:
    """Header bytes from the end, the rest as text (see module docstring)."""

    def __init__(self, data: bytes, header: int) -> None:
        self.fdp = atheris.FuzzedDataProvider(data) if atheris is not None else None
        if self.fdp is not None:
            self.header = [self.fdp.ConsumeIntInRange(0, 255) for _ in range(header)]
            self.text = text_of(self.fdp.ConsumeBytes(self.fdp.remaining_bytes()))
        else:  # same layout without atheris
            tail = data[max(0, len(data) - header) :]
            hdr = list(reversed(tail)) + [0] * (header - len(tail))
            self.header = hdr[:header]
            self.text = text_of(data[: max(0, len(data) - header)])


def encode(text: str, header: list[int]) -> bytes:
    """Build an input that :class:`Input` decodes to ``(header, text)``."""
    return bytes_of(text) + bytes(reversed(header))


# ---------------------------------------------------------------- mutants


def pop_mutant(argv: list[str]) -> tuple[list[str], str | None]:
    """Remove ``--mutant NAME`` / ``--mutant=NAME`` from argv; env ENVELOCK_FUZZ_MUTANT also works."""
    out: list[str] = []
    mutant = os.environ.get("ENVELOCK_FUZZ_MUTANT") or None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--mutant" and i + 1 < len(argv):
            mutant = argv[i + 1]
            i += 2
            continue
        if a.startswith("--mutant="):
            mutant = a.split("=", 1)[1]
            i += 1
            continue
        out.append(a)
        i += 1
    return out, mutant


def main(name: str, check: Callable[[bytes], None], prepare: Callable[[], None] | None = None) -> None:
    """Run a harness under atheris (with the optional mutant applied)."""
    argv, mutant = pop_mutant(list(sys.argv))
    if mutant:
        import mutants

        mutants.apply(mutant)
        print(f"fuzz: {name}: running against MUTANT {mutant!r} (a non-zero exit is the expected outcome)", file=sys.stderr)
    if prepare is not None:
        prepare()
    atheris.Setup(argv, check)
    atheris.Fuzz()


# ---------------------------------------------------------------- oracles shared by harnesses

#: Characters XML 1.0 cannot carry (docs/design.md, section 1), written out independently.
XML_IMPOSSIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_BIDI = "\u202a-\u202e\u2066-\u2069"
_TAGS = "\U000e0000-\U000e007f"


def _rgi_re() -> re.Pattern[str]:
    from envelock.eye.unicode_tables import RGI_EMOJI_TAG_SEQUENCES

    alt = "|".join(re.escape(s) for s in RGI_EMOJI_TAG_SEQUENCES)
    return re.compile(f"({alt})|[{_TAGS}{_BIDI}]")


_INVISIBLE = _rgi_re()


def expected_text(value: str, *, invisible: str = "strip") -> str:
    """What envelock must make of a body: impossible chars -> U+FFFD, then TAG/bidi stripped."""
    value = XML_IMPOSSIBLE.sub("\ufffd", value)
    if invisible == "strip":
        value = _INVISIBLE.sub(lambda m: m.group(1) or "", value)
    return value


def expected_attr(value: str) -> str:
    """What an attribute value must parse back to (XML-impossible chars are refused earlier)."""
    return _INVISIBLE.sub(lambda m: m.group(1) or "", value)


def allowed_error(exc: BaseException) -> bool:
    return isinstance(exc, envelock.EnvelockError)


def defang_insertions(text: str, out: str) -> set[int]:
    """Offsets of ``text`` after which the defang (``out``) inserted a backslash (greedy alignment)."""
    ins: set[int] = set()
    i = 0
    for ch in out:
        if i < len(text) and text[i] == ch:
            i += 1
        else:
            ins.add(i)
    return ins


def parity_violations(text: str, findings: list[object]) -> list[str]:
    """Scan parity: every opener the defang escapes *for its reading* lies inside a finding.

    Openers already followed by ``\\`` (escaped for injectivity only) are not counted,
    nor a bare ``<|`` without a closing ``|>`` (the scanner's documented F#/Elm exception).
    """
    import envelock
    from envelock.eye.reader import BRACKET_OPENER_RE, OPENER_RE, names_for, read_after
    from envelock.scan.tags import _pipe_token

    names = names_for()
    ins = defang_insertions(text, envelock.defang(text))
    spans = [(f.offset, max(f.end_offset, f.offset + 1)) for f in findings]  # type: ignore[attr-defined]
    bad: list[str] = []
    for rx in (OPENER_RE, BRACKET_OPENER_RE):
        for m in rx.finditer(text):
            e = m.end()
            if e not in ins or (e < len(text) and text[e] == "\\"):
                continue
            if rx is OPENER_RE:
                r = read_after(text, e, names)
                if r.kind == "bar" and _pipe_token(text, r.end, r.slash) is None:
                    continue
            if not any(a <= m.start() < b for a, b in spans):
                bad.append(f"the defang escapes the opener at {m.start()} but no finding covers it: {text[m.start() : e + 40]!r}")
    return bad
