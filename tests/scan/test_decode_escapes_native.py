"""The native ``decode_escapes`` (``rust/envelock-core/src/unescape.rs``) held equal to the Python
reference, ``_base._decode_escapes_reference``.

``_decode_escapes`` answers natively when the core is in use; ``backend.native_decode_escapes`` is
``None`` only for a text the core cannot take or an answer it cannot give (a lone surrogate), and
the reference decodes those. Held on every pair of a palette of escape pieces, on hypothesis texts
made of them and of any other text, and on every string of the corpora. Controls: the same check
must tell apart from the native answers a definition that stops after two rounds, one that reads
octal without its lookahead and one that drops the trailing space of the CSS form.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable
from urllib.parse import unquote

import pytest
from helpers.data import load_corpus, shared_dir, shared_strings
from hypothesis import given
from hypothesis import strategies as st

from envelock.eye import backend
from envelock.scan import _base

#: Pieces that, alone or next to each other, take every branch of ``_decode_escapes``.
PIECES = [
    # backslash runs and the letters of the forms after them
    "\\", "\\\\", "\\\\\\\\", "\\\\\\\\\\", "x", "u", "U", "{", "}", "0", "00", "0000000000000000", "7",
    "3c", "3C", "c3", "a9", "A9", "e2", "80", "bc", "9c", "f0", "9f", "fB", "41", "101", "777", "001",
    "2", "8", "b", "B", "z", " ", "10FFFF", "110000", "d800", "D83D", "DC00",
    "\\x3c", "\\x{3c}", "\\u003c", "\\u{00000000003c}", "\\U0001F400", "\\U00110000", "\\ud800", "\\74",
    "\\3c ", "\\00002f", "\\xef\\xbd\\x9c", "\\xc3\\xa9", "\\xc3", "\\\\xa9", "\\xc0\\x80", "\\xed\\xa0\\x80",
    # quoted-printable and its soft breaks
    "=", "=\n", "=\r\n", "\r", "\n", "=3C", "=c3=a9", "=C3", "=A9", "=e2=80=bc", "=f0=9f=90=80",
    # percent layers and %u
    "%", "%25", "%2525", "%3C", "%3c", "%u", "%U", "%u003C", "%uD800", "%C3", "%A9", "%F0", "%80",
    "%E2%82", "%ZZ", "%4", "%25252525252525", "%252525252525253C", "%25252525252525253C",
    # UTF-7 short forms and segments: valid, invalid, surrogates
    "+", "-", "+-", "ADw", "AD4", "AC8", "+ADw-", "+AD4", "+AC8-", "+AF8-", "+AGE-", "+AG-", "+AGF-",
    "+AGEA-", "+2D3cAA-", "+3AA-", "+2D3-", "+2D3YAA-", "/", "AG",
    # references: valid, invalid, legacy without ';', numeric out of range
    "&", "&amp;", "&amp", "&lt", "&lt;", "&LT", "&ltx", "&#", "&#x", "&#0;", "&#1;", "&#60", "&#x3c;",
    "&#x110000;", "&#xD800;", "&#128;", "&#13;", "&#99999999999;", "&notit;", "&notin;", "&fjlig;",
    "&ampx", "&nosuch;", "&#38;", "&#x26;", ";", "#",
    # other text
    "a", "é", "日", "\U0001f400", "\x00", "\u200b", "<", "s>",
]  # fmt: skip

#: Pieces for hypothesis: the palette, and any text without a surrogate.
_ANY_TEXT = st.text(st.characters(codec="utf-8"), max_size=6)
_TEXTS = st.lists(st.sampled_from(PIECES) | _ANY_TEXT, max_size=14).map("".join)


def _has_surrogate(s: str) -> bool:
    return any(0xD800 <= ord(c) <= 0xDFFF for c in s)


def _decoder(rounds: int = _base.ESCAPE_LAYERS, esc_re: re.Pattern[str] = _base._ESC_RE) -> Callable[[str], str]:
    """The reference's steps with one part swapped (for the controls). ``_esc_char_of``, not the
    cached ``_esc_char``: a control's matches must not reach the reference's cache."""

    def decode(window: str) -> str:
        for _ in range(rounds):
            plain = html.unescape(window) if "&" in window else window
            if "=" in plain:
                for soft in _base.SOFT_BREAKS:
                    plain = plain.replace(soft, "")
            new = unquote(esc_re.sub(_base._esc_char_of, plain), errors="replace")
            if new == window:
                break
            window = new
        return window

    return decode


def _mutated_esc_re(old: str, new: str) -> re.Pattern[str]:
    pattern = _base._ESC_RE.pattern
    assert pattern.count(old) == 1, old
    return re.compile(pattern.replace(old, new))


#: The controls: each differs from the reference in one detail.
CONTROLS = {
    "one round fewer": _decoder(rounds=_base.ESCAPE_LAYERS - 1),
    "octal without its lookahead": _decoder(esc_re=_mutated_esc_re("([0-7]{3})(?![0-9a-fA-F])", "([0-7]{3})")),
    "CSS form without its space": _decoder(esc_re=_mutated_esc_re("([0-9a-fA-F]{1,6}) ?", "([0-9a-fA-F]{1,6})")),
}


def _first_difference(decode: Callable[[str], str], texts: Iterable[str]) -> str | None:
    """The first text whose native answer is not ``decode``'s (a ``None`` answer only where
    ``decode``'s answer or the text holds a lone surrogate)."""
    for t in texts:
        got = backend.native_decode_escapes(t, _base.ESCAPE_LAYERS)
        want = decode(t)
        if got is None:
            if not (_has_surrogate(t) or _has_surrogate(want)):
                return f"{t!r}: native None, {want!r}"
        elif got != want:
            return f"{t!r}: native {got!r} != {want!r}"
    return None


