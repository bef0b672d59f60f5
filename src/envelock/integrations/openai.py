"""The OpenAI Chat Completions and Responses APIs: request params (the SDK's own TypedDicts), no network.

Needs ``pip install 'envelock[openai]'``. The same three places as for every provider:

* **The hygiene rule goes in the system prompt**, first: Chat Completions
  :func:`system_message` (role ``system``, or ``developer`` for the models that want it), whose
  text starts with the rule byte for byte (OpenAI caches the longest repeated prompt prefix, so
  the rule first keeps that prefix stable); Responses: the ``instructions`` of
  :func:`responses_request`.
* **The preface is a synthetic first user message**, rebuilt each turn, never persisted:
  :func:`preface_messages` / :func:`chat_request`, :func:`responses_input` /
  :func:`responses_request`. A Responses request from this module sets ``store=False`` and never
  uses ``previous_response_id``: a response stored on the server would carry this turn's preface
  into the next turn's context. Send your own stored history each turn instead.
* **Tool output goes in an envelope**: a ``tool`` message (:func:`tool_message`) for Chat
  Completions, a ``function_call_output`` item (:func:`function_call_output`) for Responses.

Every helper verifies the preface it puts in a request (:class:`~envelock.EnvelopeBreach`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from envelock import HYGIENE_RULE, Envelock, Preface

from .common import ACKNOWLEDGEMENT, STRICT_POLICY, checked_preface, missing_extra

try:
    from openai.types.chat import (
        ChatCompletionAssistantMessageParam,
        ChatCompletionDeveloperMessageParam,
        ChatCompletionMessageParam,
        ChatCompletionSystemMessageParam,
        ChatCompletionToolMessageParam,
        ChatCompletionUserMessageParam,
    )
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming
    from openai.types.responses import EasyInputMessageParam, ResponseInputItemParam
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
    from openai.types.responses.response_input_param import FunctionCallOutput
except ImportError as exc:  # an optional extra, never a dependency of envelock
    raise missing_extra(__name__, "openai", "openai", exc) from exc

__all__ = [
    "chat_request",
    "function_call_output",
    "preface_messages",
    "responses_input",
    "responses_request",
    "system_message",
    "tool_message",
]

#: The role of the system prompt in Chat Completions (``developer`` for the reasoning models).
SystemRole = Literal["system", "developer"]


def _system_text(rule: str, instructions: str) -> str:
    return f"{rule}\n\n{instructions}" if instructions else rule


def system_message(
    instructions: str = "", *, rule: str = HYGIENE_RULE, role: SystemRole = "system"
) -> ChatCompletionSystemMessageParam | ChatCompletionDeveloperMessageParam:
    """The system (or developer) message: ``rule``, a blank line, ``instructions``."""
    text = _system_text(rule, instructions)
    if role == "developer":
        return ChatCompletionDeveloperMessageParam(role="developer", content=text)
    if role != "system":
        raise ValueError(f"role must be 'system' or 'developer'; got {role!r}")
    return ChatCompletionSystemMessageParam(role="system", content=text)


def preface_messages(
    preface: str, *, acknowledgement: str | None = ACKNOWLEDGEMENT, policy: Envelock = STRICT_POLICY
) -> list[ChatCompletionMessageParam]:
    """The synthetic first turn: a user message holding the verified preface, then the assistant's
    ``acknowledgement`` (``None``: none). An empty preface gives no message."""
    return _synthetic(checked_preface(preface, policy), acknowledgement)


def _synthetic(checked: Preface, acknowledgement: str | None) -> list[ChatCompletionMessageParam]:
    if not checked:
        return []
    out: list[ChatCompletionMessageParam] = [ChatCompletionUserMessageParam(role="user", content=str(checked))]
    if acknowledgement is not None:
        out.append(ChatCompletionAssistantMessageParam(role="assistant", content=acknowledgement))
    return out


def chat_request(
    *,
    model: str,
    preface: str,
    history: Sequence[ChatCompletionMessageParam],
    user: str,
    instructions: str = "",
    role: SystemRole = "system",
    acknowledgement: str | None = ACKNOWLEDGEMENT,
    policy: Envelock = STRICT_POLICY,
) -> CompletionCreateParamsNonStreaming:
    """One Chat Completions turn: system message (the preface's hygiene rule, then ``instructions``),
    the synthetic preface pair, ``history`` (copied, not modified), the new ``user`` message."""
    checked = checked_preface(preface, policy)
    messages: list[ChatCompletionMessageParam] = [
        system_message(instructions, rule=checked.hygiene_rule(), role=role),
        *_synthetic(checked, acknowledgement),
        *history,
        ChatCompletionUserMessageParam(role="user", content=user),
    ]
    return CompletionCreateParamsNonStreaming(model=model, messages=messages)


def tool_message(tool_call_id: str, preface: str, *, policy: Envelock = STRICT_POLICY) -> ChatCompletionToolMessageParam:
    """The ``tool`` message answering ``tool_call_id``: its content is the verified preface."""
    if not isinstance(tool_call_id, str) or not tool_call_id:
        raise ValueError(f"tool_call_id must be a non-empty str; got {tool_call_id!r}")
    return ChatCompletionToolMessageParam(role="tool", tool_call_id=tool_call_id, content=str(checked_preface(preface, policy)))


def responses_input(
    preface: str,
    history: Sequence[ResponseInputItemParam],
    user: str,
    *,
    acknowledgement: str | None = ACKNOWLEDGEMENT,
    policy: Envelock = STRICT_POLICY,
) -> list[ResponseInputItemParam]:
    """The ``input`` items of one Responses turn: the synthetic preface pair, ``history``, ``user``."""
    return _input_items(checked_preface(preface, policy), history, user, acknowledgement)


def _input_items(
    checked: Preface, history: Sequence[ResponseInputItemParam], user: str, acknowledgement: str | None
) -> list[ResponseInputItemParam]:
    items: list[ResponseInputItemParam] = []
    if checked:
        items.append(EasyInputMessageParam(type="message", role="user", content=str(checked)))
        if acknowledgement is not None:
            items.append(EasyInputMessageParam(type="message", role="assistant", content=acknowledgement))
    items.extend(history)
    items.append(EasyInputMessageParam(type="message", role="user", content=user))
    return items


def responses_request(
    *,
    model: str,
    preface: str,
    history: Sequence[ResponseInputItemParam],
    user: str,
    instructions: str = "",
    acknowledgement: str | None = ACKNOWLEDGEMENT,
    policy: Envelock = STRICT_POLICY,
) -> ResponseCreateParamsNonStreaming:
    """One Responses turn: ``instructions`` = the hygiene rule, then yours; ``input`` from
    :func:`responses_input`; ``store=False`` (the preface must not outlive the turn on the server)."""
    checked = checked_preface(preface, policy)
    return ResponseCreateParamsNonStreaming(
        model=model,
        instructions=_system_text(checked.hygiene_rule(), instructions),
        input=_input_items(checked, history, user, acknowledgement),
        store=False,
    )


def function_call_output(call_id: str, preface: str, *, policy: Envelock = STRICT_POLICY) -> FunctionCallOutput:
    """The ``function_call_output`` item answering ``call_id``: its output is the verified preface."""
    if not isinstance(call_id, str) or not call_id:
        raise ValueError(f"call_id must be a non-empty str; got {call_id!r}")
    return FunctionCallOutput(type="function_call_output", call_id=call_id, output=str(checked_preface(preface, policy)))
