"""The committed Unicode tables match what the generator makes from ../shared/unicode."""

from __future__ import annotations

import importlib
import subprocess
import sys
from typing import Any

import pytest
from helpers.data import ROOT, shared_dir

from envelock.eye import unicode_tables as u
from envelock.eye.reader import char_skeleton, is_ignorable


def test_generated_module_is_current() -> None:
    shared = shared_dir()
    proc = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_unicode_tables.py"), "--shared", str(shared), "--check"],
        capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0, proc.stderr


def test_tables_hold_what_the_design_names() -> None:
    for cp in (0xFF1C, 0xFE64, 0x2039, 0x2329, 0x27E8, 0x3008, 0x02C2, 0x1438, 0x276E):
        assert cp in u.LT_LOOKALIKES, hex(cp)
    for cp in (0xFF0F, 0x2044, 0x2215, 0x29F8, 0x2571):
        assert cp in u.SLASH_LOOKALIKES, hex(cp)
    for ch in "\u00ad\u034f\u200b\u200d\u2060\ufe0f\ufeff\U000e0041\U000e0100\u3164\u180e":
        assert is_ignorable(ch), f"U+{ord(ch):04X}"
    assert not is_ignorable("a") and not is_ignorable(" ")
    assert u.UNICODE_VERSION == "17.0.0"
    assert len(u.RGI_EMOJI_TAG_SEQUENCES) == 3


def test_skeletons_of_look_alikes() -> None:
    assert char_skeleton("\u0435") == "e"  # Cyrillic
    assert char_skeleton("\u03bf") == "o"  # Greek omicron
    assert char_skeleton("\U0001d42b") == "r"  # mathematical bold
    assert char_skeleton("0") == "o" and char_skeleton("m") == "rn"
    assert char_skeleton("\u200b") == "" and char_skeleton("_") == "" and char_skeleton("\x08") == ""


def _generator() -> Any:
    """``scripts/gen_unicode_tables.py`` as a module (imported by name: the script is no package's and
    is not type-checked with the tests)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        return importlib.import_module("gen_unicode_tables")
    finally:
        sys.path.pop(0)


def test_the_surrogate_view_is_derived_from_the_tables() -> None:
    """``SURROGATE_VIEW`` is what the generator derives from the committed tables (the first code point
    held by every table as a surrogate is), and the backend writes surrogates as it. Controls: a table
    that held the view character but no surrogate moves the derivation to a later code point; a table
    of a shape the generator does not read stops it."""
    gen = _generator()
    module = (ROOT / "src" / "envelock" / "eye" / "unicode_tables.py").read_text(encoding="utf-8")
    assert gen.surrogate_view_char(module) == u.SURROGATE_VIEW
    from envelock.eye import backend

    assert backend.VIEW_CHAR == chr(u.SURROGATE_VIEW)
    moved = gen.surrogate_view_char(module + f"\nEXTRA_TABLE = ({u.SURROGATE_VIEW:#x},)\n")
    assert moved > u.SURROGATE_VIEW
    with pytest.raises(SystemExit, match="EXTRA_TABLE"):
        gen.surrogate_view_char(module + "\nEXTRA_TABLE = ((1, 'x', 2),)\n")
