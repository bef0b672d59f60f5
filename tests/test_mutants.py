"""Tests that kill mutmut survivors in defang, parse, verify and nesting (see fuzz/README.md).

The core tests check verdicts; mutmut showed that the *diagnostics* (problem
codes, offsets, line/column, entry index and path, messages, error indexes)
and the reference defang behind the fast one were barely pinned down. A
security gate's report is part of its contract (docs/design.md, section 4: every
error names the entry index and field; problems carry positions), so these
tests pin them exactly.
"""

from __future__ import annotations

import sys

import pytest

from envelock import (
    EnvelopeBreach,
    NestingError,
    Preface,
    PrefaceEntry,
    compose_preface,
    defang,
    parse_preface,
    verify_preface,
)
from envelock.parse import scan_preface

E = PrefaceEntry
GOOD = str(compose_preface([E("external", "a", "x"), E("external", "b", "y\nz")]))
OPEN = '<retrieved_content provenance="external" origin="'
THIRD = GOOD + "\n\n" + OPEN  # the third envelope starts at offset 156, line 10, column 1


def problems(text: str, **kw: object) -> list[tuple[object, ...]]:
    _, probs, _ = scan_preface(text, **kw)  # type: ignore[arg-type]
    return [(p.code, p.offset, p.line, p.column, p.entry, p.path) for p in probs]


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
            'o">\nabc<\\x\n</retrieved_content>',
            [("body-not-canonical", 213, 11, 5, 2, (2,))],
            ["body is not in canonical defanged form at level 'reserved': '\\\\x'"],
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
        "body-noncanonical",
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
    with pytest.raises(EnvelopeBreach):
        parse_preface(custom)


def test_parse_error_lists_problems() -> None:
    with pytest.raises(EnvelopeBreach) as info:
        parse_preface(GOOD + "\nzz")
    assert [p.code for p in info.value.problems] == ["text-outside"]


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


# --------------------------------------------------------------------------- nesting


def test_nesting_errors_name_index_field_and_reason() -> None:
    p1 = compose_preface([E("external", "a", "x")])
    with pytest.raises(NestingError) as info:
        compose_preface([E("external", "o", "t"), E("external", "o", p1)], nesting="forbid")
    assert (info.value.index, info.value.field) == (1, "body")
    assert str(info.value) == "entry 1, field 'body': a Preface body is refused (nesting='forbid')"
    with pytest.raises(NestingError) as info:
        compose_preface([E("external", "o", p1)], level="markup")
    assert info.value.index == 0
    assert str(info.value) == "entry 0, field 'body': Preface composed at level 'reserved' cannot nest in level 'markup'"
    with pytest.raises(NestingError) as info:
        compose_preface([E("external", "o", "t"), E("external", "o", p1)], reserved=("foo",))
    assert info.value.index == 1
    assert str(info.value) == "entry 1, field 'body': Preface composed with other reserved names cannot nest here"
    p2 = compose_preface([E("external", "a", p1)])
    with pytest.raises(NestingError) as info:
        compose_preface([E("external", "o", "t"), E("external", "o", "t"), E("external", "o", p2)])
    assert info.value.index == 2
    assert str(info.value) == "entry 2, field 'body': nesting depth 3 exceeds max_depth=2"
    assert compose_preface([E("external", "o", p2)], max_depth=3).depth == 3


def test_preface_constructor_errors() -> None:
    deep = str(compose_preface([E("external", "a", compose_preface([E("external", "b", "x")]))]))
    with pytest.raises(NestingError) as info:
        Preface(deep, max_depth=1)
    assert "envelopes nested deeper than max_depth=1" in str(info.value)
    p = Preface(deep)
    assert (p.depth, p.level, p.transformations) == (2, "reserved", ())
    assert repr(Preface("")) == "Preface('', level='reserved')"


# --------------------------------------------------------------------------- defang

defang_mod = sys.modules["envelock.escape"]
ref_mod = sys.modules["envelock._reference"]
fast_mod = sys.modules["envelock._fastpath"]

