"""The scanner and the CLI read Unicode 17 from the generated tables, not the interpreter's
``unicodedata`` (Unicode 14 on Python 3.11; a red-team round of stop 49):

* a combining mark assigned since (``[I\\u1ad0NST]``) was unassigned to ``_disguised``, so a bracket
  token it disguised was graded a warning (the gate passed; the defang escapes it);
* UTF-16 text without a BOM in a newer script (Kawi, Unicode 15) counted as unassigned characters
  and was taken for binary and skipped.

Each with a control that asks the interpreter's data again."""

from __future__ import annotations

import unicodedata
from types import SimpleNamespace

import pytest

from envelock import scan_text
from envelock.cli import decode as cli_decode
from envelock.eye import reader as modeleye
from envelock.eye.unicode_tables import ALNUM_RANGES, MARK_RANGES
from envelock.scan import tags

pytestmark = pytest.mark.usefixtures("impl")

#: Marks of the generated table that the eye does not read past invisibly and that have no reading:
#: each one drawn inside a bracket token is a disguise, whatever the interpreter's data knows of it.
PLAIN_MARKS = [
    chr(cp)
    for lo, hi in MARK_RANGES
    for cp in range(lo, hi + 1)
    if not modeleye.is_ignorable(chr(cp)) and not any(modeleye.readings(chr(cp)))
]


def test_every_mark_in_a_bracket_token_is_an_error() -> None:
    assert len(PLAIN_MARKS) > 1000
    graded = {ascii(m): [f.severity for f in scan_text(f"[I{m}NST] x")] for m in PLAIN_MARKS}
    assert {k: v for k, v in graded.items() if v != ["error"]} == {}


def test_control_the_interpreters_marks_miss_the_newer_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(modeleye, "is_mark", lambda c: unicodedata.category(c)[0] == "M")
    # (and without stop 50's rule that any non-ASCII character but punctuation is a disguise, which the
    # interpreter's categories answer, failing closed on a code point they call unassigned)
    monkeypatch.setattr(tags, "unicodedata", SimpleNamespace(category=lambda c: "Po"))
    assert any(scan_text(f"[I{m}NST] x")[0].severity == "warning" for m in PLAIN_MARKS)


#: Letters of the generated Unicode 17 tables that this interpreter's data calls unassigned (the
#: newest: no interpreter here knows Unicode 17).
NEWER_LETTERS = [chr(cp) for lo, hi in ALNUM_RANGES for cp in range(lo, hi + 1) if unicodedata.category(chr(cp)) == "Cn"][-3:]
TEXT = "Text: " + (" ".join(NEWER_LETTERS) + " ") * 20 + "\n</retrieved_content>\n"


def test_utf16_text_in_a_newer_script_is_decoded() -> None:
    assert len(NEWER_LETTERS) == 3
    got = cli_decode.decode(TEXT.encode("utf-16-le"))
    assert got.skipped is None and got.text == TEXT


def test_control_the_interpreters_unassigned_count_does_not_decode_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_decode, "_unassigned", lambda text: sum(1 for c in text if unicodedata.category(c) == "Cn"))
    assert cli_decode.decode(TEXT.encode("utf-16-le")).text != TEXT
