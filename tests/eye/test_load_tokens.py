"""``load_tokens``: control tokens of a tokenizer file, an Encoding or a list, classified by shape.

Fixture files are small ones written here (no third-party tokenizer file is committed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import envelock
from envelock.eye.load_tokens import TokenizerFileError, Tokens, classify, is_text_piece, load_tokens, split_number
from envelock.eye.token_tables import TEKKEN_DEPRECATED_SPECIAL_TOKENS


def _write(tmp_path: Path, name: str, data: Any) -> Path:
    p = tmp_path / name
    p.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return p


def _added(content: str, special: bool, i: int = 0) -> dict[str, Any]:
    return {"id": i, "content": content, "special": special, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": not special}


@pytest.mark.parametrize(
    ("token", "shape", "name"),
    [
        ("<|im_start|>", "bar", "im_start"),
        ("<｜User｜>", "bar", "User"),
        ("[|endofturn|]", "bar", "endofturn"),
        ("<|turn>", "bar", "turn"),
        ('<|"|>', "bar", '"'),
        ("<think>", "angle", "think"),
        ("</think>", "angle", "think"),
        ("<用户>", "angle", "用户"),
        ("<turn|>", "angle", "turn|"),
        ("<seed:think>", "angle", "seed:think"),
        ("<reserved_106>", "angle", "reserved_106"),
        ("[INST]", "bracket", "INST"),
        ("[/INST]", "bracket", "INST"),
        ("[control_8]", "bracket", "control_8"),
        ("｜DSML｜", "literal", "｜DSML｜"),
        ("<dsml:", "literal", "<dsml:"),
        ("<<SYS>>", "literal", "<<SYS>>"),
        (">>TITLE<<", "literal", ">>TITLE<<"),
        ("]~b]", "literal", "]~b]"),
        ("[BEGIN FINAL RESPONSE]", "literal", "[BEGIN FINAL RESPONSE]"),
        ("< think>", "literal", "< think>"),
    ],
)
def test_classify(token: str, shape: str, name: str) -> None:
    assert classify(token) == (shape, name)


def test_split_number() -> None:
    assert split_number("<SPECIAL_20>") == ("<SPECIAL_", 20, ">")
    assert split_number("<|USER_0_TOKEN|>") == ("<|USER_", 0, "_TOKEN|>")
    assert split_number("[PAD151646]") == ("[PAD", 151646, "]")
    assert split_number("<think>") is None
    assert split_number("<x_07>") is None  # a leading zero is not a placeholder number
    assert split_number("12") is None  # no prefix


@pytest.mark.parametrize(("token", "piece"), [("   ", True), ("õ", True), ("÷", True), ("▁hello", True), ("ab12", True),
                                              ("<dsml:", False), ("｜DSML｜", False), ("</s>", False), ("[PAD5]", False)])
def test_is_text_piece(token: str, piece: bool) -> None:
    assert is_text_piece(token) is piece


def test_tokenizer_json(tmp_path: Path) -> None:
    path = _write(tmp_path, "tokenizer.json", {"added_tokens": [
        _added("<｜begin▁of▁sentence｜>", True, 0), _added("<think>", False, 1), _added("｜DSML｜", False, 2),
        _added("<dsml:", False, 3), _added("[INST]", True, 4), _added("    ", False, 5), _added("õ", False, 6),
        _added("<用户>", True, 7),
    ], "model": {}})
    tokens = load_tokens(path)
    assert tokens.bars == {"<｜begin▁of▁sentence｜>"}
    assert tokens.angle == {"think", "用户"}
    assert tokens.bracket == {"INST"}
    assert tokens.literal == {"｜DSML｜", "<dsml:", "<｜begin▁of▁sentence｜>"}  # a bar token is matched exactly too (stop 50)
    assert "    " not in tokens.strings and "õ" not in tokens.strings
    assert len(tokens) == 6
    assert load_tokens(str(path)) == tokens  # str and Path read the same


def test_tekken_with_special_tokens(tmp_path: Path) -> None:
    path = _write(tmp_path, "tekken.json", {"config": {"default_num_special_tokens": 3}, "vocab": [], "special_tokens": [
        {"rank": 0, "token_str": "<s>", "is_control": True}, {"rank": 1, "token_str": "[INST]", "is_control": True},
        {"rank": 2, "token_str": "<SPECIAL_2>", "is_control": True}]})
    tokens = load_tokens(path)
    assert tokens.angle == {"s", "SPECIAL_2"} and tokens.bracket == {"INST"}


def test_tekken_without_special_tokens_takes_mistral_commons_list(tmp_path: Path) -> None:
    n = len(TEKKEN_DEPRECATED_SPECIAL_TOKENS) + 5
    path = _write(tmp_path, "tekken.json", {"config": {"default_num_special_tokens": n, "version": "v3"}, "vocab": []})
    tokens = load_tokens(path)
    assert len(tokens) == n
    assert {"[INST]", "<unk>", "[PREFIX]"} <= tokens.strings
    assert f"<SPECIAL_{n - 1}>" in tokens.strings and f"<SPECIAL_{n}>" not in tokens.strings


def test_encoding_duck_typed() -> None:
    class Enc:
        name = "fake"
        special_tokens_set = frozenset({"<|endoftext|>", "<|im_start|>"})

    class Private:
        _special_tokens = {"<|fim_prefix|>": 1}  # noqa: RUF012

    assert load_tokens(Enc()).bars == {"<|endoftext|>", "<|im_start|>"}
    assert load_tokens(Private()).bars == {"<|fim_prefix|>"}


def test_real_tiktoken_encoding() -> None:
    from helpers.data import optional_module

    tiktoken = optional_module("tiktoken", require_env="ENVELOCK_REQUIRE_TOKENIZERS", how="pip install tiktoken")
    enc = tiktoken.Encoding(name="tiny", pat_str=r"\S+|\s+", mergeable_ranks={bytes([i]): i for i in range(256)},
                            special_tokens={"<|endoftext|>": 256, "<tool_call>": 257})
    tokens = load_tokens(enc)
    assert tokens.bars == {"<|endoftext|>"} and tokens.angle == {"tool_call"}


def test_list_and_value_semantics() -> None:
    a = load_tokens(["[INST]", "<think>", "<|eot_id|>", "｜DSML｜"])
    b = load_tokens(("｜DSML｜", "<|eot_id|>", "<think>", "[INST]"))
    assert a == b and hash(a) == hash(b)
    assert isinstance(a, Tokens) and list(a) == sorted(a.strings)
    with pytest.raises(AttributeError):
        a.angle = frozenset()  # type: ignore[misc]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (None, "cannot be read"),
        ("", "is empty"),
        ("   \n", "is empty"),
        ("{not json", "is not JSON"),
        ("[1, 2]", "JSON list, not an object"),
        ('{"model": {}}', "neither a tokenizer.json"),
        ('{"added_tokens": {}}', "'added_tokens' is missing or not a list"),
        ('{"added_tokens": [{"id": 1}]}', "added_tokens[0] has no string 'content'"),
        ('{"added_tokens": [{"content": "<s>"}]}', "no boolean 'special'"),
        ('{"added_tokens": []}', "holds no control token"),
        ('{"added_tokens": [{"content": "   ", "special": false}]}', "holds no control token"),
        ('{"config": {}, "vocab": []}', "default_num_special_tokens"),
        ('{"config": {"default_num_special_tokens": true}, "vocab": []}', "default_num_special_tokens"),
        ('{"config": 3, "vocab": []}', "'config' is missing or not an object"),
        ('{"config": {}, "vocab": [], "special_tokens": {}}', "'special_tokens' is not a list"),
        ('{"config": {}, "vocab": [], "special_tokens": [{"rank": 0}]}', "special_tokens[0] has no string 'token_str'"),
        ('{"config": {}, "vocab": [], "special_tokens": [{"token_str": ""}]}', "the empty string"),
    ],
)
def test_bad_files_are_typed_errors(tmp_path: Path, content: str | None, needle: str) -> None:
    path = tmp_path / "tokenizer.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(TokenizerFileError) as info:
        load_tokens(path)
    assert isinstance(info.value, envelock.EnvelockError)
    assert needle in str(info.value) and str(path) in str(info.value)
    assert info.value.path == str(path)


def test_undecodable_file(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_bytes(b'{"added_tokens": "\xff"}')
    with pytest.raises(TokenizerFileError, match="not UTF-8"):
        load_tokens(path)


def test_directory_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(TokenizerFileError, match="cannot be read"):
        load_tokens(tmp_path)


@pytest.mark.parametrize(("value", "needle"), [
    ([], "holds no control token"), (["<s>", 3], "token 1 is int"), ([""], "the empty string"),
    (b"tokenizer.json", "bytes given"), (42, "cannot read a int"),
])
def test_bad_values_are_typed_errors(value: Any, needle: str) -> None:
    with pytest.raises(TokenizerFileError, match=needle):
        load_tokens(value)


def test_encoding_without_special_tokens_is_an_error() -> None:
    class Enc:
        name = "empty"
        special_tokens_set: frozenset[str] = frozenset()

    class Odd:
        _special_tokens = "not a set"

    with pytest.raises(TokenizerFileError, match="holds no control token"):
        load_tokens(Enc())
    with pytest.raises(TokenizerFileError, match="neither special_tokens_set"):
        load_tokens(Odd())
