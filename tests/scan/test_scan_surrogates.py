"""The scanner on a text holding a lone surrogate: its native passes read the text with each surrogate
written as ``backend.VIEW_CHAR`` (``backend.surrogate_view``, one code point for one), where they once
all fell back to the Python passes (46 times the scan's time on 2 MB of source with one ``\\ud800``).
The view character is derived by scripts/gen_unicode_tables.py (``unicode_tables.SURROGATE_VIEW``): the
first code point every character table holds as it holds a surrogate, but the two tables in
:data:`ALLOWED`; this test compares every table again, by its own reading of them.

Why the answers are the text's: the eye reads a surrogate as it reads the view character (checked
here for every surrogate and every predicate of the reader), no name or token holds either, and the
ASCII constructs the other passes look for neither start nor end at them. Held by comparing whole
``scan_text`` results with the Python passes on hypothesis text of hostile pieces and surrogates.

Negative controls: a view that writes a surrogate as ``a`` (a letter the eye reads) is told apart by
the same comparison, and the Python record loop, which the view spares, is seen to run without it.
"""

from __future__ import annotations
import __future__

import re
from collections.abc import Iterator
from pathlib import Path
from types import GenericAlias, ModuleType
from typing import Any

import pytest
from helpers.data import NATIVE_HOW, skip_unless_required
from helpers.scanning import scanned
from hypothesis import given, settings
from hypothesis import strategies as st

import envelock.scan as scan_module
from envelock import scan_text
from envelock.eye import backend, charsets, escape, reader, unicode_tables
from envelock.eye.tokens import EXACT_TOKENS, RESERVED_NAMES
from envelock.scan import tags

SURROGATES = [chr(cp) for cp in range(0xD800, 0xE000)]


@pytest.fixture(autouse=True)
def _native() -> Iterator[None]:
    if "native" not in backend.IMPLEMENTATIONS:
        skip_unless_required(f"needs envelock._native ({NATIVE_HOW})", "ENVELOCK_REQUIRE_NATIVE")
    with backend.use("native"):
        yield


_FEATURE = type(__future__.annotations)  # what `from __future__ import annotations` leaves in a module
#: Module attributes that are not character tables: the version, and the named references, whose
#: entries are (reference name, flag, code points of a multi-character decoding), keyed by name.
NOT_CHARACTER_TABLES = {"UNICODE_VERSION", "LT_REFERENCES", "LBRACKET_REFERENCES", "AMP_REFERENCES", "SURROGATE_VIEW"}


def _holds(name: str, table: object, cp: int) -> object:
    """What a character table says of ``cp``: ``False`` when it does not hold it, else ``True`` or the
    value it maps ``cp`` to. ``None`` for an attribute that is no table (a number, a function, a
    module, a type, or one of :data:`NOT_CHARACTER_TABLES`); a table of any other shape fails the
    test, so that no table is left out unread."""
    c = chr(cp)
    if name in NOT_CHARACTER_TABLES or isinstance(table, (bool, type, ModuleType, GenericAlias, _FEATURE)) or callable(table):
        return None
    if isinstance(table, int):
        return cp == table  # one code point (charsets.SOFT_HYPHEN)
    if isinstance(table, str):
        return c in table
    if isinstance(table, dict):
        return table.get(cp, table.get(c, False))
    if isinstance(table, (tuple, list, frozenset, set)):
        items = list(table)
        if not items:
            return False
        if all(isinstance(x, int) for x in items):
            return cp in items
        if all(isinstance(x, str) for x in items):
            return any(c in x for x in items)  # characters or sequences of them
        if all(isinstance(x, tuple) and len(x) == 2 and all(isinstance(y, int) for y in x) for x in items):
            return any(lo <= cp <= hi for lo, hi in items)
    raise AssertionError(f"{name}: a table of a shape this test does not read; teach _holds to read it")


#: The tables the view character may differ from a surrogate in: the surrogates' own (merged back by
#: the backend) and spotlight's whitespace, which neither the eye nor the scanner reads.
ALLOWED = {"charsets.XML_IMPOSSIBLE", "unicode_tables.BLANK_RANGES"}


def _profile(cp: int) -> set[str]:
    """The tables that hold ``cp``, each with what it says of it (``True`` for membership)."""
    out = set()
    for mod in (charsets, unicode_tables):
        for name, table in vars(mod).items():
            said = None if name.startswith("_") else _holds(name, table, cp)
            if said is not None and said is not False:
                out.add(f"{mod.__name__.rsplit('.', 1)[-1]}.{name}" + ("" if said is True else f"={said!r}"))
    return out


