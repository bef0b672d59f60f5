"""The defang implementations: fast equals reference on pinned samples, dispatch, levels, body context.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import pytest

from envelock import (
    defang,
)
from envelock.escape import Level
from envelock.eye import backend
from envelock.eye.reader import may_hold_opener

# --------------------------------------------------------------------------- defang

defang_mod = sys.modules["envelock.escape"]
ref_mod = sys.modules["envelock.eye.reference"]
fast_mod = sys.modules["envelock.eye.fastpath"]

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
def test_fast_defang_equals_reference(level: Level) -> None:
    fast = fast_mod.defang
    ref = ref_mod.defang
    if not fast_mod.AVAILABLE:
        # 3.10 has no possessive quantifiers: no fast path, and what it runs instead is the reference
        assert sys.version_info < (3, 11), "the fast defang is unavailable on Python 3.11+"
        assert "fast" not in backend.IMPLEMENTATIONS
        fast = ref
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


# --------------------------------------------------------------------------- defang (fresh run)


def test_check_level_message() -> None:
    with pytest.raises(ValueError) as info:
        defang("x", level="html")  # type: ignore[arg-type]  # deliberately not a Level: the run-time check
    assert str(info.value) == "level must be one of reserved, markup, xml; got 'html'"


def test_implementations_default_to_reserved_level() -> None:
    for f in (ref_mod.defang, fast_mod.defang, defang_mod.defang_body):
        assert f("<a> </retrieved_content>") == "<a> <\\/retrieved_content>"


def test_no_opener_fast_path_still_escapes_xml() -> None:
    assert fast_mod.defang("a>b\r[INST]", level="xml") == "a&gt;b&#13;[\\INST]"
    assert fast_mod.defang("a>b\r", level="markup") == "a>b\r"


def test_may_hold_opener() -> None:
    assert may_hold_opener("plain \u00e9\u4e00 text") is False
    assert may_hold_opener("x\uff1cy") is True
    assert may_hold_opener("a&b") is True


@pytest.mark.parametrize("impl", ["fast", "reference"])
def test_defang_dispatches_to_the_selected_implementation(impl: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    for mod in (fast_mod, ref_mod):
        real = mod.defang

        def spy(*a: object, _n: str = mod.NAME, _r: Callable[..., str] = real, **k: object) -> str:
            calls.append(_n)
            return _r(*a, **k)

        monkeypatch.setattr(mod, "defang", spy)
    monkeypatch.setattr(backend, "_impl", backend.IMPLEMENTATIONS[impl])
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
