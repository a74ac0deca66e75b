"""Every service in-process on an ephemeral port, driven over real gRPC and HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest
import pytest_asyncio
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from mithril.gateway.config import GatewaySettings
from mithril.gateway.server import Gateway, create_gateway
from mithril.runtime.server import ServiceServer
from mithril.runtime.telemetry import setup_telemetry
from mithril.services.scanner.config import ScannerSettings
from mithril.services.scanner.server import create_server as create_scanner
from mithril.services.secrets.config import SecretsSettings
from mithril.services.secrets.server import create_server as create_secrets

SPANS = InMemorySpanExporter()


@pytest.fixture(scope="session", autouse=True)
def _telemetry() -> None:
    setup_telemetry("tests", SimpleSpanProcessor(SPANS))


@pytest.fixture
def spans() -> InMemorySpanExporter:
    SPANS.clear()
    return SPANS


@dataclass
class Services:
    scanner: ServiceServer
    secrets: ServiceServer

    @property
    def scanner_addr(self) -> str:
        return f"127.0.0.1:{self.scanner.port}"

    @property
    def secrets_addr(self) -> str:
        return f"127.0.0.1:{self.secrets.port}"


@pytest_asyncio.fixture(scope="session")
async def services() -> AsyncIterator[Services]:
    scanner = await create_scanner(ScannerSettings(host="127.0.0.1", port=0))
    secrets = await create_secrets(SecretsSettings(host="127.0.0.1", port=0))
    await scanner.server.start()
    await secrets.server.start()
    yield Services(scanner, secrets)
    await scanner.stop(0)
    await secrets.stop(0)


def gateway_settings(services: Services, **overrides: object) -> GatewaySettings:
    values: dict[str, object] = {
        "http_host": "127.0.0.1",
        "http_port": 0,
        "grpc_host": "127.0.0.1",
        "grpc_port": 0,
        "scanner_addr": services.scanner_addr,
        "secrets_addr": services.secrets_addr,
        "grace_seconds": 0,
        # Over gRPC, unless a test asks for it in-process (see `fast_tier`).
        "fast_tier": "remote",
        # The fast tier only: tests of the learned tiers start their services themselves.
        "learned_tiers": [],
    }
    values.update(overrides)
    return GatewaySettings(**values)  # type: ignore[arg-type]


@pytest_asyncio.fixture(scope="session")
async def gateway(services: Services) -> AsyncIterator[Gateway]:
    running = await create_gateway(gateway_settings(services))
    await running.start()
    yield running
    await running.stop()


@pytest_asyncio.fixture
async def gateway_http(gateway: Gateway) -> AsyncIterator[object]:
    import httpx

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{gateway.http_port}") as client:
        yield client


@pytest_asyncio.fixture
async def channel_to():  # type: ignore[no-untyped-def]
    """Open channels to ports; all closed after the test."""
    opened: list[grpc.aio.Channel] = []

    def open_channel(port: int) -> grpc.aio.Channel:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        opened.append(channel)
        return channel

    yield open_channel
    for channel in opened:
        await channel.close()


@pytest_asyncio.fixture(scope="session")
async def fake_upstream() -> AsyncIterator[object]:
    from mithril.benchmark.stand_in_upstream import FakeUpstream

    upstream = FakeUpstream()
    await upstream.start()
    yield upstream
    await upstream.stop()


NO_SERVICE = "127.0.0.1:1"  # nothing listens here: a call to it fails at once


@pytest.fixture
def fast_tier() -> str:
    """Where `make_gateway`'s fast tier runs; a module overrides this fixture to run its
    tests against the other mode too. The in-process one is given addresses where no
    scanner or secrets service listens, so a hop it should not make fails the test."""
    return "remote"


@pytest_asyncio.fixture
async def make_gateway(services: Services, fake_upstream, tmp_path, fast_tier):  # type: ignore[no-untyped-def]
    """Start a gateway in front of the stand-in upstream; `policy` is YAML text."""
    started: list[Gateway] = []
    fake_upstream.reset()

    async def make(policy: str | None = None, **overrides: object) -> Gateway:
        values: dict[str, object] = {
            "upstream_url": fake_upstream.base_url,
            "database_url": f"sqlite:///{tmp_path}/events-{len(started)}.db",
            "fast_tier": fast_tier,
        }
        if fast_tier == "local":
            values |= {"scanner_addr": NO_SERVICE, "secrets_addr": NO_SERVICE}
        if policy is not None:
            path = tmp_path / f"policy-{len(started)}.yaml"
            path.write_text(policy.replace("{upstream}", fake_upstream.base_url))
            values["policy_file"] = path
        values.update(overrides)
        running = await create_gateway(gateway_settings(services, **values))
        await running.start()
        started.append(running)
        return running

    yield make
    for running in started:
        await running.stop()
