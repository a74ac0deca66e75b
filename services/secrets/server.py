"""Build the secrets service's gRPC server: compile the detectors, then report SERVING."""

from __future__ import annotations

from mithril.runtime.server import ServiceServer, build_server
from mithril.secrets.v1 import secrets_service_pb2_grpc as pb_grpc
from mithril.services.secrets.config import SecretsSettings
from mithril.services.secrets.detector import SecretsDetector
from mithril.services.secrets.servicer import SERVICE_NAME, SecretsServicer


async def create_server(
    settings: SecretsSettings | None = None, detector: SecretsDetector | None = None
) -> ServiceServer:
    """A bound, unstarted server; unpacks as `(server, port)`. `detector` defaults to
    every registered detector."""
    settings = settings or SecretsSettings()
    servicer = SecretsServicer(detector or SecretsDetector.default())
    handle = await build_server(
        settings,
        [
            (
                SERVICE_NAME,
                lambda server: pb_grpc.add_SecretsServiceServicer_to_server(servicer, server),
            )
        ],
    )
    await handle.mark_serving()
    return handle
