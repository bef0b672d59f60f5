"""Code context: where a construct the model's eye reads is ordinary code, not an attack.

The scanner reads text the way a model would; real code and documentation are full of
constructs that the eye reads past but that no attacker wrote. Each rule here looks
only at the characters around one finding and is deliberately narrow; none applies to
a reserved envelope name, to a construct written exactly as a chat template writes it
(those stay errors everywhere), or to anything disguised with non-ASCII characters.
What they do (measured on the Python standard library and a site-packages folder; see
``tests/test_realcode.py``):

* ``<s>`` (the Llama 2 BOS token, already only a warning) in a regex named group
  (``(?P<s>...)``, ``(?<s>...)``, ``\\g<s>``, ``\\k<s>``) or read through an arrow
  (``s->size < s->len``): a note.
* An opener or bracket followed by *layout* (ASCII whitespace, newlines and
  indentation, or ASCII banner characters such as ``-----``) that ends inside the
  lookahead window before ordinary text: a note (``if n < 0:`` followed by a deeply
  indented block, ``[-------`` comment banners). Padding made of invisible or
  non-ASCII characters, padding that runs past the window, and padding followed by an
  envelope name or a token stay warnings (or errors).
* A quote followed by ``source=``/``origin=`` that closes an attribute value of a
  well-formed tag on the same line (``<edge id="0" source="n0"/>``), or that opens a string
  literal in code (``append('origin={!r}'...)``, ``msg=f"source={source}"``): not reported.
* A base64, hex or binary run whose decoded bytes are not text (hashes in ``RECORD``
  files, identifiers that happen to be base64): not reported.
* Prose turn markers written in lowercase (``user: bool``, ``system: linux``): YAML keys
  and annotations, not reported.

The defang is unchanged by all of this: whatever it escapes is still a finding (a note
at least), so ``scan_text`` and ``compose_preface`` keep agreeing on what is dangerous.
"""

from __future__ import annotations

import re

from ..eye import reader as modeleye
from ..eye.charsets import XML_IMPOSSIBLE, char_class, ranges_of
from ..eye.reader import MAX_LOOKAHEAD, Names
from ..types import line_bounds

#: Characters before ``<`` that make it a regex named group or a group reference.
_REGEX_GROUP_RE = re.compile(r"(?:\(\?P?|\\[gk])$")
_PRINTABLE_ASCII = frozenset(chr(c) for c in range(0x20, 0x7F)) | frozenset("\t\n\r\f\v")
_SLASHES = frozenset("/")


def regex_group_or_arrow(text: str, start: int, token_end: int) -> bool:
    """Is the ``<NAME>`` token at ``start..token_end`` a regex named group (``(?P<s>``) or read
    through an arrow (the ``>`` is the head of ``->`` or ``=>``)?"""
    if _REGEX_GROUP_RE.search(text[max(0, start - 3) : start]):
        return True
    return token_end >= 2 and text[token_end - 1] == ">" and text[token_end - 2] in "-="


def layout_padding(text: str, end: int, stop: int, names: Names, *, bracket: bool = False) -> bool:
    """Is the padding after an opener (which ends at ``end``; the eye gave up at ``stop``) code layout?

    True when everything the eye reads past, up to the first character it does not skip, is
    printable ASCII (spaces, tabs, newlines, ``-``, ``.``, ``_``, slashes, and short names the
    eye read before, such as the ``0:`` of ``if n < 0:``) or box drawing, that character lies
    inside the lookahead window, and the eye reads no envelope name or control token from
    there (a second stretch of layout is followed the same way, inside the same window).
    """
    n = len(text)
    lim = min(n, end + MAX_LOOKAHEAD)
    k = stop
    past = modeleye.read_past_re(_SLASHES)
    while True:
        k = past.match(text, k, lim).end() if k < lim else k  # type: ignore[union-attr]  # a starred class always matches
        if k >= lim:
            return False  # the window ends inside the padding: what follows cannot be bounded
        if not _LAYOUT_RE.fullmatch(text, end, k):
            return False  # controls, invisible or other non-ASCII characters: a hiding technique
        after = modeleye.read_bracket(text, k, names) if bracket else modeleye.read_after(text, k, names)
        if after.kind != "padding" or after.end <= k:
            return not after
        k = after.end


#: Printable ASCII, and box drawing, block elements and bracket pieces (U+2500..U+259F,
#: U+239B..U+23B3): the visible rules and brackets of pretty-printed formulas and tables.
_LAYOUT_RE = re.compile(f"[{char_class(ranges_of(_PRINTABLE_ASCII), ((0x239B, 0x23B3), (0x2500, 0x259F)))}]*")


_QUOTED = r"(?:\"[^\"<>\n]*\"|'[^'<>\n]*')"
#: A tag with well-formed attributes, ending inside an attribute value opened by the quote in group 1.
_OPEN_VALUE_RE = re.compile(rf"<[A-Za-z][\w:.\-]*(?:\s+[\w:.\-]+\s*=\s*{_QUOTED})*\s+[\w:.\-]+\s*=\s*([\"'])[^\"'<>\n]*")


def string_literal_start(text: str, quote: int) -> bool:
    """Does the quote at ``quote`` open a string literal whose text starts with the attribute
    name (``args.append('origin={!r}'...)``, ``msg=f"source={source}"``)? After an optional
    string prefix, it must follow ``(``, ``[``, ``{`` or ``,``, or ``=`` directly after a name,
    and the name must follow the quote directly."""
    if quote + 1 >= len(text) or not text[quote + 1].isalpha():
        return False
    j = quote
    while j > 0 and quote - j < 2 and text[j - 1] in "fFrRbBuU":
        j -= 1
    if j > 0 and text[j - 1] in "([{,":
        return True
    return j > 1 and text[j - 1] == "=" and (text[j - 2].isalnum() or text[j - 2] == "_")


def markup_attribute(text: str, quote: int) -> bool:
    """Does the quote at ``quote`` close an attribute value of a well-formed tag opened on
    the same line (``<edge id="0" source="n0"/>``)?"""
    line_start = line_bounds(text, quote)[0]
    prefix = text[max(line_start, quote - 256) : quote]
    lt = prefix.rfind("<")
    if lt < 0:
        return False
    m = _OPEN_VALUE_RE.fullmatch(prefix, lt)
    return m is not None and m.group(1) == text[quote]


def is_text(data: bytes) -> bool:
    """Do decoded bytes look like text (at most one in ten characters replaced or a control)?"""
    s = data.decode("utf-8", "replace")
    # One C-speed count per bad character (a decoded blob may be a megabyte), not a loop per character.
    bad = sum(map(s.count, _NOT_TEXT))
    return bad * 10 <= len(s)


#: What ``is_text`` counts against decoded bytes: the replacement character and the C0 controls but
#: tab, line feed and carriage return (the C0 part of ``charsets.XML_IMPOSSIBLE``: XML 1.0 excludes
#: exactly those).
_NOT_TEXT = ("\ufffd", *(chr(c) for lo, hi in XML_IMPOSSIBLE for c in range(lo, hi + 1) if c < 0x20))
