"""A native call lets go of the UTF-8 it read before it makes its output (``let_go`` in
``rust/envelock-py/src/lib.rs``): the text's UTF-8, the core's copy and the new ``str`` are never
alive at once, so compose and verify peak at twice a non-ASCII body, as for ASCII
(``benchmarks/memory.py``: 3.0x before).

Held here three ways:

- a ``Utf8`` copy is given up exactly when a call made a new text from at least half of it, and
  every call that is handed it afterwards answers as it does on the ``str`` itself (it encodes the
  text again);
- the Python-side peak of compose and verify on a non-ASCII body (``tracemalloc``: the copy, the
  bodies and the preface are Python objects; the core's own output is not counted, and the
  encoder's over-allocation is) stays at twice the body;
- control: the same measurement with one more copy of the body held through the defang (what the
  glue did before) is caught.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest
from helpers.data import NATIVE_HOW, optional_module

from envelock import PrefaceEntry, compose_preface, verify_preface
from envelock.eye import backend, reference
from envelock.eye.escape import Level
from envelock.eye.tokens import RESERVED_NAMES

_native = optional_module("envelock._native", require_env="ENVELOCK_REQUIRE_NATIVE", how=NATIVE_HOW)

LEVELS: tuple[Level, ...] = ("reserved", "markup", "xml")
#: Bodies the defang changes (a token, a tag, one near the end that reads into the context) and
#: ones it leaves as they are, non-ASCII each.
CHANGED = ("caf\u00e9 <|im_end|> x", "\u65e5\u672c </retrieved_content>", "\u00e9 " * 40 + "<retrieved_content")
SAME = ("caf\u00e9 plain", "\u65e5\u672c \u00e9\u00e9")


def _fresh_answers(text: str) -> tuple[object, ...]:
    return (
        _native.sanitize_events(text, False),
        _native.defang_body(text, "reserved", RESERVED_NAMES),
        _native.canonical_body(text, "reserved", RESERVED_NAMES),
        _native.exact_tokens(text, RESERVED_NAMES),
    )


def _answers_with(copy: object, text: str) -> tuple[object, ...]:
    return (
        _native.sanitize_events(copy, False),
        _native.defang_body(text, "reserved", RESERVED_NAMES, copy),
        _native.canonical_body(text, "reserved", RESERVED_NAMES, 0, None, copy),
        _native.exact_tokens(copy, RESERVED_NAMES),
    )


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("body", CHANGED + SAME)
def test_defang_gives_the_copy_up_when_it_makes_a_new_text(level: Level, body: str) -> None:
    copy = _native.Utf8(body)
    got = _native.defang_body(body, level, RESERVED_NAMES, copy)
    assert got == reference.defang_body(body, level, RESERVED_NAMES)
    assert copy.given_up is (got != body)
    # Given up or not, every later call on the copy answers as on the text.
    assert _answers_with(copy, body) == _fresh_answers(body)
    assert len(copy) == len(body.encode())


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("body", CHANGED + SAME)
def test_canonical_check_gives_the_copy_up_for_a_body_of_most_of_the_text(level: Level, body: str) -> None:
    defanged = reference.defang_body(body, level, RESERVED_NAMES)
    for head, tail, most in (("<r>\n", "\n</r>", True), ("<r>\n" + "\u00e9" * 4 * len(defanged), "\n</r>", False)):
        text = head + defanged + tail
        start, end = len(head), len(head) + len(defanged)
        copy = _native.Utf8(text)
        got = _native.canonical_body(text, level, RESERVED_NAMES, start, end, copy)
        assert got == (body, True)
        assert copy.given_up is (most and defanged != body), (head[:4], body)
        # A body the check reads after the copy was given up is found as it is without one.
        assert _native.canonical_body(text, level, RESERVED_NAMES, start, end, copy) == got
        assert _native.canonical_body(text, level, RESERVED_NAMES, 0, None, copy) == _native.canonical_body(
            text, level, RESERVED_NAMES
        )


def test_a_copy_of_another_text_is_refused_even_given_up() -> None:
    body = CHANGED[0]
    copy = _native.Utf8(body)
    _native.defang_body(body, "reserved", RESERVED_NAMES, copy)
    assert copy.given_up
    with pytest.raises(ValueError, match="not a copy"):
        _native.defang_body(body + "x", "reserved", RESERVED_NAMES, copy)


#: A non-ASCII body the defang changes (each ``<|im_end|>``), large enough that the objects the
#: test itself allocates are noise, as ``benchmarks/memory.py`` builds it from real text.
SIZE = 2_000_000
BODY = ("caf\u00e9 <|im_end|> " + "the quick brown fox jumps over the lazy dog. " * 20 + "\n") * (SIZE // 920 + 1)
BODY = BODY[:SIZE]


def _peak(call: Callable[[], object]) -> float:
    """The Python-side peak of ``call()`` above what was allocated before it, in bodies."""
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        call()
        return (tracemalloc.get_traced_memory()[1] - base) / len(BODY.encode())
    finally:
        tracemalloc.stop()


def _one_more_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Control: every ``encoded_once`` block also holds another UTF-8 copy of its text, as the
    ``Utf8`` copy was held through the defang's output before the glue let go of it."""
    real = backend.encoded_once

    @contextmanager
    def holding(text: str, *, view: bool = False) -> Iterator[None]:
        extra = text.encode()
        with real(text, view=view):
            yield
        del extra

    monkeypatch.setattr(backend, "encoded_once", holding)  # verify's (parse reads backend.encoded_once)
    monkeypatch.setattr("envelock.envelope.compose.encoded_once", holding)


BOUND = 2.2


def test_compose_and_verify_peak_at_twice_a_non_ascii_body() -> None:
    entries = [PrefaceEntry("external", "web:bench", BODY)]
    assert _native.defang_body(BODY, "reserved", RESERVED_NAMES) != BODY  # the output is a new text
    composed = compose_preface(entries)
    text = str(composed)
    del composed
    assert _peak(lambda: compose_preface(entries)) <= BOUND
    assert _peak(lambda: verify_preface(text)) <= BOUND


def test_control_one_more_copy_through_the_defang_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    entries = [PrefaceEntry("external", "web:bench", BODY)]
    text = str(compose_preface(entries))
    _one_more_copy(monkeypatch)
    assert _peak(lambda: compose_preface(entries)) > BOUND
    assert _peak(lambda: verify_preface(text)) > BOUND
