"""Between the reputation protobufs and the domain types (used by servicer and client)."""

from __future__ import annotations

from datetime import UTC, datetime

from google.protobuf import timestamp_pb2

from mithril.reputation.v1 import reputation_service_pb2 as pb
from mithril.services.reputation.ewma import Outcome
from mithril.services.reputation.model import (
    ReputationArgumentError,
    ReputationChange,
    SourceReputation,
)

OUTCOMES_TO_PROTO = {
    Outcome.GOOD: pb.OUTCOME_GOOD,
    Outcome.BAD: pb.OUTCOME_BAD,
    Outcome.NEUTRAL: pb.OUTCOME_NEUTRAL,
}
OUTCOMES_FROM_PROTO = {number: outcome for outcome, number in OUTCOMES_TO_PROTO.items()}


def outcome_from_proto(value: int) -> Outcome:
    """OUTCOME_UNSPECIFIED, or a number this build does not know, is an argument error."""
    try:
        return OUTCOMES_FROM_PROTO[value]  # type: ignore[index]
    except KeyError:
        raise ReputationArgumentError(
            "outcome", "must be OUTCOME_GOOD, OUTCOME_BAD or OUTCOME_NEUTRAL"
        ) from None


def outcome_to_proto(value: Outcome | None) -> pb.Outcome:
    return pb.OUTCOME_UNSPECIFIED if value is None else OUTCOMES_TO_PROTO[value]


def _timestamp(value: datetime | None) -> timestamp_pb2.Timestamp | None:
    if value is None:
        return None
    stamp = timestamp_pb2.Timestamp()
    stamp.FromDatetime(value)
    return stamp


def _datetime(stamp: timestamp_pb2.Timestamp) -> datetime:
    return stamp.ToDatetime(tzinfo=UTC)


def reputation_to_proto(value: SourceReputation) -> pb.SourceReputation:
    return pb.SourceReputation(
        source=value.source,
        score=value.score,
        prior=value.prior,
        update_time=_timestamp(value.update_time),
        good_count=value.good_count,
        bad_count=value.bad_count,
    )


def reputation_from_proto(message: pb.SourceReputation) -> SourceReputation:
    return SourceReputation(
        source=message.source,
        score=message.score,
        prior=message.prior,
        update_time=_datetime(message.update_time) if message.HasField("update_time") else None,
        good_count=message.good_count,
        bad_count=message.bad_count,
    )


def change_to_proto(value: ReputationChange) -> pb.ReputationChange:
    return pb.ReputationChange(
        source=value.source,
        old_score=value.old_score,
        new_score=value.new_score,
        outcome=outcome_to_proto(value.outcome),
        reason=value.reason,
        decision_id=value.decision_id,
        create_time=_timestamp(value.create_time),
    )


def change_from_proto(message: pb.ReputationChange) -> ReputationChange:
    return ReputationChange(
        source=message.source,
        old_score=message.old_score,
        new_score=message.new_score,
        outcome=OUTCOMES_FROM_PROTO.get(message.outcome),
        reason=message.reason,
        decision_id=message.decision_id,
        create_time=_datetime(message.create_time),
    )
