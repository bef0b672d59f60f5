"""Exact tokens written with character references (red-team find of stop 43, closed in stop 45).

The eye reads a character reference as its character in every role (``reader.decode_at``), so
``&gt;&gt;TITLE&lt;&lt;``, ``]~b&#93;``, ``&lt;NAME>``, ``[IMG&#93;`` and ``&#xFF5C;DSML&#xFF5C;`` are the
exact tokens they decode to, as ``&lt;|im_end|&gt;`` was already an angle token. Every exact token of
the built-in tables, with each of its characters written as every reference for it (each HTML5 name
that decodes to it, with and without ``;``, decimal, hex, and a name behind ``&amp;``), and with all its
characters written as references, on every implementation and level:

* the variant is the token: the eye's view of it (every piece decoded) is the token;
* the defang escapes it: the eye's view of the output (after the XML reader at ``xml``) holds the
  token nowhere, and ``undefang`` gives the variant back;
* the scanner reports it at its start, and the native search finds what the reference finds;
* a preface with it as a body verifies, and one with the body pasted in unescaped does not.

Negative control: the reference defang with ``exact_after`` as it was before (written-out rests and
first characters only) leaves every variant that holds a reference unescaped, which the same check
catches.
"""

from __future__ import annotations

import html.entities
from collections.abc import Iterator

import pytest
from helpers.data import on_native

from envelock import PrefaceEntry, compose_preface, defang, scan_text, undefang, verify_preface
from envelock.eye import backend
from envelock.eye import reader as me
from envelock.eye import reference as ref
from envelock.eye.levels import xml_unescape_text

EVERY_IMPLEMENTATION = pytest.mark.usefixtures("impl")

NAMES = me.names_for()
TOKENS = sorted(first + rest for first, rests in NAMES._exact.items() for rest in rests)
LEVELS = ("reserved", "markup", "xml")


def eye_view(text: str) -> str:
    """``text`` as the eye reads it, piece by piece (references decoded, ``&amp;`` layers too)."""
    out, i = [], 0
    while i < len(text):
        piece, i = me.decode_at(text, i)
        out.append(piece)
    return "".join(out)


def forms(c: str) -> list[str]:
    """Every reference for ``c``: its HTML5 names (with and without ``;``), decimal, hex, and its first
    name behind ``&amp;``."""
    named = sorted(f"&{k}" for k, v in html.entities.html5.items() if v == c)
    out = [*named, f"&#{ord(c)};", f"&#x{ord(c):X};", f"&#{ord(c)}"]
    if named:
        out.append("&amp;" + named[0][1:])
    return out


def variants(token: str) -> Iterator[str]:
    """The token with each character written as each reference for it, then with every character
    written as its decimal reference; only spellings the eye reads as the token (a legacy name
    without ``;`` may take the letters after it)."""
    for k, c in enumerate(token):
        for f in forms(c):
            v = token[:k] + f + token[k + 1 :]
            if eye_view(v) == token:
                yield v
    yield "".join(f"&#{ord(c)};" for c in token)


CASES = [(t, v) for t in TOKENS for v in variants(t)]


def test_the_variants_cover_every_token_and_character() -> None:
    assert len(TOKENS) >= 30, TOKENS
    # Every token, and for every token each of its characters, written as a reference at least once.
    for t in TOKENS:
        mine = [v for tok, v in CASES if tok == t]
        assert len(mine) >= 2 * len(t), (t, len(mine))
    assert len(CASES) > 1000


def escaped_for_every_reader(token: str, level: str, out: str) -> bool:
    """No reader of ``level`` sees ``token`` in the defanged ``out`` (the XML reader first at ``xml``)."""
    seen = xml_unescape_text(out) if level == "xml" else out
    return token not in eye_view(seen)


@EVERY_IMPLEMENTATION
def test_every_variant_is_escaped_and_given_back() -> None:
    for token, v in CASES:
        for level in LEVELS:
            out = defang(v, level=level)  # type: ignore[arg-type]
            assert escaped_for_every_reader(token, level, out), (token, v, level, out)
            assert undefang(out, level=level) == v, (token, v, level)  # type: ignore[arg-type]


@EVERY_IMPLEMENTATION
def test_in_running_text_too() -> None:
    """Between other text, references and backslashes: escaped, given back, once per token."""
    for token, v in CASES[::7]:
        for text in (f"a {v} b", f"&amp;{v}{v}", f"x&{v}\\", f"{v}&gt;{v}"):
            for level in LEVELS:
                out = defang(text, level=level)  # type: ignore[arg-type]
                assert escaped_for_every_reader(token, level, out), (text, level, out)
                assert undefang(out, level=level) == text  # type: ignore[arg-type]


@EVERY_IMPLEMENTATION
def test_the_scanner_reports_every_variant_at_its_start() -> None:
    for token, v in CASES:
        found = [f for f in scan_text(v) if f.offset == 0 and f.rule == "chat-control-token"]
        assert found, (token, v)


def test_the_native_search_finds_what_the_reference_finds() -> None:
    for _, v in CASES[::3]:
        for text in (v, f"é {v}\\{v}", f"&amp;&{v}"):
            with on_native():
                got = backend.native_exact_tokens(text, NAMES.reserved, None)
            assert got is not None and got == me.exact_tokens(text, NAMES), text


@EVERY_IMPLEMENTATION
@pytest.mark.parametrize("token", ["&gt;&gt;TITLE&lt;&lt;", "]~b&#93;", "&lt;NAME&gt;", "[IMG&#93;", "&#xFF5C;DSML&#xFF5C;"])
def test_a_preface_verifies_and_a_pasted_body_does_not(token: str) -> None:
    for level in LEVELS:
        entry = PrefaceEntry(source="web-page", origin="https://example.org/", body=f"see {token} here")
        text = compose_preface([entry], level=level)  # type: ignore[arg-type]
        assert verify_preface(text, level=level).ok, (token, level)  # type: ignore[arg-type]
        body = defang(entry.body, level=level)  # type: ignore[arg-type]
        pasted = text.replace(body, entry.body if level != "xml" else entry.body.replace("&", "&amp;"))
        assert pasted != text
        assert not verify_preface(pasted, level=level).ok, (token, level)  # type: ignore[arg-type]


def _exact_after_before(text: str, i: int, names: me.Names) -> int:
    """``exact_after`` before stop 45: the first character and the rest written out only."""
    rests = names._exact.get(text[i]) if i < len(text) else None
    if not rests:
        return -1
    j = i + 1
    while j < len(text) and text[j] == "\\":
        j += 1
    return next((j + len(r) for r in rests if text.startswith(r, j)), -1)


def test_control_the_matcher_without_references_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ref, "exact_after", _exact_after_before)
    caught = kept = 0
    for token, v in CASES:
        out = ref.defang(v, "reserved")
        if escaped_for_every_reader(token, "reserved", out):
            kept += 1
        else:
            caught += 1
    # Only a variant whose references are all in the opener (``&lt;|…``: none here) could still be
    # escaped; every one of these holds a reference past it or in its first character.
    assert caught == len(CASES), (caught, kept)
