from mithril.common.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DetectRequest(_message.Message):
    __slots__ = ("text", "kinds")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    text: str
    kinds: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, text: _Optional[str] = ..., kinds: _Optional[_Iterable[str]] = ...) -> None: ...

class DetectResponse(_message.Message):
    __slots__ = ("findings", "prefilters_fingerprint")
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    PREFILTERS_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    findings: _containers.RepeatedCompositeFieldContainer[_common_pb2.Finding]
    prefilters_fingerprint: str
    def __init__(self, findings: _Optional[_Iterable[_Union[_common_pb2.Finding, _Mapping]]] = ..., prefilters_fingerprint: _Optional[str] = ...) -> None: ...

class DetectBatchRequest(_message.Message):
    __slots__ = ("requests",)
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    requests: _containers.RepeatedCompositeFieldContainer[DetectRequest]
    def __init__(self, requests: _Optional[_Iterable[_Union[DetectRequest, _Mapping]]] = ...) -> None: ...

class DetectBatchResponse(_message.Message):
    __slots__ = ("responses", "prefilters_fingerprint")
    RESPONSES_FIELD_NUMBER: _ClassVar[int]
    PREFILTERS_FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    responses: _containers.RepeatedCompositeFieldContainer[DetectResponse]
    prefilters_fingerprint: str
    def __init__(self, responses: _Optional[_Iterable[_Union[DetectResponse, _Mapping]]] = ..., prefilters_fingerprint: _Optional[str] = ...) -> None: ...

class RedactRequest(_message.Message):
    __slots__ = ("text", "kinds")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    text: str
    kinds: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, text: _Optional[str] = ..., kinds: _Optional[_Iterable[str]] = ...) -> None: ...

class RedactResponse(_message.Message):
    __slots__ = ("text", "findings")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    text: str
    findings: _containers.RepeatedCompositeFieldContainer[_common_pb2.Finding]
    def __init__(self, text: _Optional[str] = ..., findings: _Optional[_Iterable[_Union[_common_pb2.Finding, _Mapping]]] = ...) -> None: ...

class RedactStreamRequest(_message.Message):
    __slots__ = ("chunk", "kinds")
    CHUNK_FIELD_NUMBER: _ClassVar[int]
    KINDS_FIELD_NUMBER: _ClassVar[int]
    chunk: str
    kinds: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, chunk: _Optional[str] = ..., kinds: _Optional[_Iterable[str]] = ...) -> None: ...

class RedactStreamResponse(_message.Message):
    __slots__ = ("text", "findings")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    FINDINGS_FIELD_NUMBER: _ClassVar[int]
    text: str
    findings: _containers.RepeatedCompositeFieldContainer[_common_pb2.Finding]
    def __init__(self, text: _Optional[str] = ..., findings: _Optional[_Iterable[_Union[_common_pb2.Finding, _Mapping]]] = ...) -> None: ...

class ListKindsRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Kind(_message.Message):
    __slots__ = ("name", "category", "severity", "description")
    NAME_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    SEVERITY_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    name: str
    category: str
    severity: _common_pb2.Severity
    description: str
    def __init__(self, name: _Optional[str] = ..., category: _Optional[str] = ..., severity: _Optional[_Union[_common_pb2.Severity, str]] = ..., description: _Optional[str] = ...) -> None: ...

class ListKindsResponse(_message.Message):
    __slots__ = ("kinds",)
    KINDS_FIELD_NUMBER: _ClassVar[int]
    kinds: _containers.RepeatedCompositeFieldContainer[Kind]
    def __init__(self, kinds: _Optional[_Iterable[_Union[Kind, _Mapping]]] = ...) -> None: ...

class GetPrefiltersRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetPrefiltersResponse(_message.Message):
    __slots__ = ("prefilters", "fingerprint")
    class PrefiltersEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    PREFILTERS_FIELD_NUMBER: _ClassVar[int]
    FINGERPRINT_FIELD_NUMBER: _ClassVar[int]
    prefilters: _containers.ScalarMap[str, str]
    fingerprint: str
    def __init__(self, prefilters: _Optional[_Mapping[str, str]] = ..., fingerprint: _Optional[str] = ...) -> None: ...
