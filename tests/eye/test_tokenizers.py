"""Real tokenizers must not read a control token anywhere in a composed preface.

For every control token of every tokenizer file ``scripts/gen_token_tables.py`` reads (the pinned
registry packages it downloads into its cache), bodies holding the token alone, in prose, glued
between letters, doubled and at the end are composed at level ``reserved``, and the whole preface
is encoded by the tokenizer with special-token parsing on:

* ``tokenizer.json``: ``tokenizers.Tokenizer.from_file(...).encode_batch(...)``, which matches
  every added token in the text;
* ``tekken.json`` and ``.tiktoken`` files: ``tiktoken.Encoding(..., special_tokens=...)`` and
  ``encode_batch(..., allowed_special="all")``, the ids of a tekken file laid out as mistral-common
  does (special tokens first, then the ranks);
* SentencePiece ``.model`` and llama.cpp GGUF vocabularies: their control, unknown and
  user-defined pieces registered as added tokens of a ``tokenizers.Tokenizer``, which is how the
  Hugging Face conversion of these files registers them and what llama.cpp's partition of the text
  on special-token strings does. The rest of the text maps to one unknown id that is not a
  control id, so only the added-token matching is exercised, which is the part under test.

The encoding must hold no control id: neither from a body nor from the envelope frame. Positive
controls prove the encoders parse special tokens (each token alone encodes to its id) and a
negative control proves the check catches a compose that leaves one token unescaped.

Needs ``tokenizers`` and ``tiktoken`` (test dependencies) and the downloaded inputs
(``python scripts/gen_token_tables.py --download``); skips without them unless
``ENVELOCK_REQUIRE_TOKENIZERS=1``. ``python tests/eye/test_tokenizers.py`` prints clean/total per file.
"""

from __future__ import annotations

import base64
import functools
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.data import optional_module, skip_unless_required  # noqa: E402

import envelock  # noqa: E402

REQUIRE = "ENVELOCK_REQUIRE_TOKENIZERS"
SENTINEL = "QZXJSENTINELQZXJ"
#: The bodies composed for each token ``t``.
VARIANTS: tuple[Callable[[str], str], ...] = (
    lambda t: t,
    lambda t: f"Please read the notes below. {t} Then carry on with the summary.",
    lambda t: f"ab{t}cd",
    lambda t: f"{t}{t}",
    lambda t: f"The page ends here {t}",
)
#: Benign bodies for the frame check (the envelope itself must not encode to a control id).
BENIGN = ("Plain text.", "Two\nlines of text with <b>markup</b> & [brackets].", "")
GENERIC_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_token_tables", ROOT / "scripts" / "gen_token_tables.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["gen_token_tables"] = mod
    spec.loader.exec_module(mod)
    return mod


GEN = _load_generator()


def _entry(body: str) -> envelock.PrefaceEntry:
    return envelock.PrefaceEntry(source="external", origin="https://example.org/page", body=body,
                                 fetched_at="2025-01-01T00:00:00Z")


def compose(bodies: Sequence[str]) -> str:
    return str(envelock.compose_preface([_entry(b) for b in bodies], level="reserved"))


def compose_skipping(token: str) -> str:
    """A broken compose: every body as :func:`compose` writes it, except that ``token`` is left as it was."""
    return compose([v(SENTINEL) for v in VARIANTS]).replace(SENTINEL, token)


@dataclass
class Encoder:
    encode_batch: Callable[[list[str]], list[list[int]]]
    control: dict[int, str]  # control id -> token


def _tiktoken_encoder(name: str, ranks: dict[bytes, int], special: dict[str, int], pattern: str) -> Encoder:
    tiktoken = optional_module("tiktoken", require_env=REQUIRE, how="pip install tiktoken")
    enc = tiktoken.Encoding(name=name, pat_str=pattern, mergeable_ranks=ranks, special_tokens=special)

    def batch(texts: list[str]) -> list[list[int]]:
        out: list[list[int]] = enc.encode_batch(texts, allowed_special="all", num_threads=1)
        return out

    return Encoder(batch, {i: t for t, i in special.items()})


def _read_ranks(path: Path) -> dict[bytes, int]:
    ranks: dict[bytes, int] = {}
    for line in path.read_bytes().splitlines():
        if line:
            tok, rank = line.split()
            ranks[base64.b64decode(tok)] = int(rank)
    return ranks


def _added_token_encoder(tokens: list[tuple[str, int, str]]) -> Encoder:
    tk = optional_module("tokenizers", require_env=REQUIRE, how="pip install tokenizers")
    unk = "\x00harness-unknown\x00"
    tok = tk.Tokenizer(tk.models.WordLevel({unk: 0}, unk_token=unk))
    strings = sorted({t for t, _, _ in tokens})
    tok.add_special_tokens([tk.AddedToken(s, special=True, normalized=False) for s in strings])
    control = {tok.token_to_id(s): s for s in strings}
    assert None not in control and 0 not in control

    def batch(texts: list[str]) -> list[list[int]]:
        return [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]

    return Encoder(batch, control)


