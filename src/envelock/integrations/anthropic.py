"""The Anthropic Messages API: request params (the SDK's own TypedDicts) that put each part where the pattern says.

Needs ``pip install 'envelock[anthropic]'``. Nothing here calls the network: the helpers return
the ``anthropic.types`` param dicts you pass to ``client.messages.create(**request)``.

* **The hygiene rule goes in the system prompt**, first, byte-stable and cacheable:
  :func:`system_blocks` returns system text blocks (the rule, then your instructions) with a
  ``cache_control`` breakpoint on the last one, so the whole static prefix is cached. The rule is
  ``preface.hygiene_rule()``: :data:`envelock.HYGIENE_RULE` unless the preface uses a per-turn
  nonce or marker, which change its bytes (and so the cache key) every turn; fix the marker and
  leave the nonce off where caching matters.
* **The preface is a synthetic first user message**, rebuilt each turn and never persisted:
  :func:`preface_messages` (a user message holding the preface, then an assistant
  acknowledgement) and :func:`turn_request` (system, the synthetic pair, your stored history,
  the new user message). ``history`` is not modified; store only the real messages.
* **Tool output** (mid-turn retrieval, MCP results) **goes in an envelope inside a**
  ``tool_result`` block: :func:`tool_result` (a composed preface) and :func:`tool_result_from_text`.

Every helper verifies the preface it puts in a request (:class:`~envelock.EnvelopeBreach` if it
does not verify); a plain ``str`` is accepted only if it is a sound preface.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from envelock import HYGIENE_RULE, Envelock, Preface, PrefaceEntry

from .common import ACKNOWLEDGEMENT, STRICT_POLICY, checked_preface, missing_extra

try:
    from anthropic.types import CacheControlEphemeralParam, MessageParam, TextBlockParam, ToolResultBlockParam
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
except ImportError as exc:  # an optional extra, never a dependency of envelock
    raise missing_extra(__name__, "anthropic", "anthropic", exc) from exc

__all__ = ["preface_messages", "system_blocks", "tool_result", "tool_result_from_text", "turn_request"]

#: Prompt-cache lifetimes the API accepts for a ``cache_control`` breakpoint.
CacheTTL = Literal["5m", "1h"]


def system_blocks(instructions: str = "", *, rule: str = HYGIENE_RULE, cache_ttl: CacheTTL | None = "5m") -> list[TextBlockParam]:
    """System blocks: ``rule`` first, then ``instructions`` (if any); the last one carries ``cache_control``.

    ``cache_ttl=None``: no breakpoint. The rule is a block of its own, byte for byte, so the
    prefix it starts is the same every turn for every application instruction.
    """
    blocks = [TextBlockParam(type="text", text=rule)]
    if instructions:
        blocks.append(TextBlockParam(type="text", text=instructions))
    if cache_ttl is not None:
        blocks[-1]["cache_control"] = CacheControlEphemeralParam(type="ephemeral", ttl=cache_ttl)
    return blocks


def preface_messages(
    preface: str, *, acknowledgement: str | None = ACKNOWLEDGEMENT, policy: Envelock = STRICT_POLICY
) -> list[MessageParam]:
    """The synthetic first turn: a user message holding the verified preface, then ``acknowledgement``
    as the assistant's reply (``None``: no assistant message; the API then merges the preface with
    the next user message). An empty preface gives no message at all."""
    return _synthetic(checked_preface(preface, policy), acknowledgement)


def _synthetic(checked: Preface, acknowledgement: str | None) -> list[MessageParam]:
    if not checked:
        return []
    out: list[MessageParam] = [{"role": "user", "content": [TextBlockParam(type="text", text=str(checked))]}]
    if acknowledgement is not None:
        out.append({"role": "assistant", "content": acknowledgement})
    return out


def turn_request(
    *,
    model: str,
    max_tokens: int,
    preface: str,
    history: Sequence[MessageParam],
    user: str | MessageParam,
    instructions: str = "",
    cache_ttl: CacheTTL | None = "5m",
    acknowledgement: str | None = ACKNOWLEDGEMENT,
    policy: Envelock = STRICT_POLICY,
) -> MessageCreateParamsNonStreaming:
    """The request for one turn: ``system_blocks(instructions, rule=preface.hygiene_rule())``, then
    ``preface_messages(preface)``, ``history`` (copied, not modified) and the new ``user`` message."""
    checked = checked_preface(preface, policy)
    last: MessageParam = {"role": "user", "content": user} if isinstance(user, str) else user
    return MessageCreateParamsNonStreaming(
        model=model,
        max_tokens=max_tokens,
        system=system_blocks(instructions, rule=checked.hygiene_rule(), cache_ttl=cache_ttl),
        messages=[*_synthetic(checked, acknowledgement), *history, last],
    )


def tool_result(
    tool_use_id: str, preface: str, *, is_error: bool = False, policy: Envelock = STRICT_POLICY
) -> ToolResultBlockParam:
    """A ``tool_result`` block whose content is one text block: the verified preface (the tool's output, enveloped)."""
    if not isinstance(tool_use_id, str) or not tool_use_id:
        raise ValueError(f"tool_use_id must be a non-empty str; got {tool_use_id!r}")
    checked = checked_preface(preface, policy)
    block = ToolResultBlockParam(
        type="tool_result", tool_use_id=tool_use_id, content=[TextBlockParam(type="text", text=str(checked))]
    )
    if is_error:
        block["is_error"] = True
    return block


def tool_result_from_text(
    tool_use_id: str,
    text: str,
    *,
    origin: str,
    source: str = "external",
    fetched_at: datetime | str | None = None,
    is_error: bool = False,
    policy: Envelock = STRICT_POLICY,
) -> ToolResultBlockParam:
    """:func:`tool_result` of one envelope around ``text`` (``source`` is ``external`` unless you say otherwise)."""
    preface = policy.compose([PrefaceEntry(source=source, origin=origin, body=text, fetched_at=fetched_at)], verify=True)
    return tool_result(tool_use_id, preface, is_error=is_error, policy=policy)
