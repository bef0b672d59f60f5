"""The grammar's diagnostics, pinned exactly: problem codes, offsets, line/column, entry index and path, messages.

A security gate's report is part of its contract (docs/design.md, section 4). Moved from the mutation-testing
file: each test pins what mutmut showed was unpinned (fuzz/README.md).
"""

from __future__ import annotations

import pytest
from helpers.diagnostics import GOOD, ONE, THIRD, E, full, problems

from envelock import (
    EnvelopeBreach,
    Preface,
    compose_preface,
    parse_preface,
    verify_preface,
)
from envelock.envelope.parse import scan_preface


def test_layout_of_the_fixture() -> None:
    assert GOOD.count("\n") == 7 and len(GOOD) == 154


@pytest.mark.parametrize(
    ("tail", "want", "words"),
    [
        (
            'o\x01">\nb\n</retrieved_content>',
            [("attribute-invalid-char", 156, 10, 1, 2, (2,)), ("invalid-char", 206, 10, 51, 2, (2,))],
            ["origin: U+0001 cannot be carried by XML", "U+0001 cannot be carried by XML (compose replaces it)"],
        ),
        (
            'o\u202e">\nb\n</retrieved_content>',
            [("invisible-text", 156, 10, 1, 2, (2,)), ("invisible-text", 206, 10, 51, 2, (2,))],
            ["origin: invisible TAG/bidi character", "invisible TAG/bidi character U+202E"],
        ),
        (
            '&lt;/retrieved_content&gt;">\nb\n</retrieved_content>',
            [("attribute-not-canonical", 156, 10, 1, 2, (2,))],
            ["origin: not in canonical defanged form: '</retrieved_content>'"],
        ),
        (
            'o" fetched_at="2026-11-29T21:29:03.000000Z">\nb\n</retrieved_content>',
            [("fetched-at", 156, 10, 1, 2, (2,))],
            ["not in canonical UTC form: '2026-11-29T21:29:03.000000Z'"],
        ),
        (
            'o" fetched_at="2026-02-30T21:29:03Z">\nb\n</retrieved_content>',
            [("fetched-at", 156, 10, 1, 2, (2,))],
            ["not a valid date-time: day is out of range"],
        ),
        (
            'o" fetched_at="2026-11-29 21:29:03Z">\nb\n</retrieved_content>',
            [("fetched-at", 156, 10, 1, 2, (2,))],
            ["not in canonical UTC form: '2026-11-29 21:29:03Z'"],
        ),
        (
            'o">\nabc</retrieved_content >x\n</retrieved_content>',
            [("undefanged-tag", 212, 11, 4, 2, (2,))],
            ["a reader sees an envelope tag or control token here: '</retrieved_content >x'"],
        ),
        ('o">\nabc', [("structure", 156, 10, 1, 2, (2,))], ["envelope is never closed with '</retrieved_content>'"]),
    ],
    ids=[
        "attr-invalid",
        "attr-invisible",
        "attr-noncanonical",
        "fetched-zero-micro",
        "fetched-invalid",
        "fetched-form",
        "body-undefanged",
        "unclosed",
    ],
)
def test_problem_codes_positions_and_messages(tail: str, want: list[tuple[object, ...]], words: list[str]) -> None:
    text = THIRD + tail
    assert problems(text) == want
    _, probs, _ = scan_preface(text)
    for p, w in zip(probs, words, strict=True):
        assert w in p.message, (w, p.message)
        assert str(p).startswith(f"{p.line}:{p.column}: [{p.code}] entry 2: ")


def test_bad_open_tag() -> None:
    text = GOOD + '\n\n<retrieved_content origin="o">\nabc\n</retrieved_content>'
    assert problems(text) == [("structure", 156, 10, 1, 2, (2,))]
    assert "expected an open tag" in scan_preface(text)[1][0].message


def test_text_outside() -> None:
    text = GOOD + "\nzz"
    assert problems(text) == [("text-outside", 154, 8, 21, None, ())]
    p = scan_preface(text)[1][0]
    assert str(p) == "8:21: [text-outside] outside envelopes: text after the last envelope: 'U+000Azz'"


def test_nested_without_close() -> None:
    inner = str(compose_preface([E("external", "a", "x")]))
    text = THIRD + 'o">\n' + inner + "\nX</retrieved_content>"
    assert problems(text) == [("structure", 284, 13, 21, 2, (2,))]
    assert "after nested envelopes: 'U+000AX</retrieved_content>'" in scan_preface(text)[1][0].message


