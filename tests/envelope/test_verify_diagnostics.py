"""verify_preface's diagnostics, pinned exactly: expected-entry mismatches, policies, reader checks.
"""

from __future__ import annotations

import pytest
from helpers.diagnostics import GOOD, E

from envelock import (
    PrefaceEntry,
    compose_preface,
    verify_preface,
)

# --------------------------------------------------------------------------- verify


def test_expected_mismatches_are_located() -> None:
    entries = [E("external", "a", "x"), E("external", "b", "y\nz")]
    assert verify_preface(GOOD, expected=entries).ok
    cases = {
        "provenance": [E("external", "a", "x"), E("memory:n", "b", "y\nz")],
        "origin": [E("external", "a", "x"), E("external", "B", "y\nz")],
        "fetched_at": [E("external", "a", "x"), E("external", "b", "y\nz", "2026-11-29T21:29:03Z")],
        "body": [E("external", "a", "x"), E("external", "b", "y\nZ")],
    }
    for what, want in cases.items():
        v = verify_preface(GOOD, expected=want)
        assert [(p.code, p.offset, p.line, p.column, p.entry, p.path) for p in v.problems] == [
            ("expected-mismatch", 77, 5, 1, 1, (1,))
        ], what
        assert what.replace("provenance", "provenance is") in v.problems[0].message or what in v.problems[0].message
    v = verify_preface(GOOD, expected=[E("external", "a", "x"), E("external", "b", "y\nZz")])
    assert v.problems[0].message == "body differs from the expected entry at body offset 2"
    v = verify_preface(GOOD, expected=[E("external", "a", "x"), E("external", "b", "y")])
    assert v.problems[0].message == "body differs from the expected entry at body offset 1"
    v = verify_preface(GOOD, expected=[E("external", "a", "x")])
    assert [(p.code, p.offset, p.line, p.column, p.entry, p.path) for p in v.problems] == [
        ("expected-mismatch", 0, 1, 1, None, ())
    ]
    assert v.problems[0].message == "found 2 envelopes, expected 1"


def test_expected_mismatch_column_on_a_later_line() -> None:
    inner = compose_preface([E("external", "a", "x")])
    text = str(compose_preface([E("external", "o", "first"), E("external", "p", inner)]))
    ok = [E("external", "o", "first"), E("external", "p", inner)]
    assert verify_preface(text, expected=ok).ok
    other = compose_preface([E("external", "a", "X")])
    v = verify_preface(text, expected=[E("external", "o", "first"), E("external", "p", other)])
    assert [(p.line, p.column, p.entry) for p in v.problems] == [(5, 1, 1)]
    assert v.problems[0].message == "nested envelope 0 differs from the expected Preface body"
    v = verify_preface(text, expected=[E("external", "o", "first"), E("external", "p", "text")])
    assert v.problems[0].message == "expected a text body, found nested envelopes"
    v = verify_preface(text, expected=[E("external", "o", inner), E("external", "p", inner)])
    assert v.problems[0].message == "expected 1 nested envelopes, found 0"


def test_verify_uses_the_given_policies() -> None:
    text = str(compose_preface([E("external", "o", "a\u202eb\x01")], invisible="keep"))
    assert verify_preface(text, expected=[E("external", "o", "a\u202eb\x01")], invisible="keep").ok
    assert not verify_preface(text, expected=[E("external", "o", "a\u202eb\x01")]).ok
    stripped = str(compose_preface([E("external", "o\u202e", "a\u202eb\x01")]))
    assert verify_preface(stripped, expected=[E("external", "o\u202e", "a\u202eb\x01")]).ok
    deep = str(compose_preface([E("external", "a", compose_preface([E("external", "b", "x")]))]))
    assert not verify_preface(deep, max_depth=1).ok
    assert verify_preface(deep, max_depth=2).ok


# --------------------------------------------------------------------------- verify (fresh run)


def test_expected_entries_are_checked_with_index_and_field() -> None:
    from envelock import InvalidEntry

    ok = E("external", "a", "x")
    cases = [
        (E("", "b", "y"), "entry 1, field 'source': empty source: every envelope needs a provenance"),
        (
            E("ext\x01", "b", "y"),
            "entry 1, field 'source': character U+0001 at offset 3 cannot be carried by XML 1.0 (controls='reject')",
        ),
        (
            E("external", "b\x01", "y"),
            "entry 1, field 'origin': character U+0001 at offset 1 cannot be carried by XML 1.0 (controls='reject')",
        ),
        (E("external", "b", "y", "garbage"), "entry 1, field 'fetched_at': 'garbage': "),
    ]
    for entry, msg in cases:
        with pytest.raises(InvalidEntry) as info:
            verify_preface(GOOD, expected=[ok, entry])
        assert str(info.value).startswith(msg), (msg, str(info.value))
    with pytest.raises(InvalidEntry) as info:
        verify_preface(GOOD, expected=[ok, E("external", "b", "y\x01")], controls="reject")
    assert str(info.value) == (
        "entry 1, field 'body': character U+0001 at offset 1 cannot be carried by XML 1.0 (controls='reject')"
    )