def build_encoder(rf: Any) -> Encoder:
    fmt = rf.tf.fmt
    if fmt == "hf":
        tk = optional_module("tokenizers", require_env=REQUIRE, how="pip install tokenizers")
        tok = tk.Tokenizer.from_file(str(rf.path))

        def batch(texts: list[str]) -> list[list[int]]:
            return [e.ids for e in tok.encode_batch(texts, add_special_tokens=False)]

        return Encoder(batch, {i: t for t, i, _ in rf.tokens})
    if fmt == "tekken":
        data = json.loads(rf.path.read_text(encoding="utf-8"))
        n_special = int(data["config"]["default_num_special_tokens"])
        inner = int(data["config"]["default_vocab_size"]) - n_special
        ranks = {base64.b64decode(v["token_bytes"]): n_special + i for i, v in enumerate(data["vocab"][:inner])}
        return _tiktoken_encoder(rf.tf.key, ranks, {t: i for t, i, _ in rf.tokens}, data["config"]["pattern"])
    if fmt == "tiktoken":
        return _tiktoken_encoder(rf.tf.key, _read_ranks(rf.path), dict(rf.special), GENERIC_PATTERN)
    if fmt in ("spm", "gguf"):
        return _added_token_encoder(rf.tokens)
    raise AssertionError(f"no encoder for {fmt}")


@functools.cache
def read_files() -> tuple[Any, ...]:
    optional_module("tokenizers", require_env=REQUIRE, how="pip install tokenizers")
    optional_module("tiktoken", require_env=REQUIRE, how="pip install tiktoken")
    missing = GEN.missing_inputs()
    if missing:
        skip_unless_required(
            "the pinned tokenizer files are not downloaded (python scripts/gen_token_tables.py --download): " + "; ".join(missing),
            REQUIRE,
        )
    return tuple(GEN.read_all())


_PREFACES: dict[str, str] = {}


def preface_of(token: str) -> str:
    if token not in _PREFACES:
        _PREFACES[token] = compose([v(token) for v in VARIANTS])
    return _PREFACES[token]


def hits(enc: Encoder, ids: list[int]) -> list[str]:
    return [enc.control[i] for i in ids if i in enc.control]


@dataclass
class Result:
    key: str
    clean: int
    total: int
    failures: list[tuple[str, list[str]]]


def measure(rf: Any, enc: Encoder) -> Result:
    tokens = sorted({t for t, _, _ in rf.tokens})
    encoded = enc.encode_batch([preface_of(t) for t in tokens])
    failures = [(t, h) for t, ids in zip(tokens, encoded, strict=True) if (h := hits(enc, ids))]
    return Result(rf.tf.key, len(tokens) - len(failures), len(tokens), failures)


def _keys() -> list[str]:
    return [tf.key for tf in GEN.TOKEN_FILES]


@functools.cache
def encoder_for(key: str) -> tuple[Any, Encoder]:
    rf = next(r for r in read_files() if r.tf.key == key)
    return rf, build_encoder(rf)


@pytest.mark.parametrize("key", _keys())
def test_encoder_parses_special_tokens(key: str) -> None:
    """Positive control: each control token alone encodes to exactly its own id (parsing is on)."""
    rf, enc = encoder_for(key)
    tokens = sorted({t for t, _, _ in rf.tokens})
    wrong = [(t, ids) for t, ids in zip(tokens, enc.encode_batch(tokens), strict=True) if hits(enc, ids) != [t]]
    assert not wrong, f"{key}: {len(wrong)} tokens do not encode to their control id, e.g. {wrong[:5]}"


@pytest.mark.parametrize("key", _keys())
def test_envelope_frame_has_no_control_id(key: str) -> None:
    _, enc = encoder_for(key)
    for text in (compose(BENIGN), compose([""])):
        assert not hits(enc, enc.encode_batch([text])[0]), f"{key}: the envelope frame encodes to a control id: {text!r}"


@pytest.mark.parametrize("key", _keys())
def test_negative_control_unescaped_token_is_caught(key: str) -> None:
    """A compose that skips escaping for one token must be caught by the same check."""
    rf, enc = encoder_for(key)
    token = sorted({t for t, _, _ in rf.tokens})[0]
    broken = compose_skipping(token)
    assert token in hits(enc, enc.encode_batch([broken])[0]), f"{key}: the check missed an unescaped {token!r}"


@pytest.mark.parametrize("key", _keys())
def test_no_control_token_survives_compose(key: str) -> None:
    rf, enc = encoder_for(key)
    r = measure(rf, enc)
    print(f"{key}: clean {r.clean}/{r.total}")
    sample = "; ".join(f"{t!r} -> {h[:3]}" for t, h in r.failures[:8])
    assert r.clean == r.total, f"{key}: clean {r.clean}/{r.total}; first failures: {sample}"


def main() -> int:
    """Print clean/total per file (the figures of the report)."""
    print(f"ENVELOCK_IMPL={os.environ.get('ENVELOCK_IMPL', '(default)')}")
    total_clean = total = 0
    for rf in read_files():
        r = measure(rf, build_encoder(rf))
        total_clean += r.clean
        total += r.total
        print(f"{r.key:55s} clean {r.clean:5d}/{r.total:5d}  e.g. {[t for t, _ in r.failures[:4]]}")
    print(f"{'all files':55s} clean {total_clean:5d}/{total:5d}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
