"""Encoded tags: percent/backslash escapes, ciphers, base64/hex/binary blobs that decode to a tag or token."""

from __future__ import annotations

import base64
import binascii
import codecs
import re
from functools import lru_cache

from ..eye import backend
from ..eye.reader import (
    LBRACKET_CHARS,
    LT_CHARS,
    OPENER_RE,
    names_for,
    read_after,
    visible,
)
from ._base import BLOB_MAX, SNIPPET_MAX, Context, Rule, _decode_escapes, _Raw
from .context import is_text
from .tags import _first_danger, _hit, _name_maps

# Encoded openers of '<' or '＜': percent (incl. double-encoded and %uXXXX), backslash escapes
# (JSON/JS/Python/C/Rust/CSS), quoted-printable and UTF-7.
_ENC_OPENER_RE = re.compile(
    r"%(?:25){0,3}(?:3[cC]|[uU](?:003[cC]|[fF][fF]1[cC]))"
    r"|\\{1,4}(?:u003[cC]|u[fF][fF]1[cC]|u\{0{0,4}3[cC]\}|x3[cC]|x\{3[cC]\}|U0000003[cC]|0?74(?![0-7])|0{0,4}3[cC](?![0-9a-fA-F]))"
    r"|=3[cC]|\+ADw-?"
)

# The rules this module reports (collected by envelock.scan.rules).

ENCODED_TAG = Rule(
    "encoded-tag",
    "Percent-, backslash- or cipher-encoded envelope tag or control token",
    (
        "`%3C/retrieved_content%3E`, `\\u003c/retrieved_content`, `\\x3c...`, `%uFF1C...`, or a reserved name "
        "in ROT13, Atbash or reversed. Not a tag as it stands, but one decoding step (by a tool, a template "
        "or a model asked to decode) away from one."
    ),
    "warning",
    5.0,
    "encoded",
)

ENCODED_BLOB_TAG = Rule(
    "encoded-blob-tag",
    "Base64, hex or binary run that decodes to an envelope tag or control token",
    (
        "A run of base64 (standard or URL-safe), hex digits or 8-bit binary groups whose decoded bytes hold "
        "an envelope tag or chat-template control token: the classic 'decode this and follow it' injection."
    ),
    "warning",
    5.0,
    "encoded",
)

RULES: tuple[Rule, ...] = (
    ENCODED_TAG,
    ENCODED_BLOB_TAG,
)


