"""The judge, when there is one: contradiction and danger scored by an LLM. It is optional
by design, so every way it can fail to answer (no LLM configured, unreachable, a bad
reply, too slow) is one answer here: None, and the offline scorers decide alone."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from mithril.judge.v1 import judge_service_pb2 as pb
from mithril.judge.v1 import judge_service_pb2_grpc as pb_grpc

_log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Opinion:
    score: float
    rationale: str


class SecondOpinion:
    def __init__(
        self,
        channel: grpc.aio.Channel | None,
        metadata: Sequence[tuple[str, str]],
        timeout: float,
    ) -> None:
        self._stub = pb_grpc.JudgeServiceStub(channel) if channel is not None else None
        self._metadata = metadata
        self._timeout = timeout

    async def contradiction(self, claim: str, contexts: Sequence[str]) -> Opinion | None:
        if self._stub is None or not contexts:
            return None
        request = pb.ScoreContradictionRequest(claim=claim, contexts=list(contexts))
        return await self._ask(
            "ScoreContradiction",
            self._stub.ScoreContradiction(request, metadata=self._metadata, timeout=self._timeout),
        )

    async def danger(self, claim: str) -> Opinion | None:
        if self._stub is None:
            return None
        request = pb.ScoreDangerRequest(claim=claim)
        return await self._ask(
            "ScoreDanger",
            self._stub.ScoreDanger(request, metadata=self._metadata, timeout=self._timeout),
        )

    @staticmethod
    async def _ask(method: str, call) -> Opinion | None:  # type: ignore[no-untyped-def]
        try:
            response = await call
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                _log.warning("judge %s failed: %s", method, error.code().name)
            return None
        return Opinion(min(1.0, max(0.0, float(response.score))), response.rationale)
