"""SecretsService: converts between protobuf and the secrets library, nothing more."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

import grpc
from opentelemetry import trace

from mithril.runtime import attributes
from mithril.runtime.convert import findings_to_proto
from mithril.runtime.errors import ServiceError, invalid_argument
from mithril.secrets.v1 import secrets_service_pb2 as pb
from mithril.secrets.v1 import secrets_service_pb2_grpc as pb_grpc
from mithril.services.secrets.detector import SecretsDetector

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["SecretsService"].full_name


class SecretsServicer(pb_grpc.SecretsServiceServicer):
    def __init__(self, detector: SecretsDetector) -> None:
        self.detector = detector
        self._kind_names = frozenset(kind.name for kind in detector.kinds)

    def _kinds(self, requested: Sequence[str], index: int | None = None) -> frozenset[str] | None:
        unknown = set(requested) - self._kind_names
        if unknown:
            known = ", ".join(sorted(self._kind_names))
            field = "kinds" if index is None else f"requests[{index}].kinds"
            raise ServiceError(
                invalid_argument([(field, f"unknown kinds {sorted(unknown)}; known: {known}")])
            )
        return frozenset(requested) or None

    @staticmethod
    def _annotate(text_length: int, kinds: Sequence[str]) -> None:
        span = trace.get_current_span()
        span.set_attribute(attributes.SERVICE, "secrets")
        span.set_attribute(attributes.TEXT_LENGTH, text_length)
        span.set_attribute(attributes.REDACTED_KINDS, sorted(set(kinds)))

    async def Detect(
        self, request: pb.DetectRequest, context: grpc.aio.ServicerContext
    ) -> pb.DetectResponse:
        findings = self.detector.detect(request.text, self._kinds(request.kinds))
        self._annotate(len(request.text), [f.kind for f in findings])
        return pb.DetectResponse(
            findings=findings_to_proto(findings),
            prefilters_fingerprint=self.detector.prefilters_fingerprint,
        )

    async def DetectBatch(
        self, request: pb.DetectBatchRequest, context: grpc.aio.ServicerContext
    ) -> pb.DetectBatchResponse:
        trace.get_current_span().set_attribute(attributes.BATCH_SIZE, len(request.requests))
        responses = []
        for index, item in enumerate(request.requests):
            findings = self.detector.detect(item.text, self._kinds(item.kinds, index))
            responses.append(pb.DetectResponse(findings=findings_to_proto(findings)))
        return pb.DetectBatchResponse(
            responses=responses, prefilters_fingerprint=self.detector.prefilters_fingerprint
        )

    async def Redact(
        self, request: pb.RedactRequest, context: grpc.aio.ServicerContext
    ) -> pb.RedactResponse:
        redaction = self.detector.redact(request.text, self._kinds(request.kinds))
        self._annotate(len(request.text), [f.kind for f in redaction.findings])
        return pb.RedactResponse(
            text=redaction.text, findings=findings_to_proto(redaction.findings)
        )

    async def RedactStream(
        self,
        request_iterator: AsyncIterator[pb.RedactStreamRequest],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[pb.RedactStreamResponse]:
        redactor = None
        received = 0
        kinds: list[str] = []
        try:
            async for request in request_iterator:
                if redactor is None:
                    redactor = self.detector.stream(self._kinds(request.kinds))
                received += len(request.chunk)
                output = redactor.feed(request.chunk)
                kinds += [f.kind for f in output.findings]
                yield pb.RedactStreamResponse(
                    text=output.text, findings=findings_to_proto(output.findings)
                )
            if redactor is not None:
                output = redactor.flush()
                kinds += [f.kind for f in output.findings]
                yield pb.RedactStreamResponse(
                    text=output.text, findings=findings_to_proto(output.findings)
                )
        except ServiceError as exc:
            await context.abort_with_status(exc.status)
        self._annotate(received, kinds)

    async def ListKinds(
        self, request: pb.ListKindsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListKindsResponse:
        return pb.ListKindsResponse(
            kinds=[
                pb.Kind(
                    name=kind.name,
                    category=kind.category,
                    severity=int(kind.severity),  # type: ignore[arg-type]
                    description=kind.description,
                )
                for kind in self.detector.kinds
            ]
        )

    async def GetPrefilters(
        self, request: pb.GetPrefiltersRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetPrefiltersResponse:
        return pb.GetPrefiltersResponse(
            prefilters=self.detector.prefilters,
            fingerprint=self.detector.prefilters_fingerprint,
        )
