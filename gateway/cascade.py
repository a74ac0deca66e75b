"""The tiers after the fast one, for one text: learned scores, then the judge.

1. The fast tier (rules and secrets) has already run.
2. If its attack score is below the threshold, the learned tiers (`embedding`: similarity
   to known attacks, `classifier`: a model over the embedding) add their findings, in one
   category ("learned"), so the two count as one opinion, not two.
3. If the attack score is then in the policy's ambiguous band [low, high) and `judge` is
   listed, an LLM judge is asked. Its answer replaces the attack-technique evidence it was
   asked about (those findings stay, at confidence 0, marked overruled); credentials and
   PII are facts, not opinions, and are never overruled.

The judge reads the text with the credentials and personal data the fast tier found
replaced by their markers (`judge_reading`): it may be a third party's model, and what the
policy would redact on its way to the upstream model must not reach it either. The learned
tiers, Mithril's own, read the text as written: they were fitted on raw text, and on
VALIDATION reading the markers instead changed one row, a README chunk whose e-mail
address became `[REDACTED:email]`, from clean to flagged (classifier 0.87).

All scores are calibrated probabilities, so one threshold means the same across tiers.
A judge that is not configured or cannot answer is skipped: it is a second opinion, and
its absence never blocks or fails anything.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Collection
from typing import Protocol

from mithril.domain import Finding, Origin
from mithril.gateway import metrics
from mithril.gateway.decision import FACT_CATEGORIES, Policy, redact_facts, score_findings
from mithril.gateway.detectors import Analysis

LEARNED = frozenset({"embedding", "classifier"})
JUDGE = "judge"


class LearnedTiers(Protocol):
    names: frozenset[str]
    """Which of embedding, classifier and judge this deployment can run."""

    async def learned(self, text: str, origin: Origin, which: Collection[str]) -> Analysis: ...

    async def judge(self, text: str, origin: Origin) -> Finding | None:
        """The judge's finding, or None when it is not configured or cannot answer."""
        ...

    async def close(self) -> None: ...


def attack_score(findings: Collection[Finding]) -> float:
    return score_findings(f for f in findings if f.category not in FACT_CATEGORIES)


def judge_reading(text: str, fast: Collection[Finding]) -> str:
    """What the judge reads: `text` with the facts among the fast tier's findings `fast`
    redacted."""
    return redact_facts(text, fast) or text


def overruled(finding: Finding) -> Finding:
    return dataclasses.replace(
        finding, confidence=0.0, message=f"{finding.message} (overruled by the judge)"
    )


async def escalate(
    text: str, origin: Origin, fast: Analysis, policy: Policy, tiers: LearnedTiers | None
) -> Analysis:
    """The fast tier's analysis, completed by whichever later tiers the policy and the
    scores call for."""
    if tiers is None:
        return fast
    findings = list(fast.findings)
    unavailable = list(fast.unavailable)
    learned = policy.detectors & LEARNED & tiers.names
    if learned and attack_score(findings) < policy.threshold:
        started = time.perf_counter()
        analysis = await tiers.learned(text, origin, learned)
        metrics.TIER_DURATION.labels("learned").observe(time.perf_counter() - started)
        findings += analysis.findings
        unavailable += analysis.unavailable
    low, high = policy.judge_band
    judged = JUDGE in policy.detectors and JUDGE in tiers.names
    if judged and low <= attack_score(findings) < high:
        started = time.perf_counter()
        verdict = await tiers.judge(judge_reading(text, fast.findings), origin)
        metrics.TIER_DURATION.labels("judge").observe(time.perf_counter() - started)
        # The judge's findings are named judge.<verdict>: attack, benign or uncertain.
        label = verdict.rule_id.removeprefix("judge.") if verdict else "unavailable"
        metrics.JUDGE_CALLS.labels(label).inc()
        if verdict is not None:
            # The judge reads whether a text is an attack; what it carries stands.
            findings = [f if f.category in FACT_CATEGORIES else overruled(f) for f in findings]
            findings.append(verdict)
    return Analysis(tuple(findings), tuple(unavailable))