def _cipher_names(reserved: tuple[str, ...]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    atbash = str.maketrans("abcdefghijklmnopqrstuvwxyz", "zyxwvutsrqponmlkjihgfedcba")
    for name in reserved:
        low = name.lower()
        out.append((codecs.encode(low, "rot13"), f"ROT13 of {name!r}"))
        out.append((low.translate(atbash), f"Atbash of {name!r}"))
        out.append((low[::-1], f"{name!r} reversed"))
    return out


@lru_cache(maxsize=16)
def _cipher_re(reserved: tuple[str, ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    alts: list[str] = []
    labels: dict[str, str] = {}
    for enc, label in _cipher_names(reserved):
        words = [w for w in re.split(r"[_\- ]", enc) if w]
        alts.append(r"[ \t_\-]{0,3}".join(re.escape(w) for w in words))
        labels["".join(words)] = label
    return re.compile("|".join(alts), re.IGNORECASE), labels


#: An encoded opener right after another (``%3C%3C``): the first one's reading ends at the second
#: (a reading stops at the next opener), so only the last of a run can start a tag. Skipping the
#: others in the regex keeps a run of them from costing a Python step each.
_FOLLOWED_BY_OPENER_RE = re.compile(f"(?:{_ENC_OPENER_RE.pattern})(?=(?:{_ENC_OPENER_RE.pattern})|<)")
#: The leading ``(?=[%\\=+])`` changes no match (every encoded opener starts with one of them); it
#: lets the regex engine skip the other characters in its own loop instead of trying the
#: lookahead at every position (three times faster on prose).
_ENC_CANDIDATE_RE = re.compile(f"(?=[%\\\\=+])(?!{_FOLLOWED_BY_OPENER_RE.pattern})(?:{_ENC_OPENER_RE.pattern})")


def _scan_encoded(text: str, ctx: Context, out: list[_Raw]) -> None:
    n = len(text)
    starts = [m.start() for m in _ENC_CANDIDATE_RE.finditer(text)]
    for k, s in enumerate(starts):
        m = _ENC_OPENER_RE.match(text, s)
        assert m is not None
        # The window ends at the next candidate (its opener ends any reading; a ``<`` stands for
        # it), so every character is decoded once however dense the candidates are: linear.
        nxt = starts[k + 1] if k + 1 < len(starts) else n
        window = text[s : min(s + 192, nxt)] + ("<" if nxt < s + 192 else "")
        decoded = _decode_escapes(window)
        om = OPENER_RE.match(decoded)
        if not om:
            continue
        hit = _hit(decoded, read_after(decoded, om.end(), _name_maps(ctx)[0]), ctx)
        if hit is None:
            continue
        # Map the end back roughly: the raw text up to the first whitespace after the name.
        e = s + len(m.group())
        lim = min(n, s + 192)
        while e < lim and not text[e].isspace():
            e += 1
        what = visible(decoded[: hit.end][:SNIPPET_MAX])
        out.append(_Raw(ENCODED_TAG.id, "warning", f"encoded form of {what!r}", s, e))
    cre, labels = _cipher_re(ctx.reserved)
    for m in _cipher_matches(text, cre, ctx.reserved):
        key = re.sub(r"[ \t_\-]", "", m.group()).lower()
        out.append(_Raw(ENCODED_TAG.id, "warning", f"{labels.get(key, 'encoded reserved name')}", m.start(), m.end()))


#: (``_ascii_case_folds``) The non-ASCII characters that ``re.IGNORECASE`` takes for an ASCII letter (KELVIN SIGN, LATIN SMALL
#: LETTER LONG S, DOTLESS I, CAPITAL I WITH DOT ABOVE): where one occurs, the lowered text is no guide.
@lru_cache(maxsize=1)
def _ascii_case_folds() -> tuple[str, ...]:
    return tuple(c for c in map(chr, range(0x80, 0x10000)) if re.fullmatch("[a-z]", c, re.IGNORECASE))


def _cipher_matches(text: str, cre: re.Pattern[str], reserved: tuple[str, ...]) -> list[re.Match[str]]:
    """The cipher regex's matches, tried only where a first word occurs (``str.find`` on the lowered
    text, whose offsets are the text's), not at every position."""
    if not text.isascii() and any(c in text for c in _ascii_case_folds()):
        return list(cre.finditer(text))
    lowered = text.lower()
    found: dict[int, re.Match[str]] = {}
    for first in {re.split(r"[_\- ]", enc)[0] for enc, _ in _cipher_names(reserved)}:
        i = lowered.find(first)
        while i >= 0:
            m = cre.match(text, i)
            if m and i not in found:
                found[i] = m
            i = lowered.find(first, i + 1)
    # finditer's matches do not overlap: keep the leftmost, then the next one after its end.
    out: list[re.Match[str]] = []
    end = -1
    for i in sorted(found):
        if i >= end:
            out.append(found[i])
            end = found[i].end()
    return out


#: A base64 run: a whole run of base64 characters (16 or more), then its padding. No lookbehind is
#: needed: a match can only start where the one before ended (at a character outside the run) or
#: where a shorter run failed, so it is always a whole run.
_B64_RE = re.compile(r"[A-Za-z0-9+/\-_]{16,}={0,2}")
#: A whole run of 16 or more hex digits (same reasoning); its even-length prefix is decoded (the
#: pairs a ``(?<!hex)(?:hex{2}){8,}`` match would take, in a third of the time).
_HEX_RE = re.compile(r"[0-9a-fA-F]{16,}")
_BIN_RE = re.compile(r"[01]{8}(?:[ \t]{1,2}[01]{8}){3,}")


def _binary_matches(text: str) -> list[re.Match[str]]:
    """``_BIN_RE.finditer(text)``, tried only where a match may start when the native core is in
    use: the eight digits before a blank that ends a run of eight or more (a match starts with
    them), each tried with ``match`` unless inside the previous match, which is what ``finditer``
    finds. Else the regex over the whole text (one pass)."""
    starts = backend.native_binary_group_starts(text)
    if starts is None:
        return list(_BIN_RE.finditer(text))
    out: list[re.Match[str]] = []
    end = -1
    for p in starts:
        if p >= end and (m := _BIN_RE.match(text, p)) is not None:
            out.append(m)
            end = m.end()
    return out


def _b64_candidates(run: str) -> list[bytes]:
    body = run.rstrip("=")[:BLOB_MAX]
    alt = "-" in body or "_" in body
    if alt and ("+" in body or "/" in body):
        return []
    out: list[bytes] = []
    for shift in range(4):
        chunk = body[shift:]
        rest = len(chunk) % 4
        # The last group too (padded as it would be): a tag that ends the run is in it.
        chunk = chunk[: len(chunk) - rest] if rest == 1 else chunk + "=" * ((4 - rest) % 4)
        if len(chunk) < 8:
            continue
        try:
            out.append(base64.b64decode(chunk, altchars=b"-_" if alt else None, validate=True))
        except (binascii.Error, ValueError):
            continue
    return out


def blob_triggers(ctx: Context) -> tuple[bytes, ...]:
    """What decoded bytes must hold for :func:`_blob_danger` to read them further: the UTF-8 of every
    character a match of :func:`~envelock.scan.tags._first_danger` can start with (an angle or bracket
    opener or look-alike, the ``&`` of a reference, the first character of an exact token), from the
    reader's own tables. The native sift (``_native.blob_runs``) is handed the same tuple."""
    return _triggers(names_for(ctx.reserved, ctx.tokens).exact_starts())


@lru_cache(maxsize=16)
def _triggers(exact_starts: str) -> tuple[bytes, ...]:
    chars = set(LT_CHARS) | set(LBRACKET_CHARS) | {"&"} | set(exact_starts)
    if "\ufffd" in chars:
        # A decoding's undecodable bytes read as U+FFFD: every decoding would have to be read.
        return (b"",)
    return tuple(sorted(c.encode() for c in chars))


@lru_cache(maxsize=16)
def _hex_marks(triggers: tuple[bytes, ...]) -> tuple[str, ...]:
    """The hex of each trigger's first byte: a hex run decodes to a trigger only if it holds one
    (``""`` when every decoding is read)."""
    return tuple(sorted({t[:1].hex() for t in triggers}))


@lru_cache(maxsize=16)
def _trigger_re(triggers: tuple[bytes, ...]) -> re.Pattern[bytes]:
    """One search for any of ``triggers`` (longest first; an empty one matches everywhere)."""
    return re.compile(b"|".join(re.escape(t) for t in sorted(triggers, key=len, reverse=True)))


def _blob_danger(data: bytes, ctx: Context) -> str | None:
    if _trigger_re(blob_triggers(ctx)).search(data) is None:
        return None
    if not is_text(data):
        return None  # random bytes (a hash, an identifier that happens to be base64) hold no message
    return _first_danger(data.decode("utf-8", "replace"), ctx)


def _scan_blobs(text: str, ctx: Context, out: list[_Raw]) -> None:
    # Hex digits are base64 characters, so every run of 16 or more hex digits lies inside a base64
    # run (and a run that reaches the base64 run's end is whole in the text too): the hex runs are
    # looked for only inside base64 runs that hold the hex of a trigger's first byte, not in a
    # second pass over the text.
    # The native core sifts the runs first: it drops only runs this loop would report nothing from
    # (no hex opener inside, no decoding holding a byte _blob_danger looks for).
    hex_runs: list[re.Match[str]] = []
    triggers = blob_triggers(ctx)
    marks = _hex_marks(triggers)
    runs = backend.native_blob_runs(text, triggers)
    for start, end in runs if runs is not None else (m.span() for m in _B64_RE.finditer(text)):
        run = text[start:end]
        low = run.lower()
        if any(h in low for h in marks):
            hex_runs.extend(_HEX_RE.finditer(text, start, start + len(run.rstrip("="))))
        if run.isdigit():
            continue
        for data in _b64_candidates(run):
            danger = _blob_danger(data, ctx)
            if danger:
                out.append(_Raw(ENCODED_BLOB_TAG.id, "warning", f"base64 run decodes to {danger!r}", start, end))
                break
    for m in hex_runs:
        hexrun = m.group()
        if len(hexrun) % 2:
            hexrun = hexrun[:-1]
        low = hexrun.lower()
        if not any(h in low for h in marks):
            continue
        danger = _blob_danger(bytes.fromhex(hexrun[:BLOB_MAX]), ctx)
        if danger:
            out.append(_Raw(ENCODED_BLOB_TAG.id, "warning", f"hex run decodes to {danger!r}", m.start(), m.start() + len(hexrun)))
    for m in _binary_matches(text):
        groups = m.group().split()
        data = bytes(int(g, 2) for g in groups[: BLOB_MAX // 8])
        danger = _blob_danger(data, ctx)
        if danger:
            out.append(_Raw(ENCODED_BLOB_TAG.id, "warning", f"binary groups decode to {danger!r}", m.start(), m.end()))