SAMPLES = [
    "",
    "<",
    "<a",
    "< a",
    "<1",
    "<!",
    "<?",
    "</",
    "<\u200b!",
    "<" + " " * 40 + "a",
    "< ",
    "x<\u00e9",
    "<\\",
    "<\\\\a",
    "</retrieved_content>",
    "</ retrieved-content >",
    "\uff1c/retrieved_content\uff1e",
    "&lt;/retrieved_content&gt;",
    "&LT;retrieved_content",
    "&#60;/retrieved_content",
    "&#x3C;/RETRIEVED_CONTENT",
    "&amp;lt;/retrieved_content",
    "<r\u0435trieved_content",
    "<\u200b/\u00adretrieved\u2060_content>",
    "<|im_end|>",
    "<\uff5cend\u2581of\u2581sentence\uff5c>",
    "[INST] x [/INST]",
    "[\\INST]",
    "<s>",
    "</s >",
    "<think>",
    "<start_of_turn>",
    "<system-reminder>",
    "<x:retrieved_content>",
    "a\rb&c<d>e",
    "<" + "\u200b" * 31,
    "<retr" + " " * 40 + "ieved_content",
    "<![CDATA[ ]]>",
    "<!-- -->",
    "<?xml?>",
    "\u2039/retrieved_content\u203a",
    "<\t\n/\tretrieved_content",
    "<&#47;retrieved_content",
    "<&sol;retrieved_content",
    "<&#114;etrieved_content",
    "<external_content>",
    "<retrieved_content_hygiene>",
    "<retrieved_contents>",
]


@pytest.mark.parametrize("level", ["reserved", "markup", "xml"])
def test_fast_defang_equals_reference(level: str) -> None:
    fast = fast_mod.defang
    ref = ref_mod.defang
    if not fast_mod.AVAILABLE:
        pytest.skip("the fast defang needs Python 3.11+ (possessive quantifiers); 3.10 runs the reference only")
    samples = SAMPLES + [a + b for a in SAMPLES[:20] for b in SAMPLES[14:30]]
    for s in samples:
        assert fast(s, level=level) == ref(s, level=level), (s, level)
        assert defang(s, level=level) == ref(s, level=level)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("<a", True),
        ("< \u200b a", True),
        ("<!", True),
        ("<?", True),
        ("</", True),
        ("<1", False),
        ("<", False),
        ("< ", False),
        ("<-", False),
        ("<" + " " * 40 + "1", True),
        ("<\u00e9", True),
        ("<\u200b", False),
    ],
)
def test_markup_after(text: str, want: bool) -> None:
    assert ref_mod.markup_after(text, 1) is want


# --------------------------------------------------------------------------- fresh run (see fuzz/README.md)
# Each test below names the mutants it kills (mutmut 3.8 names, run of this commit).

ONE = '<retrieved_content provenance="external" origin="'


def full(text: str, **kw: object) -> list[tuple[object, ...]]:
    _, probs, _ = scan_preface(text, **kw)  # type: ignore[arg-type]
    return [(p.code, p.offset, p.line, p.column, p.entry, p.path, p.message) for p in probs]


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
    # ... and with the body's reserved names (here retrieved_content is not reserved)
    assert full(ONE + 'o">\nz</retrieved_content>x<\\y\n</retrieved_content>', reserved=("foo_bar",)) == [
        ("body-not-canonical", 76, 2, 24, 0, (0,), "body is not in canonical defanged form at level 'reserved': '\\\\y'")
    ]
    # the raw body is longer than its canonical form and equal to it up to there
    assert full(ONE + 'o">\n<\\\n</retrieved_content>') == [
        ("body-not-canonical", 54, 2, 2, 0, (0,), "body is not in canonical defanged form at level 'reserved': '\\\\'")
    ]
    # an opener at the very end of a non-canonical body
    assert [p[:6] for p in full(ONE + 'o">\nabc<\\x<\n</retrieved_content>')] == [("body-not-canonical", 57, 2, 5, 0, (0,))]


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
        scan_preface(b"x")  # type: ignore[arg-type]
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


# --------------------------------------------------------------------------- nesting (fresh run)


