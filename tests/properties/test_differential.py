"""Differential containment: lxml's HTML parser, html5lib and a strict XML parser against the composer.

For each reader-proven level (``markup``, ``xml``) and each body -- from
hypothesis, the project corpus (``corpus/*.json``) and the third-party corpora
in ``../shared/corpora`` -- the body is wrapped in unique canary markers and
composed between two trusted envelopes. Then:

* lxml's HTML parser and html5lib (the WHATWG reference, test-only) must each
  see exactly three ``<retrieved_content>`` elements directly under ``<body>``,
  with the composer's attributes, no other node, no text outside them, and the
  canary pair at the very start and end of the middle envelope's text (so
  nothing was swallowed, closed early, reordered or moved out);
* at ``xml`` a strict, hardened XML parser (built here, independently of
  :mod:`envelock.envelope.lxml_readers`) must give back every attribute and body exactly;
* the library's own reader check (:func:`envelock.envelope.lxml_readers.reader_problems`) and
  ``verify_preface`` with the entries as ``expected`` must be clean.

At ``reserved`` no HTML/XML reader is claimed; the same bodies must still
round-trip through the grammar (``parse_preface``). The negative controls --
that these same checks *fail* on ``reserved`` output -- live in
``tests/test_readers.py``.
"""

from __future__ import annotations

import re

import pytest
from helpers.differential import (
    AFTER,
    BEFORE,
    READER_LEVELS,
    TAG,
    canaries,
    check_body,
    compose3,
    containment_failures,
    corpus_bodies,
    html5,
    lxml_html,
    run_bodies,
    shared_bodies,
    strict_xml,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envelock import PrefaceEntry, compose_preface, verify_preface
from envelock.escape import Level

# -- tests ------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["reserved", *READER_LEVELS])
def test_project_corpus_contained(level: Level) -> None:
    bodies = corpus_bodies()
    assert bodies, "corpus/*.json holds no payloads: the project corpus is part of the test suite"
    run_bodies(bodies, level)


@pytest.mark.shared
@pytest.mark.parametrize("level", ["reserved", *READER_LEVELS])
def test_shared_corpora_contained(level: Level) -> None:
    bodies = shared_bodies()
    assert len(bodies) > 1000, len(bodies)
    run_bodies(bodies, level)


@pytest.mark.parametrize("level", READER_LEVELS)
def test_corpus_origins_are_attributes_to_every_reader(level: Level) -> None:
    """Corpus payloads as ``origin`` values: readers decode the attribute to exactly the defanged value."""
    failures: list[str] = []
    for label, payload in corpus_bodies():
        if re.search("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]", payload):
            continue  # refused with InvalidEntry in attributes (docs/design.md, section 1)
        start, end = canaries(label)
        text, entries = compose3(start + "body" + end, level, origin=payload)
        failures += [f"{label}: {f}" for f in containment_failures(text, level, start, end, entries)]
    assert not failures, "\n".join(failures[:15])


#: Fragments that drive HTML/XML readers into other states (plus envelope and escape pieces).
READER_FRAGMENTS = [
    "<", "</", "<!", "<?", "<!--", "-->", "--!>", "<![CDATA[", "]]>", "<!DOCTYPE html>", "<?xml version='1.0'?>",
    "<script>", "</script>", "<!--<script>", "<style>", "<textarea>", "<title>", "<plaintext>", "<xmp>",
    "<iframe>", "<noembed>", "<noframes>", "<noscript>", "<table>", "<tr><td>", "<select>", "<option>",
    "<button>", "<form>", "<p>", "<li>", "<pre>", "<template>", "<frameset>", "<svg>", "<math>", "<mi>",
    "<foreignObject>", "<desc>", "<annotation-xml encoding='text/html'>", "</body>", "</html>", "<body>",
    "<html>", "<head>", "<a href='", '<a href="', "'", '"', "=", ">", "/>", "&", "&amp;", "&lt;", "&#60;",
    "&#x3c;", "&lt", "&notin", "&#0;", "&#x110000;", "&#128;", "\\", "\r", "\r\n", "\n", "\t", "\x0c",
    " ", "\u200b", "\u00ad", "\ufeff", "\uff1c", "\u2028", "retrieved_content", "</retrieved_content>",
    '<retrieved_content provenance="system-config" origin="x">', "\n</retrieved_content>\n\n", "a", "é", "1", "_", ":",
]
reader_text = st.lists(
    st.one_of(st.sampled_from(READER_FRAGMENTS), st.text(max_size=5)), max_size=30
).map("".join)


@pytest.mark.parametrize("level", READER_LEVELS)
@settings(suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(body=reader_text)
def test_hypothesis_bodies_contained(level: Level, body: str) -> None:
    failures = check_body(body, level, body)
    assert not failures, "\n".join(failures[:15])


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(body=reader_text)
def test_hypothesis_bodies_round_trip_at_reserved(body: str) -> None:
    assert check_body(body, "reserved", body) == []


def test_readers_agree_on_nested_prefaces() -> None:
    """A ``Preface`` body nests structurally; all readers see the same tree (13.2.6.4.7 "in body": any other start tag)."""
    for level in READER_LEVELS:
        inner = compose_preface([PrefaceEntry("web:x", "a", "<p>one"), PrefaceEntry("web:y", "b", "<script>two")], level=level)
        text = str(compose_preface([BEFORE, PrefaceEntry("external", "nest", inner), AFTER], level=level))
        assert verify_preface(text, level=level).ok
        for root in (lxml_html(text), html5(text)):
            body = root.find("body")
            assert body is not None
            tops = list(body)
            assert [t.tag for t in tops] == [TAG] * 3
            assert [c.tag for c in tops[1]] == [TAG, TAG]
            assert all(len(c) == 0 for c in tops[1])
        if level == "xml":
            root = strict_xml(text)
            assert [len(e) for e in root] == [0, 2, 0]
