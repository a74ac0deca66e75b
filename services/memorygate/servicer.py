"""MemoryGateService: converts between protobuf and the gate, nothing more.

DependencyUnavailable and MemoryWriteFailed become UNAVAILABLE (retry later; nothing was
half-written), an unknown held claim NOT_FOUND, a claim reviewed already ABORTED, a bad
page token or verdict INVALID_ARGUMENT.
"""

from __future__ import annotations

import base64
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC

import grpc
from opentelemetry import trace

from mithril.memorygate.v1 import memorygate_service_pb2 as pb
from mithril.memorygate.v1 import memorygate_service_pb2_grpc as pb_grpc
from mithril.runtime import attributes, errors
from mithril.runtime.convert import findings_to_proto
from mithril.runtime.errors import ServiceError
from mithril.services.memorygate.decision import MemoryDecision
from mithril.services.memorygate.errors import (
    DependencyUnavailable,
    HeldClaimNotFound,
    MemoryWriteFailed,
    ReviewConflict,
)
from mithril.services.memorygate.gate import MemoryGate
from mithril.services.memorygate.ledger import APPROVE, REJECT, AuditEntry, HeldClaim
from mithril.services.memorygate.trust import Status

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["MemoryGateService"].full_name
DEFAULT_PAGE_SIZE = 50
MAX_PAGE_SIZE = 500

STATUSES = {
    Status.ACCEPT: pb.MEMORY_STATUS_ACCEPT,
    Status.WARN: pb.MEMORY_STATUS_WARN,
    Status.REVIEW: pb.MEMORY_STATUS_REVIEW,
    Status.QUARANTINE: pb.MEMORY_STATUS_QUARANTINE,
    Status.REJECT: pb.MEMORY_STATUS_REJECT,
}
STATUS_NAMES = {value: key for key, value in STATUSES.items()}
VERDICTS = {APPROVE: pb.REVIEW_VERDICT_APPROVE, REJECT: pb.REVIEW_VERDICT_REJECT}
VERDICT_NAMES = {value: key for key, value in VERDICTS.items()}


@contextmanager
def _as_status() -> Iterator[None]:
    try:
        yield
    except DependencyUnavailable as exc:
        raise ServiceError(errors.unavailable(exc.service, str(exc))) from None
    except MemoryWriteFailed as exc:
        raise ServiceError(errors.unavailable("memory", str(exc))) from None
    except HeldClaimNotFound as exc:
        raise ServiceError(errors.not_found("held claim", str(exc.args[0]))) from None
    except ReviewConflict as exc:
        raise ServiceError(
            errors.aborted("ALREADY_REVIEWED", f"held claim {exc.args[0]!r} was reviewed already")
        ) from None


def decision_to_proto(decision: MemoryDecision) -> pb.MemoryDecision:
    s = decision.signals
    return pb.MemoryDecision(
        decision_id=decision.decision_id,
        status=STATUSES[decision.status],
        trust_score=decision.trust_score,
        signals=pb.Signals(
            reputation=s.reputation,
            corroboration=s.corroboration,
            freshness=s.freshness,
            contradiction=s.contradiction,
            danger=s.danger,
        ),
        weights=decision.weights,
        redacted_kinds=decision.redacted_kinds,
        findings=findings_to_proto(decision.findings),
        stored=decision.stored,
        quarantine_id=decision.quarantine_id,
        reasons=list(decision.reasons),
    )


def held_to_proto(held: HeldClaim) -> pb.QuarantinedClaim:
    message = pb.QuarantinedClaim(
        id=held.id,
        claim=held.claim,
        source=held.source,
        decision=decision_to_proto(MemoryDecision.from_provenance(held.provenance)),
        review_verdict=VERDICTS.get(held.review_verdict or "", pb.REVIEW_VERDICT_UNSPECIFIED),
        reviewer=held.reviewer,
    )
    message.create_time.FromDatetime(held.create_time)
    return message


def audit_to_proto(entry: AuditEntry) -> pb.AuditEvent:
    message = pb.AuditEvent(
        id=entry.id,
        event_type=entry.event_type,
        decision=decision_to_proto(MemoryDecision.from_provenance(entry.provenance)),
        source=entry.source,
        reviewer=entry.reviewer,
    )
    message.create_time.FromDatetime(entry.create_time)
    return message


def encode_cursor(cursor: int | None) -> str:
    if cursor is None:
        return ""
    return base64.urlsafe_b64encode(f"seq:{cursor}".encode()).decode()


def decode_cursor(token: str, field: str = "page_token") -> int | None:
    if not token:
        return None
    try:
        text = base64.urlsafe_b64decode(token.encode()).decode()
        prefix, value = text.split(":", 1)
        if prefix != "seq":
            raise ValueError
        return int(value)
    except (ValueError, UnicodeDecodeError):
        raise ServiceError(
            errors.invalid_argument([(field, "not a token this server issued")])
        ) from None


