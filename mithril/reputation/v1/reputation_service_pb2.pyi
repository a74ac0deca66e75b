import datetime

from google.protobuf import timestamp_pb2 as _timestamp_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Outcome(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    OUTCOME_UNSPECIFIED: _ClassVar[Outcome]
    OUTCOME_GOOD: _ClassVar[Outcome]
    OUTCOME_BAD: _ClassVar[Outcome]
    OUTCOME_NEUTRAL: _ClassVar[Outcome]
OUTCOME_UNSPECIFIED: Outcome
OUTCOME_GOOD: Outcome
OUTCOME_BAD: Outcome
OUTCOME_NEUTRAL: Outcome

class SourceReputation(_message.Message):
    __slots__ = ("source", "score", "prior", "update_time", "good_count", "bad_count")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    PRIOR_FIELD_NUMBER: _ClassVar[int]
    UPDATE_TIME_FIELD_NUMBER: _ClassVar[int]
    GOOD_COUNT_FIELD_NUMBER: _ClassVar[int]
    BAD_COUNT_FIELD_NUMBER: _ClassVar[int]
    source: str
    score: float
    prior: float
    update_time: _timestamp_pb2.Timestamp
    good_count: int
    bad_count: int
    def __init__(self, source: _Optional[str] = ..., score: _Optional[float] = ..., prior: _Optional[float] = ..., update_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., good_count: _Optional[int] = ..., bad_count: _Optional[int] = ...) -> None: ...

class ReputationChange(_message.Message):
    __slots__ = ("source", "old_score", "new_score", "outcome", "reason", "decision_id", "create_time")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    OLD_SCORE_FIELD_NUMBER: _ClassVar[int]
    NEW_SCORE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    CREATE_TIME_FIELD_NUMBER: _ClassVar[int]
    source: str
    old_score: float
    new_score: float
    outcome: Outcome
    reason: str
    decision_id: str
    create_time: _timestamp_pb2.Timestamp
    def __init__(self, source: _Optional[str] = ..., old_score: _Optional[float] = ..., new_score: _Optional[float] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., reason: _Optional[str] = ..., decision_id: _Optional[str] = ..., create_time: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ...) -> None: ...

class GetReputationRequest(_message.Message):
    __slots__ = ("source",)
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    source: str
    def __init__(self, source: _Optional[str] = ...) -> None: ...

class GetReputationResponse(_message.Message):
    __slots__ = ("reputation",)
    REPUTATION_FIELD_NUMBER: _ClassVar[int]
    reputation: SourceReputation
    def __init__(self, reputation: _Optional[_Union[SourceReputation, _Mapping]] = ...) -> None: ...

class RecordOutcomeRequest(_message.Message):
    __slots__ = ("source", "outcome", "reason", "decision_id")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    OUTCOME_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    source: str
    outcome: Outcome
    reason: str
    decision_id: str
    def __init__(self, source: _Optional[str] = ..., outcome: _Optional[_Union[Outcome, str]] = ..., reason: _Optional[str] = ..., decision_id: _Optional[str] = ...) -> None: ...

class RecordOutcomeResponse(_message.Message):
    __slots__ = ("reputation",)
    REPUTATION_FIELD_NUMBER: _ClassVar[int]
    reputation: SourceReputation
    def __init__(self, reputation: _Optional[_Union[SourceReputation, _Mapping]] = ...) -> None: ...

class ListReputationsRequest(_message.Message):
    __slots__ = ("page_size", "page_token")
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    page_size: int
    page_token: str
    def __init__(self, page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class ListReputationsResponse(_message.Message):
    __slots__ = ("reputations", "next_page_token")
    REPUTATIONS_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    reputations: _containers.RepeatedCompositeFieldContainer[SourceReputation]
    next_page_token: str
    def __init__(self, reputations: _Optional[_Iterable[_Union[SourceReputation, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class GetHistoryRequest(_message.Message):
    __slots__ = ("source", "page_size", "page_token")
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    PAGE_SIZE_FIELD_NUMBER: _ClassVar[int]
    PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    source: str
    page_size: int
    page_token: str
    def __init__(self, source: _Optional[str] = ..., page_size: _Optional[int] = ..., page_token: _Optional[str] = ...) -> None: ...

class GetHistoryResponse(_message.Message):
    __slots__ = ("changes", "next_page_token")
    CHANGES_FIELD_NUMBER: _ClassVar[int]
    NEXT_PAGE_TOKEN_FIELD_NUMBER: _ClassVar[int]
    changes: _containers.RepeatedCompositeFieldContainer[ReputationChange]
    next_page_token: str
    def __init__(self, changes: _Optional[_Iterable[_Union[ReputationChange, _Mapping]]] = ..., next_page_token: _Optional[str] = ...) -> None: ...

class ResetReputationRequest(_message.Message):
    __slots__ = ("source",)
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    source: str
    def __init__(self, source: _Optional[str] = ...) -> None: ...

class ResetReputationResponse(_message.Message):
    __slots__ = ("reset_count",)
    RESET_COUNT_FIELD_NUMBER: _ClassVar[int]
    reset_count: int
    def __init__(self, reset_count: _Optional[int] = ...) -> None: ...
