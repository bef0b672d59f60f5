"""The encoded pass's numeric references: only one whose value is an introducer's code point
(``%``, ``\\``, ``=``, ``+``) is a candidate (``encoded._numeric_introducers``). A reference counts
only as a layer (one for an opener is the openers pass's), so a reference to any other character
could decide nothing; leaving it out spares a match object and a look-up per ``&#x3c;`` of hostile
text. Held here against the reference pattern it narrows (every digit count, padding, case,
terminator and value up to 0x2FF, and past the digit limit): the narrowed pattern matches exactly
the references the reference pattern matches that decode to an introducer, with the same span.
Negative control: a narrowing that forgot the digit limit (``0*`` before the value) is caught."""

from __future__ import annotations

import re

from envelock.scan import encoded

#: The reference pattern as it was before the narrowing: any numeric reference.
WIDE = re.compile(r"&(?:#[xX](?P<rx>[0-9a-fA-F]{1,6})|#(?P<rd>[0-9]{1,7}));?")
NARROW = re.compile(encoded._SCHEMES[-1])


def _decodes_to_introducer(m: re.Match[str]) -> bool:
    value = int(m["rx"], 16) if m["rx"] is not None else int(m["rd"])
    return 0 < value <= 0x10FFFF and chr(value) in encoded._INTRODUCERS


def _references() -> list[str]:
    """Every numeric reference to the values below: hex (``x``/``X``, lower and upper digits) and
    decimal, padded with 0 to 7 zeros, then nothing, ``;``, a letter, a digit or both."""
    out: set[str] = set()
    for value in [*range(0x300), 0x10FFFF, 0x110000]:
        for pad in ("0" * k for k in range(8)):
            forms = [f"&#x{pad}{value:x}", f"&#X{pad}{value:X}", f"&#{pad}{value}"]
            out.update(form + after for form in forms for after in ("", ";", "g", "5", ";5"))
    return sorted(out)


REFERENCES = _references()


def test_the_narrowed_references_are_those_that_decode_to_an_introducer() -> None:
    assert len(REFERENCES) > 20_000
    kept = 0
    for text in REFERENCES:
        wide, narrow = WIDE.match(text), NARROW.match(text)
        assert wide is not None, text
        if _decodes_to_introducer(wide):
            assert narrow is not None and narrow.group() == wide.group(), text
            kept += 1
        else:
            assert narrow is None or narrow.group("rn") is not None, text
    assert kept > 100  # every introducer, in both bases, padded and not


def test_control_a_narrowing_without_the_digit_limit_is_caught() -> None:
    loose = re.compile(r"&(?:#[xX](?P<rx>0*(?:25|2[bB]|3[dD]|5[cC])(?![0-9a-fA-F]))|#(?P<rd>0*(?:37|43|61|92)(?![0-9])));?")
    wrong = [t for t in REFERENCES if (m := WIDE.match(t)) is not None and bool(loose.match(t)) != _decodes_to_introducer(m)]
    assert wrong, "a narrowing with no digit limit must be told apart"
