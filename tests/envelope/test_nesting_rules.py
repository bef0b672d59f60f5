"""Nesting errors and the Preface constructor, pinned exactly (index, field, reason; pickling).
"""

from __future__ import annotations

from typing import TypedDict

import pytest
from helpers.diagnostics import E

from envelock import (
    EnvelopeBreach,
    NestingError,
    Preface,
    compose_preface,
)
from envelock.escape import Level

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


# --------------------------------------------------------------------------- nesting (fresh run)


def test_preface_pickles_with_its_options() -> None:
    import pickle

    class Options(TypedDict):
        level: Level
        reserved: tuple[str, ...]
        max_depth: int

    kw: Options = {"level": "markup", "reserved": ("foo_bar",), "max_depth": 3}
    d3 = compose_preface([E("external", "c", "<foo_bar> <a>")], **kw)
    for name in ("b", "a"):
        d3 = compose_preface([E("external", name, d3)], **kw)
    back = pickle.loads(pickle.dumps(d3))
    assert type(back) is Preface and back == d3
    assert (back.level, back.reserved, back.depth) == ("markup", ("foo_bar",), 3)


def test_preface_pickles_and_copies_with_what_composition_recorded() -> None:
    import copy
    import pickle

    p = compose_preface([E("external", "o", "a\u202eb\x00c")], spotlight="datamark", nonce="f3a9c2e17b05d8a64e1c9b72")
    assert len(p.transformations) == 2  # the bidi control stripped, the NUL replaced
    for back in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p)):
        assert type(back) is Preface and back == p
        assert (back.transformations, back.nonce, back.spotlight) == (p.transformations, p.nonce, p.spotlight)
        assert back.hygiene_rule() == p.hygiene_rule()
    # The text is still validated on unpickling: a forged text is refused whatever it claims.
    forged = pickle.dumps(p).replace(b"</retrieved_content>", b"</retrieved_contenX>")
    with pytest.raises(EnvelopeBreach):
        pickle.loads(forged)
