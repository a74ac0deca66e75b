"""Build the reputation service's gRPC server. It is SERVING once the priors are loaded and
the database is open (tables created if needed)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from mithril.reputation.v1 import reputation_service_pb2_grpc as pb_grpc
from mithril.runtime.server import ServiceServer, build_server
from mithril.services.reputation.config import ReputationSettings
from mithril.services.reputation.reputation import Reputation
from mithril.services.reputation.servicer import SERVICE_NAME, ReputationServicer

_log = logging.getLogger(__name__)


@dataclass
class ReputationServer(ServiceServer):
    """A ServiceServer that also closes the database when it stops."""

    reputation: Reputation | None = None

    async def stop(self, grace: float | None) -> None:
        await super().stop(grace)
        if self.reputation is not None:
            await self.reputation.aclose()
            self.reputation = None


async def create_server(
    settings: ReputationSettings | None = None, reputation: Reputation | None = None
) -> ReputationServer:
    """A bound, unstarted server; unpacks as `(server, port)`. `reputation` defaults to one
    built from `settings`."""
    settings = settings or ReputationSettings()
    owned = reputation is None
    # Opening the database may wait on another replica creating the tables.
    service: Reputation = (
        reputation
        if reputation is not None
        else await asyncio.to_thread(Reputation.from_settings, settings)
    )
    servicer = ReputationServicer(service)
    try:
        handle = await build_server(
            settings,
            [
                (
                    SERVICE_NAME,
                    lambda server: pb_grpc.add_ReputationServiceServicer_to_server(
                        servicer, server
                    ),
                )
            ],
        )
    except BaseException:
        if owned:
            await service.aclose()
        raise
    store = service.store
    _log.info(
        "reputation store open",
        extra={
            "backend": store.backend,
            "database": store.engine.url.render_as_string(hide_password=True),
            "priors": len(store.priors.by_key),
        },
    )
    wrapped = ReputationServer(
        server=handle.server,
        port=handle.port,
        health=handle.health,
        service_names=handle.service_names,
        reputation=service,
    )
    await wrapped.mark_serving()
    return wrapped
