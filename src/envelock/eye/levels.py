"""Defang levels and the XML text escape shared by every implementation of the defang."""

from __future__ import annotations

import re
from typing import Literal

#: ``reserved`` (reserved names and chat tokens), ``markup`` (also every markup opener),
#: ``xml`` (``markup``, then XML text escaping). See docs/design.md.
Level = Literal["reserved", "markup", "xml"]
LEVELS: tuple[Level, ...] = ("reserved", "markup", "xml")

#: What follows every body in a composed preface: the LF before the close tag, then ``<``.
BODY_CONTEXT = "\n<"
#: What the renderer writes after an attribute value: its closing quote and the tag's end (or a blank
#: and the next attribute). A reading near the end of the value reaches them, so a value is judged
#: with them: ``origin="x <|im_end|">`` is ``<|im_end|>`` to a reader that decodes ``&lt;`` (a
#: red-team find of stop 49).
ATTRIBUTE_CONTEXT = '">'

_XML_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\r", "&#13;"))
#: What :func:`xml_escape_text` writes for ``<`` and for ``&`` (``reader.quoted_opener`` reads them back).
XML_LT_REFERENCE = dict(_XML_ESCAPES)["<"]
XML_AMP_REFERENCE = dict(_XML_ESCAPES)["&"]
_XML_UNESCAPE_RE = re.compile(r"&(amp|lt|gt|#13);")
_XML_UNESCAPE = {"amp": "&", "lt": "<", "gt": ">", "#13": "\r"}


def check_level(level: str) -> Level:
    """``level`` as a :data:`Level`, or ``ValueError`` naming the choices."""
    if level not in LEVELS:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}")
    return level


def xml_escape_text(text: str) -> str:
    """XML text escape with an exact round trip: ``&``, ``<``, ``>``, CR."""
    for raw, ref in _XML_ESCAPES:
        text = text.replace(raw, ref)
    return text


def xml_unescape_text(text: str) -> str:
    """Inverse of :func:`xml_escape_text` (only the four references it emits)."""
    return _XML_UNESCAPE_RE.sub(lambda m: _XML_UNESCAPE[m.group(1)], text)
