"""The control tokens of a tokenizer, read from its file and classified by shape.

:func:`load_tokens` reads a Hugging Face ``tokenizer.json`` (its ``added_tokens``) or a
Mistral ``tekken.json`` (its ``special_tokens``) with the standard library only, or takes a
tiktoken ``Encoding`` (duck-typed: ``special_tokens_set`` or ``_special_tokens``) or a list
of token strings, and returns a frozen :class:`Tokens` value: the ``<NAME>`` names, the
``[NAME]`` names, the bar-shaped tokens (``<|NAME|>``, ``<｜NAME｜>``, ``[|NAME|]``) and the
tokens with no opener at all (``｜DSML｜``, ``>>TITLE<<``).

:func:`classify` is the one classifier: ``scripts/gen_token_tables.py`` imports it to build
the generated tables (``envelock/eye/token_tables.py``), so a tokenizer file read here and
the committed tables agree on what shape a token has.

Bad input is refused with :class:`TokenizerFileError` naming the file and what is wrong;
a file that holds no control token is an error too (fail closed: "no tokens" must never
read as "nothing to escape").
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ..errors import EnvelockError

Shape = Literal["angle", "bracket", "bar", "literal"]

#: The bar characters a bar-shaped token opens with: ``|`` and the fullwidth ``｜`` (U+FF5C)
#: that DeepSeek writes.
BARS = "|\uff5c"

# ``<|NAME|>``, ``<|NAME>`` (Gemma 4 openers), ``<｜NAME｜>``, ``[|NAME|]``: an opener followed by a bar.
_BAR_RE = re.compile(r"\A[<\[][|\uff5c](?P<name>.*?)(?:[|\uff5c]?[>\]])?\Z", re.DOTALL)
# ``<NAME>`` / ``</NAME>``: no blank, no ``<``/``>`` inside; the name may end in a bar (Gemma 4 closers ``<turn|>``).
_ANGLE_RE = re.compile(r"\A</?(?P<name>[^\s<>/|\uff5c][^\s<>]*)>\Z")
# ``[NAME]`` / ``[/NAME]``: no blank, no bracket inside.
_BRACKET_RE = re.compile(r"\A\[/?(?P<name>[^\s\[\]/|\uff5c][^\s\[\]]*)\]\Z")
# ``<<NAME>>`` / ``<</NAME>>`` (Llama 2's ``<<SYS>>``): the ``<NAME>`` inside, then ``>``.
_DOUBLED_RE = re.compile(r"\A<</?(?P<name>[^\s<>/|\uff5c][^\s<>]*)>>\Z")
# A placeholder name: a prefix, a decimal number without a leading zero, a suffix with no digit.
_NUMBERED_RE = re.compile(r"\A(?P<prefix>.*?\D)(?P<number>0|[1-9][0-9]*)(?P<suffix>\D*)\Z", re.DOTALL)


class TokenizerFileError(EnvelockError):
    """A tokenizer file (or object) cannot be read as a list of control tokens.

    ``path`` names the file (or ``<Encoding name>`` / ``<list>``) and ``reason`` says what is wrong.
    """

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(f"tokenizer {path!r}: {message}")
        self.path = path
        self.reason = message


def classify(token: str) -> tuple[Shape, str]:
    """The shape of ``token`` and its name.

    * ``bar``: an opener followed by a bar (``<|im_start|>``, ``<｜User｜>``, ``[|system|]``,
      ``<|turn>``); the name is what lies between the bars (``im_start``);
    * ``angle``: ``<NAME>`` or ``</NAME>`` (``<think>``, ``<用户>``, ``<turn|>``); the name has no slash;
    * ``bracket``: ``[NAME]`` or ``[/NAME]`` (``[INST]``, ``[control_8]``);
    * ``literal``: anything else (``｜DSML｜``, ``<dsml:``, ``<<SYS>>``, ``>>TITLE<<``); the name
      is the whole token.
    """
    m = _BAR_RE.match(token)
    if m:
        return "bar", m.group("name")
    m = _ANGLE_RE.match(token)
    if m:
        return "angle", m.group("name")
    m = _BRACKET_RE.match(token)
    if m:
        return "bracket", m.group("name")
    return "literal", token


def split_number(name: str) -> tuple[str, int, str] | None:
    """``(prefix, number, suffix)`` when ``name`` holds one decimal number (``SPECIAL_20`` ->
    ``("SPECIAL_", 20, "")``, ``USER_0_TOKEN`` -> ``("USER_", 0, "_TOKEN")``), else ``None``.

    The prefix is never empty and the suffix holds no digit, so each name splits one way.
    """
    m = _NUMBERED_RE.match(name)
    if not m:
        return None
    return m.group("prefix"), int(m.group("number")), m.group("suffix")


def is_text_piece(token: str) -> bool:
    """True for an added token that is ordinary text rather than a control token.

    Tokenizers add whole-unit tokens that carry no control meaning: runs of blanks (GPT-NeoX),
    single characters (DeepSeek's ``õ`` and ``÷``), words. A token is a text piece when, after
    removing the SentencePiece word mark ``▁`` and blanks, it is one character at most or holds
    nothing but letters, marks and digits.
    """
    rest = "".join(c for c in token.replace("\u2581", "") if not c.isspace())
    return len(rest) <= 1 or all(unicodedata.category(c)[0] in "LMN" for c in rest)


@dataclass(frozen=True)
class Tokens:
    """Control tokens classified by shape (see :func:`classify`).

    ``angle`` and ``bracket`` hold names (``think``, ``INST``; a closer ``</think>`` gives the
    same name); ``bars`` and ``literal`` hold whole token strings (a bar token is in both: the eye's
    bar shape reads only some, so each is also matched exactly; a ``<<NAME>>`` token is the ``angle``
    name inside it); ``strings`` every token as it was read.
    """

    angle: frozenset[str]
    bracket: frozenset[str]
    bars: frozenset[str]
    literal: frozenset[str]
    strings: frozenset[str]

    @classmethod
    def of(cls, tokens: Iterable[str]) -> Tokens:
        """Classify ``tokens`` (each a non-empty string)."""
        angle: set[str] = set()
        bracket: set[str] = set()
        bars: set[str] = set()
        literal: set[str] = set()
        strings: set[str] = set()
        for token in tokens:
            shape, name = classify(token)
            strings.add(token)
            if shape == "angle":
                angle.add(name)
            elif shape == "bracket":
                bracket.add(name)
            elif shape == "bar":
                bars.add(token)
                # Matched exactly as well: the eye's bar shape reads only some (``<|user``, ``[|tool:call|]``,
                # ``<|tool[0]|>`` are none it reads; stop 50, two red-team finds: loading them added
                # nothing). Its first character is an opener, so the escape point is the bar reading's.
                literal.add(token)
            elif (doubled := _DOUBLED_RE.match(token)) is not None:
                # ``<<USER>>``: the ``<NAME>`` inside is the token the eye reads, as for the tables' ``<<SYS>>``;
                # matched exactly as well, its first ``<`` was escaped and then the inner one at ``markup``,
                # which ``undefang`` could not give back (stop 50, a red-team find).
                angle.add(doubled.group("name"))
            else:
                literal.add(token)
        return cls(frozenset(angle), frozenset(bracket), frozenset(bars), frozenset(literal), frozenset(strings))

    def __len__(self) -> int:
        return len(self.strings)

    def __or__(self, other: Tokens) -> Tokens:
        """The tokens of both (``load_tokens(a) | load_tokens(b)``: two tokenizers served side by side)."""
        return Tokens.of(self.strings | other.strings)

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.strings))


def _check_strings(items: Iterable[object], where: str) -> list[str]:
    out: list[str] = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise TokenizerFileError(f"token {i} is {type(item).__name__}, not a string", path=where)
        if not item:
            raise TokenizerFileError(f"token {i} is the empty string", path=where)
        out.append(item)
    if not out:
        raise TokenizerFileError("holds no control token", path=where)
    return out


def _hf_added_tokens(data: dict[str, object], where: str) -> list[str]:
    added = data.get("added_tokens")
    if not isinstance(added, list):
        raise TokenizerFileError("'added_tokens' is missing or not a list", path=where)
    out: list[str] = []
    for i, entry in enumerate(added):
        if not isinstance(entry, dict) or not isinstance(entry.get("content"), str):
            raise TokenizerFileError(f"added_tokens[{i}] has no string 'content'", path=where)
        content: str = entry["content"]
        special = entry.get("special")
        if not isinstance(special, bool):
            raise TokenizerFileError(f"added_tokens[{i}] ({content!r}) has no boolean 'special'", path=where)
        # Every added token is matched as a whole unit in the text; a non-special one that is
        # ordinary text (a run of blanks, a letter) carries no control meaning.
        if special or not is_text_piece(content):
            out.append(content)
    return out


#: The most ``<SPECIAL_{id}>`` tokens a tekken.json without a list may ask for.
MAX_TEKKEN_SPECIAL = 100_000


def _tekken_special_tokens(data: dict[str, object], where: str) -> list[str]:
    config = data.get("config")
    if not isinstance(config, dict):
        raise TokenizerFileError("'config' is missing or not an object", path=where)
    special = data.get("special_tokens")
    if special is None:
        # Tekken files of version v7 and before carry no list: mistral-common fills in its
        # built-in list, then "<SPECIAL_{id}>" up to default_num_special_tokens.
        from .token_tables import TEKKEN_DEPRECATED_SPECIAL_TOKENS, TEKKEN_SPECIAL_TOKEN_TEMPLATE

        count = config.get("default_num_special_tokens")
        if not isinstance(count, int) or isinstance(count, bool) or count < len(TEKKEN_DEPRECATED_SPECIAL_TOKENS):
            raise TokenizerFileError("no 'special_tokens' and no valid config.default_num_special_tokens", path=where)
        if count > MAX_TEKKEN_SPECIAL:
            # Each is a token to match: a file asking for a billion filled the memory (a CLI-probe find
            # of stop 51; the tekken files of mistral-common ask for 1,000).
            raise TokenizerFileError(
                f"config.default_num_special_tokens of {count} is over the limit of {MAX_TEKKEN_SPECIAL}", path=where
            )
        fill = [TEKKEN_SPECIAL_TOKEN_TEMPLATE.format(id=i) for i in range(len(TEKKEN_DEPRECATED_SPECIAL_TOKENS), count)]
        return [*TEKKEN_DEPRECATED_SPECIAL_TOKENS, *fill]
    if not isinstance(special, list):
        raise TokenizerFileError("'special_tokens' is not a list", path=where)
    out: list[str] = []
    for i, entry in enumerate(special):
        if not isinstance(entry, dict) or not isinstance(entry.get("token_str"), str):
            raise TokenizerFileError(f"special_tokens[{i}] has no string 'token_str'", path=where)
        out.append(entry["token_str"])
    return out


def _read_file(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise TokenizerFileError(f"cannot be read: {exc.strerror or exc}", path=str(path)) from None


def tokens_of_file_bytes(raw: bytes, where: str) -> Tokens:
    """:func:`load_tokens` of a tokenizer file's bytes read by the caller (the CLI reads a named pipe
    with a timeout); ``where`` names it in errors."""
    return Tokens.of(_check_strings(_parse_file(raw, where), where))


def _parse_file(raw: bytes, where: str) -> list[str]:
    if not raw.strip():
        raise TokenizerFileError("is empty", path=where)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise TokenizerFileError(f"is not UTF-8 (byte {exc.start})", path=where) from None
    except json.JSONDecodeError as exc:
        raise TokenizerFileError(f"is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}", path=where) from None
    except RecursionError:
        raise TokenizerFileError("is nested too deeply to be read as JSON", path=where) from None
    if not isinstance(data, dict):
        raise TokenizerFileError(f"holds a JSON {type(data).__name__}, not an object", path=where)
    if "added_tokens" in data:
        return _hf_added_tokens(data, where)
    if "vocab" in data and "config" in data:
        return _tekken_special_tokens(data, where)
    raise TokenizerFileError(
        "is neither a tokenizer.json (no 'added_tokens') nor a tekken.json (no 'config'/'vocab')", path=where
    )


def _from_encoding(encoding: object) -> list[str]:
    where = f"<Encoding {getattr(encoding, 'name', '?')}>"
    special = getattr(encoding, "special_tokens_set", None)
    if special is None:
        special = getattr(encoding, "_special_tokens", None)
    if not isinstance(special, (set, frozenset, dict)):
        raise TokenizerFileError("has neither special_tokens_set nor _special_tokens", path=where)
    return _check_strings(sorted(special), where)


def load_tokens(source: str | Path | Iterable[str] | object) -> Tokens:
    """The control tokens of ``source``, classified by shape.

    ``source`` is the path of a ``tokenizer.json`` or ``tekken.json`` (``str`` or ``Path``), a
    tiktoken ``Encoding`` (or any object with ``special_tokens_set`` / ``_special_tokens``), or
    an iterable of token strings (not a single ``str``, which is a path). Raises
    :class:`TokenizerFileError` for an unreadable, malformed or empty source.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        return tokens_of_file_bytes(_read_file(path), str(path))
    if hasattr(source, "special_tokens_set") or hasattr(source, "_special_tokens"):
        return Tokens.of(_from_encoding(source))
    if isinstance(source, (bytes, bytearray)):
        raise TokenizerFileError("bytes given; pass a path, an Encoding or a list of strings", path="<bytes>")
    if isinstance(source, Iterable):
        return Tokens.of(_check_strings(list(source), "<list>"))
    raise TokenizerFileError(f"cannot read a {type(source).__name__}", path=f"<{type(source).__name__}>")
