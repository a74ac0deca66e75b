"""gRPC server bootstrap shared by every service.

A service's `create_server(settings)` builds its servicer (loading whatever it needs),
then calls `build_server` to get a grpc.aio server with the standard interceptors,
health and reflection, bound to `settings.host:settings.port` (port 0 picks a free one).
Health says NOT_SERVING until the service calls `mark_serving()`, and again from the
moment a graceful stop begins.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass, field

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from grpc_reflection.v1alpha import reflection

from mithril.runtime.heap import settle_heap
from mithril.runtime.interceptors import (
    AuthInterceptor,
    ErrorInterceptor,
    RequestIdInterceptor,
    ValidationInterceptor,
)
from mithril.runtime.logs import setup_logging
from mithril.runtime.settings import ServiceSettings
from mithril.runtime.telemetry import setup_telemetry, shutdown_telemetry
from mithril.runtime.tracing import ServerTracingInterceptor
from mithril.runtime.validation import Limits

_log = logging.getLogger(__name__)

Registrar = Callable[[grpc.aio.Server], None]


@dataclass
class ServiceServer:
    """A built, not yet started, server. Unpacks as `(server, port)`."""

    server: grpc.aio.Server
    port: int
    health: HealthServicer
    service_names: tuple[str, ...]
    _stopping: bool = field(default=False, repr=False)

    def __iter__(self) -> Iterator[object]:
        yield self.server
        yield self.port

    async def mark_serving(self) -> None:
        for name in ("", *self.service_names):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def stop(self, grace: float | None) -> None:
        """NOT_SERVING first, so balancers drain us, then stop with a grace period."""
        if self._stopping:
            return
        self._stopping = True
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)


def interceptors(settings: ServiceSettings) -> list[grpc.aio.ServerInterceptor]:
    """Tracing outermost, then the fixed order: request id, validation, auth, errors."""
    chain: list[grpc.aio.ServerInterceptor] = [
        ServerTracingInterceptor(),
        RequestIdInterceptor(),
        ValidationInterceptor(Limits(settings.max_text_chars, settings.max_batch_items)),
    ]
    if settings.auth_token:
        chain.append(AuthInterceptor(settings.auth_token))
    chain.append(ErrorInterceptor())
    return chain


async def build_server(
    settings: ServiceSettings,
    services: Sequence[tuple[str, Registrar]],
) -> ServiceServer:
    """A server with `services` (full service name, registrar) plus health and reflection."""
    limit = settings.max_message_bytes
    server = grpc.aio.server(
        interceptors=interceptors(settings),
        options=[
            ("grpc.max_receive_message_length", limit),
            ("grpc.max_send_message_length", limit),
            ("grpc.so_reuseport", 0),
            # Connections are recycled every few minutes so clients re-resolve DNS and
            # spread over replicas added since they connected (round_robin sees only the
            # addresses it resolved); in-flight calls get the grace period to finish.
            ("grpc.max_connection_age_ms", 300_000),
            ("grpc.max_connection_age_grace_ms", 30_000),
        ],
    )
    names = tuple(name for name, _ in services)
    for _, register in services:
        register(server)
    health = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health, server)
    for name in ("", *names):
        await health.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)
    if settings.reflection:
        reflection.enable_server_reflection(
            (
                *names,
                health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
                reflection.SERVICE_NAME,
            ),
            server,
        )
    port = server.add_insecure_port(f"{settings.host}:{settings.port}")
    if port == 0:
        raise OSError(f"could not bind {settings.host}:{settings.port}")
    return ServiceServer(server=server, port=port, health=health, service_names=names)


async def serve_until_signalled(
    name: str,
    settings: ServiceSettings,
    create: Callable[[], Awaitable[ServiceServer]],
) -> None:
    """Run one service until SIGTERM or SIGINT, then stop it gracefully."""
    setup_logging(name, settings.log_level)
    setup_telemetry(name)
    handle = await create()
    await handle.server.start()
    settle_heap()
    _log.info(
        "serving",
        extra={"component": name, "port": handle.port, "services": list(handle.service_names)},
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    _log.info("stopping", extra={"component": name, "grace_seconds": settings.grace_seconds})
    await handle.stop(settings.grace_seconds)
    shutdown_telemetry()
