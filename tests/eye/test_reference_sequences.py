"""A reference for several code points reads inside a name as the code points it decodes to.

Red-team find of stop 42: ``&nGt;`` is U+226B U+20D2 (a ``>`` look-alike and a combining mark).
Written out, the two characters are read past between the letters of a name (a structural look-alike
and a mark); as the reference they ended the reading, so ``</retrieved&nGt;content>`` was left as it
is while ``</retrieved\\u226b\\u20d2content>`` was escaped. SECURITY.md promises references decoded
"as ``html.unescape`` does, in every role".

Every HTML5 named reference whose value holds more than one code point, one of them a structural
look-alike the angle reading reads past (``reader._PASS``), is put between the words of a reserved
name and of a token, on every implementation: the reference form is escaped exactly when the decoded
form is. Control: a reader that reads such a reference as one opaque piece (as before) misses them.
"""

from __future__ import annotations

import html.entities
import importlib
from collections.abc import Callable, Iterator

import pytest

from envelock.eye import reader as me

D = importlib.import_module("envelock.escape")
REF = importlib.import_module("envelock.eye.reference")

SLOTS = ("</retrieved{}content>", "<start_of{}turn>", "<{}/external_content>")


def sequences() -> list[tuple[str, str]]:
    """``(reference, value)`` for every named reference of several code points, one of them in ``_PASS``."""
    return sorted(
        (f"&{k}" if k.endswith(";") else f"&{k};", v)
        for k, v in html.entities.html5.items()
        if len(v) > 1 and any(c in me._PASS for c in v) and k.endswith(";")
    )


def pairs() -> Iterator[tuple[str, str]]:
    for ref, value in sequences():
        for slot in SLOTS:
            yield slot.format(ref), slot.format(value)


def disagreements(defang: Callable[[str], str]) -> list[str]:
    return [ref for ref, value in pairs() if (defang(ref) != ref) != (defang(value) != value)]


def test_there_are_such_references() -> None:
    got = dict(sequences())
    assert len(got) >= 7, len(got)  # HTML5: seven, all of two code points
    assert got["&nGt;"] == "\u226b\u20d2" and "&NotLeftTriangleBar;" in got


@pytest.mark.usefixtures("impl")
def test_a_reference_reads_as_its_code_points() -> None:
    assert disagreements(D.defang) == []
    assert D.defang("</retrieved&nGt;content>") == "<\\/retrieved&nGt;content>"


def test_control_a_reference_read_as_one_opaque_piece_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = me._angle_parts

    def opaque(piece: str) -> tuple[str, ...]:
        if len(piece) > 1:
            return me._piece_readings(piece)
        return real(piece)

    monkeypatch.setattr(me, "_angle_parts", opaque)
    missed = disagreements(REF.defang)
    assert "</retrieved&nGt;content>" in missed, missed
