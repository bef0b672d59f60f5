"""Reader checks for levels ``markup`` and ``xml``: do real parsers see exactly our envelopes?

:func:`reader_problems` is run by :func:`envelock.verify_preface` after the
strict grammar found no problem. It parses the text with the readers the
level is proven against (docs/design.md, section 2) and compares what they build with
the envelopes the grammar found.

``markup`` -- lxml's HTML parser (libxml2's HTML5 tokenizer), configured like
``lxml.html``'s default (``huge_tree=False``, comments and PIs kept). libxml2
wraps a fragment in ``<html><body>``; the reader must see, inside ``body``,
exactly the composer's ``<retrieved_content>`` elements: same count and order,
same nesting, attributes in the rendered order with exactly the decoded values
(``provenance``/``origin`` are the fields defanged with the reserved rules,
``fetched_at`` canonical), a body envelope with no child node of any kind
(element, comment, PI), and no non-whitespace text outside envelopes. Body
text itself is not compared at this level: the HTML reader decodes character
references in it (``&lt;`` is text ``<``), which is data, not structure.
html5lib (WHATWG tree construction) is the second reader of this level; it is
a test-only dependency and checked by ``tests/test_differential.py``.

``xml`` -- ONE hardened ``lxml.etree.XMLParser`` per thread
(``resolve_entities=False, load_dtd=False, no_network=True, huge_tree=False,
recover=False``, comments, PIs and CDATA kept so they can be seen and refused;
never ``iterparse``). A preface is a sequence, not a document, so it is wrapped
in a synthetic root element ``<envelock-preface>``. Any DTD/doctype, entity
reference, comment, processing instruction or CDATA section is a problem, and
the round trip must be exact: every attribute as above, every body element's
text equal to the raw body after XML unescaping (``&amp; &lt; &gt; &#13;``), and
the whitespace between envelopes exactly the rendered ``\\n`` / ``\\n\\n``.

Size limits (decision). With ``huge_tree=False`` libxml2 refuses an XML text
node over 10,000,000 bytes, and its HTML parser silently *stops* at 10,000,000
bytes of input (``ERR_RESOURCE_LIMIT``, no exception: every later envelope is
simply missing -- this is what ``lxml.html.fromstring`` does by default).
envelock does not raise these limits for its own check, because the proof is
about the readers as users configure them. So a preface over the limit is
reported as a ``reader-html`` / ``reader-xml`` problem naming the limit, never
passed silently: at ``markup`` the whole preface must be at most 10,000,000
bytes of UTF-8; at ``xml`` each body must be at most 10,000,000 bytes of
UTF-8 once unescaped (split larger content over several entries, or use
level ``reserved``).

Problems use the codes ``reader-html`` and ``reader-xml``, located at the
envelope's open tag (or at the parser's error position), with the entry index
and path. :func:`reader_problems` never raises on a ``str``: any parser error
becomes a problem.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Sequence

from lxml import etree

from ..eye import backend
from ..eye.escape import Level, check_level, undefang_body, xml_escape_text, xml_unescape_text
from ..eye.load_tokens import Tokens
from ..eye.tokens import RESERVED_NAMES
from ..types import Envelope, LineIndex, Problem
from .render import CLOSE_TAG, OPEN_TAG_RE, TAG, attributes_of
from .spotlight import decode_body

#: The synthetic root the ``xml`` check wraps a preface in.
XML_ROOT = "envelock-preface"
#: libxml2's limit (``huge_tree=False``) on an XML text node and on the HTML parser's input, in bytes.
LIBXML2_LIMIT = 10_000_000
#: Stop reporting after this many problems from one reader.
MAX_PROBLEMS = 20

_PREFIX = f"<{XML_ROOT}>"
_SUFFIX = f"</{XML_ROOT}>"
_CLOSE = "\n" + CLOSE_TAG
_local = threading.local()


def xml_parser() -> etree.XMLParser:
    """This thread's hardened strict XML parser (built once per thread)."""
    parser: etree.XMLParser | None = getattr(_local, "xml", None)
    if parser is None:
        parser = etree.XMLParser(
            resolve_entities=False,
            load_dtd=False,
            no_network=True,
            huge_tree=False,
            recover=False,
            remove_comments=False,
            remove_pis=False,
            strip_cdata=False,
            remove_blank_text=False,
            dtd_validation=False,
            attribute_defaults=False,
            collect_ids=False,
        )
        _local.xml = parser
    return parser


