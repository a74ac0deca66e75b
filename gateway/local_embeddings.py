"""`POST /v1/embeddings` for Mithril's own model: the embedding service answers instead
of the upstream, so an application (or Cognee, through `EMBEDDING_PROVIDER=openai_compatible`)
gets the same all-MiniLM-L6-v2 vectors the detectors use, with no LLM provider at all."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import grpc

from mithril.embedding.v1 import embedding_service_pb2 as pb
from mithril.embedding.v1 import embedding_service_pb2_grpc as pb_grpc
from mithril.gateway.detectors import open_channel
from mithril.gateway.errors import ApiError
from mithril.runtime.channels import bearer_metadata
from mithril.services.embedding.openai_compat import (
    ENCODING_FORMATS,
    embeddings_response,
    parse_input,
)

_CLIENT_ERRORS = (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED)


class LocalEmbeddings:
    """The embedding service behind the configured local model names."""

    def __init__(self, models: Sequence[str], target: str, token: str, timeout: float) -> None:
        self.models = frozenset(models)
        self._channel = open_channel(target)
        self._stub = pb_grpc.EmbeddingServiceStub(self._channel)
        self._metadata = bearer_metadata(token)
        self._timeout = timeout

    def serves(self, model: str | None) -> bool:
        return model is not None and model in self.models

    async def create(self, body: dict[str, Any], model: str) -> dict[str, Any]:
        """The OpenAI response for a request body; ApiError for what the client got wrong
        or a service that cannot answer."""
        try:
            texts = parse_input(body.get("input"))
        except ValueError as error:
            raise ApiError(400, str(error), param="input") from None
        encoding_format = body.get("encoding_format") or "float"
        if encoding_format not in ENCODING_FORMATS:
            raise ApiError(
                400,
                f"`encoding_format` must be one of {', '.join(ENCODING_FORMATS)}",
                param="encoding_format",
            )
        if body.get("dimensions") not in (None, 384):
            raise ApiError(400, f"{model} has 384 dimensions", param="dimensions")
        try:
            reply = await self._stub.Embed(
                pb.EmbedRequest(texts=texts), metadata=self._metadata, timeout=self._timeout
            )
        except grpc.aio.AioRpcError as error:
            if error.code() in _CLIENT_ERRORS:
                raise ApiError(400, error.details() or "invalid input", param="input") from None
            raise ApiError(
                503,
                f"the embedding service is unavailable ({error.code().name})",
                "mithril_unavailable",
                "embedding_unavailable",
            ) from None
        vectors = [list(embedding.values) for embedding in reply.embeddings]
        return embeddings_response(
            model,
            texts,
            vectors,
            encoding_format=encoding_format,
            prompt_tokens=reply.prompt_tokens,
        )

    async def close(self) -> None:
        await self._channel.close()
