"""Corpus replay: the project corpus (with expected outcomes) and every string of ../shared/corpora."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.data import load_corpus, shared_strings

from envelock import LEVELS, InvalidEntry, PrefaceEntry, compose_preface, defang, parse_preface, verify_preface
from envelock.envelope.invisible import XML_IMPOSSIBLE_RE, sanitize
from envelock.escape import Level, xml_escape_text
from envelock.eye.escape import defang_attribute
from envelock.eye.reader import reserved_tag_count

#: Every test here runs once per defang implementation (tests/conftest.py, fixture ``impl``).
pytestmark = pytest.mark.usefixtures("impl")

CORPUS = load_corpus()
T = "2026-11-29T21:29:03Z"


def test_corpus_is_present_and_large() -> None:
    assert len(CORPUS) >= 300
    assert len({p["id"] for p in CORPUS}) == len(CORPUS)
    assert len({p["class"] for p in CORPUS}) >= 27


def _outcome(payload: str, field: str, level: Level) -> str:
    """Compose ``payload`` in ``field`` at ``level``; return the observed outcome words."""
    kwargs = {"source": "external", "origin": "web:https://a.example/", "body": "b", field: payload}
    entry = PrefaceEntry(fetched_at=T, **kwargs)
    try:
        out = compose_preface([entry], level=level, verify=level == "reserved")
    except InvalidEntry:
        return "refused"
    kinds = {t.kind for t in out.transformations}
    cleaned = sanitize(payload, invisible="strip", controls="replace" if field == "body" else "reject", index=0, field=field)[0]
    env = parse_preface(out, level=level)[0]
    got = {"body": env.body, "origin": env.origin, "source": env.source}[field]
    assert got == cleaned, "round trip after the documented handling"
    assert reserved_tag_count(out) == 2
    if level == "reserved" or field != "body":
        assert verify_preface(out, expected=[entry], level="reserved").ok
    inner = "reserved" if field != "body" else level
    plain = xml_escape_text(cleaned) if inner == "xml" else cleaned
    words = []
    if "stripped-invisible" in kinds:
        words.append("stripped")
    if "replaced-control" in kinds:
        words.append("replaced")
    # An attribute value is defanged followed by what the renderer writes after it (stop 49).
    if (defang_attribute(cleaned) if field != "body" else defang(cleaned, level=inner)) != plain:
        words.append("defanged")
    return "+".join(words) or "untouched"


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("case", CORPUS, ids=[p["id"] for p in CORPUS])
def test_corpus_payload_has_expected_outcome(case: dict[str, Any], level: Level) -> None:
    assert _outcome(case["payload"], case["as"], level) == case["expect"][level]


@pytest.mark.shared
def test_shared_corpora_contained_as_body_and_origin() -> None:
    strings = shared_strings()
    assert len(strings) > 1000
    entries = [PrefaceEntry("external", "web:x", s, T) for _, s in strings]
    out = compose_preface(entries, verify=True)
    assert reserved_tag_count(out) == 2 * len(entries)
    bodies = [e.body for e in parse_preface(out)]
    assert bodies == [sanitize(s, invisible="strip", controls="replace", index=0, field="body")[0] for _, s in strings]
    origins = []
    for _, s in strings:
        try:
            origins.append(compose_preface([PrefaceEntry("external", s, "b", T)], verify=True))
        except InvalidEntry as exc:  # XML-impossible characters in an attribute are refused, by contract
            assert XML_IMPOSSIBLE_RE.search(s), exc
    assert len(origins) == sum(1 for _, s in strings if not XML_IMPOSSIBLE_RE.search(s))
    assert all(reserved_tag_count(o) == 2 for o in origins)
