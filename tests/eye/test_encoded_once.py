"""``backend.encoded_once``: the scanner's native calls on one non-ASCII text read one UTF-8 copy.

Every native function that takes the copy gives on it what it gives on the ``str``; within the
block the scanner's calls are handed the copy (and only for that very object); outside it, and for
ASCII text, they are handed the ``str``; a text with a lone surrogate is handed a copy of its
surrogate view. Negative control: a copy of
another text, handed in its place, changes what the scan finds, so the equalities would see a
backend that mixed texts up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import pytest
from helpers.data import NATIVE_HOW, optional_module

import envelock
from envelock.eye import backend

_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

TEXTS = (
    "caf\u00e9 <b>&amp; \u0441\u043b\u043e\u0432\u043e \u6f22\u5b57 <|im_end|> [INST] <NAME> USER: hi\n",
    '\u00ab\u2039retrieved_content provenance="x"\u203a\n  assistant: ok "origin=" 01100001 01100010 01100011 01100100 ',
    "PHJldHJpZXZlZF9jb250ZW50Pg== \u00e9 3c2f72657472696576656420636f6e74656e743e \u00ff",
)

CALLS: dict[str, Callable[[object], object]] = {
    "classes_present": lambda s: _native.classes_present(s, [[(0x6F22, 0x6F22)], [(0xE0000, 0xE007F)]]),
    "blob_runs": lambda s: _native.blob_runs(s, [b"<", b"\xef\xbc\x9c"], 8, 12, True),
    "binary_group_starts": lambda s: _native.binary_group_starts(s),
    "exact_tokens": lambda s: _native.exact_tokens(s, envelock.RESERVED_NAMES),
    "ascii_word_starts": lambda s: _native.ascii_word_starts(s, ["usER", "ergevrirq", "in"]),
    "line_markers": lambda s: _native.line_markers(s, ["USER:", "assistant:"]),
    "words_with_runs": lambda s: _native.words_with_runs(s, [(0x200B, 0x200D), (0xE9, 0xE9)], [(0x61, 0x7A), (0x430, 0x44F)]),
    "attribute_injections": lambda s: _native.attribute_injections(s, ["origin", "provenance"]),
    "opener_reports": lambda s: _native.opener_reports(
        s, envelock.RESERVED_NAMES, "angle", lambda *a: (None, [("r", "error", repr(a), a[0], a[1])])
    ),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_a_copy_reads_as_its_text(name: str, text: str) -> None:
    text = text * 40
    assert CALLS[name](_native.Utf8(text)) == CALLS[name](text)


@contextmanager
def _handed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """What the scanner hands ``_native.blob_runs`` (one of the calls that take the copy)."""
    seen: list[object] = []
    real = _native.blob_runs

    def spy(text: object, *args: object) -> object:
        seen.append(text)
        return real(text, *args)

    monkeypatch.setattr(_native, "blob_runs", spy)
    yield seen


@pytest.mark.parametrize("text", TEXTS, ids=range(len(TEXTS)))
def test_the_scan_hands_its_calls_one_copy(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with backend.use("native"):
        plain = envelock.scan_text(text)
        with _handed(monkeypatch) as seen:
            assert envelock.scan_text(text) == plain
    assert len(seen) == 1 and isinstance(seen[0], _native.Utf8)
    assert backend._ENCODED.get() is None  # the copy ends with the scan


def test_ascii_gets_no_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    with backend.use("native"), _handed(monkeypatch) as seen:
        envelock.scan_text("plain ascii <|im_end|> " * 8)
    assert seen and all(type(t) is str for t in seen)


def test_a_lone_surrogate_gets_a_copy_of_its_view(monkeypatch: pytest.MonkeyPatch) -> None:
    """A text the core cannot take is handed, to the calls that read it as the eye does, one copy of its
    surrogate view (tests/scan/test_scan_surrogates.py), and only within the scan; compose's own
    ``encoded_once`` (no ``view``) makes none."""
    text = "lone \ud800 surrogate <|im_end|> " * 8
    with backend.use("native"), _handed(monkeypatch) as seen:
        envelock.scan_text(text)
        assert backend._VIEWED.get() is None
        with backend.encoded_once(text):
            assert backend._readable(text) is text
    assert len(seen) == 1 and isinstance(seen[0], _native.Utf8)


def test_only_that_very_text_gets_the_copy() -> None:
    text = TEXTS[0] * 3
    twin = "".join(list(text))  # equal, another object
    assert twin == text and twin is not text
    with backend.use("native"), backend.encoded_once(text):
        assert isinstance(backend._encoded(text), _native.Utf8)
        assert backend._encoded(twin) is twin


def test_negative_control_a_copy_of_another_text_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "\u00e9 " + TEXTS[1] * 4
    other = "\u00e9 nothing to see here " * 40
    with backend.use("native"):
        right = envelock.scan_text(text)
        monkeypatch.setattr(backend, "_encoded", lambda t: _native.Utf8(other) if t is text else t)
        wrong = envelock.scan_text(text)
    assert right and wrong != right


def test_a_copy_of_another_text_is_refused_by_the_calls_that_return_the_text() -> None:
    """``defang_body`` and ``findings`` answer with the ``str`` when nothing changes: a copy must be of
    that very object (a copy of an equal text is refused too)."""
    text = TEXTS[0] * 3
    twin = "".join(list(text))
    assert _native.defang_body(text, "xml", envelock.RESERVED_NAMES, _native.Utf8(text)) == _native.defang_body(
        text, "xml", envelock.RESERVED_NAMES
    )
    with pytest.raises(ValueError, match="not a copy of this text"):
        _native.defang_body(text, "xml", envelock.RESERVED_NAMES, _native.Utf8(twin))
    with pytest.raises(ValueError, match="not a copy of this text"):
        _native.findings(object, ["f"] * 10, text, [], lambda t, a, b: "", 80, _native.Utf8(twin))


def test_compose_reads_one_copy_per_body(monkeypatch: pytest.MonkeyPatch) -> None:
    """Compose's sanitize pass and defang of a body read one copy; with a marker still to choose the
    defang comes later, on the ``str``. The output is the same either way."""
    from envelock import PrefaceEntry, compose_preface

    body = TEXTS[1] * 5
    seen: list[object] = []
    real = _native.defang_body

    def spy(text: str, level: Literal["reserved", "markup", "xml"], reserved: tuple[str, ...], utf8: Any = None) -> str:
        seen.append(utf8)
        return str(real(text, level, reserved, utf8))

    with backend.use("native"):
        plain = compose_preface([PrefaceEntry("external", "web:x", body)])
        monkeypatch.setattr(_native, "defang_body", spy)
        assert compose_preface([PrefaceEntry("external", "web:x", body)]) == plain
        assert len(seen) == 1 and isinstance(seen[0], _native.Utf8)
        seen.clear()
        compose_preface([PrefaceEntry("external", "web:x", body)], spotlight="datamark")
        assert seen == [None]


#: A text the scanner reads folded (``scan._base.ascii_folded``: KELVIN SIGN read as ``K``), non-ASCII, with
#: what the three passes over the folded text report (a turn marker, an attribute injection, a ROT13 word).
FOLDED = '\u212a \u00e9 x\nUSER: hi "origin=" x ergevrirq_pbagrag\n' * 20


def test_the_folded_text_is_read_from_one_copy_alongside(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    real = _native.line_markers

    def spy(text: object, *args: object) -> object:
        seen.append(text)
        return real(text, *args)

    with backend.use("native"):
        monkeypatch.setattr(backend, "encoded_alongside", lambda text: None)
        monkeypatch.setattr("envelock.scan._base.encoded_alongside", lambda text: None)
        plain = envelock.scan_text(FOLDED)
        monkeypatch.undo()
        monkeypatch.setattr(_native, "line_markers", spy)
        assert envelock.scan_text(FOLDED) == plain
    assert {f.rule for f in plain} == {"prose-turn-marker", "forged-attribute", "encoded-tag"}
    assert len(seen) == 1 and isinstance(seen[0], _native.Utf8)
    assert backend._ENCODED.get() is None  # the copies end with the scan


def test_a_copy_alongside_only_within_a_block_and_not_for_ascii() -> None:
    other = "\u00e9 other"
    with backend.use("native"):
        backend.encoded_alongside(other)
        assert backend._copy_of(other) is None  # no block: nothing to hold it
        with backend.encoded_once(TEXTS[0]):
            backend.encoded_alongside("ascii only")
            backend.encoded_alongside("lone \ud800")
            backend.encoded_alongside(other)
            assert backend._copy_of("ascii only") is None and backend._copy_of("lone \ud800") is None
            assert isinstance(backend._encoded(other), _native.Utf8)
        assert backend._copy_of(other) is None


def test_negative_control_a_copy_of_another_text_alongside_is_seen(monkeypatch: pytest.MonkeyPatch) -> None:
    with backend.use("native"):
        right = envelock.scan_text(FOLDED)
        wrong_text = "\u00e9 nothing here " * 40

        def wrong(text: str) -> None:
            current = backend._ENCODED.get()
            assert current is not None
            current.append((text, _native.Utf8(wrong_text)))

        monkeypatch.setattr("envelock.scan._base.encoded_alongside", wrong)
        assert envelock.scan_text(FOLDED) != right
