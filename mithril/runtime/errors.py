"""gRPC errors as google.rpc statuses with details, never a bare string."""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

DOMAIN = "mithril.dev"


class ServiceError(Exception):
    """An error a servicer raises to answer with a specific google.rpc status."""

    def __init__(self, status: grpc.Status) -> None:
        super().__init__(status.details)
        self.status = status


def _status(code: int, message: str, details: Iterable[object]) -> grpc.Status:
    packed = []
    for detail in details:
        any_detail = any_pb2.Any()
        any_detail.Pack(detail)  # type: ignore[arg-type]
        packed.append(any_detail)
    return rpc_status.to_status(status_pb2.Status(code=code, message=message, details=packed))


def invalid_argument(violations: list[tuple[str, str]], message: str = "") -> grpc.Status:
    """INVALID_ARGUMENT with a BadRequest listing each (field, description)."""
    bad_request = error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=field, description=description)
            for field, description in violations
        ]
    )
    text = message or "; ".join(f"{field}: {description}" for field, description in violations)
    return _status(code_pb2.INVALID_ARGUMENT, text, [bad_request])


def resource_exhausted(subject: str, description: str) -> grpc.Status:
    """RESOURCE_EXHAUSTED with a QuotaFailure naming the limit that was exceeded."""
    quota = error_details_pb2.QuotaFailure(
        violations=[
            error_details_pb2.QuotaFailure.Violation(subject=subject, description=description)
        ]
    )
    return _status(code_pb2.RESOURCE_EXHAUSTED, f"{subject}: {description}", [quota])


def unauthenticated(reason: str) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason="UNAUTHENTICATED", domain=DOMAIN)
    return _status(code_pb2.UNAUTHENTICATED, reason, [info])


def unavailable(service: str, message: str) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(
        reason="SERVICE_UNAVAILABLE", domain=DOMAIN, metadata={"service": service}
    )
    return _status(code_pb2.UNAVAILABLE, message, [info])


def failed_precondition(reason: str, message: str) -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN)
    return _status(code_pb2.FAILED_PRECONDITION, message, [info])


def not_found(resource_type: str, resource_name: str) -> grpc.Status:
    """NOT_FOUND with a ResourceInfo naming what was looked for."""
    info = error_details_pb2.ResourceInfo(
        resource_type=resource_type,
        resource_name=resource_name,
        description=f"no {resource_type} {resource_name!r}",
    )
    return _status(code_pb2.NOT_FOUND, f"no {resource_type} {resource_name!r}", [info])


def aborted(reason: str, message: str) -> grpc.Status:
    """ABORTED: a concurrency conflict (someone else got there first)."""
    info = error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN)
    return _status(code_pb2.ABORTED, message, [info])


def internal(message: str = "internal error; see the server log") -> grpc.Status:
    return _status(code_pb2.INTERNAL, message, [])


def details_of(error: grpc.aio.AioRpcError | grpc.RpcError) -> status_pb2.Status | None:
    """The google.rpc status carried by a client-side error, if any."""
    return rpc_status.from_call(error)  # type: ignore[arg-type]
