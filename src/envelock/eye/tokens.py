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

Tool-call and control tokens of current families (the
table, the rejected names and the known gaps are in ``docs/chat-tokens.md``):

* Mistral v7-v15 tokenizers: ``[ARGS]``, ``[CALL_ID]``, ``[MODEL_SETTINGS]``,
  ``[IMG_BREAK]``, ``[IMG_END]``, ``[BEGIN_AUDIO]``, ``[STREAMING_PAD]``,
  ``[STREAMING_WORD]``, ``[NEXT_AUDIO_TEXT]``, ``[REPEAT_AUDIO_TEXT]``
  (mistralai/mistral-common src/mistral_common/tokens/tokenizers/base.py,
  ``SpecialTokens``).
* GLM-4.5/4.6: ``[gMASK]``, ``<sop>``, ``<arg_key>``, ``<arg_value>``; ChatGLM:
  ``<eop>`` (ggml-org/llama.cpp models/templates/GLM-4.6.jinja and
  glm_4_5.jinja; mindspore-lab/mindformers ChatGLM3Tokenizer docs).
* MiniMax-M1 / Text-01: ``<begin_of_document>``, ``<end_of_document>``,
  ``<beginning_of_sentence>``, ``<end_of_sentence>``, ``<tool_calls>``
  (MiniMax-AI/MiniMax-M1 tokenizer_config.json).
* NVIDIA Nemotron Nano v2: ``<SPECIAL_10>``, ``<SPECIAL_11>``, ``<SPECIAL_12>``,
  ``<AVAILABLE_TOOLS>`` (its ``<TOOLCALL>`` and ``<TOOL_RESPONSE>`` fold to
  ``tool_call`` / ``tool_response``) (ggml-org/llama.cpp
  models/templates/NVIDIA-Nemotron-Nano-v2.jinja).
* ServiceNow Apriel 1.5: ``<available_tools>``, ``<tool_calls>`` (ggml-org/llama.cpp
  models/templates/unsloth-Apriel-1.5.jinja).
* Gemma 3: ``<start_of_image>``, ``<end_of_image>`` (keras-team/keras-hub
  keras_hub/src/models/gemma3/gemma3_tokenizer.py).
* Gemma 4 closers ``<turn|>``, ``<channel|>``, ``<tool|>``, ``<tool_call|>``,
  ``<tool_response|>`` (the openers ``<|turn>``... are pipe tokens); listed with
  their trailing bar, whose skeleton is ``l`` (ggml-org/llama.cpp
  models/templates/gemma4.jinja).
* ByteDance Seed-OSS: ``<seed:cot_budget_reflect>`` (the other ``<seed:...>``
  tokens reach ``bos``, ``eos``, ``think``, ``tool_call`` past the namespace)
  (ggml-org/llama.cpp models/templates/ByteDance-Seed-OSS.jinja).
* Checked, nothing to add (pipe or fullwidth-bar forms, or names listed
  above): Llama 3.1-4, Qwen2.5/3, Hermes 2/3, DeepSeek V3.1/V3.2, Phi-4,
  Command R7B, gpt-oss, Kimi K2, Granite 3.3/4, Falcon 3, OLMo 2/3, LFM2.5,
  StepFun; their source files are listed in ``docs/chat-tokens.md``.
