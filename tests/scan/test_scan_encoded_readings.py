"""Escapes the encoded passes read wrong or never started from (red-team finds of stop 41).

* UTF-8 written as ``\\x`` or quoted-printable bytes (``<\\xef\\xbd\\x9cim_end|>``, U+FF5C for the
  bar) was read byte by byte as Latin-1.
* CSS writes ``/`` as ``\\00002f``: the decoder read octal ``\\000`` first and left ``02f``.
* Braced escapes with leading zeros (``\\u{000000007c}``, ``\\x{00000007c}``) were not read.
* A quoted-printable soft line break (``=`` and a newline) as the only escape after a raw opener
  started no window: ``<|im_=\\nend|>``.
* A bracket followed by escaped padding (``[`` + 33 ``%00`` + ``INST]``) was no finding: the bracket
  reading of padding was ignored in decoded text (the angle one fails closed).
* Four to eight rounds of percent-encoding on an opener (``%252525253C``, stop 43), and on a
  character in the window after one (``|im_end%252525253E``): three were read.
* A layered window was cut by its own closer: in ``%5Cu003c|im_end|%5Cu003e`` the escape of ``>``
  is itself a head (``>`` starts exact tokens) and ended the window of ``<``.

Every case runs on every implementation (the ``impl`` fixture); each fix has a control that puts the
old behaviour back and must miss the cases, and quiet text stays quiet.
"""

from __future__ import annotations

import re

import pytest
from helpers.scanning import encoded_findings, missed_encoded, reference_escape_plan

from envelock.eye import backend
from envelock.eye.reader import escape_starts
from envelock.scan import _base, context, encoded

CSS_ZEROS = [
    "<\\00002fretrieved_content>",
    "<\\00002f retrieved_content>",
    "<\\00007cim_end|>",
    "x <\\0002f retrieved_content> y",
]
UTF8_BYTES = [
    "<\\xef\\xbd\\x9cim_end|>",
    "<=EF=BD=9Cim_end|>",
    "</retrieved\\xef\\xbc\\xbfcontent>",
]
BRACED_ZEROS = [
    "<\\u{000000007c}im_end|>",
    "<\\x{00000007c}im_end|>",
    "<\\u{00000000002f}retrieved_content>",
]
SOFT_BREAKS = [
    "<|im_=\nend|>",
    "<|im_end=\r\n|>",
    "</retrieved_=\ncontent>",
    "[INS=\nT]",
]
BRACKET_PADDING = [
    "[" + "%00" * 33 + "INST]",
    "[" + "\\u200b" * 40 + "INST]",
    "%5B" + "%00" * 33 + "INST%5D",
]
LAYERED_CLOSERS = [
    "a %5Cu003c|im_end|%5Cu003e b",
    "a &#37;3C|im_end|&#37;3E b",
    "a %5Cu005bINST%5Cu005d b",
]
QUIET = [
    'printf("\\033[0m\\0123");',
    ".x::before { content: '\\00a0'; } .y { content: '\\2014 '; }",
    "let s = '\\u{00000041}'; // an A",
    "[" + "%20" * 40 + "x]",
    "<p>Hello =\nworld, a long line =\r\nbroken by the encoder.</p>",
    "<b>%5Cu003e</b> and [%5Cu005d]",
]


FOUND = UTF8_BYTES + CSS_ZEROS + BRACED_ZEROS + SOFT_BREAKS + BRACKET_PADDING + LAYERED_CLOSERS


@pytest.mark.usefixtures("impl")
@pytest.mark.parametrize("text", FOUND)
def test_reported_as_an_encoded_tag(text: str) -> None:
    assert encoded_findings(text), text


@pytest.mark.usefixtures("impl")
@pytest.mark.parametrize("text", QUIET)
def test_quiet(text: str) -> None:
    assert encoded_findings(text) == [], text


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    """Verdicts and decodings made under a control are not kept, and the control acts on the
    reference's plan (the native plan is held equal to it)."""
    reference_escape_plan(monkeypatch)
    monkeypatch.setattr(encoded, "_SEEN", {})
    monkeypatch.setattr(_base, "_ESC_SEEN", {})
    return monkeypatch


#: The decoder as it was: byte by byte, octal before CSS, braces without leading zeros.
_OLD_ESC_RE = re.compile(
    r"\\{1,4}(?:u([0-9a-fA-F]{4})|u\{([0-9a-fA-F]{1,6})\}|x([0-9a-fA-F]{2})|x\{([0-9a-fA-F]{1,6})\}|U([0-9a-fA-F]{8})"
    r"|([0-7]{3})|([0-9a-fA-F]{1,6}) ?)"
    r"|%[uU]([0-9a-fA-F]{4})|=([0-9A-Fa-f]{2})|\+(AD[w4]|AC8)-?|\+([A-Za-z0-9+/]{2,16})-"
)


