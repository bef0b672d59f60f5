"""Decoding an input's bytes for the gate: fail closed, never drop text.

A BOM (UTF-8, UTF-16, UTF-32) decides the encoding. Text in UTF-16 or UTF-32 written without a
BOM is told from its NUL bytes (see :func:`unmarked_wide`) and decoded. Otherwise a NUL byte in
the first :data:`SNIFF` bytes makes the file binary (skipped, and counted); valid UTF-8 is UTF-8;
anything else is decoded as the text encoding it declares (a coding cookie, an XML declaration, an
HTML meta charset; a codec that is not a text encoding, ``rot13`` or ``base64``, is no
declaration), else as UTF-8 with U+FFFD for each undecodable byte, and scanned: one stray byte
cannot hide a close tag from the gate. A second reading is scanned too, and reported when it shows
an error the first one hides: bytes that declare nothing are also read as windows-1252 (the WHATWG
default for an undeclared page); bytes read as the encoding they declare, or as the UTF-16 or
UTF-32 their BOM names, are also read as UTF-8 (the declaration is the file's own word, and a
consumer that does not honour it, or the WHATWG rules for a ``<meta charset="utf-16">``, reads
UTF-8: a red-team find of stop 48).
"""

from __future__ import annotations

import codecs
import re
import unicodedata
from dataclasses import dataclass

from ..eye import reader

#: Bytes sniffed for a NUL to call a file binary (as git does), and for the UTF-16/32 pattern.
SNIFF = 8192


@dataclass(frozen=True)
class Decoded:
    """Text to scan (``None`` for a binary file), how it was decoded when it was not plain
    UTF-8, and the reason it was skipped."""

    text: str | None
    how: str | None = None
    skipped: str | None = None
    #: Another reading of the same bytes a consumer may take, and its name: for UTF-16/32 told
    #: without a BOM, the bytes read as UTF-8 (NULs kept, U+FFFD for undecodable bytes), what a
    #: consumer that does not sniff takes; for bytes that are not UTF-8 and declare nothing, the
    #: bytes read as windows-1252, what the WHATWG encoding standard takes for an undeclared page
    #: (``\x8b/retrieved_content\x9b`` is ``‹/retrieved_content›`` there, U+FFFD twice as UTF-8:
    #: a red-team find of stop 43). The gate scans it too and reports it when it shows what the
    #: first reading hides (see ``envelock.cli.scanning``).
    other: str | None = None
    other_name: str | None = None


_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
# A declared encoding: a PEP 263 cookie (first two lines), an XML declaration, an HTML meta charset.
_COOKIE_RE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.MULTILINE)
_XML_DECL_RE = re.compile(rb"^\s*<\?xml[^>]{0,200}?encoding\s*=\s*[\"']([-\w.:]+)[\"']")
_META_RE = re.compile(rb"<meta[^>]{0,200}?charset\s*=\s*[\"']?([-\w.:]+)", re.IGNORECASE)
#: C0 and C1 controls other than whitespace: text has almost none, binary read as UTF-16 has many.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
#: UTF-32 first: UTF-32 text read as UTF-16 holds U+0000, so the two never both pass.
_WIDE = ("utf-32-le", "utf-32-be", "utf-16-le", "utf-16-be")
_UTF8_FFFD = "\ufffd".encode()


def declared_encoding(data: bytes) -> str | None:
    """The encoding the bytes declare (a Python coding cookie, ``<?xml encoding=...?>`` or an HTML
    ``<meta charset>``), normalised by :mod:`codecs`; ``None`` when none is declared or known."""
    head = data[:1024]
    first_two = b"\n".join(head.split(b"\n")[:2])
    for rx, part in ((_COOKIE_RE, first_two), (_XML_DECL_RE, head), (_META_RE, head)):
        m = rx.search(part)
        if m:
            try:
                info = codecs.lookup(m.group(1).decode("ascii"))
            except (LookupError, UnicodeDecodeError):
                continue
            # ``rot13``, ``base64``, ``zlib``... are codecs but not text encodings: bytes.decode refuses
            # them (an internal error of the gate until stop 48), so they declare nothing.
            if getattr(info, "_is_text_encoding", True):
                return info.name
    return None


