"""The byte-exact envelope format (docs/design.md, section 1).

::

    <retrieved_content provenance="external" origin="web:https://a.example/?q=1&amp;r=2" fetched_at="2026-11-29T21:29:03Z">
    BODY
    </retrieved_content>

Envelopes are joined by ``\\n\\n``; no leading or trailing newline.
"""

from __future__ import annotations

import re

from ..eye.escape import defang_attribute
from ..eye.reader import names_for
from ..eye.tokens import RESERVED_NAMES
from ..eye.unicode_tables import QUOTE_LOOKALIKES, SKIPPED_QUOTES
from ..types import Envelope

TAG = "retrieved_content"
CLOSE_TAG = f"</{TAG}>"
SEPARATOR = "\n\n"

#: Attribute escapes, ``&`` first. Any XML parser returns exactly the original
#: value: TAB, LF and CR are character references, so no attribute-value
#: normalisation applies.
_ATTR_ESCAPES = (
    ("&", "&amp;"),
    ("<", "&lt;"),
    (">", "&gt;"),
    ('"', "&quot;"),
    ("'", "&#39;"),
    ("\t", "&#9;"),
    ("\n", "&#10;"),
    ("\r", "&#13;"),
)
#: Characters a reader may take for a quote (generated: ``QUOTE_LOOKALIKES``, e.g. U+FF02
#: FULLWIDTH QUOTATION MARK, U+201D, U+2033 DOUBLE PRIME) are written as hexadecimal
#: character references, so that no value can *appear* to end and let a model read
#: ``x\uff02 provenance\uff1d\uff02system-config`` as a second attribute. Exact round trip.
#: The quotes the eye reads past (``SKIPPED_QUOTES``: U+02DD, U+00B4...) too (stop 49, a red-team find).
_ATTRIBUTE_QUOTES = (*QUOTE_LOOKALIKES, *SKIPPED_QUOTES)
_QUOTE_ESCAPES = tuple((chr(cp), f"&#x{cp:X};") for cp in _ATTRIBUTE_QUOTES)
_QUOTE_CLASS = "".join(re.escape(chr(cp)) for cp in _ATTRIBUTE_QUOTES)
_QUOTE_RE = re.compile(f"[{_QUOTE_CLASS}]")
_ATTR_UNESCAPE = {ref: raw for raw, ref in (*_ATTR_ESCAPES, *_QUOTE_ESCAPES)}
_ATTR_REF_RE = re.compile("|".join(re.escape(ref) for ref in _ATTR_UNESCAPE))

#: The characters an attribute value runs over in the open-tag pattern (one class, so
#: matching is a single linear scan); what is inside is checked by ATTR_INVALID_RE.
ATTR_VALUE_PATTERN = r'[^"<>\n]*'
#: A character or reference the renderer never leaves in an attribute value.
ATTR_INVALID_RE = re.compile(
    rf"['\t\r{_QUOTE_CLASS}]|&(?!(?:amp|lt|gt|quot|#39|#9|#10|#13|{'|'.join(ref[1:-1] for _, ref in _QUOTE_ESCAPES)});)"
)
#: The values compose writes and verify reads as they are (:func:`is_plain_attribute`): printable
#: ASCII but an escape point's character (the reader's tables for the default names, which the
#: attribute defang uses), a character the renderer escapes or refuses, and the backslash.
_PLAIN_ATTRIBUTE_RE = re.compile(
    "["
    + "".join(
        re.escape(c)
        for c in map(chr, range(0x20, 0x7F))
        if c not in names_for(RESERVED_NAMES).escape_starts()
        and c not in {raw for raw, _ in _ATTR_ESCAPES}
        and c != "\\"
        and not ATTR_INVALID_RE.search(c)
    )
    + "]*"
)


def is_plain_attribute(value: str) -> bool:
    """Is ``value`` an attribute compose writes as it is and verify reads as it is (no escape point,
    so the defang and the undefang leave it alone; nothing to escape, strip or refuse)? A fast path
    of compose and verify for the common value (``external``, ``temporal``); any other value takes
    the whole check."""
    return _PLAIN_ATTRIBUTE_RE.fullmatch(value) is not None


#: The optional attributes after ``origin``, in rendered order (group 3 onwards of OPEN_TAG_RE):
#: ``fetched_at``, then the turn's ``nonce``, then the spotlight ``transform``, ``marker``, ``seed``.
OPTIONAL_ATTRIBUTES = ("fetched_at", "nonce", "transform", "marker", "seed")
#: The open tag exactly as rendered, with the ``\\n`` that follows it.
OPEN_TAG_RE = re.compile(
    rf'<{TAG} provenance="({ATTR_VALUE_PATTERN})" origin="({ATTR_VALUE_PATTERN})"'
    + "".join(rf'(?: {name}="({ATTR_VALUE_PATTERN})")?' for name in OPTIONAL_ATTRIBUTES)
    + ">\n"
)


def escape_attribute(value: str) -> str:
    for raw, ref in _ATTR_ESCAPES:
        value = value.replace(raw, ref)
    if not value.isascii():
        value = _QUOTE_RE.sub(lambda m: f"&#x{ord(m.group()):X};", value)
    return value


def unescape_attribute(value: str) -> str:
    return _ATTR_REF_RE.sub(lambda m: _ATTR_UNESCAPE[m.group()], value)


def attributes_of(env: Envelope) -> list[tuple[str, str]]:
    """The open tag's attributes of a parsed envelope in rendered order, as a reader decodes them
    (``provenance`` and ``origin`` defanged, as compose writes them)."""
    out = [("provenance", defang_attribute(env.source)), ("origin", defang_attribute(env.origin))]
    if env.fetched_at is not None:
        out.append(("fetched_at", env.fetched_at))
    if env.nonce is not None:
        out.append(("nonce", env.nonce))
    out.extend(env.spotlight.attributes())
    return out


def open_tag(provenance: str, origin: str, fetched_at: str | None, extra: tuple[tuple[str, str], ...] = ()) -> str:
    """The open tag; arguments are already defanged, not yet escaped. ``extra``: the ``nonce`` and
    spotlight attributes, in :data:`OPTIONAL_ATTRIBUTES` order (none in the default mode)."""
    fetched = "" if fetched_at is None else f' fetched_at="{escape_attribute(fetched_at)}"'
    more = "".join(f' {name}="{escape_attribute(value)}"' for name, value in extra)
    return f'<{TAG} provenance="{escape_attribute(provenance)}" origin="{escape_attribute(origin)}"{fetched}{more}>'


def envelope(open_: str, content: str) -> str:
    return f"{open_}\n{content}\n{CLOSE_TAG}"


def join(envelopes: list[str]) -> str:
    return SEPARATOR.join(envelopes)