"""

from __future__ import annotations

import re

from . import token_tables as _generated

#: Envelope names reserved by default: a body may not open or close these.
#: A name is dangerous when its skeleton *starts with* one of these skeletons.
RESERVED_NAMES: tuple[str, ...] = (
    "retrieved_content",
    "retrieved_content_hygiene",
    "external_content",
)

#: ``<NAME>`` / ``</NAME>`` tokens measured on real text before the token generator existed; the
#: generator (``scripts/gen_token_tables.py``) adds the names of real tokenizers and templates to
#: them (:data:`ANGLE_TOKEN_NAMES`).
CURATED_ANGLE_TOKEN_NAMES: tuple[str, ...] = (
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
    # GLM-4.5/4.6 and ChatGLM
    "sop",
    "eop",
    "arg_key",
    "arg_value",
    # MiniMax-M1 / Text-01 (and Apriel 1.5: tool_calls)
    "begin_of_document",
    "end_of_document",
    "beginning_of_sentence",
    "end_of_sentence",
    "tool_calls",
    # NVIDIA Nemotron Nano v2 turn markers and tool list (and Apriel 1.5)
    "special_10",
    "special_11",
    "special_12",
    "available_tools",
    # Gemma 3 image markers
    "start_of_image",
    "end_of_image",
    # Gemma 4 closers: the name is followed by a bar, then ">"
    "turn|",
    "channel|",
    "tool|",
    "tool_call|",
    "tool_response|",
    # ByteDance Seed-OSS (after the "seed:" namespace)
    "cot_budget_reflect",
)

#: ``[NAME]`` / ``[/NAME]`` tokens measured on real text before the token generator existed,
#: written as the model family writes them (the scanner reports the exact spelling as an error
#: and ASCII case variants as warnings).
CURATED_BRACKET_TOKEN_NAMES: tuple[str, ...] = (
    "INST",
    "SYSTEM_PROMPT",
    "TOOL_RESULTS",
    "TOOL_CONTENT",
    "AVAILABLE_TOOLS",
    "TOOL_CALLS",
    "THINK",
    "ARGS",
    "CALL_ID",
    "MODEL_SETTINGS",
    "IMG_BREAK",
    "IMG_END",
    "BEGIN_AUDIO",
    "STREAMING_PAD",
    "STREAMING_WORD",
    "NEXT_AUDIO_TEXT",
    "REPEAT_AUDIO_TEXT",
    "gMASK",  # as GLM writes it (the scanner compares the case exactly)
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


#: Bracket tokens that are also ordinary words in command-line help (``Usage: cli [OPTIONS]
#: [ARGS]...``): ``scan_text`` reports them as errors only in the context their chat template
#: writes them in, here followed by the JSON arguments (Mistral v11+: ``[TOOL_CALLS]name[ARGS]{...}``,
#: mistral-common ``SpecialTokens``); elsewhere a warning. The defang escapes them everywhere.
BRACKET_TOKEN_CONTEXT: dict[str, str] = {"ARGS": "{"}


#: ``<NAME>`` / ``</NAME>`` tokens the model's eye reads (any case, any disguise; dangerous when the
#: skeleton of the name is exactly one of these and a ``>`` or look-alike follows): the curated
#: names and the names of real tokenizers and chat templates (``scripts/gen_token_tables.py``,
#: its ``reader`` rule; sources in ``docs/chat-tokens.md``).
ANGLE_TOKEN_NAMES: tuple[str, ...] = _generated.EYE_ANGLE_NAMES
#: ``[NAME]`` / ``[/NAME]`` tokens the eye reads (``[INST]`` -> ``[\\INST]``).
BRACKET_TOKEN_NAMES: tuple[str, ...] = _generated.EYE_BRACKET_NAMES
#: Placeholder families: a name prefix followed by any decimal number (``<SPECIAL_123>``, ``[control_8]``).
ANGLE_TOKEN_PATTERNS: tuple[str, ...] = _generated.EYE_ANGLE_PATTERNS
BRACKET_TOKEN_PATTERNS: tuple[str, ...] = _generated.EYE_BRACKET_PATTERNS
#: Namespaces that are control tokens by themselves (DeepSeek V4 ``<dsml:``).
NAMESPACE_TOKEN_NAMES: tuple[str, ...] = _generated.NAMESPACE_TOKEN_NAMES
#: Bar tokens that open with ``<|`` and close with a plain ``>`` (Gemma 4: ``<|turn>``, ``<|tool_call>``): the
#: scanner reports this shape as an error only for these (and a team's own), since ``<|NAME>`` is also a regex
#: alternation (``<|\bi>``) or an operator in code.
#: Every bar token of the tables (``<|NAME|>``, ``<|NAME>``, ``<｜NAME｜>``...).
BAR_TOKENS: frozenset[str] = frozenset(_generated.BAR_TOKENS)
OPEN_BAR_TOKENS: frozenset[str] = frozenset(t for t in _generated.BAR_TOKENS if t.startswith("<|") and not t.endswith("|>"))
#: Tokens escaped exactly as a tokenizer matches them: tokenizer tokens whose name is an ordinary word
#: (``<NAME>``, ``[IMG]``) and tokens with no opener the eye knows (``>>TITLE<<``, ``]~b]``, ``｜DSML｜``).
EXACT_TOKENS: tuple[str, ...] = _generated.EXACT_TOKENS
#: Names a tokenizer or chat template writes between doubled angles (Llama 2 ``<<SYS>>``, ``<</SYS>>``;
#: Falcon ``>>TITLE<<`` the other way round), from the literal tokens of the tables. The guillemets
#: ``«`` and ``»`` are doubled angles, so ``«SYS»`` is such a token's own shape: the reader never reads
#: one of these names as a quotation (:func:`envelock.eye.reader.quotable_angle_names`).
DOUBLED_ANGLE_NAMES: tuple[str, ...] = tuple(
    sorted({m.group(1) for t in _generated.LITERAL_TOKENS if (m := re.fullmatch(r"(?:<</?|>>)([^<>/]+)(?:>>|<<)", t))})
)
