"""FirewallService: the gateway's policy over gRPC, converting protobuf to and from it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import grpc

from mithril.common.v1 import common_pb2
from mithril.firewall.v1 import firewall_service_pb2 as pb
from mithril.firewall.v1 import firewall_service_pb2_grpc as pb_grpc
from mithril.gateway.decision import Mode
from mithril.gateway.detectors import ServiceUnavailableError
from mithril.gateway.firewall import Firewall, MessageInput
from mithril.runtime import errors
from mithril.runtime.aio import gather_all
from mithril.runtime.convert import findings_to_proto, origin_from_proto

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["FirewallService"].full_name


@contextmanager
def _unavailable_as_status() -> Iterator[None]:
    """A service that is down (block mode fails closed) answers UNAVAILABLE with details."""
    try:
        yield
    except ServiceUnavailableError as exc:
        raise errors.ServiceError(errors.unavailable(exc.service, str(exc))) from exc


def _direction(value: int) -> str:
    return "output" if value == common_pb2.DIRECTION_OUTPUT else "input"


class FirewallServicer(pb_grpc.FirewallServiceServicer):
    def __init__(self, firewall: Firewall) -> None:
        self.firewall = firewall

    async def Scan(
        self, request: pb.ScanRequest, context: grpc.aio.ServicerContext
    ) -> pb.ScanResponse:
        with _unavailable_as_status():
            result = await self.firewall.scan_messages(
                [MessageInput(origin_from_proto(request.origin), request.text)],
                _direction(request.direction),
                Mode.from_proto(request.mode),
            )
        return pb.ScanResponse(
            decision=result.decision.to_proto(),
            redacted_text=result.redacted_text(request.text),
        )

    async def ScanBatch(
        self, request: pb.ScanBatchRequest, context: grpc.aio.ServicerContext
    ) -> pb.ScanBatchResponse:
        with _unavailable_as_status():
            results = await gather_all(
                self.firewall.scan_messages(
                    [MessageInput(origin_from_proto(item.origin), item.text)],
                    _direction(item.direction),
                    Mode.from_proto(item.mode),
                )
                for item in request.requests
            )
        redacted = (
            result.redacted_text(item.text)
            for result, item in zip(results, request.requests, strict=True)
        )
        return pb.ScanBatchResponse(
            decisions=[result.decision.to_proto() for result in results],
            redacted_texts={index: text for index, text in enumerate(redacted) if text is not None},
        )

    async def ScanMessages(
        self, request: pb.ScanMessagesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ScanMessagesResponse:
        messages = [MessageInput(origin_from_proto(m.origin), m.content) for m in request.messages]
        with _unavailable_as_status():
            result = await self.firewall.scan_messages(messages, mode=Mode.from_proto(request.mode))
        redacted = result.redacted_contents([m.content for m in messages])
        return pb.ScanMessagesResponse(
            decision=result.decision.to_proto(),
            messages=[
                pb.MessageDecision(
                    index=index,
                    findings=findings_to_proto(findings),
                    redacted_content=content,
                )
                for index, (findings, content) in enumerate(
                    zip(result.per_message, redacted, strict=True)
                )
            ],
        )

    async def Redact(
        self, request: pb.RedactRequest, context: grpc.aio.ServicerContext
    ) -> pb.RedactResponse:
        with _unavailable_as_status():
            redaction = await self.firewall.redact(request.text)
        return pb.RedactResponse(
            text=redaction.text, findings=findings_to_proto(redaction.findings)
        )
