from mithril.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ScanRequest(_message.Message):
    __slots__ = ("text", "origin", "direction", "mode")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    text: str
    origin: _common_pb2.ContentOrigin
    direction: _common_pb2.Direction
    mode: _common_pb2.PolicyMode
    def __init__(self, text: _Optional[str] = ..., origin: _Optional[_Union[_common_pb2.ContentOrigin, str]] = ..., direction: _Optional[_Union[_common_pb2.Direction, str]] = ..., mode: _Optional[_Union[_common_pb2.PolicyMode, str]] = ...) -> None: ...

class ScanResponse(_message.Message):
    __slots__ = ("decision", "redacted_text")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    REDACTED_TEXT_FIELD_NUMBER: _ClassVar[int]
    decision: _common_pb2.Decision
    redacted_text: str
    def __init__(self, decision: _Optional[_Union[_common_pb2.Decision, _Mapping]] = ..., redacted_text: _Optional[str] = ...) -> None: ...

class ScanBatchRequest(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[ScanRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[ScanRequest, _Mapping]]] = ...) -> None: ...

class ScanBatchResponse(_message.Message):
    __slots__ = ("decisions", "redacted_texts")
    class RedactedTextsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: int
        value: str
        def __init__(self, key: _Optional[int] = ..., value: _Optional[str] = ...) -> None: ...
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    REDACTED_TEXTS_FIELD_NUMBER: _ClassVar[int]
    decisions: _containers.RepeatedCompositeFieldContainer[_common_pb2.Decision]
    redacted_texts: _containers.ScalarMap[int, str]
    def __init__(self, decisions: _Optional[_Iterable[_Union[_common_pb2.Decision, _Mapping]]] = ..., redacted_texts: _Optional[_Mapping[int, str]] = ...) -> None: ...

class Message(_message.Message):
    __slots__ = ("origin", "content")
    ORIGIN_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    origin: _common_pb2.ContentOrigin
    content: str
    def __init__(self, origin: _Optional[_Union[_common_pb2.ContentOrigin, str]] = ..., content: _Optional[str] = ...) -> None: ...

class ScanMessagesRequest(_message.Message):
    __slots__ = ("messages", "mode")
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    messages: _containers.RepeatedCompositeFieldContainer[Message]
    mode: _common_pb2.PolicyMode
    def __init__(self, messages: _Optional[_Iterable[_Union[Message, _Mapping]]] = ..., mode: _Optional[_Union[_common_pb2.PolicyMode, str]] = ...) -> None: ...

class ScanMessagesResponse(_message.Message):
    __slots__ = ("decision", "messages")
    DECISION_FIELD_NUMBER: _ClassVar[int]
    MESSAGES_FIELD_NUMBER: _ClassVar[int]
    decision: _common_pb2.Decision
    messages: _containers.RepeatedCompositeFieldContainer[MessageDecision]
    def __init__(self, decision: _Optional[_Union[_common_pb2.Decision, _Mapping]] = ..., messages: _Optional[_Iterable[_Union[MessageDecision, _Mapping]]] = ...) -> None: ...

class MessageDecision(_message.Message):
    __slots__ = ("index", "findings", "redacted_content")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    REDACTED_CONTENT_FIELD_NUMBER: _ClassVar[int]
    index: int
    findings: _containers.RepeatedCompositeFieldContainer[_common_pb2.Finding]
    redacted_content: str
    def __init__(self, index: _Optional[int] = ..., findings: _Optional[_Iterable[_Union[_common_pb2.Finding, _Mapping]]] = ..., redacted_content: _Optional[str] = ...) -> None: ...

class RedactRequest(_message.Message):
    __slots__ = ("text",)
    TEXT_FIELD_NUMBER: _ClassVar[int]
    text: str
    def __init__(self, text: _Optional[str] = ...) -> None: ...

class RedactResponse(_message.Message):
    __slots__ = ("text", "findings")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    text: str
    findings: _containers.RepeatedCompositeFieldContainer[_common_pb2.Finding]
    def __init__(self, text: _Optional[str] = ..., findings: _Optional[_Iterable[_Union[_common_pb2.Finding, _Mapping]]] = ...) -> None: ...
