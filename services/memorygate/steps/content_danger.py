"""Step 4, content danger: the scanner's prompt-injection rules (the claim will be read back
into prompts later, so it is scanned as retrieved content), the gate's own rules for
memory-poisoning directives, and the judge when it answers. The most alarming of them
decides: a second opinion may add danger, never remove what a rule found."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from mithril.common.v1 import common_pb2
from mithril.domain import Finding
from mithril.runtime.convert import finding_from_proto
from mithril.scanner.v1 import scanner_service_pb2 as pb
from mithril.scanner.v1 import scanner_service_pb2_grpc as pb_grpc
from mithril.services.memorygate.danger import score_danger
from mithril.services.memorygate.steps.second_opinion import SecondOpinion


@dataclass(frozen=True, slots=True)
class DangerCheck:
    danger: float
    scanner_score: float
    rules_score: float
    judge_score: float | None
    findings: tuple[Finding, ...]
    rule_ids: tuple[str, ...]
    reasons: tuple[str, ...]


class ContentDanger:
    def __init__(
        self,
        channel: grpc.aio.Channel,
        metadata: Sequence[tuple[str, str]],
        timeout: float,
        judge: SecondOpinion,
        internal_domains: Sequence[str] = (),
    ) -> None:
        self._internal_domains = tuple(internal_domains)
        self._stub = pb_grpc.ScannerServiceStub(channel)
        self._metadata = metadata
        self._timeout = timeout
        self._judge = judge

    async def scan(self, claim: str, *, raw: str = "", ask_judge: bool = True) -> DangerCheck:
        """`claim` is the redacted claim, the only one that leaves this process; the
        gate's own rules, which run here, also read `raw` (a redacted IBAN still means
        "the payment details changed")."""
        response = await self._stub.Scan(
            pb.ScanRequest(text=claim, origin=common_pb2.CONTENT_ORIGIN_RETRIEVAL),
            metadata=self._metadata,
            timeout=self._timeout,
        )
        findings = tuple(finding_from_proto(f) for f in response.findings)
        rules = score_danger(raw or claim, internal_domains=self._internal_domains)
        opinion = await self._judge.danger(claim) if ask_judge else None
        scores = [float(response.score), rules.score]
        if opinion is not None:
            scores.append(opinion.score)
        reasons = list(rules.reasons)
        if findings:
            reasons.append(f"scanner: {', '.join(sorted({f.rule_id for f in findings}))}")
        if opinion is not None:
            reasons.append(f"judge danger {opinion.score:.2f}")
        return DangerCheck(
            danger=min(1.0, max(scores)),
            scanner_score=float(response.score),
            rules_score=rules.score,
            judge_score=None if opinion is None else opinion.score,
            findings=findings,
            rule_ids=tuple(sorted({f.rule_id for f in findings} | set(rules.rule_ids))),
            reasons=tuple(reasons),
        )
