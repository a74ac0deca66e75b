"""How findings become a score and a score an action."""

from __future__ import annotations

import pytest

from mithril.domain import Finding, Severity
from mithril.gateway.decision import Action, FactsAction, Mode, Policy, decide, score_findings


def finding(category: str, confidence: float, rule: str = "r", start: int = 0) -> Finding:
    return Finding(rule, "scanner", category, Severity.HIGH, confidence, "m", start, start + 1)


def test_repeats_within_a_category_count_once() -> None:
    emails = [finding("pii", 0.3, "secrets.email", i) for i in range(10)]
    assert score_findings(emails) == pytest.approx(0.3)


def test_distinct_categories_reinforce() -> None:
    score = score_findings([finding("jailbreak", 0.4), finding("role_hijack", 0.4)])
    assert score == pytest.approx(1 - 0.6 * 0.6)


def test_facts_do_not_add_to_attack_evidence() -> None:
    """An e-mail address beside a learned score just under the threshold: a clean
    retrieved email the classifier half-suspects is not flagged for its address."""
    findings = [finding("pii", 0.3, "secrets.email"), finding("learned", 0.45)]
    assert score_findings(findings) == pytest.approx(0.45)
    assert not decide(findings, Policy(Mode.BLOCK, 0.5)).flagged
    assert score_findings([finding("pii", 0.6), finding("learned", 0.45)]) == pytest.approx(0.6)


def test_facts_reinforce_each_other() -> None:
    score = score_findings([finding("credential", 0.4), finding("pii", 0.4)])
    assert score == pytest.approx(1 - 0.6 * 0.6)


@pytest.mark.parametrize(
    ("mode", "confidence", "action", "flagged"),
    [
        (Mode.BLOCK, 0.9, Action.BLOCK, True),
        (Mode.LOG, 0.9, Action.ALLOW, True),
        (Mode.BLOCK, 0.49, Action.ALLOW, False),
        (Mode.BLOCK, 0.5, Action.BLOCK, True),
    ],
)
def test_threshold_and_mode(mode, confidence, action, flagged) -> None:  # type: ignore[no-untyped-def]
    decision = decide([finding("jailbreak", confidence)], Policy(mode, 0.5))
    assert (decision.action, decision.flagged) == (action, flagged)


@pytest.mark.parametrize(
    ("mode", "facts", "action"),
    [
        (Mode.BLOCK, FactsAction.REDACT, Action.REDACT),
        (Mode.BLOCK, FactsAction.BLOCK, Action.BLOCK),
        (Mode.BLOCK, FactsAction.LOG, Action.ALLOW),
        (Mode.LOG, FactsAction.REDACT, Action.ALLOW),
        (Mode.MONITOR, FactsAction.BLOCK, Action.ALLOW),
    ],
)
def test_credentials_alone_are_acted_on_as_the_policy_says(mode, facts, action) -> None:  # type: ignore[no-untyped-def]
    findings = [finding("credential", 0.95, "secrets.aws_access_key"), finding("learned", 0.3)]
    decision = decide(findings, Policy(mode, 0.5, facts=facts))
    assert decision.flagged and decision.action is action


@pytest.mark.parametrize("facts", list(FactsAction))
def test_an_attack_is_blocked_whatever_the_facts_policy(facts) -> None:  # type: ignore[no-untyped-def]
    findings = [finding("credential", 0.95, "secrets.aws_access_key"), finding("jailbreak", 0.6)]
    assert decide(findings, Policy(Mode.BLOCK, 0.5, facts=facts)).action is Action.BLOCK


def test_redaction_is_the_default_and_needs_no_attack_evidence_at_zero_threshold() -> None:
    """At threshold 0 an absent attack score (0.0) still does not count as an attack."""
    decision = decide([finding("pii", 0.4, "secrets.email")], Policy(Mode.BLOCK, 0.0))
    assert decision.action is Action.REDACT


def test_no_findings_never_flags_even_at_zero_threshold() -> None:
    decision = decide([], Policy(Mode.BLOCK, 0.0))
    assert decision.action is Action.ALLOW and not decision.flagged


def test_findings_are_ordered_strongest_first() -> None:
    weak = Finding("a", "scanner", "x", Severity.LOW, 0.9, "m", 0, 1)
    strong = Finding("b", "scanner", "y", Severity.CRITICAL, 0.5, "m", 5, 6)
    decision = decide([weak, strong], Policy(Mode.BLOCK, 0.5))
    assert [f.rule_id for f in decision.findings] == ["b", "a"]
    assert decision.to_dict()["findings"][0]["severity"] == "critical"
