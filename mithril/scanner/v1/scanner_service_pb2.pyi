from mithril.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ScanRequest(_message.Message):
    __slots__ = ("text", "origin", "families")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    FAMILIES_FIELD_NUMBER: _ClassVar[int]
    text: str
    origin: _common_pb2.ContentOrigin
    families: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, text: _Optional[str] = ..., origin: _Optional[_Union[_common_pb2.ContentOrigin, str]] = ..., families: _Optional[_Iterable[str]] = ...) -> None: ...

class ScanResponse(_message.Message):
    __slots__ = ("findings", "score", "views")
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    VIEWS_FIELD_NUMBER: _ClassVar[int]
    findings: _containers.RepeatedCompositeFieldContainer[_common_pb2.Finding]
    score: float
    views: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, findings: _Optional[_Iterable[_Union[_common_pb2.Finding, _Mapping]]] = ..., score: _Optional[float] = ..., views: _Optional[_Iterable[str]] = ...) -> None: ...

class ScanBatchRequest(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[ScanRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[ScanRequest, _Mapping]]] = ...) -> None: ...

class ScanBatchResponse(_message.Message):
    __slots__ = ("responses",)
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[ScanResponse]
    def __init__(self, responses: _Optional[_Iterable[_Union[ScanResponse, _Mapping]]] = ...) -> None: ...

class ListRulesRequest(_message.Message):
    __slots__ = ("family",)
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    family: str
    def __init__(self, family: _Optional[str] = ...) -> None: ...

class Rule(_message.Message):
    __slots__ = ("id", "family", "severity", "confidence", "message")
    ID_FIELD_NUMBER: _ClassVar[int]
    FAMILY_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    id: str
    family: str
    severity: _common_pb2.Severity
    confidence: float
    message: str
    def __init__(self, id: _Optional[str] = ..., family: _Optional[str] = ..., severity: _Optional[_Union[_common_pb2.Severity, str]] = ..., confidence: _Optional[float] = ..., message: _Optional[str] = ...) -> None: ...

class ListRulesResponse(_message.Message):
    __slots__ = ("rules",)
    RULES_FIELD_NUMBER: _ClassVar[int]
    rules: _containers.RepeatedCompositeFieldContainer[Rule]
    def __init__(self, rules: _Optional[_Iterable[_Union[Rule, _Mapping]]] = ...) -> None: ...
