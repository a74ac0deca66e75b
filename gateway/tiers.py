"""The learned tiers and the judge, in-process or over gRPC (see `cascade.py`).

Both implementations answer the same two calls, so the cascade does not depend on where
the models run: `mithril scan` runs them in-process, the gateway calls the services.
A judge that cannot answer (no LLM configured, unreachable, a useless reply) is skipped,
never failed closed: it is a second opinion on the ambiguous band.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence

import grpc

from mithril.domain import Finding, Origin, Severity
from mithril.gateway.config import GatewaySettings
from mithril.gateway.detectors import Analysis, ServiceUnavailableError, open_channel
from mithril.judge.v1 import judge_service_pb2, judge_service_pb2_grpc

_log = logging.getLogger(__name__)

JUDGE = "judge"
_VERDICT_NAMES = {
    judge_service_pb2.VERDICT_ATTACK: "attack",
    judge_service_pb2.VERDICT_BENIGN: "benign",
    judge_service_pb2.VERDICT_UNCERTAIN: "uncertain",
}


def judge_finding(verdict: str, score: float, model: str) -> Finding:
    """The judge's opinion as a finding; never its rationale, which may quote the text."""
    return Finding(
        rule_id=f"judge.{verdict}",
        detector=JUDGE,
        category=JUDGE,
        severity=Severity.HIGH if verdict == "attack" else Severity.LOW,
        confidence=round(min(max(score, 0.0), 1.0), 6),
        message=f"the judge ({model or 'LLM'}) considers it {verdict}",
    )


class RemoteJudge:
    """JudgeService over gRPC."""

    def __init__(self, target: str, token: str, timeout: float) -> None:
        self._channel = open_channel(target)
        self._stub = judge_service_pb2_grpc.JudgeServiceStub(self._channel)
        self._metadata: Sequence[tuple[str, str]] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self._timeout = timeout

    async def judge(self, text: str, origin: Origin) -> Finding | None:
        try:
            reply = await self._stub.Judge(
                judge_service_pb2.JudgeRequest(text=text, origin=int(origin)),  # type: ignore[arg-type]
                timeout=self._timeout,
                metadata=self._metadata,
            )
        except grpc.aio.AioRpcError as error:
            _log.info("judge skipped", extra={"grpc_status": error.code().name})
            return None
        verdict = _VERDICT_NAMES.get(reply.verdict, "uncertain")
        return judge_finding(verdict, reply.score, reply.model)

    async def close(self) -> None:
        await self._channel.close()


class LocalJudge:
    """The judge library in this process (one instance: it owns the cache and the pool)."""

    def __init__(self) -> None:
        from mithril.services.judge import Judge, JudgeSettings

        self._judge = Judge.from_settings(JudgeSettings())

    @property
    def available(self) -> bool:
        return bool(self._judge.available)

    async def judge(self, text: str, origin: Origin) -> Finding | None:
        from mithril.services.judge.errors import JudgeError

        try:
            result = await self._judge.judge(text, origin)
        except JudgeError as error:
            _log.info("judge skipped", extra={"reason": error.reason})
            return None
        return judge_finding(str(result.verdict), result.score, result.model)

    async def close(self) -> None:
        await self._judge.aclose()


class Tiers:
    """`cascade.LearnedTiers` from a learned-tier backend and a judge, either optional."""

    def __init__(self, learned: object | None, judge: RemoteJudge | LocalJudge | None) -> None:
        self._learned = learned
        self._judge = judge
        names = set()
        if learned is not None:
            names |= {"embedding", "classifier"}
        if judge is not None:
            names.add(JUDGE)
        self.names = frozenset(names)

    async def learned(self, text: str, origin: Origin, which: Collection[str]) -> Analysis:
        if self._learned is None:
            return Analysis(())
        try:
            return await self._learned.learned(text, origin, which)  # type: ignore[attr-defined,no-any-return]
        except ServiceUnavailableError as error:
            return Analysis((), (error.service,))

    async def judge(self, text: str, origin: Origin) -> Finding | None:
        return None if self._judge is None else await self._judge.judge(text, origin)

    async def close(self) -> None:
        for part in (self._learned, self._judge):
            if part is not None:
                await part.close()  # type: ignore[attr-defined]


def remote_tiers(settings: GatewaySettings) -> Tiers:
    """The learned tiers and the judge of a gateway: their services, at their addresses."""
    judge = RemoteJudge(settings.judge_addr, settings.service_token, settings.judge_timeout_seconds)
    return Tiers(None, judge)