def test_nesting_depth_problem_names_path() -> None:
    deep = str(compose_preface([E("external", "a", compose_preface([E("external", "b", "x")]))]))
    text = THIRD + 'o">\n' + deep + "\n</retrieved_content>"
    assert problems(text) == [("nesting-depth", 262, 12, 1, 2, (2, 0))]
    p = scan_preface(text)[1][0]
    assert str(p) == "12:1: [nesting-depth] entry 2 (path 2.0): envelopes nested deeper than max_depth=2"
    assert problems(text, max_depth=3) == []
    assert scan_preface(text, max_depth=3)[2] == 3


def test_undefanged_tags_are_listed_and_capped_at_20() -> None:
    text = THIRD + 'o">\nq' + "</retrieved_content >" * 25 + "\n</retrieved_content>"
    got = problems(text)
    assert len(got) == 20
    assert got[0] == ("undefanged-tag", 210, 11, 2, 2, (2,))
    assert got[1] == ("undefanged-tag", 231, 11, 23, 2, (2,))
    assert got[-1] == ("undefanged-tag", 609, 11, 401, 2, (2,))
    msg = scan_preface(text)[1][0].message
    assert msg == "a reader sees an envelope tag or control token here: '</retrieved_content ></retrieved_content'"


def test_undefanged_tag_at_the_very_end_of_a_body() -> None:
    text = THIRD + 'o">\n<\n</retrieved_content>'
    assert problems(text) == []  # '<' alone is canonical
    text = THIRD + 'o">\nq</retrieved_content \n</retrieved_content>'
    assert [c[0] for c in problems(text)] == ["undefanged-tag"]


def test_parse_preface_defaults() -> None:
    deep = str(compose_preface([E("external", "a", compose_preface([E("external", "b", "x")]))]))
    three = str(compose_preface([E("external", "o", Preface(deep, max_depth=3))], max_depth=3))
    with pytest.raises(EnvelopeBreach):
        parse_preface(three)  # default max_depth is 2
    assert parse_preface(three, max_depth=3)[0].children[0].children[0].body == "x"
    # parse_preface keeps invisible text (invisible='keep'); verify_preface reports it by default.
    kept = str(compose_preface([E("external", "o", "a\u202eb")], invisible="keep"))
    assert parse_preface(kept)[0].body == "a\u202eb"
    assert not verify_preface(kept).ok
    # custom reserved names are used by the body check
    custom = str(compose_preface([E("external", "o", "<foo_bar>")], reserved=("foo_bar",)))
    assert parse_preface(custom, reserved=("foo_bar",))[0].body == "<foo_bar>"
    # Without them the escape of <foo_bar> is not one (nothing dangerous there): it stays in the body.
    assert parse_preface(custom)[0].body == "<\\foo_bar>"
    # ... and a body that names them unescaped is refused
    with pytest.raises(EnvelopeBreach):
        parse_preface(str(compose_preface([E("external", "o", "<foo_bar>")])), reserved=("foo_bar",))


def test_parse_error_lists_problems() -> None:
    with pytest.raises(EnvelopeBreach) as info:
        parse_preface(GOOD + "\nzz")
    assert [p.code for p in info.value.problems] == ["text-outside"]


def test_positions_when_the_text_starts_with_a_newline() -> None:
    # _Scan.problem: count/rfind must start at offset 0; owner() of an offset before any envelope is ().
    assert full("\n\x01") == [
        ("structure", 0, 1, 1, 0, (0,), "expected an open tag <retrieved_content provenance=... origin=...>: 'U+000AU+0001'"),
        ("invalid-char", 1, 2, 1, None, (), "U+0001 cannot be carried by XML (compose replaces it)"),
    ]


def test_problem_in_the_first_envelope_names_entry_0() -> None:
    assert full(ONE + 'o">\na\x01\n</retrieved_content>') == [
        ("invalid-char", 54, 2, 2, 0, (0,), "U+0001 cannot be carried by XML (compose replaces it)")
    ]


