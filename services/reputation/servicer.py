"""ReputationService: converts between protobuf and `Reputation`, nothing more.

A ReputationArgumentError (blank or overlong source, OUTCOME_UNSPECIFIED, negative page
size, a page token this service did not issue) becomes INVALID_ARGUMENT with a BadRequest
naming the field.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import grpc
from opentelemetry import trace

from mithril.reputation.v1 import reputation_service_pb2 as pb
from mithril.reputation.v1 import reputation_service_pb2_grpc as pb_grpc
from mithril.runtime import attributes
from mithril.runtime.errors import ServiceError, invalid_argument
from mithril.services.reputation.convert import (
    change_to_proto,
    outcome_from_proto,
    reputation_to_proto,
)
from mithril.services.reputation.model import ReputationArgumentError
from mithril.services.reputation.reputation import Reputation

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["ReputationService"].full_name


@contextmanager
def _as_status() -> Iterator[None]:
    try:
        yield
    except ReputationArgumentError as exc:
        raise ServiceError(invalid_argument([(exc.field, exc.description)])) from None


def _annotate() -> trace.Span:
    # Source names are not put on spans: they may be free text chosen by callers.
    span = trace.get_current_span()
    span.set_attribute(attributes.SERVICE, "reputation")
    return span


class ReputationServicer(pb_grpc.ReputationServiceServicer):
    def __init__(self, reputation: Reputation) -> None:
        self.reputation = reputation

    async def GetReputation(
        self, request: pb.GetReputationRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetReputationResponse:
        span = _annotate()
        with _as_status():
            found = await self.reputation.get(request.source)
        span.set_attribute(attributes.SCORE, found.score)
        return pb.GetReputationResponse(reputation=reputation_to_proto(found))

    async def RecordOutcome(
        self, request: pb.RecordOutcomeRequest, context: grpc.aio.ServicerContext
    ) -> pb.RecordOutcomeResponse:
        span = _annotate()
        if request.decision_id:
            span.set_attribute(attributes.DECISION_ID, request.decision_id)
        with _as_status():
            outcome = outcome_from_proto(request.outcome)
            updated = await self.reputation.record(
                request.source, outcome, request.reason, request.decision_id
            )
        span.set_attribute(attributes.SCORE, updated.score)
        return pb.RecordOutcomeResponse(reputation=reputation_to_proto(updated))

    async def ListReputations(
        self, request: pb.ListReputationsRequest, context: grpc.aio.ServicerContext
    ) -> pb.ListReputationsResponse:
        span = _annotate()
        with _as_status():
            page = await self.reputation.list(request.page_size, request.page_token)
        span.set_attribute(attributes.BATCH_SIZE, len(page.items))
        return pb.ListReputationsResponse(
            reputations=[reputation_to_proto(item) for item in page.items],
            next_page_token=page.next_page_token,
        )

    async def GetHistory(
        self, request: pb.GetHistoryRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetHistoryResponse:
        span = _annotate()
        with _as_status():
            page = await self.reputation.history(
                request.source, request.page_size, request.page_token
            )
        span.set_attribute(attributes.BATCH_SIZE, len(page.items))
        return pb.GetHistoryResponse(
            changes=[change_to_proto(item) for item in page.items],
            next_page_token=page.next_page_token,
        )

    async def ResetReputation(
        self, request: pb.ResetReputationRequest, context: grpc.aio.ServicerContext
    ) -> pb.ResetReputationResponse:
        span = _annotate()
        with _as_status():
            count = await self.reputation.reset(request.source)
        span.set_attribute(attributes.BATCH_SIZE, count)
        return pb.ResetReputationResponse(reset_count=count)