def html_parser() -> etree.HTMLParser:
    """This thread's lxml HTML parser, configured like ``lxml.html``'s default (``huge_tree=False``)."""
    parser: etree.HTMLParser | None = getattr(_local, "html", None)
    if parser is None:
        parser = etree.HTMLParser(
            encoding="utf-8",
            recover=True,
            no_network=True,
            huge_tree=False,
            remove_blank_text=False,
            remove_comments=False,
            remove_pis=False,
            default_doctype=False,
            collect_ids=False,
        )
        _local.html = parser
    return parser


class _Check:
    """Compare one reader's tree with the grammar's envelopes."""

    def __init__(
        self,
        text: str,
        envelopes: Sequence[Envelope],
        code: str,
        exact: bool,
        reserved: tuple[str, ...] = RESERVED_NAMES,
        tokens: Tokens | None = None,
        from_grammar: bool = False,
    ) -> None:
        self.text = text
        self.from_grammar = from_grammar
        self.reserved = reserved
        self.tokens = tokens
        self.envelopes = envelopes
        self.code = code
        self.exact = exact
        self.problems: list[Problem] = []
        self._starts = [env.offset for env in envelopes]
        self.lines = LineIndex(text)

    @property
    def full(self) -> bool:
        return len(self.problems) >= MAX_PROBLEMS

    def problem(self, message: str, offset: int, path: tuple[int, ...] | None = None) -> None:
        if self.full:
            return
        text = self.text
        offset = max(0, min(offset, len(text)))
        if path is None:
            k = bisect_right(self._starts, offset) - 1
            path = (k,) if k >= 0 else ()
        line, column = self.lines.locate(offset)
        self.problems.append(Problem(self.code, message, offset, line, column, path[0] if path else None, path))

    # -- shared helpers -------------------------------------------------

    @staticmethod
    def describe(node: etree._Element) -> str:
        if isinstance(node, etree._Comment):
            return "a comment"
        if isinstance(node, etree._ProcessingInstruction):
            return "a processing instruction"
        if isinstance(node, etree._Entity):
            return "an entity reference"
        return f"element <{str(node.tag)[:60]}>"

    def blank(self, value: str | None, want: str, what: str, offset: int, path: tuple[int, ...]) -> None:
        """Text outside envelopes: exactly ``want`` (xml) or whitespace only (markup)."""
        got = value or ""
        if self.exact:
            if got != want:
                self.problem(f"reader sees {got[:60]!r} {what}, expected {want!r}", offset, path)
        elif got.strip():
            self.problem(f"reader sees text outside the envelopes {what}: {got.strip()[:60]!r}", offset, path)

    def body_span(self, env: Envelope) -> tuple[int, int] | None:
        """Where the raw body of ``env`` is in the text (between its open tag and its close tag)."""
        m = OPEN_TAG_RE.match(self.text, env.offset)
        if m is None:
            return None
        close = backend.find(self.text, _CLOSE, m.end())
        return None if close < 0 else (m.end(), close)

    def sequence(self, nodes: list[etree._Element], envs: Sequence[Envelope], path: tuple[int, ...], at: int) -> None:
        for i, (node, env) in enumerate(zip(nodes, envs, strict=False)):
            if self.full:
                return
            self.envelope(node, env, (*path, i))
            last = i == len(envs) - 1
            want = "" if (last and not path) else ("\n" if last else "\n\n")
            self.blank(node.tail, want, "after the envelope", env.offset, (*path, i))
        if len(nodes) != len(envs):
            k = min(len(nodes), len(envs))
            offset = envs[k].offset if k < len(envs) else at
            extra = "" if len(nodes) < len(envs) else f"; the extra node is {self.describe(nodes[k])}"
            self.problem(f"reader sees {len(nodes)} envelopes here, the composer wrote {len(envs)}{extra}", offset, (*path, k))

    def envelope(self, node: etree._Element, env: Envelope, path: tuple[int, ...]) -> None:
        if not isinstance(node.tag, str) or node.tag != TAG:
            self.problem(f"reader sees {self.describe(node)} where the composer wrote an envelope", env.offset, path)
            return
        want = attributes_of(env)
        got = [(str(k), str(v)) for k, v in node.attrib.items()]
        if got != want:
            self.problem(f"reader sees attributes {got!r:.200}, the composer wrote {want!r:.200}", env.offset, path)
        if env.body is None:
            self.blank(node.text, "\n", "at the start of the envelope", env.offset, path)
            self.sequence(list(node), env.children, path, env.offset)
            return
        if len(node):
            self.problem(f"reader sees {self.describe(node[0])} inside the body; a body must be text only", env.offset, path)
            return
        if self.exact:
            self.body_text(node.text or "", env, path)

    def body_text(self, got: str, env: Envelope, path: tuple[int, ...]) -> None:
        span = self.body_span(env)
        if span is None or env.body is None:
            self.problem("envelope offsets do not match the text", env.offset, path)
            return
        # The grammar made env.body from this raw text with these options (the same undo of the
        # same unescaped text), so once the reader's text is the raw body unescaped the decode below
        # can only agree; it is checked for envelopes handed in from elsewhere. The comparison is
        # made without the unescaped text (backend.xml_body_is); it is built for the message only.
        same = backend.xml_body_is(got, self.text, *span)
        if not same or (not self.from_grammar and _decoded(got[1:-1], env, self.reserved, self.tokens) != env.body):
            want = "\n" + xml_unescape_text(self.text[span[0] : span[1]]) + "\n"
            i = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
            self.problem(
                f"round trip differs at body offset {max(i - 1, 0)}: "
                f"reader sees {got[i : i + 40]!r}, expected {want[i : i + 40]!r}",
                env.offset,
                path,
            )


