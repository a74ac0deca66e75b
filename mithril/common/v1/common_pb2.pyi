from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Severity(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEVERITY_UNSPECIFIED: _ClassVar[Severity]
    SEVERITY_LOW: _ClassVar[Severity]
    SEVERITY_MEDIUM: _ClassVar[Severity]
    SEVERITY_HIGH: _ClassVar[Severity]
    SEVERITY_CRITICAL: _ClassVar[Severity]

class Action(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_UNSPECIFIED: _ClassVar[Action]
    ACTION_ALLOW: _ClassVar[Action]
    ACTION_BLOCK: _ClassVar[Action]
    ACTION_REDACT: _ClassVar[Action]

class PolicyMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    POLICY_MODE_UNSPECIFIED: _ClassVar[PolicyMode]
    POLICY_MODE_BLOCK: _ClassVar[PolicyMode]
    POLICY_MODE_LOG: _ClassVar[PolicyMode]
    POLICY_MODE_MONITOR: _ClassVar[PolicyMode]

class Direction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIRECTION_UNSPECIFIED: _ClassVar[Direction]
    DIRECTION_INPUT: _ClassVar[Direction]
    DIRECTION_OUTPUT: _ClassVar[Direction]

class ContentOrigin(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CONTENT_ORIGIN_UNSPECIFIED: _ClassVar[ContentOrigin]
    CONTENT_ORIGIN_USER: _ClassVar[ContentOrigin]
    CONTENT_ORIGIN_SYSTEM: _ClassVar[ContentOrigin]
    CONTENT_ORIGIN_ASSISTANT: _ClassVar[ContentOrigin]
    CONTENT_ORIGIN_TOOL: _ClassVar[ContentOrigin]
    CONTENT_ORIGIN_RETRIEVAL: _ClassVar[ContentOrigin]
SEVERITY_UNSPECIFIED: Severity
SEVERITY_LOW: Severity
SEVERITY_MEDIUM: Severity
SEVERITY_HIGH: Severity
SEVERITY_CRITICAL: Severity
ACTION_UNSPECIFIED: Action
ACTION_ALLOW: Action
ACTION_BLOCK: Action
ACTION_REDACT: Action
POLICY_MODE_UNSPECIFIED: PolicyMode
POLICY_MODE_BLOCK: PolicyMode
POLICY_MODE_LOG: PolicyMode
POLICY_MODE_MONITOR: PolicyMode
DIRECTION_UNSPECIFIED: Direction
DIRECTION_INPUT: Direction
DIRECTION_OUTPUT: Direction
CONTENT_ORIGIN_UNSPECIFIED: ContentOrigin
CONTENT_ORIGIN_USER: ContentOrigin
CONTENT_ORIGIN_SYSTEM: ContentOrigin
CONTENT_ORIGIN_ASSISTANT: ContentOrigin
CONTENT_ORIGIN_TOOL: ContentOrigin
CONTENT_ORIGIN_RETRIEVAL: ContentOrigin

class Span(_message.Message):
    __slots__ = ("start", "end")
    START_FIELD_NUMBER: _ClassVar[int]
    END_FIELD_NUMBER: _ClassVar[int]
    start: int
    end: int
    def __init__(self, start: _Optional[int] = ..., end: _Optional[int] = ...) -> None: ...

class Finding(_message.Message):
    __slots__ = ("rule_id", "detector", "category", "severity", "confidence", "message", "span", "view", "kind")
    RULE_ID_FIELD_NUMBER: _ClassVar[int]
    DETECTOR_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    MESSAGE_FIELD_NUMBER: _ClassVar[int]
    SPAN_FIELD_NUMBER: _ClassVar[int]
    VIEW_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    rule_id: str
    detector: str
    category: str
    severity: Severity
    confidence: float
    message: str
    span: Span
    view: str
    kind: str
    def __init__(self, rule_id: _Optional[str] = ..., detector: _Optional[str] = ..., category: _Optional[str] = ..., severity: _Optional[_Union[Severity, str]] = ..., confidence: _Optional[float] = ..., message: _Optional[str] = ..., span: _Optional[_Union[Span, _Mapping]] = ..., view: _Optional[str] = ..., kind: _Optional[str] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("decision_id", "action", "score", "findings", "flagged", "mode", "threshold", "unavailable_services", "latency_ms")
    DECISION_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    FLAGGED_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    THRESHOLD_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_SERVICES_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    decision_id: str
    action: Action
    score: float
    findings: _containers.RepeatedCompositeFieldContainer[Finding]
    flagged: bool
    mode: PolicyMode
    threshold: float
    unavailable_services: _containers.RepeatedScalarFieldContainer[str]
    latency_ms: float
    def __init__(self, decision_id: _Optional[str] = ..., action: _Optional[_Union[Action, str]] = ..., score: _Optional[float] = ..., findings: _Optional[_Iterable[_Union[Finding, _Mapping]]] = ..., flagged: _Optional[bool] = ..., mode: _Optional[_Union[PolicyMode, str]] = ..., threshold: _Optional[float] = ..., unavailable_services: _Optional[_Iterable[str]] = ..., latency_ms: _Optional[float] = ...) -> None: ...
