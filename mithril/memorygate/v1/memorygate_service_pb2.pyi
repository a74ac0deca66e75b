import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from mithril.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class MemoryStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MEMORY_STATUS_UNSPECIFIED: _ClassVar[MemoryStatus]
    MEMORY_STATUS_ACCEPT: _ClassVar[MemoryStatus]
    MEMORY_STATUS_WARN: _ClassVar[MemoryStatus]
    MEMORY_STATUS_REVIEW: _ClassVar[MemoryStatus]
    MEMORY_STATUS_QUARANTINE: _ClassVar[MemoryStatus]
    MEMORY_STATUS_REJECT: _ClassVar[MemoryStatus]

class ReviewVerdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REVIEW_VERDICT_UNSPECIFIED: _ClassVar[ReviewVerdict]
    REVIEW_VERDICT_APPROVE: _ClassVar[ReviewVerdict]
    REVIEW_VERDICT_REJECT: _ClassVar[ReviewVerdict]
MEMORY_STATUS_UNSPECIFIED: MemoryStatus
MEMORY_STATUS_ACCEPT: MemoryStatus
MEMORY_STATUS_WARN: MemoryStatus
MEMORY_STATUS_REVIEW: MemoryStatus
MEMORY_STATUS_QUARANTINE: MemoryStatus
MEMORY_STATUS_REJECT: MemoryStatus
REVIEW_VERDICT_UNSPECIFIED: ReviewVerdict
REVIEW_VERDICT_APPROVE: ReviewVerdict
REVIEW_VERDICT_REJECT: ReviewVerdict

class Signals(_message.Message):
    __slots__ = ("reputation", "corroboration", "freshness", "contradiction", "danger")
    REPUTATION_FIELD_NUMBER: _ClassVar[int]
    CORROBORATION_FIELD_NUMBER: _ClassVar[int]
    FRESHNESS_FIELD_NUMBER: _ClassVar[int]
    CONTRADICTION_FIELD_NUMBER: _ClassVar[int]
    DANGER_FIELD_NUMBER: _ClassVar[int]
    reputation: float
    corroboration: float
    freshness: float
    contradiction: float
    danger: float
    def __init__(self, reputation: _Optional[float] = ..., corroboration: _Optional[float] = ..., freshness: _Optional[float] = ..., contradiction: _Optional[float] = ..., danger: _Optional[float] = ...) -> None: ...

class MemoryDecision(_message.Message):
    __slots__ = ("decision_id", "status", "trust_score", "signals", "weights", "redacted_kinds", "findings", "stored", "quarantine_id", "reasons")
    class WeightsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    TRUST_SCORE_FIELD_NUMBER: _ClassVar[int]
    SIGNALS_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    REDACTED_KINDS_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    STORED_FIELD_NUMBER: _ClassVar[int]
    QUARANTINE_ID_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    status: MemoryStatus
    trust_score: float
    signals: Signals
    weights: _containers.ScalarMap[str, float]
    redacted_kinds: _containers.RepeatedScalarFieldContainer[str]
    findings: _containers.RepeatedCompositeFieldContainer[_common_pb2.Finding]
    stored: bool
    quarantine_id: str
    reasons: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, decision_id: _Optional[str] = ..., status: _Optional[_Union[MemoryStatus, str]] = ..., trust_score: _Optional[float] = ..., signals: _Optional[_Union[Signals, _Mapping]] = ..., weights: _Optional[_Mapping[str, float]] = ..., redacted_kinds: _Optional[_Iterable[str]] = ..., findings: _Optional[_Iterable[_Union[_common_pb2.Finding, _Mapping]]] = ..., stored: _Optional[bool] = ..., quarantine_id: _Optional[str] = ..., reasons: _Optional[_Iterable[str]] = ...) -> None: ...