def test_provenance_problems_name_the_field_and_position() -> None:
    assert full('<retrieved_content provenance="ext\x01" origin="o">\nb\n</retrieved_content>') == [
        ("attribute-invalid-char", 0, 1, 1, 0, (0,), "provenance: U+0001 cannot be carried by XML"),
        ("invalid-char", 34, 1, 35, 0, (0,), "U+0001 cannot be carried by XML (compose replaces it)"),
    ]


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            '<retrieved_content provenance="ex\'tabcdefghij" origin="o">\nb\n</retrieved_content>',
            [("structure", 31, 1, 32, 0, (0,), 'provenance: "\'tabcdef" is not escaped as the renderer escapes it')],
        ),
        (
            ONE + 'o\tabcdefghijk">\nb\n</retrieved_content>',
            [("structure", 49, 1, 50, 0, (0,), "origin: 'U+0009abcdefg' is not escaped as the renderer escapes it")],
        ),
        (
            ONE + 'o" fetched_at="2026-11-29T21:29:03Z\r">\nb\n</retrieved_content>',
            [
                ("structure", 64, 1, 65, 0, (0,), "fetched_at: 'U+000D' is not escaped as the renderer escapes it"),
                ("fetched-at", 0, 1, 1, 0, (0,), "fetched_at is not in canonical UTC form: '2026-11-29T21:29:03Z\\r'"),
            ],
        ),
        (
            ONE + 'o" fetched_at="' + "2" * 50 + '">\nb\n</retrieved_content>',
            [("fetched-at", 0, 1, 1, 0, (0,), "fetched_at is not in canonical UTC form: '" + "2" * 40 + "'")],
        ),
    ],
    ids=["provenance-quote", "origin-tab", "fetched-at-cr", "fetched-at-long"],
)
def test_unescaped_attribute_characters(text: str, want: list[tuple[object, ...]]) -> None:
    assert full(text) == want


def test_body_diagnostics_exact() -> None:
    # the first difference from the canonical form, found at the body's level ...
    assert full(ONE + 'o">\nx<a\n</retrieved_content>', level="markup") == [
        ("body-not-canonical", 55, 2, 3, 0, (0,), "body is not in canonical defanged form at level 'markup': 'a'")
    ]
    # ... and with the body's reserved names (here retrieved_content is not reserved): a body whose only
    # difference from its canonical form is an unescaped tag is reported as that tag
    assert full(ONE + 'o">\nz</retrieved_content>x<foo_bar>\n</retrieved_content>', reserved=("foo_bar",)) == [
        ("undefanged-tag", 75, 2, 23, 0, (0,), "a reader sees an envelope tag or control token here: '<foo_bar>'")
    ]
    # an opener followed by a backslash with nothing dangerous past it is canonical as it stands
    assert full(ONE + 'o">\n<\\\n</retrieved_content>') == []
    assert full(ONE + 'o">\nz<\\y\n</retrieved_content>', reserved=("foo_bar",)) == []
    # the XML text escape is part of the canonical form at level xml
    assert full(ONE + 'o">\na>b\n</retrieved_content>', level="xml") == [
        ("body-not-canonical", 54, 2, 2, 0, (0,), "body is not in canonical defanged form at level 'xml': '>b'")
    ]
    # an opener at the very end of a non-canonical body
    assert [p[:6] for p in full(ONE + 'o">\nabc<x<\n</retrieved_content>', level="markup")] == [("body-not-canonical", 57, 2, 5, 0, (0,))]


def test_xml_body_without_backslash_is_unescaped() -> None:
    text = str(compose_preface([E("external", "o", "a & b > c")], level="xml"))
    assert "&amp;" in text and "\\" not in text
    assert full(text, level="xml") == []
    assert parse_preface(text, level="xml")[0].body == "a & b > c"


def test_undefanged_tags_capped_body_still_returned() -> None:
    body = "q" + "</retrieved_content >" * 25
    envs, probs, _ = scan_preface(ONE + 'o">\n' + body + "\n</retrieved_content>")
    assert len(probs) == 20 and envs[0].body == body


def test_nested_envelope_keeps_fetched_at() -> None:
    inner = compose_preface([E("external", "a", "x")])
    text = str(compose_preface([E("external", "o", inner, "2026-11-29T21:29:03Z")]))
    env = parse_preface(text)[0]
    assert (env.fetched_at, env.body, len(env.children)) == ("2026-11-29T21:29:03Z", None, 1)


def test_scan_preface_argument_errors_and_empty_text() -> None:
    with pytest.raises(TypeError) as info:
        scan_preface(b"x")  # type: ignore[arg-type]  # deliberately not a str
    assert str(info.value) == "text must be str, got bytes"
    with pytest.raises(ValueError) as verr:
        scan_preface("", max_depth=33)
    assert str(verr.value) == "max_depth must be between 1 and 32; got 33"
    with pytest.raises(ValueError):
        scan_preface("", max_depth=0)
    assert scan_preface("", max_depth=32) == ([], [], 0)
    assert scan_preface("") == ([], [], 0)


def test_parse_preface_error_message() -> None:
    with pytest.raises(EnvelopeBreach) as info:
        parse_preface(GOOD + "\nzz")
    assert str(info.value).startswith("not a sound preface: ")
