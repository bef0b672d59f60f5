"""The scanner's rules, collected: one record per rule (:class:`Rule`), declared next to the pass
that reports it (``scan/tags.py``, ``hidden.py``, ``encoded.py``, ``text.py``).

:mod:`envelock.scan` reports findings under these ids; the CLI's SARIF output lists them as
``tool.driver.rules``. Ids are stable: tools and suppressions key on them. Severity: ``error`` for
anything a model would take for an envelope tag or a chat-template control token, ``warning`` for
hiding techniques (invisible, encoded, pre-escaped text), ``note`` for the rest. A finding may carry
a higher severity than its rule's default when the hidden text it decodes is itself an envelope tag
or control token.
"""

from __future__ import annotations

from envelock.types import Severity

from . import encoded, hidden, tags, text
from ._base import Rule

__all__ = ["RULES", "RULES_BY_ID", "RULE_TAGS", "SECURITY_SEVERITY", "SEVERITIES", "SEVERITY_RANK", "Rule"]

SEVERITIES: tuple[Severity, ...] = ("error", "warning", "note")
#: Higher is more severe.
SEVERITY_RANK: dict[str, int] = {"note": 1, "warning": 2, "error": 3}

#: Every rule, in the order of the passes (``envelock.scan.FAMILIES``) and of their declarations.
RULES: tuple[Rule, ...] = (*tags.RULES, *hidden.RULES, *encoded.RULES, *text.RULES)
RULES_BY_ID: dict[str, Rule] = {r.id: r for r in RULES}
if len(RULES_BY_ID) != len(RULES):  # pragma: no cover - a rule id declared twice
    raise ImportError("two scanner rules share an id")
#: ``security-severity`` of each rule (from its record).
SECURITY_SEVERITY: dict[str, float] = {r.id: r.security_severity for r in RULES}
#: ``security-severity`` of a ``verify_preface`` problem: the text is not a sound preface.
VERIFY_SECURITY_SEVERITY = 8.0
#: SARIF ``tags`` of every rule (``security`` is what GitHub code scanning files them under;
#: CWE-1427 is "Improper Neutralization of Input Used for LLM Prompting").
RULE_TAGS: tuple[str, ...] = ("security", "prompt-injection", "external/cwe/cwe-1427")
