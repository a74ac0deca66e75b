"""EmbeddingService: converts between protobuf and the embedding library, nothing more."""

from __future__ import annotations

import grpc
from opentelemetry import trace

from mithril.embedding.v1 import embedding_service_pb2 as pb
from mithril.embedding.v1 import embedding_service_pb2_grpc as pb_grpc
from mithril.runtime import attributes
from mithril.runtime.errors import ServiceError, failed_precondition, invalid_argument
from mithril.services.embedding.tiers import EmbeddingTiers

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["EmbeddingService"].full_name


def _texts(texts: list[str]) -> list[str]:
    blank = [(f"texts[{i}]", "must not be blank") for i, t in enumerate(texts) if not t.strip()]
    if blank:
        raise ServiceError(invalid_argument(blank))
    return texts


def _annotate(count: int, score: float | None = None) -> None:
    span = trace.get_current_span()
    span.set_attribute(attributes.SERVICE, "embedding")
    span.set_attribute(attributes.BATCH_SIZE, count)
    if score is not None:
        span.set_attribute(attributes.SCORE, score)


class EmbeddingServicer(pb_grpc.EmbeddingServiceServicer):
    def __init__(self, tiers: EmbeddingTiers) -> None:
        self.tiers = tiers

    async def Embed(
        self, request: pb.EmbedRequest, context: grpc.aio.ServicerContext
    ) -> pb.EmbedResponse:
        texts = _texts(list(request.texts))
        _annotate(len(texts))
        vectors = await self.tiers.embed(texts)
        return pb.EmbedResponse(
            embeddings=[pb.Embedding(values=row.tolist()) for row in vectors],
            model=self.tiers.encoder.model_name,
            dimensions=self.tiers.encoder.dimensions,
            prompt_tokens=self.tiers.encoder.count_tokens(texts),
        )

    async def ScoreSimilarity(
        self, request: pb.ScoreSimilarityRequest, context: grpc.aio.ServicerContext
    ) -> pb.ScoreSimilarityResponse:
        if request.top_k < 0:
            raise ServiceError(invalid_argument([("top_k", "must be 0 or more")]))
        texts = _texts(list(request.texts))
        top_k = min(request.top_k or self.tiers.settings.top_k, 100)
        scores = await self.tiers.score(texts, top_k)
        _annotate(len(texts), max(s.similarity for s in scores))
        return pb.ScoreSimilarityResponse(
            scores=[
                pb.SimilarityScore(
                    score=s.similarity,
                    near_copy=s.near_copy,
                    language=s.similarity_language,
                    neighbors=[
                        pb.Neighbor(
                            id=n.entry.id,
                            similarity=n.similarity,
                            category=n.entry.category,
                            source=n.entry.source,
                        )
                        for n in s.neighbors
                    ],
                )
                for s in scores
            ]
        )

    async def Classify(
        self, request: pb.ClassifyRequest, context: grpc.aio.ServicerContext
    ) -> pb.ClassifyResponse:
        texts = _texts(list(request.texts))
        scores = await self.tiers.score(texts, 1)
        _annotate(len(texts), max(s.probability for s in scores))
        return pb.ClassifyResponse(
            probabilities=[s.probability for s in scores],
            languages=[s.language for s in scores],
            document_probabilities=[s.for_documents for s in scores],
            document_languages=[s.language_for_documents for s in scores],
        )

    async def ReadLines(
        self, request: pb.ReadLinesRequest, context: grpc.aio.ServicerContext
    ) -> pb.ReadLinesResponse:
        texts = _texts(list(request.texts))
        try:
            readings = await self.tiers.read_lines(texts)
        except LookupError as error:
            raise ServiceError(failed_precondition("PLANTED_LINES_OFF", str(error))) from error
        _annotate(len(texts), max(r.probability for r in readings))
        return pb.ReadLinesResponse(
            readings=[
                pb.LineReading(
                    probability=r.probability, request=r.request, relatedness=r.relatedness
                )
                for r in readings
            ]
        )

    async def GetModelInfo(
        self, request: pb.GetModelInfoRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetModelInfoResponse:
        return pb.GetModelInfoResponse(
            model=self.tiers.encoder.model_name,
            dimensions=self.tiers.encoder.dimensions,
            runtime=self.tiers.encoder.runtime,
            corpus_size=len(self.tiers.index),
            classifier_version=self.tiers.classifier.version,
            multilingual_version=str(self.tiers.info()["multilingual_version"]),
            planted_lines_version=str(self.tiers.info()["planted_lines_version"]),
        )