def page_size(requested: int, field: str = "page_size") -> int:
    if requested < 0:
        raise ServiceError(errors.invalid_argument([(field, "must not be negative")]))
    return min(requested or DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE)


class MemoryGateServicer(pb_grpc.MemoryGateServiceServicer):
    def __init__(self, gate: MemoryGate, recall_top_k: int) -> None:
        self.gate = gate
        self.recall_top_k = recall_top_k

    async def Remember(
        self, request: pb.RememberRequest, context: grpc.aio.ServicerContext
    ) -> pb.RememberResponse:
        if not request.claim.strip():
            raise ServiceError(errors.invalid_argument([("claim", "must not be blank")]))
        if not request.source.strip():
            raise ServiceError(errors.invalid_argument([("source", "must not be blank")]))
        if len(request.source) > 200:
            raise ServiceError(errors.invalid_argument([("source", "longer than 200 characters")]))
        if len(request.metadata) > 32:
            raise ServiceError(errors.invalid_argument([("metadata", "more than 32 entries")]))
        span = trace.get_current_span()
        span.set_attribute(attributes.SERVICE, "memory-gate")
        span.set_attribute(attributes.TEXT_LENGTH, len(request.claim))
        observed = (
            request.observe_time.ToDatetime(tzinfo=UTC)
            if request.HasField("observe_time")
            else None
        )
        with _as_status():
            decision = await self.gate.remember(
                request.claim, request.source.strip(), dict(request.metadata), observed
            )
        span.set_attribute(attributes.DECISION_ID, decision.decision_id)
        span.set_attribute(attributes.MEMORY_STATUS, decision.status.value)
        span.set_attribute(attributes.SCORE, decision.trust_score)
        span.set_attribute(attributes.REDACTED_KINDS, decision.redacted_kinds)
        return pb.RememberResponse(decision=decision_to_proto(decision))

    async def Recall(
        self, request: pb.RecallRequest, context: grpc.aio.ServicerContext
    ) -> pb.RecallResponse:
        if not request.query.strip():
            raise ServiceError(errors.invalid_argument([("query", "must not be blank")]))
        if request.top_k < 0:
            raise ServiceError(errors.invalid_argument([("top_k", "must not be negative")]))
        top_k = min(request.top_k or self.recall_top_k, 100)
        with _as_status():
            memories = await self.gate.recall(request.query, top_k)
        return pb.RecallResponse(
            memories=[
                pb.Memory(
                    text=m.text, source=m.source, score=m.score, low_confidence=m.low_confidence
                )
                for m in memories
            ]
        )

    async def ListQuarantined(
        self, request: pb.ListQuarantinedRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListQuarantinedResponse:
        status = None
        if request.status != pb.MEMORY_STATUS_UNSPECIFIED:
            found = STATUS_NAMES.get(request.status)
            if found is None or found.stored:
                raise ServiceError(
                    errors.invalid_argument(
                        [("status", "held claims are REVIEW, QUARANTINE or REJECT")]
                    )
                )
            status = found.value
        page = await self.gate.list_held(
            status=status,
            include_reviewed=request.include_reviewed,
            limit=page_size(request.page_size),
            before=decode_cursor(request.page_token),
        )
        return pb.ListQuarantinedResponse(
            claims=[held_to_proto(held) for held in page.items],
            next_page_token=encode_cursor(page.next_cursor),
        )

    async def GetQuarantined(
        self, request: pb.GetQuarantinedRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetQuarantinedResponse:
        with _as_status():
            held = await self.gate.get_held(request.id)
        return pb.GetQuarantinedResponse(claim=held_to_proto(held))

    async def ReviewQuarantined(
        self, request: pb.ReviewQuarantinedRequest, context: grpc.aio.ServicerContext
    ) -> pb.ReviewQuarantinedResponse:
        verdict = VERDICT_NAMES.get(request.verdict)
        if verdict is None:
            raise ServiceError(errors.invalid_argument([("verdict", "APPROVE or REJECT")]))
        if not request.reviewer.strip():
            raise ServiceError(errors.invalid_argument([("reviewer", "must not be blank")]))
        with _as_status():
            held = await self.gate.review(
                request.id, verdict, request.reviewer.strip(), request.note
            )
        return pb.ReviewQuarantinedResponse(claim=held_to_proto(held))

    async def ListAuditEvents(
        self, request: pb.ListAuditEventsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListAuditEventsResponse:
        page = await self.gate.audit(
            source=request.source or None,
            limit=page_size(request.page_size),
            before=decode_cursor(request.page_token),
        )
        return pb.ListAuditEventsResponse(
            events=[audit_to_proto(entry) for entry in page.items],
            next_page_token=encode_cursor(page.next_cursor),
        )

    async def Improve(
        self, request: pb.ImproveRequest, context: grpc.aio.ServicerContext
    ) -> pb.ImproveResponse:
        with _as_status():
            summary = await self.gate.improve()
        return pb.ImproveResponse(summary=summary)