class RememberRequest(_message.Message):
    __slots__ = ("claim", "source", "metadata", "observe_time")
    class MetadataEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    METADATA_FIELD_NUMBER: _ClassVar[int]
    OBSERVE_TIME_FIELD_NUMBER: _ClassVar[int]
    claim: str
    source: str
    metadata: _containers.ScalarMap[str, str]
    observe_time: _timestamp_pb2.Timestamp
    def __init__(self, claim: _Optional[str] = ..., source: _Optional[str] = ..., metadata: _Optional[_Mapping[str, str]] = ..., observe_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class RememberResponse(_message.Message):
    __slots__ = ("decision",)
    DECISION_FIELD_NUMBER: _ClassVar[int]
    decision: MemoryDecision
    def __init__(self, decision: _Optional[_Union[MemoryDecision, _Mapping]] = ...) -> None: ...

class RecallRequest(_message.Message):
    __slots__ = ("query", "top_k")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    query: str
    top_k: int
    def __init__(self, query: _Optional[str] = ..., top_k: _Optional[int] = ...) -> None: ...

class Memory(_message.Message):
    __slots__ = ("text", "source", "score", "low_confidence")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    LOW_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    text: str
    source: str
    score: float
    low_confidence: bool
    def __init__(self, text: _Optional[str] = ..., source: _Optional[str] = ..., score: _Optional[float] = ..., low_confidence: _Optional[bool] = ...) -> None: ...

class RecallResponse(_message.Message):
    __slots__ = ("memories",)
    MEMORIES_FIELD_NUMBER: _ClassVar[int]
    memories: _containers.RepeatedCompositeFieldContainer[Memory]
    def __init__(self, memories: _Optional[_Iterable[_Union[Memory, _Mapping]]] = ...) -> None: ...

class QuarantinedClaim(_message.Message):
    __slots__ = ("id", "claim", "source", "decision", "create_time", "review_verdict", "reviewer")
    ID_FIELD_NUMBER: _ClassVar[int]
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    REVIEW_VERDICT_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_FIELD_NUMBER: _ClassVar[int]
    id: str
    claim: str
    source: str
    decision: MemoryDecision
    create_time: _timestamp_pb2.Timestamp
    review_verdict: ReviewVerdict
    reviewer: str
    def __init__(self, id: _Optional[str] = ..., claim: _Optional[str] = ..., source: _Optional[str] = ..., decision: _Optional[_Union[MemoryDecision, _Mapping]] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., review_verdict: _Optional[_Union[ReviewVerdict, str]] = ..., reviewer: _Optional[str] = ...) -> None: ...

class ListQuarantinedRequest(_message.Message):
    __slots__ = ("status", "include_reviewed", "page_size", "page_token")
    STATUS_FIELD_NUMBER: _ClassVar[int]
    INCLUDE_REVIEWED_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    status: MemoryStatus
    include_reviewed: bool
    page_size: int
    page_token: str
    def __init__(self, status: _Optional[_Union[MemoryStatus, str]] = ..., include_reviewed: _Optional[bool] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListQuarantinedResponse(_message.Message):
    __slots__ = ("claims", "next_page_token")
    CLAIMS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    claims: _containers.RepeatedCompositeFieldContainer[QuarantinedClaim]
    next_page_token: str
    def __init__(self, claims: _Optional[_Iterable[_Union[QuarantinedClaim, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetQuarantinedRequest(_message.Message):
    __slots__ = ("id",)
    ID_FIELD_NUMBER: _ClassVar[int]
    id: str
    def __init__(self, id: _Optional[str] = ...) -> None: ...

class GetQuarantinedResponse(_message.Message):
    __slots__ = ("claim",)
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    claim: QuarantinedClaim
    def __init__(self, claim: _Optional[_Union[QuarantinedClaim, _Mapping]] = ...) -> None: ...

class ReviewQuarantinedRequest(_message.Message):
    __slots__ = ("id", "verdict", "reviewer", "note")
    ID_FIELD_NUMBER: _ClassVar[int]
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_FIELD_NUMBER: _ClassVar[int]
    NOTE_FIELD_NUMBER: _ClassVar[int]
    id: str
    verdict: ReviewVerdict
    reviewer: str
    note: str
    def __init__(self, id: _Optional[str] = ..., verdict: _Optional[_Union[ReviewVerdict, str]] = ..., reviewer: _Optional[str] = ..., note: _Optional[str] = ...) -> None: ...

class ReviewQuarantinedResponse(_message.Message):
    __slots__ = ("claim",)
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    claim: QuarantinedClaim
    def __init__(self, claim: _Optional[_Union[QuarantinedClaim, _Mapping]] = ...) -> None: ...

class AuditEvent(_message.Message):
    __slots__ = ("id", "event_type", "decision", "source", "reviewer", "create_time")
    ID_FIELD_NUMBER: _ClassVar[int]
    EVENT_TYPE_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    REVIEWER_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    id: str
    event_type: str
    decision: MemoryDecision
    source: str
    reviewer: str
    create_time: _timestamp_pb2.Timestamp
    def __init__(self, id: _Optional[str] = ..., event_type: _Optional[str] = ..., decision: _Optional[_Union[MemoryDecision, _Mapping]] = ..., source: _Optional[str] = ..., reviewer: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class ListAuditEventsRequest(_message.Message):
    __slots__ = ("source", "page_size", "page_token")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    source: str
    page_size: int
    page_token: str
    def __init__(self, source: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListAuditEventsResponse(_message.Message):
    __slots__ = ("events", "next_page_token")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[AuditEvent]
    next_page_token: str
    def __init__(self, events: _Optional[_Iterable[_Union[AuditEvent, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ImproveRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ImproveResponse(_message.Message):
    __slots__ = ("summary",)
    SUMMARY_FIELD_NUMBER: _ClassVar[int]
    summary: str
    def __init__(self, summary: _Optional[str] = ...) -> None: ...
