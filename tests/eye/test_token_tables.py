"""The generated token tables (``envelock/eye/token_tables.py``): consistent, complete, and not stale."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from helpers.data import skip_unless_required

from envelock.eye import token_tables as tt
from envelock.eye.load_tokens import classify, split_number

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "scripts" / "gen_token_tables.py"
EVIDENCE = {"control", "added", "template", "hand"}


def _all_strings() -> set[str]:
    return {row[0] for row in tt.TOKENS}


def _covered(token: str) -> bool:
    if token in _all_strings():
        return True
    split = split_number(token)
    return split is not None and any(
        p[1] == split[0] and p[2] == split[2] and p[3] <= split[1] <= p[4] for p in tt.PLACEHOLDER_PATTERNS
    )


def test_rows_agree_with_the_classifier() -> None:
    for token, shape, name, evidence, sources in tt.TOKENS:
        assert classify(token) == (shape, name), token
        assert evidence in EVIDENCE and sources and all(0 <= s < len(tt.SOURCES) for s in sources), token
    assert len(_all_strings()) == len(tt.TOKENS)


def test_shape_lists_are_the_rows_by_shape() -> None:
    by = {s: {(r[0] if s in ("bar", "literal") else r[2]) for r in tt.TOKENS if r[1] == s}
          for s in ("angle", "bracket", "bar", "literal")}
    assert set(tt.ANGLE_NAMES) == by["angle"]
    assert set(tt.BRACKET_NAMES) == by["bracket"]
    assert set(tt.BAR_TOKENS) == by["bar"]
    assert set(tt.LITERAL_TOKENS) == by["literal"]


def test_placeholder_patterns() -> None:
    assert tt.PLACEHOLDER_PATTERNS
    for pattern, prefix, suffix, lo, hi, count, evidence, sources in tt.PLACEHOLDER_PATTERNS:
        assert pattern == f"{prefix}#{suffix}" and lo <= hi and 5 <= count <= hi - lo + 1, pattern
        assert evidence in EVIDENCE and sources
        # no member is listed again as a named token
        splits = [sp for r in tt.TOKENS if (sp := split_number(r[0]))]
        assert not any((sp[0], sp[2]) == (prefix, suffix) and lo <= sp[1] <= hi for sp in splits), pattern


def test_tokenizer_tokens_are_named_rows() -> None:
    rows = {r[0]: r[3] for r in tt.TOKENS}
    assert tt.TOKENIZER_TOKENS and all(rows[t] in ("control", "added") for t in tt.TOKENIZER_TOKENS)
    assert {t for t, ev in rows.items() if ev in ("control", "added")} == set(tt.TOKENIZER_TOKENS)


def test_tokens_the_reader_missed_are_in_the_tables() -> None:
    # Tokens a measurement with real tokenizer files found unescaped at level reserved.
    for token in ("<end_of_utterance>", "<用户>", "<AI>", "<role>", "[unused9]", "<EOT>", "<META>", "<tts_pad>",
                  "｜DSML｜", "<dsml:", "[|endofturn|]", "[|system|]", "<unk>", "<pad>", "[IMG]", "[PREFIX]",
                  "<SPECIAL_20>", "<SPECIAL_999>", "[control_8]", "[control_768]", "<|reserved_special_token_5|>",
                  "<reserved_106>", "<extra_id_1>", "[|assistant|]"):
        assert _covered(token), token


def test_hand_read_names_are_kept() -> None:
    # Every name of the hand-made tables (measured on real text before the generator) is read by the eye.
    from envelock.eye import tokens

    assert set(tokens.CURATED_ANGLE_TOKEN_NAMES) <= set(tokens.ANGLE_TOKEN_NAMES)
    assert set(tokens.CURATED_BRACKET_TOKEN_NAMES) <= set(tokens.BRACKET_TOKEN_NAMES)
    names = {r[2].lower().rpartition(":")[2] for r in tt.TOKENS} | {t.lower() for t in tt.LITERAL_TOKENS}
    for name in tokens.CURATED_ANGLE_TOKEN_NAMES:
        assert name.lower() in names or f"<<{name}>>" in names or _covered(f"<{name.upper()}>"), name
    for name in tokens.CURATED_BRACKET_TOKEN_NAMES:
        assert name.lower() in names, name


def test_generated_files_are_current() -> None:
    env = {**os.environ}
    proc = subprocess.run([sys.executable, str(GEN), "--check"], capture_output=True, text=True, env=env, cwd=ROOT)
    if "skipped:" in proc.stderr:
        skip_unless_required(proc.stderr.strip(), "ENVELOCK_REQUIRE_GEN")
    assert proc.returncode == 0, proc.stderr