def test_control_the_old_decoder_misses_utf8_bytes_css_zeros_and_braced_zeros(fresh: pytest.MonkeyPatch) -> None:
    old = _OLD_ESC_RE.pattern

    def esc_char_of(m: re.Match[str]) -> str:  # the old groups, one further on in the new numbering
        return _real_esc_char_of(re.compile("()" + old).match(m.group()))  # type: ignore[arg-type]

    _real_esc_char_of = _base._esc_char_of
    fresh.setattr(_base, "_ESC_RE", _OLD_ESC_RE)
    fresh.setattr(_base, "_esc_char_of", esc_char_of)
    cases = UTF8_BYTES + CSS_ZEROS + BRACED_ZEROS
    with backend.use("reference"):  # the Python decoder (the native core ports the new one)
        assert missed_encoded(cases) == cases


def test_utf8_bytes_that_are_no_sequence_are_read_one_by_one() -> None:
    assert _base._decode_escapes("\\xef\\xbd x \\xc3\\xa9\\xa9 =C3=A9") == "\xef\xbd x \xc3\xa9\xa9 \xe9"


def test_control_windows_from_the_schemes_alone_miss_soft_breaks(fresh: pytest.MonkeyPatch) -> None:
    fresh.setattr(encoded, "_RAW_STARTS", encoded._SCHEME_STARTS)
    assert missed_encoded(SOFT_BREAKS) == SOFT_BREAKS


def test_control_padding_taken_for_layout_misses_bracket_padding(fresh: pytest.MonkeyPatch) -> None:
    fresh.setattr(context, "layout_padding", lambda *a, **k: True)
    assert missed_encoded(BRACKET_PADDING) == BRACKET_PADDING


def test_control_every_head_ending_a_layered_window_misses_the_closers(fresh: pytest.MonkeyPatch) -> None:
    fresh.setattr(encoded, "_LAYER_OPENERS", escape_starts("<>[]&|"))
    assert missed_encoded(LAYERED_CLOSERS) == LAYERED_CLOSERS


#: Four to eight rounds of percent-encoding on an opener (three were read before stop 43: a red-team find).
PERCENT_LAYERS = [
    "%252525253C|im_end|>",
    "%25252525253C/retrieved_content>",
    "%" + "25" * 7 + "3C|im_end|>",
    "%25252525255BINST%5D",
]


@pytest.mark.usefixtures("impl")
@pytest.mark.parametrize("text", PERCENT_LAYERS)
def test_deep_percent_layers_are_reported(text: str) -> None:
    assert encoded_findings(text), text


def test_percent_layers_are_bounded_by_the_constant() -> None:
    # The bound written down in SECURITY.md is the one in force.
    deepest = "%" + "25" * (_base.ESCAPE_LAYERS - 1) + "3C|im_end|>"
    assert encoded_findings(deepest) and _base.ESCAPE_LAYERS == 8


def test_control_three_percent_layers_miss_the_deep_ones(fresh: pytest.MonkeyPatch) -> None:
    old = tuple(s.replace(encoded._PCT, r"%(?:25){0,3}") for s in encoded._SCHEMES)
    assert old != encoded._SCHEMES
    fresh.setattr(encoded, "_ENC_CANDIDATE_RE", encoded._Candidates(old, 2))
    fresh.setattr(encoded, "_ENC_OPENER_RE", re.compile("|".join(old)))
    assert missed_encoded(PERCENT_LAYERS) == PERCENT_LAYERS


#: Four to eight rounds on a character after an opener: a window is decoded in ``ESCAPE_LAYERS`` rounds.
WINDOW_LAYERS = [
    "%3C|im_end%252525253E",
    "%253C/retrieved_%25252525255Fcontent>",
    "<|im_end%" + "25" * 7 + "3E",
]


@pytest.mark.usefixtures("impl")
@pytest.mark.parametrize("text", WINDOW_LAYERS)
def test_deep_layers_in_a_window_are_reported(text: str) -> None:
    assert encoded_findings(text), text


def test_control_three_rounds_miss_the_deep_window_layers(fresh: pytest.MonkeyPatch) -> None:
    fresh.setattr(_base, "ESCAPE_LAYERS", 3)
    for name in ("native", "reference"):
        with backend.use(name):
            assert missed_encoded(WINDOW_LAYERS) == WINDOW_LAYERS, name