def test_the_reference_tables_hold_names_not_characters() -> None:
    for name in NOT_CHARACTER_TABLES - {"UNICODE_VERSION", "SURROGATE_VIEW"}:
        entries = getattr(unicode_tables, name)
        assert entries and all(isinstance(e, tuple) and isinstance(e[0], str) and len(e) == 3 for e in entries), name
        assert all(chr(cp) not in e[0] for e in entries for cp in (0xD800, 0xDFFF, ord(backend.VIEW_CHAR))), name


def test_a_table_of_an_unknown_shape_is_not_passed_over() -> None:
    with pytest.raises(AssertionError, match="a table of a shape"):
        _holds("NEW_TABLE", ((1, "x", 2),), 0x41)


def test_every_table_holds_the_view_character_as_it_holds_a_surrogate() -> None:
    view = _profile(ord(backend.VIEW_CHAR))
    for c in SURROGATES:
        assert _profile(ord(c)) - ALLOWED == view - ALLOWED, hex(ord(c))
    # control: U+FFFD, the obvious choice, is a letter stand-in
    assert _profile(0xFFFD) - ALLOWED != view - ALLOWED


def test_the_eye_reads_every_surrogate_as_it_reads_the_view_character() -> None:
    predicates = [
        reader.readings, reader.is_alpha, reader.is_alnum, reader.is_space, reader.is_ignorable, reader.is_stand_in,
        reader.is_skip, reader.is_letter_stand_in, reader.skeleton,
    ]  # fmt: skip
    for c in SURROGATES:
        assert [p(c) for p in predicates] == [p(backend.VIEW_CHAR) for p in predicates], hex(ord(c))
    names = reader.names_for(RESERVED_NAMES)
    assert not any(c in t for t in (*EXACT_TOKENS, *RESERVED_NAMES) for c in (backend.VIEW_CHAR, *SURROGATES))
    assert backend.VIEW_CHAR not in names.escape_starts()


def test_only_spotlight_reads_blank_ranges() -> None:
    """The one generated table the view character and a surrogate differ in (but XML_IMPOSSIBLE) is
    read by spotlighting alone, in Python and in the core."""
    root = Path(backend.__file__).parent.parent.parent.parent
    users = sorted(
        str(p.relative_to(root))
        for p in [*root.glob("src/envelock/**/*.py"), *root.glob("rust/envelock-core/src/*.rs")]
        if re.search(r"(?m)^(?!\s*(?:#|//)).*\bBLANK_RANGES\b", p.read_text(encoding="utf-8"))
        and p.name not in ("unicode_tables.py", "tables.rs")
    )
    assert users == ["rust/envelock-core/src/spotlight.rs", "src/envelock/envelope/spotlight.py"], users


PIECES = [
    "<", "</", "retrieved_content", ">", "<|im_end|>", "[INST]", "<s>", "\\", "&lt;", "%3C", "\\u003c", '"origin=',
    "\n### Human: ", "USER: ", "\u200b", "\u200d", "\u202e", "\U000e0041", "\x07", "\ufffd", "\ufff9", "ergevrirq_pbagrag",
    "W0lOU1Rd", "\U0001f3f4", " ", "x", "\ud800", "\udfff", "\udc00\ud83d",
]  # fmt: skip
TEXTS = st.lists(st.sampled_from(PIECES), max_size=24).map("".join)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_a_text_with_surrogates_scans_as_the_python_passes_scan_it(text: str) -> None:
    native, python = scanned(text, "native", "fast")
    assert native == python


def test_negative_control_a_view_that_writes_a_letter_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "x <\ud800/retrieved_content> y"
    native, python = scanned(text, "native", "fast")
    assert native == python and any(f.rule == "envelope-close-tag" for f in native)

    def lettered(t: str) -> tuple[str, list[tuple[int, int]]]:
        view, runs = real(t)
        return view.replace(backend.VIEW_CHAR, "a"), runs

    real = backend.surrogate_view
    monkeypatch.setattr(backend, "surrogate_view", lettered)
    assert scan_text(text) != python


def test_the_python_record_loop_is_spared(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the view the native record loop reads the text; without it (the control) the Python loop
    runs over every opener."""
    text = ("<|im_end|> a\u200bb " * 50) + "\ud800"
    calls = [0]
    real = escape.opener_records

    def counted(*args: Any, **kw: Any) -> Any:
        calls[0] += 1
        return real(*args, **kw)

    monkeypatch.setattr(tags, "opener_records", counted)
    found = scan_text(text)
    assert calls[0] == 0 and len(found) >= 50
    real_once = backend.encoded_once
    monkeypatch.setattr(scan_module, "encoded_once", lambda t, view=False: real_once(t))
    assert scan_text(text) == found and calls[0] > 0
