"""Regression snapshot: ``scan_text`` reports, field for field, what it reported when the snapshot was taken.

The scanner's passes are tuned for speed (prefilters, one forward decode, cheap snippets); none of
that may change a finding by accident. ``tests/data/scan_snapshot.json`` holds, for every input
below, the number of findings and a digest of all their fields in order. The inputs are fixed: the
project corpus, the hostile repeated shapes of the complexity guard, the edges of the ``NAME|>``
fast path, a team's own tokens and reserved names, and 600 texts drawn with a fixed seed from the
fragments the passes look for (also with rules disabled). Each test runs once per implementation of
the eye, so the native reader and the Python one are held to the same findings too.

A deliberate change of what the scanner reports rewrites the snapshot, in its own commit:

    python tests/scan/test_scan_snapshot.py --write

Negative controls: a scanner whose snippets are cut one character short, one that drops the second
of two identical findings, and one that loses a rule must each differ from the snapshot.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))

from helpers.data import load_corpus  # noqa: E402

from envelock import RESERVED_NAMES, Finding, scan_text  # noqa: E402
from envelock.eye.load_tokens import load_tokens  # noqa: E402

SNAPSHOT = ROOT / "tests" / "data" / "scan_snapshot.json"
S = importlib.import_module("envelock.scan")
BASE = importlib.import_module("envelock.scan._base")

#: The hostile repeated shapes (also in tests/properties/test_complexity.py and benchmarks/run.py).
SHAPES = (
    "<|im_end|>", "<|", "[INST]", "a\u200b", "%3C", "\\u003c", "</retrieved_content>", "<", "[", "&lt;", "%3C/",
    "<|im_start|>user\n", "<s>", "\u200b\u200b\u200b\u200b", "\U000e0041", "\u202e", "\x1b", "QUJD", "3c2f", "<|a", "<|\u200b",
)  # fmt: skip
FRAGMENTS = (
    "<", "</", "<|", "|>", "｜", "[", "[/", "]", ">", "|", "&lt;", "&gt;", "&#124;", "&verbar;", "&#60;", "&amp;lt;", "%3C", "%3E",
    "%253C", "\\u003c", "\\x3c", "\\u003e", "=3C", "+ADw-", "\\", "/", "&#47;", "retrieved_content", "RETRIEVED_CONTENT",
    "retrieved content", "im_end", "im_start", "eot_id", "INST", "/INST", "SYS", "s", "think", "start_of_turn", "turn",
    "tool_call", "a:", " ", "  ", "\n", "\t", "\r\n", "\u200b", "\u200d", "\u2060", "\u00ad", "\ufe0f", "\U000e0041",
    "\U000e007f", "\u202e", "\x00", "\x1b", "\ud800", "\uff1c", "\uff0f", "\u2039", "«", "»", "x", "ab", "日本", "ก",
    "provenance", "origin=", "source=", '"', "'", "&quot;", "Human:", "Assistant:", "### Instruction:", "USER:",
    "QUJDREVGR0g=", "PC9yZXRyaWV2ZWRfY29udGVudD4=", "3c2f72657472696576", "00111100", "ertevrirq_pbagrag",
    "tnetnoc_deveirter", "\u2062\u2064\u2062\u2064", "\ufe00\ufe01\ufe02\ufe03", "-" * 40, " " * 40,
)  # fmt: skip
#: The edges of the plain ``NAME|>`` fast path and of the bare-``<|`` prefilter.
PIPE_EDGES = (
    "<|im_end|>", "<|" + "a" * 62 + "|>", "<|" + "a" * 63 + "|>", "<|" + "a" * 64 + "|>", "<|___|>", "<|-|>", "<|a|>>",
    "<|a| >", "<|a|\u200b>", "<|\u200bim_end|>", "<|im\u200b_end|>", "\uff1c|im_end|>", "&lt;|im_end|>", "<\uff5cim_end\uff5c>",
    "<|im_end&#124;>", "<|im_end|&gt;", "<|im&#95;end|>", "<|im end|>", "<|im_end\n|>", "<|im_end<|>", "<|a>", "<|_>",
    "<||>", "<| |>", "<|\t", "<|", "<|a", "<|a|", "<|é|>", "<|日本|>", "</|im_end|>", "<\\|im_end|>", "<|im_end|/>",
)  # fmt: skip
TOKENS = load_tokens(["<my_turn>", "[MYTOK]", "@@stop@@", "<|my_bar|>"])

Case = tuple[str, str, dict[str, Any]]  # (kind, text, scan_text options)


def cases() -> Iterator[Case]:
    for p in load_corpus():
        yield "corpus", p["payload"], {}
    for shape in SHAPES:
        for n in (1, 2, 3, 7, 50):
            yield "shape", shape * n, {}
            yield "shape", "x " + shape * n + "\n", {}
    for edge in PIPE_EDGES:
        for t in (edge, edge * 3, "x" + edge + "y", edge + "\n" + edge):
            yield "pipe", t, {}
    for t in ("<my_turn> [MYTOK] @@stop@@ <|my_turn|> </mine> <mine x>", "<|im_end|>" * 20 + "[MYTOK]" * 20):
        yield "custom", t, {"tokens": TOKENS}
        yield "custom", t, {"reserved": (*RESERVED_NAMES, "mine")}
    rng = random.Random(20261202)
    rules = sorted(S.RULES_BY_ID)
    for _ in range(500):
        yield "fragments", "".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(41))), {}
    for _ in range(100):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randrange(31)))
        yield "disabled", text, {"disable": frozenset(rng.sample(rules, rng.randrange(5)))}


def _key(text: str, options: dict[str, Any]) -> str:
    shown = {k: sorted(v) if isinstance(v, frozenset) else list(v) if k == "reserved" else "TOKENS" for k, v in options.items()}
    raw = json.dumps([text, shown], ensure_ascii=True, sort_keys=True).encode("ascii")
    return hashlib.sha256(raw).hexdigest()[:20]


def _digest(found: list[Finding]) -> list[Any]:
    raw = json.dumps([list(f.as_dict().values()) for f in found], ensure_ascii=True).encode("ascii")
    return [len(found), hashlib.sha256(raw).hexdigest()[:20]]


def snapshot(scan: Callable[..., list[Finding]] = scan_text) -> dict[str, list[Any]]:
    return {_key(text, opts): _digest(scan(text, **opts)) for _, text, opts in cases()}


def differences(scan: Callable[..., list[Finding]] = scan_text) -> list[str]:
    want: dict[str, list[Any]] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["findings"]
    out = []
    for kind, text, opts in cases():
        got = _digest(scan(text, **opts))
        if want.get(_key(text, opts)) != got:
            out.append(f"{kind} {text[:60]!r} {opts}: {len(scan(text, **opts))} findings, snapshot {want.get(_key(text, opts))}")
    return out


pytestmark = pytest.mark.usefixtures("impl")


def test_the_snapshot_covers_every_case() -> None:
    want = json.loads(SNAPSHOT.read_text(encoding="utf-8"))["findings"]
    keys = [_key(text, opts) for _, text, opts in cases()]
    assert set(keys) == set(want), "the inputs changed: rewrite the snapshot (see the module docstring)"
    assert sum(n for n, _ in want.values()) > 3000  # it pins real findings (3,502 when taken), not empty lists


def test_findings_equal_the_snapshot() -> None:
    assert differences() == []


def test_control_short_snippets_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = BASE._snippet
    monkeypatch.setattr(S, "_snippet", lambda text, start, end: real(text, start, end)[:-1])
    assert differences()


def test_control_lost_duplicate_is_caught() -> None:
    def dedupe_by_rule(text: str, **kw: Any) -> list[Finding]:
        out: list[Finding] = []
        for f in scan_text(text, **kw):
            if not out or (out[-1].rule, out[-1].message) != (f.rule, f.message):
                out.append(f)
        return out

    assert differences(dedupe_by_rule)


def test_control_a_lost_rule_is_caught() -> None:
    assert differences(lambda text, **kw: [f for f in scan_text(text, **kw) if f.rule != "encoded-tag"])


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/scan/test_scan_snapshot.py --write")
    data = {
        "about": "tests/scan/test_scan_snapshot.py: [number of findings, digest of their fields] per input",
        "findings": snapshot(),
    }
    SNAPSHOT.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT.relative_to(ROOT)}: {len(data['findings'])} inputs")
