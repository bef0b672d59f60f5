"""The native core leaves no UTF-8 copy inside the caller's string.

``PyUnicode_AsUTF8AndSize`` (what PyO3's ``to_str`` calls under the stable ABI) caches the UTF-8
form of a non-ASCII string inside that string for as long as it lives: after one ``compose`` of a
100 MB body the caller's body would hold 100 MB more. The glue encodes non-ASCII text into a
temporary ``bytes`` instead. CPython's ``sys.getsizeof`` of a string counts that cache, so every
native function is called on a fresh non-ASCII string and its size must not change.

Negative control: the C call that fills the cache (through ``ctypes``) must change the size, so the
measure would see a glue that used it.
"""

from __future__ import annotations

import ctypes
import sys
from collections.abc import Callable

import pytest
from helpers.data import NATIVE_HOW, optional_module

import envelock
from envelock.eye.tokens import RESERVED_NAMES

_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

R = RESERVED_NAMES
CALLS: dict[str, Callable[[str], object]] = {
    "defang": lambda s: _native.defang(s, "xml", R),
    "defang_body": lambda s: _native.defang_body(s, "xml", R),
    "canonical_body": lambda s: _native.canonical_body(s, "xml", R),
    "find_ascii": lambda s: _native.find_ascii(s, "</", 0),
    "classes_present": lambda s: _native.classes_present(s, [[(0x6F22, 0x6F22)], [(0xE0000, 0xE007F)]]),
    "undefang": lambda s: _native.undefang(s, "xml", R),
    "undefang_body": lambda s: _native.undefang_body(s, "xml", R),
    "read_after": lambda s: _native.read_after(s, 1, R),
    "read_bracket": lambda s: _native.read_bracket(s, 1),
    "openers": lambda s: _native.openers(s, R),
    "openers_many": lambda s: _native.openers_many([s, s], R),
    "defang_many": lambda s: _native.defang_many([s, "ascii"], "xml", R),
    "sanitize_events": lambda s: _native.sanitize_events(s),
    "xml_unescape_text": lambda s: _native.xml_unescape_text(s),
    "xml_body_is": lambda s: _native.xml_body_is(s, s, 0, len(s)),  # both the reader's text and the preface
    "skeleton": lambda s: _native.skeleton(s),
    "Utf8": lambda s: _native.Utf8(s),
    "blob_runs": lambda s: _native.blob_runs(s, [b"<"], 8, 12),
    "blob_holds": lambda s: _native.blob_holds(s.encode("utf-8", "surrogatepass"), [b"<"], 8, 12),
    "binary_group_starts": lambda s: _native.binary_group_starts(s),
    "line_markers": lambda s: _native.line_markers(s, ["USER:"]),
    "attribute_injections": lambda s: _native.attribute_injections(s, ["origin"]),
    "ascii_word_starts": lambda s: _native.ascii_word_starts(s, ["origin", "caf"]),
    "exact_tokens": lambda s: _native.exact_tokens(s, R),
    "class_runs": lambda s: _native.class_runs(s, [(0, 8), (0x7F, 0x9F)]),
    "words_with_runs": lambda s: _native.words_with_runs(s, [(0x200B, 0x200D)], [(0x61, 0x7A)]),
    "scheme_starts": lambda s: _native.scheme_starts(s, [("%", "uU0123456789", "0123456789"), ("&", "#", "")], 1 << 20),
    "escape_plan": lambda s: _native.escape_plan(s, "<", "<&", "<", "%+=\\", [("bsol", "\\")], 2, 192, [">>TITLE<<"]),
    "openers_with_escapes": lambda s: _native.openers_with_escapes(s, [("%", "uU0123456789", "0123456789"), ("&", "#", "")], 192),
    "datamark": lambda s: _native.datamark(s, "\u02c6"),
    "undatamark": lambda s: _native.undatamark(s, "\u02c6"),
    "interleave": lambda s: _native.interleave(s, "\u02c6", 7),
    "uninterleave": lambda s: _native.uninterleave(s, "\u02c6"),
    "decode_escapes": lambda s: _native.decode_escapes(s, 8),
    # the scanner's native loops and its order check, through the scan that calls them (their arguments are its own)
    "findings": lambda s: envelock.scan_text(s),
    "opener_reports": lambda s: envelock.scan_text(s),
    "starts_increase": lambda s: envelock.scan_text(s),
}


def _fresh() -> str:
    # built at run time, so no two calls share one string object (or its cache)
    return "".join(["caf\u00e9 <b>&amp; \u0441\u043b\u043e\u0432\u043e \u6f22\u5b57 <|im_end|> [INST] ", str(id(object()))]) * 64


def test_every_native_function_is_listed() -> None:
    public = {name for name in dir(_native) if not name.startswith("_") and callable(getattr(_native, name))}
    public -= {"SurrogateError"}
    assert public == set(CALLS), public ^ set(CALLS)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_no_utf8_copy_is_left_in_the_callers_string(name: str) -> None:
    text = _fresh()
    before = sys.getsizeof(text)
    CALLS[name](text)
    assert sys.getsizeof(text) == before, f"{name} left {sys.getsizeof(text) - before} bytes in the caller's string"


def test_negative_control_the_cache_is_seen() -> None:
    as_utf8 = ctypes.pythonapi.PyUnicode_AsUTF8AndSize
    as_utf8.restype = ctypes.c_void_p
    as_utf8.argtypes = [ctypes.py_object, ctypes.c_void_p]
    text = _fresh()
    before = sys.getsizeof(text)
    as_utf8(text, None)
    assert sys.getsizeof(text) > before + len(text)
    ascii_text = "plain ascii " * 64  # an ASCII string's storage is its UTF-8: nothing is cached
    before = sys.getsizeof(ascii_text)
    as_utf8(ascii_text, None)
    assert sys.getsizeof(ascii_text) == before
