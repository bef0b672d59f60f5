"""The byte-exact envelope format (DESIGN.md section 1).

::

    <retrieved_content provenance="external" origin="web:https://a.example/?q=1&amp;r=2" fetched_at="2026-11-29T21:29:03Z">
    BODY
    </retrieved_content>

Envelopes are joined by ``\\n\\n``; no leading or trailing newline.
"""

from __future__ import annotations

import re

TAG = "retrieved_content"
OPEN_PREFIX = f"<{TAG} "
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
_ATTR_UNESCAPE = {ref: raw for raw, ref in _ATTR_ESCAPES}
_ATTR_REF_RE = re.compile("|".join(re.escape(ref) for _, ref in _ATTR_ESCAPES))

#: The characters an attribute value runs over in the open-tag pattern (one class, so
#: matching is a single linear scan); what is inside is checked by ATTR_INVALID_RE.
ATTR_VALUE_PATTERN = r'[^"<>\n]*'
#: A character or reference the renderer never leaves in an attribute value.
ATTR_INVALID_RE = re.compile(r"['\t\r]|&(?!(?:amp|lt|gt|quot|#39|#9|#10|#13);)")
#: The open tag exactly as rendered, with the ``\\n`` that follows it.
OPEN_TAG_RE = re.compile(
    rf'<{TAG} provenance="({ATTR_VALUE_PATTERN})" origin="({ATTR_VALUE_PATTERN})"'
    rf'(?: fetched_at="({ATTR_VALUE_PATTERN})")?>\n'
)


def escape_attribute(value: str) -> str:
    for raw, ref in _ATTR_ESCAPES:
        value = value.replace(raw, ref)
    return value


def unescape_attribute(value: str) -> str:
    return _ATTR_REF_RE.sub(lambda m: _ATTR_UNESCAPE[m.group()], value)


def open_tag(provenance: str, origin: str, fetched_at: str | None) -> str:
    """The open tag; arguments are already defanged, not yet escaped."""
    fetched = "" if fetched_at is None else f' fetched_at="{escape_attribute(fetched_at)}"'
    return f'<{TAG} provenance="{escape_attribute(provenance)}" origin="{escape_attribute(origin)}"{fetched}>'


def envelope(open_: str, content: str) -> str:
    return f"{open_}\n{content}\n{CLOSE_TAG}"


def join(envelopes: list[str]) -> str:
    return SEPARATOR.join(envelopes)
