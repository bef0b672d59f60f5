"""MCP (the ``mcp`` Python SDK): a tool call's result as envelopes, for every call of a client session.

Needs ``pip install 'envelock[mcp]'``. :func:`envelope_result` turns a ``CallToolResult`` into an
:class:`EnvelopedResult`: a verified preface with one envelope per content item, each
``provenance="external"`` and ``origin="mcp:<server>/<tool>"``; :class:`EnvelopedSession` wraps a
``ClientSession`` (or an ``mcp.Client``) so that every ``call_tool`` returns one. Put
``result.preface`` in the provider's tool-result slot (``envelock.integrations.anthropic.tool_result``
with ``is_error=result.is_error``, ``envelock.integrations.openai.tool_message``).

**Content, item by item** (the SDK's ``ContentBlock`` union); nothing is dropped silently, and
:attr:`EnvelopedResult.report` says what happened to each item:

* ``TextContent``: an envelope around its text (``enveloped``).
* ``EmbeddedResource`` holding ``TextResourceContents``: an envelope around the resource's text
  (``enveloped``; the report keeps its ``uri`` and ``mimeType``).
* ``ImageContent``, ``AudioContent``, ``EmbeddedResource`` holding ``BlobResourceContents``: binary
  data cannot go into a text envelope. With ``non_text="describe"`` (the default) an envelope
  describes it (kind, MIME type, size; the data itself is not shown) and the block is returned
  untouched in :attr:`EnvelopedResult.non_text`: forwarding it to a model is the caller's choice,
  and envelock proves nothing about what an image or a recording says. ``non_text="refuse"``
  raises :class:`~envelock.integrations.common.UnsupportedContent` (item index and kind).
* ``ResourceLink``: text about a resource (name, uri, MIME type, description, all written by the
  server), so an envelope describes it (``described``).
* ``structuredContent``: the spec asks a server to also send it serialized as a ``TextContent``;
  when a text item parses to the same JSON value it is already enveloped (``duplicate``),
  otherwise its JSON gets an envelope of its own (``enveloped``).
* A result with no content at all gets one empty envelope (the model sees the tool answered
  nothing); a content type this module does not know is refused (``UnsupportedContent``).
* ``isError``: the envelopes are the same (an error message is external text too); the flag is
  :attr:`EnvelopedResult.is_error`, for the provider's ``is_error``.

**Hostile names.** Server names (``serverInfo.name``) and tool names are written by the server.
By default each is percent-encoded before it goes into the origin: every character outside the
RFC 3986 unreserved set ``A-Z a-z 0-9 - . _ ~`` becomes the ``%XX`` of its UTF-8 bytes (a lone
surrogate: of its ``surrogatepass`` bytes). The origin is then printable ASCII, injective (two
names never share one), free of look-alikes, invisible characters and ``/`` inside a name, and
never refused: a quote, ``</retrieved_content>``, a control character or U+202E in a name can
neither break the attribute nor make the call fail. ``quote_names=False`` keeps the names as
written: composition still escapes quotes and markup in the attribute, strips what it strips
from any attribute (bidi controls such as U+202E, reported in ``preface.transformations``: two
names can then meet), and raises
:class:`~envelock.InvalidEntry` (field ``origin``) for a character XML cannot carry (U+0001, a lone
surrogate, U+FFFE): the call fails closed.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

from envelock import Envelock, Preface, PrefaceEntry

from .common import STRICT_POLICY, IntegrationError, UnsupportedContent, missing_extra

try:
    from mcp.types import (
        AudioContent,
        BlobResourceContents,
        CallToolResult,
        ContentBlock,
        EmbeddedResource,
        ImageContent,
        ResourceLink,
        TextContent,
        TextResourceContents,
    )
except ImportError as exc:  # an optional extra, never a dependency of envelock
    raise missing_extra(__name__, "mcp", "mcp", exc) from exc

__all__ = ["ContentReport", "EnvelopedResult", "EnvelopedSession", "envelope_result", "mcp_origin", "quote_name"]

#: What to do with content a text envelope cannot carry (images, audio, binary resources).
NonTextPolicy = Literal["describe", "refuse"]
#: How one content item was handled.
Handling = Literal["enveloped", "described", "duplicate", "empty"]
_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


def quote_name(name: str) -> str:
    """``name`` percent-encoded outside the RFC 3986 unreserved characters (UTF-8; ``surrogatepass``).

    >>> quote_name('evil"</retrieved_content>\\x01')
    'evil%22%3C%2Fretrieved_content%3E%01'
    >>> quote_name("Café/tool")
    'Caf%C3%A9%2Ftool'
    """
    if not isinstance(name, str):
        raise TypeError(f"an MCP server or tool name must be str, got {type(name).__name__}")
    return "".join(c if c in _UNRESERVED else "".join(f"%{b:02X}" for b in c.encode("utf-8", "surrogatepass")) for c in name)


def mcp_origin(server: str, tool: str, *, quote_names: bool = True) -> str:
    """``mcp:<server>/<tool>``, each name percent-encoded unless ``quote_names=False``."""
    if quote_names:
        return f"mcp:{quote_name(server)}/{quote_name(tool)}"
    if not isinstance(server, str) or not isinstance(tool, str):
        raise TypeError("an MCP server or tool name must be str")
    return f"mcp:{server}/{tool}"


@dataclass(frozen=True)
class ContentReport:
    """What happened to one item: ``index`` in ``result.content`` (``None``: ``structuredContent``),
    ``kind`` (``text``, ``image``, ``audio``, ``resource``, ``blob``, ``resource_link``,
    ``structured``, ``empty``), ``handling`` and a one-line ``detail``."""

    index: int | None
    kind: str
    handling: Handling
    detail: str = ""


@dataclass(frozen=True)
class EnvelopedResult:
    """A tool result as envelopes: ``preface`` (verified), the ``entries`` it was composed from,
    ``is_error``, the ``origin`` every envelope carries, a ``report`` per item, the ``non_text``
    blocks (as the server sent them) and the raw ``result``."""

    preface: Preface
    entries: tuple[PrefaceEntry, ...]
    is_error: bool
    origin: str
    report: tuple[ContentReport, ...]
    non_text: tuple[ContentBlock, ...]
    result: CallToolResult


def _describe(kind: str, index: int, mime: str | None, data: str, extra: str = "") -> str:
    return f"[{kind} content {index}{extra}: {mime or 'no MIME type'}, {len(data)} characters of base64 data, not shown]"


def envelope_result(
    result: CallToolResult,
    *,
    server: str,
    tool: str,
    non_text: NonTextPolicy = "describe",
    quote_names: bool = True,
    fetched_at: datetime | str | None = None,
    policy: Envelock = STRICT_POLICY,
) -> EnvelopedResult:
    """The envelopes of one ``CallToolResult`` of ``tool`` on ``server`` (see the module docstring)."""
    if non_text not in ("describe", "refuse"):
        raise ValueError(f"non_text must be 'describe' or 'refuse'; got {non_text!r}")
    if not isinstance(result, CallToolResult):
        raise TypeError(f"expected an mcp.types.CallToolResult, got {type(result).__name__}")
    origin = mcp_origin(server, tool, quote_names=quote_names)
    bodies: list[str] = []
    report: list[ContentReport] = []
    held: list[ContentBlock] = []
    texts: list[str] = []

    def binary(i: int, kind: str, block: ContentBlock, mime: str | None, data: str, extra: str = "") -> None:
        if non_text == "refuse":
            raise UnsupportedContent(i, kind, f"{kind} content from {origin} cannot go into a text envelope (non_text='refuse')")
        bodies.append(_describe(kind, i, mime, data, extra))
        report.append(ContentReport(i, kind, "described", f"{mime or 'no MIME type'}, {len(data)} base64 characters"))
        held.append(block)

    for i, block in enumerate(result.content):
        if isinstance(block, TextContent):
            bodies.append(block.text)
            texts.append(block.text)
            report.append(ContentReport(i, "text", "enveloped"))
        elif isinstance(block, ImageContent):
            binary(i, "image", block, block.mime_type, block.data)
        elif isinstance(block, AudioContent):
            binary(i, "audio", block, block.mime_type, block.data)
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, TextResourceContents):
            res = block.resource
            bodies.append(res.text)
            report.append(ContentReport(i, "resource", "enveloped", f"uri {res.uri!s}, {res.mime_type or 'no MIME type'}"))
        elif isinstance(block, EmbeddedResource) and isinstance(block.resource, BlobResourceContents):
            res_b = block.resource
            binary(i, "blob", block, res_b.mime_type, res_b.blob, f" (embedded resource {res_b.uri!s})")
        elif isinstance(block, ResourceLink):
            fields = [f"name: {block.name}", f"uri: {block.uri!s}"]
            fields += [f"{label}: {value}" for label, value in (("title", block.title), ("mime_type", block.mime_type),
                       ("description", block.description), ("size", block.size)) if value is not None]  # fmt: skip
            bodies.append(f"[resource link, content {i}]\n" + "\n".join(fields))
            report.append(ContentReport(i, "resource_link", "described", f"uri {block.uri!s}"))
        else:  # a content type this module does not know: refused, never skipped
            raise UnsupportedContent(i, type(block).__name__, f"unknown MCP content type from {origin}")

    if result.structured_content is not None:
        structured = result.structured_content
        if any(_same_json(t, structured) for t in texts):
            report.append(ContentReport(None, "structured", "duplicate", "the same JSON value is in a text item"))
        else:
            try:
                bodies.append(json.dumps(structured, ensure_ascii=False, sort_keys=True))
            except (TypeError, ValueError) as e:
                raise UnsupportedContent(len(result.content), "structured", f"structuredContent is not JSON: {e}") from None
            report.append(ContentReport(None, "structured", "enveloped", "serialized as JSON"))
    if not bodies:
        bodies.append("")
        report.append(ContentReport(None, "empty", "empty", "the tool returned no content"))

    entries = tuple(PrefaceEntry(source="external", origin=origin, body=b, fetched_at=fetched_at) for b in bodies)
    preface = policy.compose(entries, verify=True)
    return EnvelopedResult(preface, entries, bool(result.is_error), origin, tuple(report), tuple(held), result)


def _same_json(text: str, value: object) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


class ToolCaller(Protocol):
    """What :class:`EnvelopedSession` wraps: ``mcp.ClientSession`` and ``mcp.Client`` both are."""

    def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Awaitable[CallToolResult]: ...


def _now() -> datetime:
    return datetime.now(timezone.utc).replace(microsecond=0)


class EnvelopedSession:
    """Every ``call_tool`` of ``session``, enveloped: ``await EnvelopedSession(session).call_tool(name, args)``.

    ``server``: the server name for the origin (default: the session's ``server_info.name``, known
    once the session is initialized; a session that has none and no ``server=`` raises
    :class:`~envelock.integrations.common.IntegrationError`). ``clock`` gives ``fetched_at`` at each
    call (``None``: no attribute). ``non_text``, ``quote_names``, ``policy``: see :func:`envelope_result`.
    """

    def __init__(
        self,
        session: ToolCaller,
        *,
        server: str | None = None,
        non_text: NonTextPolicy = "describe",
        quote_names: bool = True,
        clock: Callable[[], datetime] | None = _now,
        policy: Envelock = STRICT_POLICY,
    ) -> None:
        self.session = session
        self.server = server
        self.non_text: NonTextPolicy = non_text
        self.quote_names = quote_names
        self.clock = clock
        self.policy = policy

    @property
    def server_name(self) -> str:
        if self.server is not None:
            return self.server
        name = getattr(getattr(self.session, "server_info", None), "name", None)
        if not isinstance(name, str):
            raise IntegrationError("the MCP session has no server_info name (initialize it first, or pass server=...)")
        return name

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> EnvelopedResult:
        """Call ``name`` with ``arguments``; the result as :class:`EnvelopedResult`."""
        server = self.server_name
        result = await self.session.call_tool(name, arguments)
        return envelope_result(
            result,
            server=server,
            tool=name,
            non_text=self.non_text,
            quote_names=self.quote_names,
            fetched_at=self.clock() if self.clock is not None else None,
            policy=self.policy,
        )