def test_expected_attributes_use_the_invisible_policy() -> None:
    text = str(compose_preface([E("web:a\u202eb", "o\u202ep", "x")], invisible="keep"))
    assert verify_preface(text, expected=[E("web:a\u202eb", "o\u202ep", "x")], invisible="keep").ok
    v = verify_preface(text, expected=[E("web:ab", "o\u202ep", "x")], invisible="keep")
    src, org = "web:a\u202eb", "o\u202ep"
    assert [p.message for p in v.problems] == [f"provenance is {src!r}, expected 'web:ab'"]
    v = verify_preface(text, expected=[E("web:a\u202eb", "op", "x")], invisible="keep")
    assert [p.message for p in v.problems] == [f"origin is {org!r}, expected 'op'"]


def test_mismatch_messages_cut_values_at_60() -> None:
    long_a, long_b = "a" * 70, "b" * 70
    text = str(compose_preface([E("web:" + long_a, long_a, "x")]))
    v = verify_preface(text, expected=[E("web:" + long_b, long_b, "x")])
    assert [p.message for p in v.problems] == [
        f"provenance is {('web:' + long_a)[:60]!r}, expected {('web:' + long_b)[:60]!r}",
        f"origin is {long_a[:60]!r}, expected {long_b[:60]!r}",
    ]


def test_nested_expected_body_is_parsed_with_the_options() -> None:
    inner_m = compose_preface([E("external", "a", "<a>")], level="markup")
    text = str(compose_preface([E("external", "o", inner_m)], level="markup"))
    assert verify_preface(text, level="markup", expected=[E("external", "o", inner_m)]).ok
    inner_r = compose_preface([E("external", "a", "<foo_bar>")], reserved=("foo_bar",))
    text = str(compose_preface([E("external", "o", inner_r)], reserved=("foo_bar",)))
    assert verify_preface(text, reserved=("foo_bar",), expected=[E("external", "o", inner_r)]).ok
    d3 = compose_preface(
        [E("external", "a", compose_preface([E("external", "b", compose_preface([E("external", "c", "x")]))], max_depth=3))],
        max_depth=3,
    )
    text = str(compose_preface([E("external", "o", d3)], max_depth=4))
    assert verify_preface(text, max_depth=4, expected=[E("external", "o", d3)]).ok


def test_nested_expected_count_mismatch_with_children() -> None:
    inner = compose_preface([E("external", "a", "x")])
    two = compose_preface([E("external", "a", "x"), E("external", "b", "y")])
    text = str(compose_preface([E("external", "o", inner)]))
    v = verify_preface(text, expected=[E("external", "o", two)])
    assert [(p.code, p.entry, p.message) for p in v.problems] == [
        ("expected-mismatch", 0, "expected 2 nested envelopes, found 1")
    ]


def test_reader_checks_only_on_a_clean_grammar_verdict() -> None:
    g = str(compose_preface([E("external", "a", "x")], level="markup"))
    assert [p.code for p in verify_preface(g + "\nzz", level="markup").problems] == ["text-outside"]


def test_verify_consults_the_readers_above_reserved(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify_preface runs the level's readers at markup and xml, never at reserved."""
    import envelock.envelope.verify
    from envelock.escape import Level
    from envelock.types import Problem

    calls: list[str] = []

    def fake(text: str, envelopes: object, *, level: Level, **options: object) -> list[Problem]:
        calls.append(level)
        return [Problem("reader-html", "sentinel", 0, 1, 1, 0, (0,))]

    monkeypatch.setattr(envelock.envelope.verify, "reader_problems", fake)
    for level in ("reserved", "markup", "xml"):
        out = compose_preface([PrefaceEntry("s", "o", "b")], level=level)
        codes = [p.code for p in verify_preface(out, level=level).problems]
        assert codes == ([] if level == "reserved" else ["reader-html"]), level
    assert calls == ["markup", "xml"]