def _pairs() -> list[str]:
    return [a + b for a in PIECES for b in PIECES]


@pytest.mark.usefixtures("native")
def test_native_decodes_every_pair_of_the_palette_as_the_reference() -> None:
    texts = PIECES + _pairs()
    assert _first_difference(_base._decode_escapes_reference, texts) is None
    # Not a test of nothing: the core answers nearly all of them, and most change.
    answers = [backend.native_decode_escapes(t, _base.ESCAPE_LAYERS) for t in texts]
    assert sum(a is not None for a in answers) > 0.9 * len(texts)
    assert sum(a is not None and a != t for a, t in zip(answers, texts, strict=True)) > 0.5 * len(texts)
    assert all(_base._decode_escapes(t) == _base._decode_escapes_reference(t) for t in texts)


@pytest.mark.usefixtures("native")
@given(_TEXTS)
def test_native_decodes_as_the_reference(text: str) -> None:
    assert _first_difference(_base._decode_escapes_reference, [text]) is None
    assert _base._decode_escapes(text) == _base._decode_escapes_reference(text)


@pytest.mark.usefixtures("native")
@given(st.lists(st.sampled_from(PIECES), min_size=3, max_size=40).map("".join))
def test_native_decodes_long_palette_texts_as_the_reference(text: str) -> None:
    assert _first_difference(_base._decode_escapes_reference, [text]) is None


@pytest.mark.usefixtures("native")
def test_native_decodes_every_corpus_string_as_the_reference() -> None:
    texts = [p["payload"] for p in load_corpus()]
    assert len(texts) > 100
    assert _first_difference(_base._decode_escapes_reference, texts) is None
    # The same strings joined, as the scanner joins its windows.
    assert (
        _first_difference(_base._decode_escapes_reference, ["\n".join(texts[k : k + 50]) for k in range(0, len(texts), 50)])
        is None
    )


@pytest.mark.usefixtures("native")
def test_native_decodes_every_shared_corpus_string_as_the_reference() -> None:
    shared_dir()  # skips (or fails under ENVELOCK_REQUIRE_SHARED) without ../shared
    texts = [s for _, s in shared_strings()]
    assert len(texts) > 1000
    assert _first_difference(_base._decode_escapes_reference, texts) is None


@pytest.mark.usefixtures("native")
def test_a_text_or_answer_with_a_lone_surrogate_is_decoded_by_the_reference() -> None:
    for text in ["%3C\ud800", "+3AA-%3C", "+2D3YAA-"]:
        assert backend.native_decode_escapes(text, _base.ESCAPE_LAYERS) is None
        assert _base._decode_escapes(text) == _base._decode_escapes_reference(text)
    assert _has_surrogate(_base._decode_escapes("+3AA-"))


def test_the_control_definitions_differ_from_the_reference_in_their_one_detail() -> None:
    # The controls' common part is the reference: without the swap it decodes as it does.
    assert all(_decoder()(t) == _base._decode_escapes_reference(t) for t in PIECES + _pairs())


@pytest.mark.usefixtures("native")
@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_control_a_broken_definition_is_told_apart(name: str) -> None:
    assert _first_difference(CONTROLS[name], PIECES + _pairs()) is not None
