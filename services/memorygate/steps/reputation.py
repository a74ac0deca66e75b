"""Step 2, the source's reputation, and afterwards the outcome it earned.

The outcome follows the decision: accepted or warned is good, review is neutral,
quarantine or reject is bad; a contradiction of verified memory or a planted credential
is always bad, whatever the score."""

from __future__ import annotations

import enum
from typing import Protocol

from mithril.services.memorygate.errors import DependencyUnavailable
from mithril.services.memorygate.trust import Status
from mithril.services.reputation.client import ReputationClient, ReputationUnavailable


class Outcome(enum.StrEnum):
    GOOD = "good"
    BAD = "bad"
    NEUTRAL = "neutral"


class ReputationBook(Protocol):
    async def score(self, source: str) -> float: ...

    async def record(
        self, source: str, outcome: Outcome, reason: str, decision_id: str
    ) -> float: ...


def outcome_of(
    status: Status, *, planted_credential: bool, contradicted: bool
) -> tuple[Outcome, str]:
    if planted_credential:
        return Outcome.BAD, "credential"
    if contradicted:
        return Outcome.BAD, "contradiction"
    if status.stored:
        return Outcome.GOOD, status.value
    if status is Status.REVIEW:
        return Outcome.NEUTRAL, status.value
    return Outcome.BAD, status.value


class ServiceReputation:
    """The reputation service as the gate's ReputationBook."""

    def __init__(self, client: ReputationClient) -> None:
        self._client = client

    async def score(self, source: str) -> float:
        try:
            return float(await self._client.get(source))
        except ReputationUnavailable as error:
            raise DependencyUnavailable("reputation", str(error)) from error

    async def record(self, source: str, outcome: Outcome, reason: str, decision_id: str) -> float:
        return float(await self._client.record(source, outcome.value, reason, decision_id))