def unmarked_wide(data: bytes) -> str | None:
    """The encoding of UTF-16 or UTF-32 text (LE or BE) written without a BOM, else ``None``.

    Only bytes holding a NUL in the first :data:`SNIFF` bytes are asked. An encoding fits when the
    length is a whole number of its code units, the first :data:`SNIFF` bytes decode strictly (no
    lone surrogate, nothing above U+10FFFF), the text holds no U+0000 and at most 1% other control
    or unassigned characters, and (UTF-16) nine in ten NUL bytes sit where that byte order puts the zero high
    byte of ASCII-range text: odd offsets for UTF-16LE, even ones for UTF-16BE. Binary data almost
    never fits: zero runs read as U+0000, random bytes as lone surrogates. When both byte orders
    fit, the side with more NULs decides.
    """
    head = data[:SNIFF]
    nuls = head.count(0)
    if not nuls:
        return None
    odd = head[1::2].count(0)
    fits: list[str] = []
    for enc in _WIDE:
        if len(data) % (4 if "32" in enc else 2):
            continue
        if enc.startswith("utf-16") and 10 * (odd if enc == "utf-16-le" else nuls - odd) < 9 * nuls:
            continue
        try:
            text = codecs.getincrementaldecoder(enc)("strict").decode(head, final=False)
        except UnicodeDecodeError:
            continue
        if text and "\x00" not in text and 100 * (len(_CONTROL_RE.findall(text)) + _unassigned(text)) <= len(text):
            fits.append(enc)
    if not fits:
        return None
    if fits[0].startswith("utf-32") or len(fits) == 1:
        return fits[0]
    return "utf-16-le" if 2 * odd >= nuls else "utf-16-be"


def _unassigned(text: str) -> int:
    """Characters unassigned to the interpreter's ``unicodedata`` and no letter, number or mark of the
    generated Unicode 17 tables either: text in a script newer than the interpreter's data (Kawi,
    Unicode 15, on Python 3.11) is still text (stop 49: it was taken for binary and skipped)."""
    return sum(1 for c in text if unicodedata.category(c) == "Cn" and not (reader.is_alnum(c) or reader.is_mark(c)))


def decode(data: bytes) -> Decoded:
    """Decode bytes for scanning; never raises and never drops text (see the module docstring)."""
    for bom, enc in _BOMS:
        if data.startswith(bom):
            text = data[len(bom) :].decode(enc, "replace")
            bad = text.count("\ufffd") - data[len(bom) :].decode(enc, "ignore").count("\ufffd")
            how = f"not valid {enc.upper()}: {bad} undecodable sequence(s) replaced with U+FFFD" if bad else None
            if enc == "utf-8":
                return Decoded(text, how)
            # A UTF-16/32 BOM is two or four bytes anyone can write before ASCII: the UTF-8 reading too.
            return Decoded(text, how, other=data.decode("utf-8", "replace"), other_name="UTF-8")
    wide = unmarked_wide(data)
    if wide is not None:
        told = f"no BOM: decoded as {wide.upper()}, told by its NUL bytes"
        eight_bit = data.decode("utf-8", "replace")
        try:
            return Decoded(data.decode(wide), told, other=eight_bit, other_name="UTF-8")
        except UnicodeDecodeError as e:
            text = data.decode(wide, "replace")
            how = f"{told}; not valid from byte {e.start}: undecodable sequences replaced with U+FFFD"
            return Decoded(text, how, other=eight_bit, other_name="UTF-8")
    if b"\x00" in data[:SNIFF]:
        return Decoded(None, skipped="binary file (NUL byte)")
    try:
        return Decoded(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        first = f"{e.reason} at byte {e.start}"
    declared = declared_encoding(data)
    if declared is not None and declared != "utf-8":
        text = data.decode(declared, "replace")
        how = f"not valid UTF-8 ({first}); decoded as {declared}, the encoding it declares"
        return Decoded(text, how, other=data.decode("utf-8", "replace"), other_name="UTF-8")
    text = data.decode("utf-8", "replace")
    bad = text.count("\ufffd") - data.count(_UTF8_FFFD)
    how = f"not valid UTF-8 ({first}); {bad} undecodable byte sequence(s) replaced with U+FFFD"
    return Decoded(text, how, other=data.decode("cp1252", "replace"), other_name="windows-1252")
