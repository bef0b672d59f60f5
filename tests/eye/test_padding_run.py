"""The padding bound counts a character with both a letter reading and an empty one as read past.

A mark or symbol with a letter reading (``ˠ`` MODIFIER LETTER SMALL GAMMA reads ``g``, ``y`` or
nothing) both starts a name and is read past. The run of characters read past in a row must then go
on for the readings that skip it: ``<ˠ`` + 31 blanks reached the 32-character bound (fail closed)
with the reserved names alone but not with the full tables, which hold a name starting with ``g``,
so the defang left the opener alone while the eye counted a tag (found by fuzz_spotlight).
"""

from __future__ import annotations

import pytest

from envelock.eye import backend, escape, reader

pytestmark = pytest.mark.usefixtures("impl")

#: Characters with a letter reading and an empty one, and a plain blank for comparison.
DUAL = ["\u02e0", "\u0c02"]
BLANK = "\u2000"


def _names() -> tuple[reader.Names, reader.Names]:
    names = reader.names_for()
    return names, reader.Names(names.reserved, (), pipes=False, spelled=names.spelled)


@pytest.mark.parametrize("first", [*DUAL, BLANK])
@pytest.mark.parametrize("blanks", [30, 31, 32])
def test_the_bound_does_not_depend_on_the_names(first: str, blanks: int) -> None:
    text = "<" + first + BLANK * blanks + "x\n<"
    full, only = _names()
    kinds = {reader.read_after(text, 1, full).kind, reader.read_after(text, 1, only).kind}
    assert kinds == ({"padding"} if blanks + 1 >= reader.MAX_RUN else {"none"}), kinds


@pytest.mark.parametrize("first", DUAL)
def test_the_defang_escapes_what_the_eye_counts(first: str) -> None:
    text = "<" + first + BLANK * 31 + "x"
    assert escape.defang(text, level="markup").startswith("<\\"), backend.implementation()
    assert reader.reserved_tag_count(escape.defang(text, level="markup")) == 0


def test_control_the_old_count_disagrees(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run restarting wherever a name advanced (the old rule) gives the two name sets different
    verdicts on the same text: the comparison above tells it apart."""
    monkeypatch.setattr(reader, "_run_after", lambda run, advanced, parts: 0 if advanced else run + 1)
    text = "<\u02e0" + BLANK * 31 + "x\n<"
    full, only = _names()
    assert reader.read_after(text, 1, full).kind != reader.read_after(text, 1, only).kind
