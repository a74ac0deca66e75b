"""The memory gate and the reputation service behind `/v1/memory/*`: the gRPC calls, their
answers as JSON, and their errors in the OpenAI envelope.

gRPC statuses become HTTP errors the way Google's HTTP mapping does, with the detail the
service attached: INVALID_ARGUMENT 400 (`param` is the offending field, named as the REST
body names it), FAILED_PRECONDITION 400, NOT_FOUND 404, ABORTED 409 (a held claim reviewed
already), RESOURCE_EXHAUSTED 413, UNAVAILABLE and DEADLINE_EXCEEDED 503 (the service, or
one it needs, is down; nothing was written), UNAUTHENTICATED and PERMISSION_DENIED 502 (the
gateway's service token is wrong: the operator's problem, not the caller's), anything else
502.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from typing import Any, TypeVar

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import error_details_pb2

from mithril.common.v1 import common_pb2
from mithril.gateway.config import GatewaySettings
from mithril.gateway.detectors import open_channel
from mithril.gateway.errors import ApiError
from mithril.memorygate.v1 import memorygate_service_pb2 as mg_pb
from mithril.memorygate.v1 import memorygate_service_pb2_grpc as mg_grpc
from mithril.reputation.v1 import reputation_service_pb2 as rep_pb
from mithril.reputation.v1 import reputation_service_pb2_grpc as rep_grpc
from mithril.runtime.channels import bearer_metadata
from mithril.runtime.errors import details_of

T = TypeVar("T")

MEMORY_GATE = "memory_gate"
REPUTATION = "reputation"
_LABELS = {MEMORY_GATE: "memory gate", REPUTATION: "reputation service"}

HELD_STATUSES = ("review", "quarantine", "reject")
"""The statuses a held claim can have (accept and warn are stored, never held)."""
VERDICTS = ("approve", "reject")

_STATUS_PREFIX = "MEMORY_STATUS_"
_VERDICT_PREFIX = "REVIEW_VERDICT_"
_OUTCOME_PREFIX = "OUTCOME_"

# gRPC field names that the REST bodies spell differently.
_REST_FIELDS = {"observe_time": "observed_at"}


# -- gRPC -> JSON --------------------------------------------------------------------------


def _enum_name(value: str, prefix: str) -> str:
    return value.removeprefix(prefix).lower()


def status_name(value: int) -> str:
    return _enum_name(mg_pb.MemoryStatus.Name(value), _STATUS_PREFIX)  # type: ignore[arg-type]


def status_value(name: str) -> int:
    return int(mg_pb.MemoryStatus.Value(_STATUS_PREFIX + name.upper()))


def verdict_value(name: str) -> int:
    return int(mg_pb.ReviewVerdict.Value(_VERDICT_PREFIX + name.upper()))


def iso_time(stamp: Timestamp, present: bool = True) -> str | None:
    """ISO 8601 in UTC with milliseconds and a Z, like the rest of the admin API."""
    if not present:
        return None
    moment = stamp.ToDatetime(tzinfo=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def finding_json(finding: common_pb2.Finding) -> dict[str, Any]:
    severity = common_pb2.Severity.Name(finding.severity).removeprefix("SEVERITY_").lower()
    return {
        "rule_id": finding.rule_id,
        "detector": finding.detector,
        "category": finding.category,
        "severity": severity,
        "confidence": round(finding.confidence, 6),
        "message": finding.message,
        "kind": finding.kind,
    }


def decision_json(decision: mg_pb.MemoryDecision) -> dict[str, Any]:
    signals = decision.signals
    return {
        "decision_id": decision.decision_id,
        "status": status_name(decision.status),
        "trust_score": decision.trust_score,
        "signals": {
            "reputation": signals.reputation,
            "corroboration": signals.corroboration,
            "freshness": signals.freshness,
            "contradiction": signals.contradiction,
            "danger": signals.danger,
        },
        "weights": dict(sorted(decision.weights.items())),
        "redacted_kinds": list(decision.redacted_kinds),
        "findings": [finding_json(f) for f in decision.findings],
        "stored": decision.stored,
        "quarantine_id": decision.quarantine_id,
        "reasons": list(decision.reasons),
    }


def memory_json(memory: mg_pb.Memory) -> dict[str, Any]:
    return {
        "text": memory.text,
        "source": memory.source,
        "score": memory.score,
        "low_confidence": memory.low_confidence,
    }


def held_json(claim: mg_pb.QuarantinedClaim) -> dict[str, Any]:
    verdict = (
        None
        if claim.review_verdict == mg_pb.REVIEW_VERDICT_UNSPECIFIED
        else _enum_name(mg_pb.ReviewVerdict.Name(claim.review_verdict), _VERDICT_PREFIX)
    )
    return {
        "id": claim.id,
        "claim": claim.claim,
        "source": claim.source,
        "status": status_name(claim.decision.status),
        "decision": decision_json(claim.decision),
        "create_time": iso_time(claim.create_time, claim.HasField("create_time")),
        "review_verdict": verdict,
        "reviewer": claim.reviewer,
    }


def audit_json(event: mg_pb.AuditEvent) -> dict[str, Any]:
    return {
        "id": event.id,
        "event_type": event.event_type,
        "source": event.source,
        "reviewer": event.reviewer,
        "create_time": iso_time(event.create_time, event.HasField("create_time")),
        "decision": decision_json(event.decision),
    }


def reputation_json(reputation: rep_pb.SourceReputation) -> dict[str, Any]:
    return {
        "source": reputation.source,
        "score": reputation.score,
        "prior": reputation.prior,
        "update_time": iso_time(reputation.update_time, reputation.HasField("update_time")),
        "good_count": reputation.good_count,
        "bad_count": reputation.bad_count,
    }


def change_json(change: rep_pb.ReputationChange) -> dict[str, Any]:
    return {
        "source": change.source,
        "old_score": change.old_score,
        "new_score": change.new_score,
        "outcome": _enum_name(rep_pb.Outcome.Name(change.outcome), _OUTCOME_PREFIX),
        "reason": change.reason,
        "decision_id": change.decision_id,
        "create_time": iso_time(change.create_time, change.HasField("create_time")),
    }


def page_json(items: list[dict[str, Any]], next_page_token: str) -> dict[str, Any]:
    return {"data": items, "next_page_token": next_page_token}


def timestamp(moment: datetime) -> Timestamp:
    stamp = Timestamp()
    stamp.FromDatetime(moment.astimezone(UTC))
    return stamp


# -- gRPC errors -> HTTP -------------------------------------------------------------------


def _details(error: grpc.aio.AioRpcError) -> list[Any]:
    try:
        status = details_of(error)
    except ValueError:  # a status whose code and message disagree with its details
        return []
    if status is None:
        return []
    found: list[Any] = []
    for packed in status.details:
        for kind in (
            error_details_pb2.BadRequest,
            error_details_pb2.QuotaFailure,
            error_details_pb2.ErrorInfo,
            error_details_pb2.ResourceInfo,
        ):
            if packed.Is(kind.DESCRIPTOR):
                detail = kind()
                packed.Unpack(detail)
                found.append(detail)
    return found


def _rest_field(field: str) -> str:
    head, dot, rest = field.partition(".")
    return _REST_FIELDS.get(head, head) + dot + rest


def api_error(service: str, error: grpc.aio.AioRpcError) -> ApiError:
    """The HTTP error for a failed call to `service` (MEMORY_GATE or REPUTATION)."""
    code = error.code()
    message = error.details() or code.name.lower()
    label = _LABELS[service]
    details = _details(error)
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        param = None
        for detail in details:
            if isinstance(detail, error_details_pb2.BadRequest) and detail.field_violations:
                first = detail.field_violations[0]
                param = _rest_field(first.field)
                message = f"{param}: {first.description}"
                if len(detail.field_violations) > 1:
                    message += f" (and {len(detail.field_violations) - 1} more problem(s))"
                break
        return ApiError(400, message, code="invalid_value", param=param)
    if code is grpc.StatusCode.FAILED_PRECONDITION:
        reason = next((d.reason for d in details if isinstance(d, error_details_pb2.ErrorInfo)), "")
        return ApiError(400, message, code=reason.lower() or "failed_precondition")
    if code is grpc.StatusCode.NOT_FOUND:
        return ApiError(404, message, type_="not_found_error", code="not_found")
    if code is grpc.StatusCode.ABORTED:
        reason = next((d.reason for d in details if isinstance(d, error_details_pb2.ErrorInfo)), "")
        return ApiError(409, message, type_="conflict_error", code=reason.lower() or "conflict")
    if code is grpc.StatusCode.RESOURCE_EXHAUSTED:
        param = None
        for detail in details:
            if isinstance(detail, error_details_pb2.QuotaFailure) and detail.violations:
                param = _rest_field(detail.violations[0].subject)
                break
        return ApiError(413, message, code="text_too_long", param=param)
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        waited = (
            " (no answer before the deadline)" if code is grpc.StatusCode.DEADLINE_EXCEEDED else ""
        )
        return ApiError(
            503,
            f"the {label} is unavailable{waited}: {message}; nothing was changed, retry later",
            type_="mithril_unavailable",
            code=f"{service}_unavailable",
        )
    if code in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED):
        return ApiError(
            502,
            f"the {label} refused the gateway's service token ({message}); check"
            " MITHRIL_GATEWAY_SERVICE_TOKEN",
            type_="server_error",
            code="service_auth_failed",
        )
    return ApiError(
        502,
        f"the {label} failed: {code.name}: {message}",
        type_="server_error",
        code=f"{service}_error",
    )


# -- the clients ---------------------------------------------------------------------------


class MemoryServices:
    """One channel to the memory gate and one to the reputation service, shared by every
    request. Channels connect lazily: a service that is down costs a 503, not a start-up
    failure."""

    def __init__(
        self,
        memory_gate_addr: str,
        reputation_addr: str,
        token: str,
        *,
        timeout: float,
        memory_timeout: float,
        improve_timeout: float,
    ) -> None:
        self._channels = [open_channel(memory_gate_addr), open_channel(reputation_addr)]
        self.gate = mg_grpc.MemoryGateServiceStub(self._channels[0])
        self.reputation = rep_grpc.ReputationServiceStub(self._channels[1])
        self._metadata: Sequence[tuple[str, str]] = bearer_metadata(token)
        self.timeout = timeout
        self.memory_timeout = memory_timeout
        self.improve_timeout = improve_timeout

    @classmethod
    def from_settings(cls, settings: GatewaySettings) -> MemoryServices:
        return cls(
            settings.memory_gate_addr,
            settings.reputation_addr,
            settings.service_token,
            timeout=settings.service_timeout_seconds,
            memory_timeout=settings.memory_timeout_seconds,
            improve_timeout=settings.memory_improve_timeout_seconds,
        )

    async def _call(
        self,
        service: str,
        method: Callable[..., Awaitable[T]],
        request: Any,
        deadline: float,
    ) -> T:
        try:
            return await method(request, timeout=deadline, metadata=self._metadata)
        except grpc.aio.AioRpcError as error:
            raise api_error(service, error) from None

    # -- memory gate

    async def remember(self, request: mg_pb.RememberRequest) -> mg_pb.RememberResponse:
        return await self._call(MEMORY_GATE, self.gate.Remember, request, self.memory_timeout)

    async def recall(self, request: mg_pb.RecallRequest) -> mg_pb.RecallResponse:
        return await self._call(MEMORY_GATE, self.gate.Recall, request, self.memory_timeout)

    async def list_held(
        self, request: mg_pb.ListQuarantinedRequest
    ) -> mg_pb.ListQuarantinedResponse:
        return await self._call(
            MEMORY_GATE, self.gate.ListQuarantined, request, self.memory_timeout
        )

    async def get_held(self, held_id: str) -> mg_pb.GetQuarantinedResponse:
        return await self._call(
            MEMORY_GATE,
            self.gate.GetQuarantined,
            mg_pb.GetQuarantinedRequest(id=held_id),
            self.memory_timeout,
        )

    async def review(
        self, request: mg_pb.ReviewQuarantinedRequest
    ) -> mg_pb.ReviewQuarantinedResponse:
        return await self._call(
            MEMORY_GATE, self.gate.ReviewQuarantined, request, self.memory_timeout
        )

    async def audit(self, request: mg_pb.ListAuditEventsRequest) -> mg_pb.ListAuditEventsResponse:
        return await self._call(
            MEMORY_GATE, self.gate.ListAuditEvents, request, self.memory_timeout
        )

    async def improve(self) -> mg_pb.ImproveResponse:
        return await self._call(
            MEMORY_GATE, self.gate.Improve, mg_pb.ImproveRequest(), self.improve_timeout
        )

    # -- reputation

    async def list_reputations(
        self, request: rep_pb.ListReputationsRequest
    ) -> rep_pb.ListReputationsResponse:
        return await self._call(REPUTATION, self.reputation.ListReputations, request, self.timeout)

    async def get_reputation(self, source: str) -> rep_pb.GetReputationResponse:
        return await self._call(
            REPUTATION,
            self.reputation.GetReputation,
            rep_pb.GetReputationRequest(source=source),
            self.timeout,
        )

    async def history(self, request: rep_pb.GetHistoryRequest) -> rep_pb.GetHistoryResponse:
        return await self._call(REPUTATION, self.reputation.GetHistory, request, self.timeout)

    async def reset(self, source: str) -> rep_pb.ResetReputationResponse:
        return await self._call(
            REPUTATION,
            self.reputation.ResetReputation,
            rep_pb.ResetReputationRequest(source=source),
            self.timeout,
        )

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()
