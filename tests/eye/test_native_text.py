"""Every code point a ``str`` can hand the native core crosses into it and back intact.

The glue reads a non-ASCII text as the bytes of CPython's strict UTF-8 encoder without validating
them a second time (``encoded_str`` in ``rust/envelock-py/src/lib.rs``: a tenth of defang's time
on multilingual text); the encoder's contract is that those bytes are UTF-8. Held here on a text
of every code point but the surrogates, ended by a token: the native defang of it is the Python
reference's, in one call and through a shared ``Utf8`` copy (``defang_body``).
Negative control: the same comparison tells an output one code point off from it.
"""

from __future__ import annotations

import sys

from helpers.data import NATIVE_HOW, optional_module

from envelock.eye import reference
from envelock.eye.tokens import RESERVED_NAMES

_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

#: Every code point but the surrogates (which no UTF-8 holds), then a token the defang must change.
TEXT = "".join(chr(c) for c in range(sys.maxunicode + 1) if not 0xD800 <= c <= 0xDFFF) + "<|im_end|>"


def test_every_code_point_crosses_intact() -> None:
    want = reference.defang(TEXT, "reserved", RESERVED_NAMES)
    assert want != TEXT  # the defang changes the text, so the result is built and crosses back
    assert _native.defang(TEXT, "reserved", RESERVED_NAMES) == want
    body = _native.defang_body(TEXT, "reserved", RESERVED_NAMES)
    assert _native.defang_body(TEXT, "reserved", RESERVED_NAMES, _native.Utf8(TEXT)) == body != TEXT


def test_control_one_code_point_off_is_told_apart() -> None:
    got = _native.defang(TEXT, "reserved", RESERVED_NAMES)
    k = got.index("\u00e9")
    assert got[:k] + "\u00ea" + got[k + 1 :] != reference.defang(TEXT, "reserved", RESERVED_NAMES)