def _decoded(text: str, env: Envelope, reserved: tuple[str, ...], tokens: Tokens | None) -> str | None:
    """The body as the strict XML reader's text gives it back; ``None`` when it does not decode.

    Without a transform, the reader has resolved the ``xml`` level's references, so what is left
    is the ``markup`` form. A transform was applied to the ``xml`` form (references included: a
    CR is ``&#13;`` there, not a blank that datamarking would mark), so the reader's text is
    escaped back (``xml_escape_text``, exact for a canonical body) and decoded at ``xml``
    (:func:`envelock.spotlight.decode_body`).
    """
    try:
        if env.spotlight.mode == "none":
            return undefang_body(text, level="markup", reserved=reserved, tokens=tokens)
        return decode_body(xml_escape_text(text), env.spotlight, level="xml", reserved=reserved, tokens=tokens)
    except ValueError:
        return None


def _position(lines: LineIndex, line: int, column: int, prefix: int) -> int:
    """Offset of a libxml2 (line, column), the wrapped text having ``prefix`` extra chars on line 1."""
    return lines.offset(line, max(column, 1) - (prefix if line <= 1 else 0))


def _encode(check: _Check, text: str) -> bytes | None:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        check.problem(f"U+{ord(text[exc.start]):04X} cannot be encoded, so no parser can read this text", exc.start)
        return None


def _html(text: str, envelopes: Sequence[Envelope]) -> list[Problem]:
    check = _Check(text, envelopes, "reader-html", exact=False)
    data = _encode(check, text)
    if data is None:
        return check.problems
    if len(data) > LIBXML2_LIMIT:
        check.problem(
            f"preface is {len(data):,} bytes; lxml's HTML parser (huge_tree=False, the lxml.html default) silently stops "
            f"at {LIBXML2_LIMIT:,} and drops every later envelope -- split it or use level 'reserved'",
            0,
            (),
        )
        return check.problems
    parser = html_parser()
    try:
        root = etree.fromstring(data, parser)
    except (etree.LxmlError, ValueError, MemoryError) as exc:
        check.problem(f"lxml's HTML parser failed: {str(exc)[:200]}", 0, ())
        return check.problems
    for entry in parser.error_log:
        if entry.type_name == "ERR_RESOURCE_LIMIT" or entry.level_name == "FATAL":
            check.problem(
                f"lxml's HTML parser stopped: {entry.message[:200]}", _position(check.lines, entry.line, entry.column, 0)
            )
            return check.problems
    if root is None:
        if envelopes:
            check.problem("lxml's HTML parser sees no document", 0, ())
        return check.problems
    tree = root.getroottree()
    if tree.docinfo.doctype:
        check.problem(f"reader sees a doctype {tree.docinfo.doctype[:60]!r}", 0, ())
    for sib in (root.getprevious(), root.getnext()):
        if sib is not None:
            check.problem(f"reader sees {check.describe(sib)} outside the document element", 0, ())
    if root.tag != "html" or root.attrib:
        check.problem(f"reader sees {check.describe(root)} as the document element, expected the implied <html>", 0, ())
        return check.problems
    check.blank(root.text, "", "before <body>", 0, ())
    kids = list(root)
    if [k.tag for k in kids] != ["body"] or kids[0].attrib:
        check.problem(f"reader sees {[check.describe(k) for k in kids]} under <html>, expected only the implied <body>", 0, ())
        return check.problems
    body = kids[0]
    check.blank(body.text, "", "before the first envelope", 0, ())
    check.sequence(list(body), envelopes, (), len(text))
    check.blank(body.tail, "", "after <body>", len(text), ())
    return check.problems


