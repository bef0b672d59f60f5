"""``reader.visible``, the snippets of reports: invisible, control and ignorable characters shown as
``U+XXXX``. Its shortcut (printable ASCII is returned as it is) is held to the character-by-character
rule over every code point, alone and among printable ASCII; control: a shortcut that also took
printable text beyond ASCII would hide a default-ignorable character that ``isprintable`` accepts."""

from __future__ import annotations

from envelock.eye import reader


def by_character(text: str) -> str:
    return "".join(c if (c.isprintable() and c not in reader._IGNORABLE) or c == " " else f"U+{ord(c):04X}" for c in text)


def test_every_code_point_is_shown_as_the_rule_shows_it() -> None:
    for cp in range(0x110000):
        c = chr(cp)
        for text in (c, f"a{c}b"):
            assert reader.visible(text) == by_character(text), hex(cp)


def test_printable_ascii_is_unchanged_and_nothing_ignorable_is_ascii() -> None:
    ascii_printable = "".join(chr(cp) for cp in range(0x20, 0x7F))
    assert reader.visible(ascii_printable) == ascii_printable
    assert all(ord(c) > 0x7F for c in reader._IGNORABLE)


def test_control_a_shortcut_for_all_printable_text_would_hide_an_ignorable() -> None:
    printable_ignorables = [c for c in reader._IGNORABLE if c.isprintable() and c != " "]
    assert printable_ignorables, "some default-ignorable characters are printable: the rule must look at each"
    c = printable_ignorables[0]
    assert reader.visible(c) == f"U+{ord(c):04X}"
    assert reader.visible(c) != c  # what `text if text.isprintable()` would have given
