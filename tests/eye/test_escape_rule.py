"""The escape rule, proven: an escape point gets a ``\\`` exactly when its reading (past the backslashes
right after it) is dangerous, and ``undefang`` drops exactly those, so the map is injective.

An opener already followed by ``\\`` is no longer escaped for that alone (``<\\w+`` in a regex,
``«\\-`` in roff stay as they are); ``<\\/retrieved_content>`` still is, because its reading past the
backslash is a close tag. The argument: every reading skips the backslashes right after its escape
point, so inserting one changes nothing the reading depends on (except the bounds, which only turn a
reading into fail-closed padding, also dangerous), and a reading ends at the next opener, so an
insertion elsewhere does not reach it. The tests do not rely on the argument:

* exhaustively, every string of up to five pieces over an alphabet of openers, backslashes, name
  letters, bars and closers (about 37,000 strings) at ``reserved`` and ``markup``, and every string of
  up to four pieces over a wider one: the round trip is exact, no two strings defang alike, and no
  escape point with a dangerous reading is left unescaped in the output;
* hypothesis, over text biased toward the same constructs;
* negative controls: the old undo (drop the ``\\`` after every opener followed by one) with the new
  escape, and an escape that forgets to read past the backslashes, must each be caught.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable

import pytest
from helpers.strategies import hostile_text
from hypothesis import given, settings

from envelock.eye import reference as ref
from envelock.eye.levels import Level
from envelock.eye.reader import BRACKET_OPENER_RE, OPENER_RE, names_for

pytestmark = pytest.mark.usefixtures("impl")

RESERVED = ("ab",)  # short enough for the exhaustive alphabet to spell (and to miss by one letter)
SMALL = ["<", "[", "\\", "a", "b", "s", ">", "|"]
WIDE = ["<", "[", "&lt;", "\\", "/", "a", "b", "s", "I", ">", "]", " ", "|", "\u0c02", "\u2581"]

Defang = Callable[[str, Level], str]


def strings(alphabet: list[str], most: int) -> Iterable[str]:
    for k in range(most + 1):
        for parts in itertools.product(alphabet, repeat=k):
            yield "".join(parts)


def unescaped(out: str, level: Level) -> list[int]:
    """Escape points of ``out`` whose reading is dangerous but that no ``\\`` follows."""
    names = names_for(RESERVED)
    markup = level != "reserved"
    n = len(out)
    bad = [
        m.end()
        for m in OPENER_RE.finditer(out)
        if (m.end() >= n or out[m.end()] != "\\") and ref.opener_needs_escape(out, m, names, markup)
    ]
    bad += [
        m.end()
        for m in BRACKET_OPENER_RE.finditer(out)
        if (m.end() >= n or out[m.end()] != "\\") and ref.bracket_needs_escape(out, m, names)
    ]
    return bad


def violations(defang: Defang, undefang: Defang, texts: Iterable[str], level: Level) -> list[str]:
    seen: dict[str, str] = {}
    out: list[str] = []
    for s in texts:
        d = defang(s, level)
        if undefang(d, level) != s:
            out.append(f"round trip: {s!r} -> {d!r}")
        if d in seen and seen[d] != s:
            out.append(f"not injective: {seen[d]!r} and {s!r} -> {d!r}")
        seen[d] = s
        if level == "reserved" and unescaped(d, level):
            out.append(f"unescaped dangerous escape point in {d!r} (from {s!r})")
        if len(out) > 10:
            break
    return out


def real_defang(s: str, level: Level) -> str:
    from envelock import defang

    return defang(s, level=level, reserved=RESERVED)


def real_undefang(s: str, level: Level) -> str:
    from envelock import undefang

    return undefang(s, level=level, reserved=RESERVED)


@pytest.mark.parametrize("level", ["reserved", "markup"])
def test_exhaustive_small_alphabet(level: Level) -> None:
    assert violations(real_defang, real_undefang, strings(SMALL, 5), level) == []


@pytest.mark.parametrize("level", ["reserved", "markup"])
def test_exhaustive_wide_alphabet(level: Level) -> None:
    assert violations(real_defang, real_undefang, strings(WIDE, 3), level) == []


@settings(max_examples=300)
@given(hostile_text)
def test_hypothesis_round_trip_and_containment(text: str) -> None:
    for level in ("reserved", "markup"):
        d = real_defang(text, level)
        assert real_undefang(d, level) == text
        assert unescaped(d, "reserved") == [] or level != "reserved"


def test_the_rule_on_real_text() -> None:
    """What the rule changes and keeps, as the man pages and regexes that motivated it write them."""
    assert real_defang("«\\- option »", "reserved") == "«\\- option »"  # a roff escape after a guillemet
    assert real_defang("re.compile(r'<\\w+')", "reserved") == "re.compile(r'<\\w+')"
    assert real_defang("<\\/ab>", "reserved") == "<\\\\/ab>"  # our own escaped form: one more
    assert real_defang("<\\w", "markup") == "<\\\\w"  # markup: a letter past the backslash
    assert real_defang("<\\ w", "markup") == "<\\\\ w"


# -- negative controls ---------------------------------------------------------------------


def _old_undo(s: str, level: Level) -> str:
    """The undo of the old rule: the ``\\`` after every opener followed by one is dropped."""
    n = len(s)
    return ref.drop_after(s, [m.end() for m in OPENER_RE.finditer(s) if m.end() < n and s[m.end()] == "\\"])


def _no_skip_defang(s: str, level: Level) -> str:
    """An escape that decides on the text right after the opener without reading past a ``\\``."""
    names = names_for(RESERVED)
    n = len(s)
    ends = [
        m.end()
        for m in OPENER_RE.finditer(s)
        if not (m.end() < n and s[m.end()] == "\\") and ref.opener_needs_escape(s, m, names, level != "reserved")
    ]
    return ref.insert_after(s, ends)


def test_negative_control_old_undo_is_caught() -> None:
    assert violations(real_defang, _old_undo, strings(SMALL, 3), "reserved")


def test_negative_control_escape_that_does_not_read_past_backslashes_is_caught() -> None:
    # Length 4: the shortest dangerous strings behind a backslash are "<\\ab" and "[\\|a|]"-like shapes.
    assert violations(_no_skip_defang, real_undefang, strings(SMALL, 4), "reserved")
