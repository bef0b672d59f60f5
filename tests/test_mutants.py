"""Tests that kill mutmut survivors in defang, parse, verify and nesting (see fuzz/README.md).

The core tests check verdicts; mutmut showed that the *diagnostics* (problem
codes, offsets, line/column, entry index and path, messages, error indexes)
and the reference defang behind the fast one were barely pinned down. A
security gate's report is part of its contract (DESIGN.md section 4: every
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

defang_mod = sys.modules["envelock.defang"]

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
    fast = getattr(defang_mod, "defang_fast", None)
    ref = getattr(defang_mod, "defang_reference", None)
    if fast is None or ref is None:
        pytest.skip("defang has a single implementation")
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
    assert defang_mod.markup_after(text, 1) is want
