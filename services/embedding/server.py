"""Build the embedding service's gRPC server: load the model, the corpus index and the
classifier (in a thread), then register and report SERVING."""

from __future__ import annotations

import asyncio

from mithril.embedding.v1 import embedding_service_pb2_grpc as pb_grpc
from mithril.runtime.server import ServiceServer, build_server
from mithril.services.embedding.config import EmbeddingSettings
from mithril.services.embedding.servicer import SERVICE_NAME, EmbeddingServicer
from mithril.services.embedding.tiers import EmbeddingTiers


async def create_server(
    settings: EmbeddingSettings | None = None, tiers: EmbeddingTiers | None = None
) -> ServiceServer:
    """A bound, unstarted server; unpacks as `(server, port)`. Pass `tiers` to reuse a
    loaded library (tests do, to load the model once)."""
    settings = settings or EmbeddingSettings()
    if tiers is None:
        tiers = await asyncio.to_thread(EmbeddingTiers.load, settings)
    servicer = EmbeddingServicer(tiers)
    handle = await build_server(
        settings,
        [
            (
                SERVICE_NAME,
                lambda server: pb_grpc.add_EmbeddingServiceServicer_to_server(servicer, server),
            )
        ],
    )
    await handle.mark_serving()  # model, corpus index and classifier are loaded: ready
    return handle
