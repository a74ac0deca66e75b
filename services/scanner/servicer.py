"""ScannerService: converts between protobuf and the scanner library, nothing more."""

from __future__ import annotations

import grpc
from opentelemetry import trace

from mithril.runtime import attributes
from mithril.runtime.convert import findings_to_proto, origin_from_proto
from mithril.runtime.errors import ServiceError, invalid_argument
from mithril.runtime.telemetry import text_fingerprint
from mithril.scanner.v1 import scanner_service_pb2 as pb
from mithril.scanner.v1 import scanner_service_pb2_grpc as pb_grpc
from mithril.services.scanner.scanner import Scanner

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ScannerService"].full_name


class ScannerServicer(pb_grpc.ScannerServiceServicer):
    def __init__(self, scanner: Scanner) -> None:
        self.scanner = scanner

    def _families(self, request: pb.ScanRequest, field: str) -> frozenset[str] | None:
        unknown = set(request.families) - self.scanner.families
        if unknown:
            known = ", ".join(sorted(self.scanner.families))
            raise ServiceError(
                invalid_argument([(field, f"unknown families {sorted(unknown)}; known: {known}")])
            )
        return frozenset(request.families) or None

    def _scan(self, request: pb.ScanRequest, field: str = "families") -> pb.ScanResponse:
        families = self._families(request, field)
        result = self.scanner.scan(request.text, origin_from_proto(request.origin), families)
        span = trace.get_current_span()
        span.set_attribute(attributes.SERVICE, "scanner")
        span.set_attribute(attributes.TEXT_LENGTH, len(request.text))
        span.set_attribute(attributes.TEXT_SHA256, text_fingerprint(request.text))
        span.set_attribute(attributes.SCORE, result.score)
        span.set_attribute(attributes.RULE_IDS, [f.rule_id for f in result.findings])
        span.set_attribute(attributes.VIEWS, list(result.views))
        return pb.ScanResponse(
            findings=findings_to_proto(result.findings), score=result.score, views=result.views
        )

    async def Scan(
        self, request: pb.ScanRequest, context: grpc.aio.ServicerContext
    ) -> pb.ScanResponse:
        return self._scan(request)

    async def ScanBatch(
        self, request: pb.ScanBatchRequest, context: grpc.aio.ServicerContext
    ) -> pb.ScanBatchResponse:
        trace.get_current_span().set_attribute(attributes.BATCH_SIZE, len(request.requests))
        return pb.ScanBatchResponse(
            responses=[
                self._scan(item, f"requests[{index}].families")
                for index, item in enumerate(request.requests)
            ]
        )

    async def ListRules(
        self, request: pb.ListRulesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListRulesResponse:
        rules = [
            pb.Rule(
                id=rule.id,
                family=rule.family,
                severity=int(rule.severity),  # type: ignore[arg-type]
                confidence=rule.confidence,
                message=rule.message,
            )
            for rule in self.scanner.rules
            if not request.family or rule.family == request.family
        ]
        return pb.ListRulesResponse(rules=rules)
