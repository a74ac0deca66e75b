from mithril.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Verdict(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    VERDICT_UNSPECIFIED: _ClassVar[Verdict]
    VERDICT_BENIGN: _ClassVar[Verdict]
    VERDICT_ATTACK: _ClassVar[Verdict]
    VERDICT_UNCERTAIN: _ClassVar[Verdict]
VERDICT_UNSPECIFIED: Verdict
VERDICT_BENIGN: Verdict
VERDICT_ATTACK: Verdict
VERDICT_UNCERTAIN: Verdict

class JudgeRequest(_message.Message):
    __slots__ = ("text", "origin")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    text: str
    origin: _common_pb2.ContentOrigin
    def __init__(self, text: _Optional[str] = ..., origin: _Optional[_Union[_common_pb2.ContentOrigin, str]] = ...) -> None: ...

class JudgeResponse(_message.Message):
    __slots__ = ("verdict", "score", "rationale", "model", "cached")
    VERDICT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    CACHED_FIELD_NUMBER: _ClassVar[int]
    verdict: Verdict
    score: float
    rationale: str
    model: str
    cached: bool
    def __init__(self, verdict: _Optional[_Union[Verdict, str]] = ..., score: _Optional[float] = ..., rationale: _Optional[str] = ..., model: _Optional[str] = ..., cached: _Optional[bool] = ...) -> None: ...

class ScoreContradictionRequest(_message.Message):
    __slots__ = ("claim", "contexts")
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    CONTEXTS_FIELD_NUMBER: _ClassVar[int]
    claim: str
    contexts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, claim: _Optional[str] = ..., contexts: _Optional[_Iterable[str]] = ...) -> None: ...

class ScoreContradictionResponse(_message.Message):
    __slots__ = ("score", "rationale")
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    score: float
    rationale: str
    def __init__(self, score: _Optional[float] = ..., rationale: _Optional[str] = ...) -> None: ...

class ScoreDangerRequest(_message.Message):
    __slots__ = ("claim",)
    CLAIM_FIELD_NUMBER: _ClassVar[int]
    claim: str
    def __init__(self, claim: _Optional[str] = ...) -> None: ...

class ScoreDangerResponse(_message.Message):
    __slots__ = ("score", "rationale")
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RATIONALE_FIELD_NUMBER: _ClassVar[int]
    score: float
    rationale: str
    def __init__(self, score: _Optional[float] = ..., rationale: _Optional[str] = ...) -> None: ...
