"""The firewall policy: run the detectors, aggregate, decide, record.

One `Firewall` serves the HTTP routes, the FirewallService and the CLI, so every surface
gets the same decision for the same text.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from opentelemetry import trace

from mithril.domain import Finding, Origin
from mithril.gateway import metrics
from mithril.gateway.cascade import LearnedTiers, escalate
from mithril.gateway.decision import Action, Decision, Mode, Policy, decide, redact_facts
from mithril.gateway.detectors import Analysis, Detectors, Redaction, ServiceUnavailableError
from mithril.runtime import attributes, telemetry
from mithril.runtime.aio import gather_all
from mithril.runtime.telemetry import text_fingerprint, tracer

_log = logging.getLogger(__name__)
_tracer = tracer(__name__)


@dataclass(frozen=True, slots=True)
class MessageInput:
    origin: Origin
    content: str


@dataclass(frozen=True, slots=True)
class ConversationDecision:
    decision: Decision
    per_message: tuple[tuple[Finding, ...], ...]

    def redacted_contents(self, contents: Sequence[str]) -> tuple[str | None, ...]:
        """When the decision is to redact, each message's content (given in request
        order) to send on, None for a message with nothing to redact; all None for any
        other decision."""
        if self.decision.action is not Action.REDACT:
            return (None,) * len(contents)
        return tuple(
            redact_facts(content, findings)
            for content, findings in zip(contents, self.per_message, strict=True)
        )

    def redacted_text(self, text: str) -> str | None:
        """`redacted_contents` of a decision on the one text `text`."""
        return self.redacted_contents([text])[0]

    def scan_answer(self, text: str) -> dict[str, object]:
        """The decision on the one text `text` as `/v1/scan` and `mithril scan` give it,
        with `redacted_text` when it redacts: one shape for every surface."""
        answer = self.decision.to_dict()
        redacted = self.redacted_text(text)
        if redacted is not None:
            answer["redacted_text"] = redacted
        return answer


class Firewall:
    def __init__(
        self,
        detectors: Detectors,
        policy: Policy,
        tiers: LearnedTiers | None = None,
        output_policy: Policy | None = None,
    ) -> None:
        self.detectors = detectors
        self.policy = policy
        """The policy of a text travelling in, when a call names none."""
        self.output_policy = output_policy or policy
        """The policy of a text travelling out (a model's answer), when a call names none."""
        self.tiers = tiers
        """The learned tiers and the judge, when this deployment has them (`cascade.py`)."""

    def _policy(self, direction: str, mode: Mode | None, policy: Policy | None) -> Policy:
        base = policy or (self.output_policy if direction == "output" else self.policy)
        return base if mode is None else dataclasses.replace(base, mode=mode)

    async def scan(
        self,
        text: str,
        origin: Origin = Origin.USER,
        direction: str = "input",
        mode: Mode | None = None,
        policy: Policy | None = None,
    ) -> Decision:
        conversation = await self.scan_messages(
            [MessageInput(origin, text)], direction, mode, policy
        )
        return conversation.decision

    async def scan_messages(
        self,
        messages: Sequence[MessageInput],
        direction: str = "input",
        mode: Mode | None = None,
        policy: Policy | None = None,
    ) -> ConversationDecision:
        """One decision over every message; `policy` defaults to the firewall's own for
        `direction`."""
        policy = self._policy(direction, mode, policy)
        started = time.perf_counter()
        with telemetry.span(_tracer, "mithril.firewall.decide") as span:
            if span.is_recording():
                _describe(span, messages, direction, policy)
            analyses = await gather_all(
                self._analyse(m.content, m.origin, policy) for m in messages
            )
            unavailable = tuple(sorted({name for a in analyses for name in a.unavailable}))
            for service in unavailable:
                metrics.SERVICE_UNAVAILABLE.labels(service, policy.mode.value).inc()
                _log.warning(
                    "service unavailable; failing %s",
                    "closed" if policy.mode.enforces else "open",
                    extra={"unavailable_service": service, "mode": policy.mode.value},
                )
            if unavailable and policy.mode.enforces:
                span.set_attribute(attributes.UNAVAILABLE_SERVICES, list(unavailable))
                raise ServiceUnavailableError(unavailable[0], "failing closed in block mode")
            latency_ms = (time.perf_counter() - started) * 1000
            decision = decide(
                [f for a in analyses for f in a.findings], policy, unavailable, latency_ms
            )
            _annotate(span, decision, direction)
            if decision.flagged:
                # Inside the span, so the line carries its trace id; never the text.
                _log.info(
                    "flagged",
                    extra={
                        "decision_id": decision.decision_id,
                        "action": decision.action.value,
                        "score": round(decision.score, 4),
                        "rule_ids": decision.rule_ids,
                        "direction": direction,
                    },
                )
        metrics.SCAN_DURATION.observe(latency_ms / 1000)
        return ConversationDecision(decision, tuple(a.findings for a in analyses))

    async def _analyse(self, text: str, origin: Origin, policy: Policy) -> Analysis:
        fast = await self.detectors.analyse(text, origin, policy.detectors)
        return await escalate(text, origin, fast, policy, self.tiers)

    async def close(self) -> None:
        await self.detectors.close()
        if self.tiers is not None:
            await self.tiers.close()

    async def redact(self, text: str, kinds: Collection[str] | None = None) -> Redaction:
        with telemetry.span(_tracer, "mithril.firewall.redact") as span:
            redaction = await self.detectors.redact(text, kinds)
            if span.is_recording():
                span.set_attribute(attributes.SERVICE, "gateway")
                span.set_attribute(attributes.TEXT_LENGTH, len(text))
                span.set_attribute(
                    attributes.REDACTED_KINDS, sorted({f.kind for f in redaction.findings})
                )
            return redaction


def _describe(
    span: trace.Span, messages: Sequence[MessageInput], direction: str, policy: Policy
) -> None:
    span.set_attribute(attributes.SERVICE, "gateway")
    span.set_attribute(attributes.DIRECTION, direction)
    span.set_attribute(attributes.MODE, policy.mode.value)
    span.set_attribute(attributes.TEXT_LENGTH, sum(len(m.content) for m in messages))
    if len(messages) == 1:
        span.set_attribute(attributes.TEXT_SHA256, text_fingerprint(messages[0].content))


def _annotate(span: trace.Span, decision: Decision, direction: str) -> None:
    if span.is_recording():
        span.set_attribute(attributes.DECISION_ID, decision.decision_id)
        span.set_attribute(attributes.ACTION, decision.action.value)
        span.set_attribute(attributes.SCORE, decision.score)
        span.set_attribute(attributes.FLAGGED, decision.flagged)
        span.set_attribute(attributes.THRESHOLD, decision.threshold)
        span.set_attribute(attributes.RULE_IDS, decision.rule_ids)
        span.set_attribute(attributes.FINDING_COUNT, len(decision.findings))
        if decision.unavailable_services:
            span.set_attribute(attributes.UNAVAILABLE_SERVICES, list(decision.unavailable_services))
    metrics.decisions(decision.action.value, direction).inc()
    if decision.action is Action.BLOCK:
        seen: set[str] = set()
        for finding in decision.findings:
            if finding.rule_id not in seen:
                seen.add(finding.rule_id)
                metrics.BLOCKED.labels(
                    finding.severity.name.lower(), finding.rule_id, finding.detector
                ).inc()
    else:
        metrics.ALLOWED.inc()