def test_preface_pickles_with_its_options() -> None:
    import pickle

    kw: dict[str, object] = {"level": "markup", "reserved": ("foo_bar",), "max_depth": 3}
    d3 = compose_preface([E("external", "c", "<foo_bar> <a>")], **kw)  # type: ignore[arg-type]
    for name in ("b", "a"):
        d3 = compose_preface([E("external", name, d3)], **kw)  # type: ignore[arg-type]
    back = pickle.loads(pickle.dumps(d3))
    assert type(back) is Preface and back == d3
    assert (back.level, back.reserved, back.depth) == ("markup", ("foo_bar",), 3)


# --------------------------------------------------------------------------- defang (fresh run)


def test_check_level_message() -> None:
    with pytest.raises(ValueError) as info:
        defang("x", level="html")
    assert str(info.value) == "level must be one of reserved, markup, xml; got 'html'"


def test_implementations_default_to_reserved_level() -> None:
    for f in (ref_mod.defang, fast_mod.defang, defang_mod.defang_body):
        assert f("<a> </retrieved_content>") == "<a> <\\/retrieved_content>"


def test_no_opener_fast_path_still_escapes_xml() -> None:
    assert fast_mod.defang("a>b\r[INST]", level="xml") == "a&gt;b&#13;[\\INST]"
    assert fast_mod.defang("a>b\r", level="markup") == "a>b\r"


def test_may_hold_opener() -> None:
    assert fast_mod._may_hold_opener("plain \u00e9\u4e00 text") is False
    assert fast_mod._may_hold_opener("x\uff1cy") is True
    assert fast_mod._may_hold_opener("a&b") is True


@pytest.mark.parametrize("impl", ["fast", "reference"])
def test_defang_dispatches_to_the_selected_implementation(impl: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    for mod in (fast_mod, ref_mod):
        real = mod.defang

        def spy(*a: object, _n: str = mod.NAME, _r: object = real, **k: object) -> str:
            calls.append(_n)
            return _r(*a, **k)  # type: ignore[operator]

        monkeypatch.setattr(mod, "defang", spy)
    monkeypatch.setattr(defang_mod, "_impl", {"fast": fast_mod, "reference": ref_mod}[impl])
    assert defang("<a>", level="markup") == "<\\a>"
    assert defang("<foo_bar>", reserved=("foo_bar",)) == "<\\foo_bar>"
    assert calls == [impl] * 2


def test_defang_body_short_path_keeps_level_and_names() -> None:
    tail = "x" * 500  # no opener near the end: the body is defanged without its context
    assert defang_mod.defang_body("<a>" + tail, level="markup") == "<\\a>" + tail
    assert defang_mod.defang_body("<foo_bar>" + tail, reserved=("foo_bar",)) == "<\\foo_bar>" + tail


def test_defang_body_sees_its_context_from_the_longest_lookahead() -> None:
    # The '<' is 257 characters from the end; its lookahead (gaps between the letters of
    # a reserved name) reaches the end, where the rendered "\n<" makes it fail closed.
    t = "<" + ("." * 15).join("retrieved_conten") + "." * 15
    assert len(t) == 257 and defang("<" + t[1:]) == t
    assert defang_mod.defang_body(t) == "<\\" + t[1:]


def test_verify_consults_the_readers_above_reserved(monkeypatch: pytest.MonkeyPatch) -> None:
    """verify_preface runs the level's readers at markup and xml, never at reserved."""
    import envelock.readers
    from envelock import PrefaceEntry, compose_preface, verify_preface
    from envelock.parse import Problem

    calls: list[str] = []

    def fake(text: str, envelopes: object, *, level: str) -> list[Problem]:
        calls.append(level)
        return [Problem("reader-html", "sentinel", 0, 1, 1, 0, (0,))]

    monkeypatch.setattr(envelock.readers, "reader_problems", fake)
    for level in ("reserved", "markup", "xml"):
        out = compose_preface([PrefaceEntry("s", "o", "b")], level=level)
        codes = [p.code for p in verify_preface(out, level=level).problems]
        assert codes == ([] if level == "reserved" else ["reader-html"]), level
    assert calls == ["markup", "xml"]