def _xml(
    text: str, envelopes: Sequence[Envelope], reserved: tuple[str, ...], tokens: Tokens | None, from_grammar: bool
) -> list[Problem]:
    check = _Check(text, envelopes, "reader-xml", exact=True, reserved=reserved, tokens=tokens, from_grammar=from_grammar)
    body = _encode(check, text)
    if body is None:
        return check.problems
    data = _PREFIX.encode() + body + _SUFFIX.encode()
    cdata = text.find("<![CDATA[")
    if cdata >= 0:
        check.problem("reader sees a CDATA section (refused: it hides markup from the round trip)", cdata)
    try:
        root = etree.fromstring(data, xml_parser())
    except etree.XMLSyntaxError as exc:
        line, column = exc.position
        where = _position(check.lines, line, column, len(_PREFIX))
        msg = str(exc.msg or exc)[:200]
        if "limit" in msg.lower() or "XML_PARSE_HUGE" in msg:
            msg = (
                f"{msg} -- the strict XML parser (huge_tree=False) refuses a text node over {LIBXML2_LIMIT:,} bytes; "
                "split the body over several entries or use level 'reserved'"
            )
        check.problem(f"the strict XML parser refuses this text: {msg}", where)
        return check.problems
    except (etree.LxmlError, ValueError, MemoryError) as exc:
        check.problem(f"the strict XML parser failed: {str(exc)[:200]}", 0, ())
        return check.problems
    tree = root.getroottree()
    if tree.docinfo.doctype or tree.docinfo.internalDTD is not None:
        check.problem("reader sees a DTD/doctype", 0, ())
    for node in root.iter(etree.Comment, etree.ProcessingInstruction, etree.Entity):
        check.problem(f"reader sees {check.describe(node)} (refused at level 'xml')", check.lines.offset(node.sourceline or 1))
        if check.full:
            return check.problems
    if root.tag != XML_ROOT or root.attrib:
        check.problem(f"reader sees {check.describe(root)} as the root, expected the synthetic <{XML_ROOT}>", 0, ())
        return check.problems
    check.blank(root.text, "", "before the first envelope", 0, ())
    check.sequence(list(root), envelopes, (), len(text))
    return check.problems


def reader_problems(
    text: str,
    envelopes: Sequence[Envelope],
    *,
    level: Level,
    reserved: tuple[str, ...] = RESERVED_NAMES,
    tokens: Tokens | None = None,
    from_grammar: bool = False,
) -> list[Problem]:
    """Problems the readers of ``level`` find in ``text`` against the grammar's ``envelopes``.

    ``[]`` at level ``reserved`` (no parser is claimed there). Never raises on
    a ``str``: any parser failure is reported as a problem. ``from_grammar``: the envelopes are
    :func:`~envelock.envelope.parse.scan_preface`'s of this ``text`` with these options and it
    found no problem, so each body already is the undo of its text (the XML reader's text is
    still compared with the unescaped text; the second undo is left out).
    """
    lvl = check_level(level)
    if not isinstance(text, str):
        raise TypeError(f"text must be str, got {type(text).__name__}")
    if lvl == "reserved" or (not envelopes and not text.strip()):
        return []
    try:
        return _html(text, envelopes) if lvl == "markup" else _xml(text, envelopes, tuple(reserved), tokens, from_grammar)
    except Exception as exc:  # defensive: a reader check must report, never raise
        code = "reader-html" if lvl == "markup" else "reader-xml"
        return [Problem(code, f"reader check failed: {type(exc).__name__}: {str(exc)[:200]}", 0, 1, 1, None, ())]
