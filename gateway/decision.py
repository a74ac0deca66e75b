"""The policy's verdict: how findings become a score, and a score an action."""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from mithril.common.v1 import common_pb2
from mithril.domain import Finding, combine_confidences
from mithril.runtime.convert import finding_to_dict, findings_to_proto
from mithril.runtime.ids import time_ordered_id
from mithril.services.secrets.redact import apply_redactions


class Mode(enum.StrEnum):
    BLOCK = "block"
    """Flagged content is blocked; a service that is down fails closed."""
    LOG = "log"
    """Flagged content is recorded and allowed; a service that is down fails open."""
    MONITOR = "monitor"
    """Decide and record, never block anything (input or output); fail open."""

    @property
    def enforces(self) -> bool:
        return self is Mode.BLOCK

    def to_proto(self) -> int:
        return _MODE_TO_PROTO[self]

    @classmethod
    def from_proto(cls, value: int) -> Mode | None:
        return _PROTO_TO_MODE.get(value)


_MODE_TO_PROTO: dict[Mode, int] = {
    Mode.BLOCK: common_pb2.POLICY_MODE_BLOCK,
    Mode.LOG: common_pb2.POLICY_MODE_LOG,
    Mode.MONITOR: common_pb2.POLICY_MODE_MONITOR,
}
_PROTO_TO_MODE: dict[int, Mode] = {value: mode for mode, value in _MODE_TO_PROTO.items()}


class Action(enum.StrEnum):
    ALLOW = "allow"
    BLOCK = "block"
    REDACT = "redact"
    """Passed with its credentials and personal data replaced by `[REDACTED:<kind>]`."""

    def to_proto(self) -> int:
        return {
            Action.ALLOW: common_pb2.ACTION_ALLOW,
            Action.BLOCK: common_pb2.ACTION_BLOCK,
            Action.REDACT: common_pb2.ACTION_REDACT,
        }[self]


class FactsAction(enum.StrEnum):
    """What an enforcing policy does with credentials and personal data that reach the
    threshold when the attack evidence does not (attack evidence is always blocked)."""

    BLOCK = "block"
    REDACT = "redact"
    """Pass the content on with each of them replaced by `[REDACTED:<kind>]`."""
    LOG = "log"
    """Record them and pass the content on untouched."""


DEFAULT_DETECTORS = frozenset({"scanner", "secrets"})


@dataclass(frozen=True, slots=True)
class Policy:
    mode: Mode
    threshold: float
    detectors: frozenset[str] = DEFAULT_DETECTORS
    judge_band: tuple[float, float] = (0.25, 0.75)
    """Attack scores in [low, high) are ambiguous: the judge is asked, if listed."""
    facts: FactsAction = FactsAction.REDACT
    """What happens to content flagged for its credentials and personal data alone."""


@dataclass(frozen=True, slots=True)
class Decision:
    decision_id: str
    action: Action
    score: float
    flagged: bool
    mode: Mode
    threshold: float
    findings: tuple[Finding, ...]
    unavailable_services: tuple[str, ...] = ()
    latency_ms: float = 0.0

    @property
    def rule_ids(self) -> list[str]:
        return sorted({finding.rule_id for finding in self.findings})

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.decision_id,
            "action": self.action.value,
            "score": round(self.score, 6),
            "flagged": self.flagged,
            "mode": self.mode.value,
            "threshold": self.threshold,
            "findings": [finding_to_dict(finding) for finding in self.findings],
            "unavailable_services": list(self.unavailable_services),
            "latency_ms": round(self.latency_ms, 3),
        }

    def to_proto(self) -> common_pb2.Decision:
        return common_pb2.Decision(
            decision_id=self.decision_id,
            action=self.action.to_proto(),  # type: ignore[arg-type]
            score=self.score,
            findings=findings_to_proto(self.findings),
            flagged=self.flagged,
            mode=self.mode.to_proto(),  # type: ignore[arg-type]
            threshold=self.threshold,
            unavailable_services=self.unavailable_services,
            latency_ms=self.latency_ms,
        )


FACT_CATEGORIES = frozenset({"credential", "pii"})
"""What a text carries rather than what it tries: evidence that it must not pass in clear,
not that it is an attack."""


def redact_facts(text: str, findings: Iterable[Finding]) -> str | None:
    """`text` with each credential and piece of personal data among `findings` replaced
    by `[REDACTED:<kind>]`; None when there is none. The findings are the ones a decision
    was made on (the secrets detectors': non-overlapping, with spans), so redacting costs
    no second detection."""
    facts = sorted((f for f in findings if f.category in FACT_CATEGORIES), key=_start)
    return apply_redactions(text, facts) if facts else None


def _start(finding: Finding) -> int:
    return finding.start or 0


def score_findings(findings: Iterable[Finding]) -> float:
    """The stronger of two scores, the attack evidence's and the facts' (credentials, PII),
    each a noisy-OR across categories of the strongest finding in each.

    Distinct categories (a jailbreak persona and a role-hijack token, say) are independent
    evidence and reinforce each other; repeats within one category (ten email addresses)
    are not, so they count once at their strongest. Facts and attack evidence answer
    different questions and do not add up: an e-mail address in a retrieved email says
    nothing of an instruction hidden in it (added to a classifier's 0.45, it flagged clean
    emails).
    """
    return max(split_scores(findings))


def split_scores(findings: Iterable[Finding]) -> tuple[float, float]:
    """(attack score, facts score), each scored as `score_findings` describes."""
    attack: dict[str, float] = {}
    facts: dict[str, float] = {}
    for finding in findings:
        strongest = facts if finding.category in FACT_CATEGORIES else attack
        strongest[finding.category] = max(strongest.get(finding.category, 0.0), finding.confidence)
    return combine_confidences(tuple(attack.values())), combine_confidences(tuple(facts.values()))


def order_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Strongest first; ties in text order, so output is stable across runs and paths."""
    return tuple(
        sorted(
            findings,
            key=lambda f: (
                -int(f.severity),
                -f.confidence,
                f.start if f.start is not None else -1,
                f.rule_id,
            ),
        )
    )


def decide(
    findings: Iterable[Finding],
    policy: Policy,
    unavailable: tuple[str, ...] = (),
    latency_ms: float = 0.0,
) -> Decision:
    ordered = order_findings(findings)
    attack, facts = split_scores(ordered)
    score = max(attack, facts)
    flagged = score >= policy.threshold and bool(ordered)
    attack_flagged = attack >= policy.threshold and any(
        f.category not in FACT_CATEGORIES for f in ordered
    )
    return Decision(
        decision_id=time_ordered_id(),
        action=_action(flagged, attack_flagged, policy),
        score=score,
        flagged=flagged,
        mode=policy.mode,
        threshold=policy.threshold,
        findings=ordered,
        unavailable_services=unavailable,
        latency_ms=latency_ms,
    )


def _action(flagged: bool, attack_flagged: bool, policy: Policy) -> Action:
    if not flagged or not policy.mode.enforces:
        return Action.ALLOW
    if attack_flagged or policy.facts is FactsAction.BLOCK:
        return Action.BLOCK
    return Action.REDACT if policy.facts is FactsAction.REDACT else Action.ALLOW
