#!/usr/bin/env python3
"""Fuzz the level ``markup``/``xml`` guarantee: real parsers see exactly the composed envelopes.

For entries decoded as in ``fuzz_compose.py`` (optionally with the first
entries nested as a ``Preface`` body), composed at ``markup`` or ``xml``:

* ``verify_preface(out, expected=entries, level=L).ok`` -- this runs
  envelock's own reader checks (``envelock.envelope.lxml_readers``); when that module is
  still a stub the step is skipped with a printed message;
* independently of ``envelock.envelope.lxml_readers``, lxml's HTML parser sees, inside
  ``<body>``, exactly the ``<retrieved_content>`` elements of the preface:
  same count, order and nesting, attributes equal to the rendered (defanged,
  decoded) values, no comment/PI/element inside a body envelope, only
  whitespace between envelopes;
* at ``xml``, a hardened strict ``lxml.etree.XMLParser`` sees the same tree,
  and every body's text, undefanged, is exactly the entry's body (exact round
  trip through the XML reader);
* html5lib (WHATWG tree construction) sees the same structure, on the inputs
  whose header selects it (about one in eight: html5lib is slow).

Input: as ``fuzz_compose.py`` plus one header byte at the very end
(bit 0 selects xml over markup, bits 1-3 the number of entries nested, bits
5-7 == 0 selects html5lib).
"""

from __future__ import annotations

import sys
from pathlib import Path
from xml.etree import ElementTree as ET

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common
from _common import Input, expected_text
from fuzz_compose import decode as decode_entries
from lxml import etree

from envelock import InvalidEntry, PrefaceEntry, compose_preface, parse_preface, verify_preface
from envelock.escape import undefang_body
from envelock.eye.escape import defang_attribute

try:
    import html5lib
except ImportError:  # pragma: no cover
    html5lib = None

TAG = "retrieved_content"
_XML_PARSER = etree.XMLParser(
    resolve_entities=False,
    load_dtd=False,
    no_network=True,
    huge_tree=False,
    recover=False,
    remove_comments=False,
    remove_pis=False,
    strip_cdata=False,
)
_HTML_PARSER = etree.HTMLParser(remove_comments=False, remove_pis=False, no_network=True)


def decode(data: bytes) -> tuple[str, int, bool, list[PrefaceEntry]]:
    inp = Input(data, 1)
    flags = inp.header[0]
    _, entries = decode_entries(data[:-1] if data else data)
    level = "xml" if flags & 1 else "markup"
    nest = (flags >> 1) & 7
    return level, nest, (flags >> 5) == 0, entries


def expected_tree(envs: list | tuple) -> list:
    """(attributes, children-or-body) for each envelope, attributes as a reader must decode them."""
    out = []
    for e in envs:
        attrs = {"provenance": defang_attribute(e.source), "origin": defang_attribute(e.origin)}
        if e.fetched_at is not None:
            attrs["fetched_at"] = e.fetched_at
        out.append((attrs, expected_tree(e.children) if e.body is None else e.body))
    return out


def _is_element(node: object, tagname: str) -> bool:
    return isinstance(getattr(node, "tag", None), str) and node.tag == tagname  # type: ignore[attr-defined]


def _blank(s: str | None) -> bool:
    return s is None or s.strip(" \n") == ""


def same_structure(reader: str, parent: object, want: list, level: str, *, exact_text: bool) -> None:
    kids = list(parent)  # type: ignore[call-overload]
    shown = [getattr(k, "tag", k) for k in kids]
    assert len(kids) == len(want), f"{reader}: {len(kids)} nodes where {len(want)} envelopes were composed: {shown}"
    assert _blank(getattr(parent, "text", None)) or isinstance(want, str), f"{reader}: text outside envelopes"
    for k, (node, (attrs, content)) in enumerate(zip(kids, want, strict=True)):
        assert _is_element(node, TAG), f"{reader}: node {k} is {getattr(node, 'tag', node)!r}, not an envelope"
        assert dict(node.attrib) == attrs, f"{reader}: attributes {dict(node.attrib)!r} != {attrs!r}"
        assert list(node.attrib) == list(attrs), f"{reader}: attribute order {list(node.attrib)}"
        assert _blank(node.tail), f"{reader}: text after envelope {k}: {node.tail!r}"
        if isinstance(content, list):
            same_structure(reader, node, content, level, exact_text=exact_text)
        else:
            inner = list(node)
            assert not inner, f"{reader}: body envelope {k} holds nodes {[getattr(i, 'tag', i) for i in inner]}"
            if exact_text:
                t = node.text or ""
                assert t.startswith("\n") and t.endswith("\n"), f"{reader}: body text not framed by newlines: {t!r}"
                # A body is undone in its rendered context (the '\n<' after it), as parse does.
                assert undefang_body(t[1:-1], level="markup") == content, f"{reader}: body round trip {t!r} != {content!r}"


def check(data: bytes) -> None:
    level, nest, use_html5lib, entries = decode(data)
    if nest and len(entries) > 1:
        k = min(nest, len(entries) - 1)
        try:
            inner = compose_preface(entries[:k], level=level)
        except InvalidEntry:
            return
        entries = [PrefaceEntry("user-authored", "nest", inner), *entries[k:]]
    try:
        out = compose_preface(entries, level=level)
    except InvalidEntry:
        return
    if _common.READERS:
        v = verify_preface(out, expected=entries, level=level)
        assert v.ok, f"verify_preface (with readers) rejects the composer's output: {[str(p) for p in v.problems]}"
    envs = parse_preface(out, level=level)
    want = expected_tree(envs)
    for e, w in zip(entries, want, strict=True):
        if isinstance(w[1], str):
            assert w[1] == expected_text(e.body)

    # lxml's HTML parser (libxml2), at markup and xml.
    html = etree.fromstring(out, _HTML_PARSER) if out else None
    assert html is not None and html.tag == "html", "lxml HTML: no document"
    body = html.find("body")
    assert body is not None, "lxml HTML: no body"
    head = html.find("head")
    assert head is None or len(head) == 0, "lxml HTML: something went into <head>"
    same_structure("lxml-html", body, want, level, exact_text=False)

    if level == "xml":
        root = etree.fromstring(f"<envelock-preface>{out}</envelock-preface>".encode(), _XML_PARSER)
        same_structure("lxml-xml", root, want, level, exact_text=True)

    if use_html5lib and html5lib is not None:
        doc = html5lib.parse(out, treebuilder="etree", namespaceHTMLElements=False)
        b = doc.find("body")
        assert b is not None, "html5lib: no body"
        for k in b.iter():
            assert k.tag is not ET.Comment, "html5lib: a comment appeared"
        same_structure("html5lib", b, want, level, exact_text=False)


def _note() -> None:
    if not _common.READERS:
        print("fuzz: readers: envelock.envelope.lxml_readers is missing; only the harness's own lxml/html5lib checks run")


if __name__ == "__main__":
    _note()
    _common.main("readers", check)
