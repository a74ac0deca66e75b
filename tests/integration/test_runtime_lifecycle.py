"""The shared runtime: auth, request ids, readiness and graceful shutdown."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mithril.scanner.v1 import scanner_service_pb2 as scanner_pb
from mithril.scanner.v1 import scanner_service_pb2_grpc as scanner_grpc
from mithril.services.scanner.config import ScannerSettings
from mithril.services.scanner.server import create_server

TEXT = "hello there"


async def test_auth_token_required_except_for_health(channel_to) -> None:
    handle = await create_server(ScannerSettings(host="127.0.0.1", port=0, auth_token="s3cret"))
    await handle.server.start()
    try:
        channel = channel_to(handle.port)
        stub = scanner_grpc.ScannerServiceStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await stub.Scan(scanner_pb.ScanRequest(text=TEXT))
        assert missing.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.aio.AioRpcError) as wrong:
            await stub.Scan(
                scanner_pb.ScanRequest(text=TEXT), metadata=(("authorization", "Bearer nope"),)
            )
        assert wrong.value.code() == grpc.StatusCode.UNAUTHENTICATED
        ok = await stub.Scan(
            scanner_pb.ScanRequest(text=TEXT), metadata=(("authorization", "Bearer s3cret"),)
        )
        assert ok.score < 0.5
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        await handle.stop(0)


async def test_request_id_is_echoed_in_trailing_metadata(services, channel_to) -> None:
    stub = scanner_grpc.ScannerServiceStub(channel_to(services.scanner.port))
    call = stub.Scan(scanner_pb.ScanRequest(text=TEXT), metadata=(("x-request-id", "req-42"),))
    await call
    assert ("x-request-id", "req-42") in tuple(await call.trailing_metadata())


async def test_not_serving_before_ready_and_during_shutdown(channel_to) -> None:
    handle = await create_server(ScannerSettings(host="127.0.0.1", port=0))
    await handle.health.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    await handle.server.start()
    health = health_pb2_grpc.HealthStub(channel_to(handle.port))
    reply = await health.Check(health_pb2.HealthCheckRequest())
    assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
    await handle.mark_serving()

    seen: list[int] = []
    first_update = asyncio.Event()

    async def watch() -> None:
        try:
            async for update in health.Watch(health_pb2.HealthCheckRequest()):
                seen.append(update.status)
                first_update.set()
        except grpc.aio.AioRpcError:
            pass  # the server went away after announcing NOT_SERVING

    watcher = asyncio.create_task(watch())
    await asyncio.wait_for(first_update.wait(), 5)
    await handle.stop(grace=0.5)
    await asyncio.wait_for(watcher, 5)
    assert seen[0] == health_pb2.HealthCheckResponse.SERVING
    assert health_pb2.HealthCheckResponse.NOT_SERVING in seen[1:]
