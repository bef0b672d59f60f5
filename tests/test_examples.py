"""The runnable examples: run each in a subprocess and check what it prints."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from envelock import HYGIENE_RULE, parse_preface, verify_preface

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def run(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script)], capture_output=True, text=True, encoding="utf-8", cwd=ROOT, timeout=120, check=False
    )


def test_chat_turn_builds_a_messages_request_with_a_synthetic_preface() -> None:
    r = run("chat_turn.py")
    assert r.returncode == 0, r.stderr
    body = json.loads(r.stdout)
    assert body["system"] == HYGIENE_RULE and body["model"] and body["max_tokens"] > 0
    first = body["messages"][0]
    assert first["role"] == "user"
    preface = first["content"][0]["text"]
    assert preface.startswith("<retrieved_content ")
    assert verify_preface(preface).ok
    envelopes = parse_preface(preface)
    assert {e.fetched_at for e in envelopes} == {"2026-11-29T21:29:03Z"}  # one shared fetched_at
    kinds = {e.origin.split(":")[0] for e in envelopes}
    assert {"memory", "artifact", "clock", "web"} <= kinds
    assert body["messages"][1]["role"] == "assistant"
    assert body["messages"][-1] == {"role": "user", "content": "What should I pack for tomorrow?"}
    # The stored conversation never holds the preface.
    stored = json.loads(r.stderr)["stored_conversation"]
    assert all("retrieved_content" not in json.dumps(m) for m in stored)
    assert stored[-1] == {"role": "user", "content": "What should I pack for tomorrow?"}
    assert body["messages"][2:] == stored


def test_chat_turn_request_is_accepted_by_the_sdk_types() -> None:
    sys.path.insert(0, str(EXAMPLES))
    try:
        import chat_turn  # type: ignore[import-not-found]  # examples/ is on sys.path at run time only
    finally:
        sys.path.remove(str(EXAMPLES))
    stored: list[dict[str, str]] = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    before = json.dumps(stored)
    request = chat_turn.build_request(stored, "next", "u", "c")
    assert json.dumps(stored) == before  # build_request does not persist anything
    assert request["messages"][0]["role"] == "user"
    assert request["messages"][2:] == [*stored, {"role": "user", "content": "next"}]


def test_action_prompt_prepends_a_verified_preface() -> None:
    r = run("action_prompt.py")
    assert r.returncode == 0, r.stderr
    preface, _, action = r.stdout.rstrip("\n").rpartition("\n\n")
    assert action.startswith("Summarise the retrieved page")
    assert verify_preface(preface).ok
    (env,) = parse_preface(preface)
    assert env.source == "external" and "</retrieved_content>" in (env.body or "")


def test_benchmark_sizes_accept_units_and_bytes_and_refuse_the_rest_in_one_line() -> None:
    """``benchmarks/run.py --sizes 4MB`` used to end in a ``ValueError`` traceback (it took KB only)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("envelock_benchmark_run", ROOT / "benchmarks" / "run.py")
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    mb = 1024 * 1024
    assert bench.parse_sizes("4MB") == bench.parse_sizes("4M") == bench.parse_sizes("4194304") == bench.parse_sizes("4mib") == [4 * mb]
    assert bench.parse_sizes("64KB, 4MB") == [64 * 1024, 4 * mb]
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--sizes", "4GB"], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False
    )
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1] == "run.py: error: argument --sizes: not a size: '4GB' (give bytes, or a number with KB or MB: 64KB,4MB)"


def test_loading_a_benchmark_module_leaves_the_environment_alone() -> None:
    """``benchmarks/benign.py`` (which ``tests/properties/test_realtext.py`` loads) set ``ENVELOCK_IMPL=native``
    on import: every later subprocess of that test worker then failed to import envelock on a machine
    without Rust (the README's test command, run without cargo). It sets it only as a script now."""
    code = (
        "import importlib.util, os, sys\n"
        f"spec = importlib.util.spec_from_file_location('benign_probe', {str(ROOT / 'benchmarks' / 'benign.py')!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "sys.modules['benign_probe'] = module\n"
        "spec.loader.exec_module(module)\n"
        "print(os.environ.get('ENVELOCK_IMPL', '(unset)'))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ENVELOCK_IMPL"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120, check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "(unset)"
