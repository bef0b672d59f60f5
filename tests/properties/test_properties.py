"""Properties over arbitrary Unicode (surrogates and controls included)."""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Any

import pytest
from helpers.strategies import any_text, entries
from hypothesis import given
from hypothesis import strategies as st

from envelock import LEVELS, EnvelopeBreach, PrefaceEntry, compose_preface, defang, parse_preface, undefang, verify_preface
from envelock.envelope.invisible import sanitize
from envelock.escape import Level
from envelock.eye.reader import IGNORABLE_RE, reserved_tag_count
from envelock.eye.unicode_tables import CONFUSABLE_TO_ASCII

#: Every test here runs once per defang implementation (tests/conftest.py, fixture ``impl``).
pytestmark = pytest.mark.usefixtures("impl")

levels = st.sampled_from(LEVELS)


@given(any_text, levels)
def test_undefang_inverts_defang(s: str, level: Level) -> None:
    assert undefang(defang(s, level=level), level=level) == s


@given(any_text, any_text, levels)
def test_defang_is_injective(a: str, b: str, level: Level) -> None:
    if a != b:
        assert defang(a, level=level) != defang(b, level=level)


@given(any_text)
def test_defang_only_inserts_backslashes(s: str) -> None:
    out = defang(s)
    assert out.replace("\\", "") == s.replace("\\", "")
    assert len(out) >= len(s)


@given(any_text, levels)
def test_defanged_text_has_no_reserved_tag(s: str, level: Level) -> None:
    assert reserved_tag_count(defang(s, level=level)) == 0


def _expected_body(body: str) -> str:
    return sanitize(body, invisible="strip", controls="replace", index=0, field="body")[0]


@given(entries, levels)
def test_parse_inverts_compose(es: list[PrefaceEntry], level: Level) -> None:
    out = compose_preface(es, level=level if level == "reserved" else "reserved")
    got = parse_preface(out)
    assert len(got) == len(es)
    for env, e in zip(got, es, strict=True):
        assert env.body == _expected_body(e.body)
        assert env.source == sanitize(e.source, invisible="strip", controls="reject", index=0, field="s")[0]
        assert env.origin == sanitize(e.origin, invisible="strip", controls="reject", index=0, field="o")[0]


@given(entries)
def test_verify_accepts_compose_with_expected(es: list[PrefaceEntry]) -> None:
    out = compose_preface(es)
    result = verify_preface(out, expected=es)
    assert result.ok, result.problems


@given(entries)
def test_model_eye_tag_count_equals_emitted(es: list[PrefaceEntry]) -> None:
    out = compose_preface(es)
    assert reserved_tag_count(out) == 2 * len(es)
    assert reference_tag_count(out) == 2 * len(es)


_REFERENCE_TAG = re.compile(r"<\s*/?\s*retrieved[\s_-]*content", re.IGNORECASE)


def reference_tag_count(text: str) -> int:
    """An independent, deliberately different model's-eye normaliser (research notes, attack catalog):
    drop ignorables, up to 3 rounds of html.unescape, NFKC, confusables, casefold, then one regex."""
    t = IGNORABLE_RE.sub("", text)
    for _ in range(3):
        t = html.unescape(t)
    t = unicodedata.normalize("NFKC", t)
    t = "".join(CONFUSABLE_TO_ASCII.get(ord(c), c) if ord(c) > 0x7F or c in "01" else c for c in t)
    return len(_REFERENCE_TAG.findall(t.casefold()))


@given(entries)
def test_compose_is_deterministic_and_verify_idempotent(es: list[PrefaceEntry]) -> None:
    a = compose_preface(es)
    assert compose_preface(es) == a
    assert verify_preface(a).ok and verify_preface(a).ok


@given(st.text(max_size=300))
def test_verify_never_raises_on_any_text(text: str) -> None:
    for level in ("reserved",):
        result = verify_preface(text, level=level)
        assert isinstance(result.ok, bool)


@given(st.one_of(any_text, any_text.map(lambda s: s + "<" + " " * 31), any_text.map(lambda s: "&" + "amp;" * 16 + "lt;/" + s)),
       st.text(alphabet="ab \u200b", max_size=400), st.sampled_from(["reserved", "markup"]))
def test_defang_body_equals_defang_in_context(s: str, pad: str, level: Level) -> None:
    """The shortcut in defang_body (no opener near the end) never changes the verdict."""
    from envelock.escape import BODY_CONTEXT, defang_body

    body = s + pad
    assert defang_body(body, level=level) == defang(body + BODY_CONTEXT, level=level)[: -len(BODY_CONTEXT)]


#: Bodies that end in a run of skipped characters close to the bound, after an opener or a
#: name prefix: the end-of-body context ('\n<') decides their readings (a class hypothesis
#: alone rarely reached; the native core's cargo-fuzz round trip found it).
_OPENERS_AT_END = st.sampled_from(["<", "</", "[", "[/", "<retrieved_con", "[INS", "[TOO", "<|", "&lt;", "\uff3b", "<s"])
near_bound_bodies = st.builds(
    lambda head, opener, k, pad: head + opener + pad * k,
    any_text,
    _OPENERS_AT_END,
    st.integers(26, 34),
    st.sampled_from([" ", "\u200b", "_", "\t", "\\", "\u2800"]),
)


@given(near_bound_bodies, levels)
def test_parse_inverts_compose_when_the_context_decides(body: str, level: Level) -> None:
    out = compose_preface([PrefaceEntry("external", "o", body)], level=level)
    clean = sanitize(body, invisible="strip", controls="replace", index=0, field="body")[0]
    assert parse_preface(out, level=level)[0].body == clean
    assert verify_preface(out, level=level, expected=[PrefaceEntry("external", "o", body)]).ok


def test_control_a_context_blind_undo_breaks_the_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    """The property above catches a parser whose undo ignores the body's context (the old bug)."""
    import envelock.envelope.parse as parse_mod
    from envelock.escape import defang_body
    from envelock.escape import undefang as plain_undefang

    def blind(text: str, start: int, end: int, level: Level = "reserved", **kw: Any) -> tuple[str, bool]:  # that undo's check
        raw = text[start:end]
        plain = plain_undefang(raw, level=level)
        return plain, defang_body(plain, level=level, **kw) == raw

    monkeypatch.setattr(parse_mod, "canonical_body_at", blind)
    body = "<[TOO" + " " * 31
    out = compose_preface([PrefaceEntry("external", "o", body)])
    with pytest.raises(EnvelopeBreach):
        parse_preface(out)
