"""The text a redacting decision sends on, cut from the findings it was made on."""

from __future__ import annotations

from mithril.domain import Finding, Severity
from mithril.gateway.decision import Mode, Policy, decide, redact_facts
from mithril.gateway.firewall import ConversationDecision

KEYED = "mail ana@example.org, key AKIAQ3EGRZLNW7T2X5PB, done"


def fact(kind: str, start: int, end: int, category: str = "credential") -> Finding:
    return Finding(
        f"secrets.{kind}", "secrets", category, Severity.HIGH, 0.9, "m", start, end, kind=kind
    )


def attack(start: int, end: int, confidence: float = 0.9) -> Finding:
    return Finding(
        "override", "scanner", "instruction_override", Severity.HIGH, confidence, "m", start, end
    )


EMAIL = fact("email", 5, 20, "pii")
KEY = fact("aws_access_key", 26, 46)


def test_facts_are_replaced_in_text_order_whatever_order_they_come_in() -> None:
    assert KEYED[EMAIL.start : EMAIL.end] == "ana@example.org"
    expected = "mail [REDACTED:email], key [REDACTED:aws_access_key], done"
    assert redact_facts(KEYED, [KEY, EMAIL]) == expected
    assert redact_facts(KEYED, [EMAIL, KEY]) == expected


def test_attack_evidence_is_not_redacted_and_no_facts_means_none() -> None:
    assert redact_facts(KEYED, [attack(0, 4)]) is None
    assert redact_facts(KEYED, []) is None
    assert redact_facts(KEYED, [attack(0, 4), KEY]) == (
        "mail ana@example.org, key [REDACTED:aws_access_key], done"
    )


def _conversation(per_message: tuple[tuple[Finding, ...], ...], mode: Mode) -> ConversationDecision:
    findings = [f for message in per_message for f in message]
    return ConversationDecision(decide(findings, Policy(mode, 0.5)), per_message)


def test_only_a_redacting_decision_gives_contents_and_only_for_messages_with_facts() -> None:
    contents = ["hello", KEYED]
    redacting = _conversation(((), (KEY,)), Mode.BLOCK)
    assert redacting.redacted_contents(contents) == (
        None,
        "mail ana@example.org, key [REDACTED:aws_access_key], done",
    )
    logged = _conversation(((), (KEY,)), Mode.LOG)
    assert logged.redacted_contents(contents) == (None, None)
    blocked = _conversation(((attack(0, 4),), (KEY,)), Mode.BLOCK)
    assert blocked.redacted_contents(contents) == (None, None)
    assert _conversation(((KEY,),), Mode.BLOCK).redacted_text(KEYED) == (
        "mail ana@example.org, key [REDACTED:aws_access_key], done"
    )
