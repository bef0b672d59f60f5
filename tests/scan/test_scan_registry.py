"""The scanner's rule registry: each family emits only the rule ids it declares; ``disable=`` skips its work."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from helpers.data import load_corpus

import envelock.scan as S
from envelock.scan._base import Context, _Raw
from envelock.scan.rules import RULES_BY_ID

TEXTS = [p["payload"] for p in load_corpus()] + ["</retrieved_content>", "[INST]", "%3C/retrieved_content%3E", "a >>TITLE<< b"]


def test_every_rule_has_a_family_and_every_family_real_rules() -> None:
    declared = set().union(*(f.rule_ids for f in S.FAMILIES))
    assert declared == set(RULES_BY_ID)
    assert len({f.name for f in S.FAMILIES}) == len(S.FAMILIES)


@pytest.mark.parametrize("family", S.FAMILIES, ids=[f.name for f in S.FAMILIES])
def test_family_emits_only_declared_ids(family: S.Family) -> None:
    seen: set[str] = set()
    for text in TEXTS:
        out: list[_Raw] = []
        family.run(text, Context(("retrieved_content", "external_content")), out)
        seen |= {r.rule for r in out}
    assert seen <= family.rule_ids
    assert seen, f"the corpus exercises no rule of {family.name}"


def test_disable_skips_the_work(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def record(name: str) -> Callable[[str, Context, list[_Raw]], None]:
        return lambda t, r, o: calls.append(name)

    fams = tuple(S.Family(f.name, f.rules, record(f.name)) for f in S.FAMILIES)
    monkeypatch.setattr(S, "FAMILIES", fams)
    S.scan_text("x", disable={"bidi-control", "prose-turn-marker"})
    assert "bidi" not in calls and "prose" not in calls and "openers" in calls
    calls.clear()
    S.scan_text("x", disable={"chat-control-token"})  # shared by two families that emit other ids too
    assert {"openers", "brackets"} <= set(calls)


def test_control_a_family_emitting_an_undeclared_id_is_caught() -> None:
    rogue = S.Family("rogue", (RULES_BY_ID["bidi-control"],), lambda t, r, out: out.append(_Raw("prose-turn-marker", "note", "x", 0, 0)))
    out: list[_Raw] = []
    rogue.run("x", Context(()), out)
    assert not {r.rule for r in out} <= rogue.rule_ids
