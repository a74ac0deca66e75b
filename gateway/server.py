"""Run the gateway: the HTTP app (uvicorn on uvloop + httptools) and the FirewallService
gRPC server, in one event loop, stopped together and gracefully."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Generator
from dataclasses import dataclass

import uvicorn

from mithril.firewall.v1 import firewall_service_pb2_grpc as pb_grpc
from mithril.gateway.app import create_app
from mithril.gateway.cascade import LearnedTiers
from mithril.gateway.components import Components, build_components
from mithril.gateway.config import GatewaySettings
from mithril.gateway.detectors import Detectors, LocalDetectors, RemoteDetectors
from mithril.gateway.firewall import Firewall
from mithril.gateway.firewall_servicer import SERVICE_NAME, FirewallServicer
from mithril.gateway.tiers import remote_tiers
from mithril.runtime.heap import settle_heap
from mithril.runtime.logs import setup_logging
from mithril.runtime.server import ServiceServer, build_server
from mithril.runtime.settings import ServiceSettings
from mithril.runtime.telemetry import setup_telemetry, shutdown_telemetry

_log = logging.getLogger(__name__)


class _Uvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: the gateway stops both servers itself."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


@dataclass
class Gateway:
    settings: GatewaySettings
    components: Components
    grpc: ServiceServer
    http: uvicorn.Server
    _http_task: asyncio.Task[None] | None = None

    @property
    def firewall(self) -> Firewall:
        return self.components.firewall

    @property
    def grpc_port(self) -> int:
        return self.grpc.port

    @property
    def http_port(self) -> int:
        return int(self.http.servers[0].sockets[0].getsockname()[1])

    async def start(self) -> None:
        await self.components.start()
        await self.grpc.server.start()
        self._http_task = asyncio.create_task(self.http.serve())
        while not self.http.started:
            if self._http_task.done():
                self._http_task.result()  # raises the startup error
                raise RuntimeError("the HTTP server stopped during startup")
            await asyncio.sleep(0.01)
        await self.grpc.mark_serving()

    async def stop(self) -> None:
        await self.grpc.health.enter_graceful_shutdown()
        self.http.should_exit = True
        if self._http_task is not None:
            await self._http_task
        await self.grpc.stop(self.settings.grace_seconds)
        await self.components.close()


async def create_gateway(
    settings: GatewaySettings | None = None,
    detectors: Detectors | None = None,
    tiers: LearnedTiers | None = None,
) -> Gateway:
    """A gateway over `detectors` and `tiers` (default: the services at the configured
    addresses)."""
    settings = settings or GatewaySettings()
    if tiers is None:
        tiers = remote_tiers(settings)
    if detectors is None:
        detectors = (
            LocalDetectors(settings.rule_files)
            if settings.fast_tier == "local"
            else RemoteDetectors(
                settings.scanner_addr,
                settings.secrets_addr,
                settings.service_token,
                settings.service_timeout_seconds,
            )
        )
    components = build_components(settings, detectors, tiers)
    servicer = FirewallServicer(components.firewall)
    grpc_settings = ServiceSettings(
        host=settings.grpc_host,
        port=settings.grpc_port,
        auth_token=settings.auth_token,
        max_text_chars=settings.max_text_chars,
        max_batch_items=settings.max_batch_items,
        grace_seconds=settings.grace_seconds,
    )
    grpc_server = await build_server(
        grpc_settings,
        [
            (
                SERVICE_NAME,
                lambda server: pb_grpc.add_FirewallServiceServicer_to_server(servicer, server),
            )
        ],
    )
    config = uvicorn.Config(
        create_app(components),
        host=settings.http_host,
        port=settings.http_port,
        loop="none",  # we are already inside the running (uvloop) loop
        http="httptools",
        lifespan="off",
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=int(settings.grace_seconds) or None,
    )
    return Gateway(settings, components, grpc_server, _Uvicorn(config))


async def serve_gateway(settings: GatewaySettings) -> None:
    setup_logging("gateway", settings.log_level)
    setup_telemetry("gateway")
    gateway = await create_gateway(settings)
    await gateway.start()
    settle_heap()
    _log.info(
        "serving",
        extra={
            "component": "gateway",
            "http_port": gateway.http_port,
            "grpc_port": gateway.grpc_port,
        },
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    _log.info("stopping", extra={"component": "gateway"})
    await gateway.stop()
    shutdown_telemetry()


def main() -> None:
    import uvloop

    uvloop.run(serve_gateway(GatewaySettings()))
