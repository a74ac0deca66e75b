from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EmbedRequest(_message.Message):
    __slots__ = ("texts",)
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    texts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, texts: _Optional[_Iterable[str]] = ...) -> None: ...

class Embedding(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class EmbedResponse(_message.Message):
    __slots__ = ("embeddings", "model", "dimensions", "prompt_tokens")
    EMBEDDINGS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    PROMPT_TOKENS_FIELD_NUMBER: _ClassVar[int]
    embeddings: _containers.RepeatedCompositeFieldContainer[Embedding]
    model: str
    dimensions: int
    prompt_tokens: int
    def __init__(self, embeddings: _Optional[_Iterable[_Union[Embedding, _Mapping]]] = ..., model: _Optional[str] = ..., dimensions: _Optional[int] = ..., prompt_tokens: _Optional[int] = ...) -> None: ...

class ScoreSimilarityRequest(_message.Message):
    __slots__ = ("texts", "top_k")
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    TOP_K_FIELD_NUMBER: _ClassVar[int]
    texts: _containers.RepeatedScalarFieldContainer[str]
    top_k: int
    def __init__(self, texts: _Optional[_Iterable[str]] = ..., top_k: _Optional[int] = ...) -> None: ...

class Neighbor(_message.Message):
    __slots__ = ("id", "similarity", "category", "source")
    ID_FIELD_NUMBER: _ClassVar[int]
    SIMILARITY_FIELD_NUMBER: _ClassVar[int]
    CATEGORY_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    id: str
    similarity: float
    category: str
    source: str
    def __init__(self, id: _Optional[str] = ..., similarity: _Optional[float] = ..., category: _Optional[str] = ..., source: _Optional[str] = ...) -> None: ...

class SimilarityScore(_message.Message):
    __slots__ = ("score", "neighbors", "language", "near_copy")
    SCORE_FIELD_NUMBER: _ClassVar[int]
    NEIGHBORS_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    NEAR_COPY_FIELD_NUMBER: _ClassVar[int]
    score: float
    neighbors: _containers.RepeatedCompositeFieldContainer[Neighbor]
    language: str
    near_copy: float
    def __init__(self, score: _Optional[float] = ..., neighbors: _Optional[_Iterable[_Union[Neighbor, _Mapping]]] = ..., language: _Optional[str] = ..., near_copy: _Optional[float] = ...) -> None: ...

class ScoreSimilarityResponse(_message.Message):
    __slots__ = ("scores",)
    SCORES_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedCompositeFieldContainer[SimilarityScore]
    def __init__(self, scores: _Optional[_Iterable[_Union[SimilarityScore, _Mapping]]] = ...) -> None: ...

class ClassifyRequest(_message.Message):
    __slots__ = ("texts",)
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    texts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, texts: _Optional[_Iterable[str]] = ...) -> None: ...

class ClassifyResponse(_message.Message):
    __slots__ = ("probabilities", "languages", "document_probabilities", "document_languages")
    PROBABILITIES_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_PROBABILITIES_FIELD_NUMBER: _ClassVar[int]
    DOCUMENT_LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    probabilities: _containers.RepeatedScalarFieldContainer[float]
    languages: _containers.RepeatedScalarFieldContainer[str]
    document_probabilities: _containers.RepeatedScalarFieldContainer[float]
    document_languages: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, probabilities: _Optional[_Iterable[float]] = ..., languages: _Optional[_Iterable[str]] = ..., document_probabilities: _Optional[_Iterable[float]] = ..., document_languages: _Optional[_Iterable[str]] = ...) -> None: ...

class ReadLinesRequest(_message.Message):
    __slots__ = ("texts",)
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    texts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, texts: _Optional[_Iterable[str]] = ...) -> None: ...

class LineReading(_message.Message):
    __slots__ = ("probability", "request", "relatedness")
    PROBABILITY_FIELD_NUMBER: _ClassVar[int]
    REQUEST_FIELD_NUMBER: _ClassVar[int]
    RELATEDNESS_FIELD_NUMBER: _ClassVar[int]
    probability: float
    request: float
    relatedness: float
    def __init__(self, probability: _Optional[float] = ..., request: _Optional[float] = ..., relatedness: _Optional[float] = ...) -> None: ...

class ReadLinesResponse(_message.Message):
    __slots__ = ("readings",)
    READINGS_FIELD_NUMBER: _ClassVar[int]
    readings: _containers.RepeatedCompositeFieldContainer[LineReading]
    def __init__(self, readings: _Optional[_Iterable[_Union[LineReading, _Mapping]]] = ...) -> None: ...

class GetModelInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetModelInfoResponse(_message.Message):
    __slots__ = ("model", "dimensions", "runtime", "corpus_size", "classifier_version", "multilingual_version", "planted_lines_version")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    RUNTIME_FIELD_NUMBER: _ClassVar[int]
    CORPUS_SIZE_FIELD_NUMBER: _ClassVar[int]
    CLASSIFIER_VERSION_FIELD_NUMBER: _ClassVar[int]
    MULTILINGUAL_VERSION_FIELD_NUMBER: _ClassVar[int]
    PLANTED_LINES_VERSION_FIELD_NUMBER: _ClassVar[int]
    model: str
    dimensions: int
    runtime: str
    corpus_size: int
    classifier_version: str
    multilingual_version: str
    planted_lines_version: str
    def __init__(self, model: _Optional[str] = ..., dimensions: _Optional[int] = ..., runtime: _Optional[str] = ..., corpus_size: _Optional[int] = ..., classifier_version: _Optional[str] = ..., multilingual_version: _Optional[str] = ..., planted_lines_version: _Optional[str] = ...) -> None: ...
