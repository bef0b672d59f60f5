"""Data tables: reserved envelope names and chat-template control tokens.

Every name here is compared by its *skeleton* (NFKC, casefold, UTS #39
confusables mapped to ASCII, separators ``_ - \\`` whitespace and
default-ignorables dropped; see :mod:`envelock.modeleye`).

Sources for the chat-template tokens (special-token strings as published in
each family's tokenizer / chat template):

* ChatML (OpenAI legacy, Qwen 1.5-3, Yi, Hermes), Phi-3/3.5/4, gpt-oss
  "harmony", Llama 3 (``<|eot_id|>``, ``<|start_header_id|>``...), Command R
  (``<|START_OF_TURN_TOKEN|>``...), DeepSeek V3/R1 fullwidth forms
  (``<\\uFF5Cend\\u2581of\\u2581sentence\\uFF5C>``): every token of the form
  ``<|...|>`` or ``<\\uFF5C...\\uFF5C>``, matched as "an opener followed by a pipe
  or look-alike pipe" (``unicode_tables.PIPE_LOOKALIKES``), so new tokens of the same
  family are covered without listing them.
* Llama 2 / Mistral: ``<s>``, ``</s>``, ``<<SYS>>``/``<</SYS>>``, ``[INST]``,
  ``[/INST]``; newer Mistral: ``[SYSTEM_PROMPT]``, ``[TOOL_RESULTS]``,
  ``[TOOL_CONTENT]``, ``[AVAILABLE_TOOLS]``, ``[TOOL_CALLS]``, ``[THINK]``.
* Gemma: ``<start_of_turn>``, ``<end_of_turn>``, ``<bos>``, ``<eos>``.
* DeepSeek R1 / Qwen3 reasoning: ``<think>``, ``</think>``; Qwen/Hermes tool
  calls: ``<tool_call>``, ``<tool_response>``; Anthropic's legacy XML tool
  format: ``<function_calls>``, ``<function_results>``; trusted-looking
  wrappers: ``<system>``, ``<system-reminder>``.
* StruQ (Chen et al., arXiv 2402.06363) reserved delimiters: ``[MARK]``,
  ``[INST]``, ``[INPT]``, ``[RESP]``, ``[COLN]``.
"""

from __future__ import annotations

#: Envelope names reserved by default: a body may not open or close these.
#: A name is dangerous when its skeleton *starts with* one of these skeletons.
RESERVED_NAMES: tuple[str, ...] = (
    "retrieved_content",
    "retrieved_content_hygiene",
    "external_content",
)

#: ``<NAME>`` / ``</NAME>`` tokens: dangerous when the skeleton of the name is
#: exactly one of these and a ``>`` (or look-alike) follows.
ANGLE_TOKEN_NAMES: tuple[str, ...] = (
    "s",
    "sys",
    "bos",
    "eos",
    "start_of_turn",
    "end_of_turn",
    "think",
    "tool_call",
    "tool_response",
    "function_calls",
    "function_results",
    "system",
    "system-reminder",
)

#: ``[NAME]`` / ``[/NAME]`` tokens (case-insensitive, ASCII whitespace allowed
#: inside the brackets). Defanged as ``[\\NAME]``.
BRACKET_TOKEN_NAMES: tuple[str, ...] = (
    "INST",
    "SYSTEM_PROMPT",
    "TOOL_RESULTS",
    "TOOL_CONTENT",
    "AVAILABLE_TOOLS",
    "TOOL_CALLS",
    "THINK",
    "MARK",
    "INPT",
    "RESP",
    "COLN",
)

#: Prose turn markers that no escape can neutralise; the scanner reports them.
PROSE_TURN_MARKERS: tuple[str, ...] = (
    "Human:",
    "Assistant:",
    "### Instruction:",
    "### Response:",
    "USER:",
    "ASSISTANT:",
    "SYSTEM:",
)
