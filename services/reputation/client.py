"""`ReputationClient`: the reputation service over gRPC, for the memory gate and the gateway.

    async with ReputationClient("127.0.0.1:50055", token=token) as reputation:
        trust = float(await reputation.get("Slack"))
        await reputation.record("Slack", Outcome.BAD, "contradiction", decision_id)

Answers are the library's own types (`SourceReputation`, `ReputationChange`, `Page`).
A service that cannot answer (down, or past the deadline) raises `ReputationUnavailable`;
an argument it refuses raises `ReputationArgumentError`, as the library itself would.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from types import TracebackType
from typing import TypeVar

import grpc
from google.rpc import error_details_pb2

from mithril.reputation.v1 import reputation_service_pb2 as pb
from mithril.reputation.v1 import reputation_service_pb2_grpc as pb_grpc
from mithril.runtime.channels import bearer_metadata, open_channel
from mithril.runtime.errors import details_of
from mithril.services.reputation.convert import (
    OUTCOMES_TO_PROTO,
    change_from_proto,
    reputation_from_proto,
)
from mithril.services.reputation.ewma import Outcome
from mithril.services.reputation.model import (
    Page,
    ReputationArgumentError,
    ReputationChange,
    SourceReputation,
    parse_outcome,
)

T = TypeVar("T")

DEFAULT_TIMEOUT_SECONDS = 2.0
_UNAVAILABLE = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


class ReputationUnavailable(Exception):
    """The reputation service could not be reached, or did not answer in time."""


def _argument_error(error: grpc.aio.AioRpcError) -> ReputationArgumentError:
    status = details_of(error)
    for detail in status.details if status is not None else ():
        if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
            bad_request = error_details_pb2.BadRequest()
            detail.Unpack(bad_request)
            for violation in bad_request.field_violations:
                return ReputationArgumentError(violation.field, violation.description)
    return ReputationArgumentError("request", error.details() or "invalid argument")


class ReputationClient:
    """One channel to the service (or a channel you own and pass in); safe to share."""

    def __init__(
        self,
        target: str | grpc.aio.Channel,
        *,
        token: str = "",
        timeout: float | None = DEFAULT_TIMEOUT_SECONDS,
    ) -> None:
        self._owns_channel = isinstance(target, str)
        self.channel = open_channel(target) if isinstance(target, str) else target
        self._stub = pb_grpc.ReputationServiceStub(self.channel)
        self._metadata: Sequence[tuple[str, str]] = bearer_metadata(token)
        self.timeout = timeout

    async def __aenter__(self) -> ReputationClient:
        return self

    async def __aexit__(
        self,
        _type: type[BaseException] | None,
        _error: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Closes the channel if this client opened it."""
        if self._owns_channel:
            await self.channel.close()

    async def _call(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except grpc.aio.AioRpcError as exc:
            if exc.code() in _UNAVAILABLE:
                raise ReputationUnavailable(
                    f"reputation service: {exc.code().name}: {exc.details()}"
                ) from exc
            if exc.code() is grpc.StatusCode.INVALID_ARGUMENT:
                raise _argument_error(exc) from exc
            raise

    async def get(self, source: str) -> SourceReputation:
        """The source's reputation (its prior if never seen); `float(...)` is the score."""
        reply = await self._call(
            self._stub.GetReputation(
                pb.GetReputationRequest(source=source),
                timeout=self.timeout,
                metadata=self._metadata,
            )
        )
        return reputation_from_proto(reply.reputation)

    async def record(
        self, source: str, outcome: Outcome | str, reason: str = "", decision_id: str = ""
    ) -> SourceReputation:
        """Apply one outcome ("good", "bad" or "neutral"); returns the reputation after it."""
        request = pb.RecordOutcomeRequest(
            source=source,
            outcome=OUTCOMES_TO_PROTO[parse_outcome(outcome)],
            reason=reason,
            decision_id=decision_id,
        )
        reply = await self._call(
            self._stub.RecordOutcome(request, timeout=self.timeout, metadata=self._metadata)
        )
        return reputation_from_proto(reply.reputation)

    async def list(self, page_size: int = 0, page_token: str = "") -> Page[SourceReputation]:
        """One page of stored sources, by name."""
        reply = await self._call(
            self._stub.ListReputations(
                pb.ListReputationsRequest(page_size=page_size, page_token=page_token),
                timeout=self.timeout,
                metadata=self._metadata,
            )
        )
        return Page(
            [reputation_from_proto(item) for item in reply.reputations], reply.next_page_token
        )

    async def history(
        self, source: str, page_size: int = 0, page_token: str = ""
    ) -> Page[ReputationChange]:
        """One page of the source's changes, newest first."""
        reply = await self._call(
            self._stub.GetHistory(
                pb.GetHistoryRequest(source=source, page_size=page_size, page_token=page_token),
                timeout=self.timeout,
                metadata=self._metadata,
            )
        )
        return Page([change_from_proto(item) for item in reply.changes], reply.next_page_token)

    async def reset(self, source: str = "") -> int:
        """Put one source ("" for all) back to its prior; returns how many were reset."""
        reply = await self._call(
            self._stub.ResetReputation(
                pb.ResetReputationRequest(source=source),
                timeout=self.timeout,
                metadata=self._metadata,
            )
        )
        return reply.reset_count
