"""JudgeService: converts between protobuf and the judge library, nothing more.

JudgeUnavailable becomes UNAVAILABLE (ErrorInfo reason SERVICE_UNAVAILABLE, metadata
service=judge; the message says why); JudgeFailed becomes FAILED_PRECONDITION (ErrorInfo reason
JUDGE_LLM_REJECTED or JUDGE_LLM_BAD_REPLY). See errors.py for when each happens.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import grpc
from opentelemetry import trace

from mithril.judge.v1 import judge_service_pb2 as pb
from mithril.judge.v1 import judge_service_pb2_grpc as pb_grpc
from mithril.runtime import attributes
from mithril.runtime.convert import origin_from_proto
from mithril.runtime.errors import ServiceError, failed_precondition, unavailable
from mithril.runtime.telemetry import text_fingerprint
from mithril.services.judge.errors import JudgeFailed, JudgeUnavailable
from mithril.services.judge.judge import Judge
from mithril.services.judge.verdict import Verdict

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["JudgeService"].full_name

VERDICTS = {
    Verdict.ATTACK: pb.VERDICT_ATTACK,
    Verdict.BENIGN: pb.VERDICT_BENIGN,
    Verdict.UNCERTAIN: pb.VERDICT_UNCERTAIN,
}


@contextmanager
def _as_status() -> Iterator[None]:
    try:
        yield
    except JudgeUnavailable as exc:
        raise ServiceError(unavailable("judge", exc.message)) from None
    except JudgeFailed as exc:
        raise ServiceError(failed_precondition(exc.reason, exc.message)) from None


def _annotate(text: str) -> None:
    span = trace.get_current_span()
    span.set_attribute(attributes.SERVICE, "judge")
    span.set_attribute(attributes.TEXT_LENGTH, len(text))
    span.set_attribute(attributes.TEXT_SHA256, text_fingerprint(text))


class JudgeServicer(pb_grpc.JudgeServiceServicer):
    def __init__(self, judge: Judge) -> None:
        self.judge = judge

    async def Judge(
        self, request: pb.JudgeRequest, context: grpc.aio.ServicerContext
    ) -> pb.JudgeResponse:
        _annotate(request.text)
        with _as_status():
            result = await self.judge.judge(request.text, origin_from_proto(request.origin))
        return pb.JudgeResponse(
            verdict=VERDICTS[result.verdict],
            score=result.score,
            rationale=result.rationale,
            model=result.model,
            cached=result.cached,
        )

    async def ScoreContradiction(
        self, request: pb.ScoreContradictionRequest, context: grpc.aio.ServicerContext
    ) -> pb.ScoreContradictionResponse:
        _annotate(request.claim)
        trace.get_current_span().set_attribute(attributes.BATCH_SIZE, len(request.contexts))
        with _as_status():
            result = await self.judge.contradiction(request.claim, list(request.contexts))
        return pb.ScoreContradictionResponse(score=result.score, rationale=result.rationale)

    async def ScoreDanger(
        self, request: pb.ScoreDangerRequest, context: grpc.aio.ServicerContext
    ) -> pb.ScoreDangerResponse:
        _annotate(request.claim)
        with _as_status():
            result = await self.judge.danger(request.claim)
        return pb.ScoreDangerResponse(score=result.score, rationale=result.rationale)
