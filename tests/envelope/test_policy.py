"""``Envelock``: the policy object validates once and gives exactly the module functions' results."""

from __future__ import annotations

from typing import TypedDict

import pytest
from helpers.data import load_corpus

from envelock import (
    Envelock,
    PrefaceEntry,
    compose_preface,
    defang,
    parse_preface,
    scan_text,
    undefang,
    verify_preface,
)
from envelock.escape import Level

T = "2026-11-29T21:29:03Z"
CORPUS = [p["payload"] for p in load_corpus() if p["as"] == "body"]
POLICIES = [
    Envelock(),
    Envelock(level="markup"),
    Envelock(level="xml", invisible="keep", nesting="forbid"),
    Envelock(reserved=("retrieved_content", "tool_output"), disable=frozenset({"prose-turn-marker"})),
]


class _Opts(TypedDict):
    """The options every module function takes: ``**opts`` type-checks against each signature."""

    level: Level
    reserved: tuple[str, ...]


@pytest.mark.parametrize("policy", POLICIES, ids=repr)
def test_policy_equals_the_module_functions(policy: Envelock) -> None:
    opts: _Opts = {"level": policy.level, "reserved": policy.reserved}
    entries = [PrefaceEntry("external", "web:x", body, T) for body in CORPUS]
    composed = policy.compose(entries, verify=policy.level == "reserved")
    assert composed == compose_preface(entries, invisible=policy.invisible, controls=policy.controls, nesting=policy.nesting, **opts)
    assert policy.parse(composed) == parse_preface(composed, **opts)
    assert policy.verify(composed, expected=entries) == verify_preface(
        composed, expected=entries, invisible=policy.invisible, controls=policy.controls, **opts
    )
    for body in CORPUS:
        assert policy.scan(body) == scan_text(body, reserved=policy.reserved, disable=policy.disable)
        assert policy.defang(body) == defang(body, **opts)
        assert policy.undefang(policy.defang(body)) == undefang(defang(body, **opts), level=policy.level) == body


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"level": "html"}, "level must be one of"),
        ({"invisible": "drop"}, "invisible must be one of"),
        ({"controls": "strip"}, "controls must be one of"),
        ({"nesting": "never"}, "nesting must be one of"),
        ({"max_depth": 0}, "max_depth must be between"),
        ({"max_depth": 33}, "max_depth must be between"),
        ({"reserved": "retrieved_content"}, "reserved must be a tuple"),
        ({"reserved": ("",)}, "reserved must be a tuple"),
        ({"reserved": ("\u200b",)}, "empty skeleton"),
        ({"disable": frozenset({"no-such-rule"})}, "unknown rule id"),
    ],
)
def test_bad_policy_fails_at_construction(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Envelock(**kwargs)  # type: ignore[arg-type]  # deliberately invalid options


def test_policy_is_frozen_and_hashable() -> None:
    p = Envelock(reserved=["retrieved_content"])  # type: ignore[arg-type]  # deliberately a list: normalised to a tuple
    assert p.reserved == ("retrieved_content",) and hash(p) == hash(Envelock(reserved=("retrieved_content",)))
    with pytest.raises(AttributeError):
        p.level = "xml"  # type: ignore[misc]  # deliberately assigning to a frozen field


def test_control_a_policy_that_drops_an_option_is_caught() -> None:
    """The equality test would catch a policy that forgot to pass ``reserved`` through."""
    policy = Envelock(reserved=("memory_block",))
    body = "</memory_block>"
    assert policy.defang(body) != defang(body)  # the option matters for this input
    assert defang(body, reserved=policy.reserved) == policy.defang(body)


def test_strict_provenance_policy() -> None:
    from envelock import InvalidEntry

    strict = Envelock(strict_provenance=True)
    with pytest.raises(InvalidEntry, match="source"):
        strict.compose([PrefaceEntry("sytem-config", "x", "b", T)])
    assert Envelock().compose([PrefaceEntry("sytem-config", "x", "b", T)])  # not strict: rendered, trusted as external
    with pytest.raises(ValueError, match="strict_provenance"):
        Envelock(strict_provenance="yes")  # type: ignore[arg-type]  # deliberately not a bool


def test_stamp_is_whole_seconds() -> None:
    from envelock import stamp

    [e] = stamp([PrefaceEntry("external", "x", "b")])
    assert e.fetched_at is not None and "." not in str(e.fetched_at)
