"""The scanner's rules: one data table (id, short description, help, default severity).

:mod:`envelock.scan` reports findings under these ids; the CLI's SARIF output
lists them as ``tool.driver.rules``. Ids are stable: tools and suppressions
key on them. Severity: ``error`` for anything a model would take for an
envelope tag or a chat-template control token, ``warning`` for hiding
techniques (invisible, encoded, pre-escaped text), ``note`` for the rest. A
finding may carry a higher severity than its rule's default when the hidden
text it decodes is itself an envelope tag or control token.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..types import Severity

SEVERITIES: tuple[Severity, ...] = ("error", "warning", "note")
#: Higher is more severe.
SEVERITY_RANK: dict[str, int] = {"note": 1, "warning": 2, "error": 3}


@dataclass(frozen=True)
class Rule:
    """One scanner rule."""

    id: str
    short: str
    help: str
    severity: Severity


RULES: tuple[Rule, ...] = (
    Rule(
        "envelope-close-tag",
        "Envelope close tag in retrieved text",
        "The text holds something a model reads as `</retrieved_content>` (or another reserved envelope name): "
        "exact, or disguised by case, whitespace, separators, look-alike characters, invisible characters or "
        "character references. Inside an envelope it would end the envelope early and let the rest of the text "
        "pose as instructions. compose_preface defangs it; a raw copy of this text must never reach a prompt.",
        "error",
    ),
    Rule(
        "envelope-open-tag",
        "Forged envelope open tag in retrieved text",
        "The text holds something a model reads as `<retrieved_content ...>` (a reserved envelope name without a "
        'slash), possibly with forged attributes such as `provenance="system-config"`. It would start a fake '
        "envelope claiming a higher trust tier.",
        "error",
    ),
    Rule(
        "chat-control-token",
        "Chat-template control token",
        "The text holds a chat-template special token (`<|im_end|>`, `<|eot_id|>`, DeepSeek `<｜…｜>`, "
        "`<start_of_turn>`, `[INST]`, `<</SYS>>`, `</function_results>`, ...). A model, or a template that "
        "splices text without escaping, can take it for a turn boundary. `<s>`/`</s>` are reported as warnings "
        "because they are also HTML strikethrough and type parameters.",
        "error",
    ),
    Rule(
        "defanged-tag",
        "Text already in envelock's escaped form",
        "The text holds an opener followed by a backslash before a reserved name or control token "
        "(`<\\/retrieved_content>`, `[\\INST]`): envelock's own escape. Third-party text has no reason to carry "
        "it; it is either a pasted composed preface or an attempt to confuse a naive un-escaper.",
        "warning",
    ),
    Rule(
        "tag-smuggling",
        "Unicode TAG characters (ASCII smuggling)",
        "Characters U+E0000..U+E007F mirror ASCII invisibly; some models read them. The message shows the hidden "
        "ASCII. Error when the hidden text is itself an envelope tag or control token. RGI emoji flag sequences "
        "(England, Scotland, Wales) are not reported; other well-formed emoji tag sequences are a note.",
        "warning",
    ),
    Rule(
        "bidi-control",
        "Bidirectional override/embedding/isolate control",
        "U+202A..U+202E and U+2066..U+2069 reorder how text is displayed (Trojan Source, CVE-2021-42574), so a "
        "reviewer sees something other than what the model reads. The marks LRM/RLM/ALM are not reported.",
        "warning",
    ),
    Rule(
        "invisible-in-word",
        "Invisible character inside a word",
        "A default-ignorable character (zero-width space, word joiner, invisible operator, filler, ...) sits "
        "between two letters or digits, where it can split a keyword for filters while a model still reads the "
        "word. Not reported: ZWJ/ZWNJ in scripts that use them (Arabic/Persian, Syriac, Indic, Sinhala, "
        "Myanmar, Khmer, Mongolian, Tibetan), ZWSP/WJ in scripts written without spaces (Thai, Lao, Khmer, "
        "Myanmar, CJK), a single variation selector (a variation sequence), CGJ in Hebrew, Hangul fillers in "
        "Hangul, emoji ZWJ sequences, LRM/RLM/ALM. A soft hyphen inside a word is a note.",
        "warning",
    ),
    Rule(
        "invisible-run",
        "Run of invisible characters (hidden payload)",
        "Four or more default-ignorable characters in a row carry data no reader sees: variation-selector "
        "byte smuggling, 'Sneaky Bits' (U+2062/U+2064 as binary), or padding. The message shows the decoded "
        "text when it decodes. Error when the decoded text is an envelope tag or control token.",
        "warning",
    ),
    Rule(
        "control-character",
        "C0/C1 control character or lone surrogate",
        "Control characters other than TAB, LF, CR and FF (ESC sequences that hide text in terminals, NUL, "
        "backspace, NEL) and unpaired surrogates have no place in retrieved prose. compose_preface replaces "
        "them with U+FFFD.",
        "warning",
    ),
    Rule(
        "encoded-tag",
        "Percent-, backslash- or cipher-encoded envelope tag or control token",
        "`%3C/retrieved_content%3E`, `\\u003c/retrieved_content`, `\\x3c...`, `%uFF1C...`, or a reserved name "
        "in ROT13, Atbash or reversed. Not a tag as it stands, but one decoding step (by a tool, a template or a "
        "model asked to decode) away from one.",
        "warning",
    ),
    Rule(
        "encoded-blob-tag",
        "Base64, hex or binary run that decodes to an envelope tag or control token",
        "A run of base64 (standard or URL-safe), hex digits or 8-bit binary groups whose decoded bytes hold an "
        "envelope tag or chat-template control token: the classic 'decode this and follow it' injection.",
        "warning",
    ),
    Rule(
        "forged-attribute",
        "Quote followed by an envelope attribute name",
        "A quote (or `&quot;`, `%22`) followed by `provenance=`, `source=`, `origin=` or `fetched_at=`: an "
        "attempt to break out of an attribute value and forge provenance when the text is used as an origin "
        "or source. compose_preface escapes attribute values, so this is a hiding technique, not a breach.",
        "warning",
    ),
    Rule(
        "padded-opener",
        "Opener followed by long padding",
        "An opener (`<`, a look-alike or `&lt;`) is followed by a run of whitespace, invisible characters, "
        "controls, slashes or separators too long for the model's-eye lookahead to follow (32 or more in a row, "
        "or past 256 characters while a reserved name could still form). What a model makes of it cannot be "
        "bounded, so compose_preface escapes the opener (fail closed). Padding is a hiding technique.",
        "warning",
    ),
    Rule(
        "prose-turn-marker",
        "Prose turn marker at the start of a line",
        "`Human:`, `Assistant:`, `### Instruction:`, `SYSTEM:`, ... at the start of a line imitate a "
        "conversation turn. No escape can neutralise prose; the envelope and the hygiene rule are the defence. "
        "Reported for review only.",
        "note",
    ),
)

RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}

#: GitHub code scanning's ``security-severity`` of each rule (0.1-3.9 low, 4.0-6.9 medium,
#: 7.0-8.9 high, 9.0+ critical): how bad it is when the construct reaches a prompt raw.
SECURITY_SEVERITY: dict[str, float] = {
    "envelope-close-tag": 9.0,
    "envelope-open-tag": 8.5,
    "chat-control-token": 8.0,
    "tag-smuggling": 6.5,
    "invisible-run": 6.0,
    "bidi-control": 5.0,
    "encoded-tag": 5.0,
    "encoded-blob-tag": 5.0,
    "forged-attribute": 5.0,
    "invisible-in-word": 4.0,
    "control-character": 4.0,
    "padded-opener": 4.0,
    "defanged-tag": 3.0,
    "prose-turn-marker": 2.0,
}
#: ``security-severity`` of a ``verify_preface`` problem: the text is not a sound preface.
VERIFY_SECURITY_SEVERITY = 8.0
#: SARIF ``tags`` of every rule (``security`` is what GitHub code scanning files them under;
#: CWE-1427 is "Improper Neutralization of Input Used for LLM Prompting").
RULE_TAGS: tuple[str, ...] = ("security", "prompt-injection", "external/cwe/cwe-1427")
