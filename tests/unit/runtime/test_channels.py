"""Client channels: a list of replicas becomes one round-robin gRPC target, and two real
scanner replicas behind one channel both serve calls, and keep serving when one dies."""

from __future__ import annotations

import asyncio
import collections
from pathlib import Path

import grpc
import pytest

from mithril.runtime.channels import channel_target, open_channel
from mithril.scanner.v1 import scanner_service_pb2 as pb
from mithril.scanner.v1 import scanner_service_pb2_grpc as pb_grpc
from tests.conftest import free_port


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        # One target: unchanged, whatever it is (gRPC resolves it).
        ("127.0.0.1:50051", "127.0.0.1:50051"),
        ("scanner:50051", "scanner:50051"),
        ("localhost:50051", "localhost:50051"),
        ("dns:///scanner.mithril.svc:50051", "dns:///scanner.mithril.svc:50051"),
        ("unix:/run/mithril/scanner.sock", "unix:/run/mithril/scanner.sock"),
        ("  127.0.0.1:50051  ", "127.0.0.1:50051"),
        ("127.0.0.1:50051,", "127.0.0.1:50051"),
        # Targets gRPC already reads as lists pass through.
        ("ipv4:10.0.0.1:1,10.0.0.2:2", "ipv4:10.0.0.1:1,10.0.0.2:2"),
        ("ipv6:[::1]:1,[::1]:2", "ipv6:[::1]:1,[::1]:2"),
        # Lists of IP literals become static targets.
        ("127.0.0.1:5001,127.0.0.1:5002", "ipv4:127.0.0.1:5001,127.0.0.1:5002"),
        (" 10.0.0.5:50051 , 10.0.0.6:50051 ", "ipv4:10.0.0.5:50051,10.0.0.6:50051"),
        ("localhost:5001,localhost:5002", "ipv4:127.0.0.1:5001,127.0.0.1:5002"),
        ("[::1]:5001,[fd00::2]:5002", "ipv6:[::1]:5001,[fd00::2]:5002"),
        # Mixed families: IPv4 in its mapped IPv6 form.
        ("[::1]:5001,127.0.0.1:5002", "ipv6:[::1]:5001,[::ffff:127.0.0.1]:5002"),
    ],
)
def test_channel_target(given: str, expected: str) -> None:
    assert channel_target(given) == expected


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("scanner-1:50051,scanner-2:50051", "not an IP address"),
        ("10.0.0.5:50051,dns:///scanner:50051", "not an IP address"),
        ("10.0.0.5,10.0.0.6:50051", "needs a port"),
        ("10.0.0.5:50051,10.0.0.6:0", "needs a port"),
        ("10.0.0.5:50051,10.0.0.6:70000", "needs a port"),
        ("10.0.0.5:50051,10.0.0.6:http", "needs a port"),
    ],
)
def test_channel_target_refuses_what_grpc_cannot_balance(given: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        channel_target(given)


# -- two real scanner replicas behind one channel ------------------------------------------

MARKER = "zqxreplica"


def _replica_rules(tmp_path: Path, name: str) -> Path:
    """A rule only this replica has: its finding names the replica that scanned."""
    path = tmp_path / f"replica-{name}.yaml"
    path.write_text(
        "rules:\n"
        f"  - id: replica.{name}\n"
        "    family: obfuscation\n"
        "    severity: low\n"
        "    confidence: 0.01\n"
        f"    message: scanned by replica {name}\n"
        f"    patterns: ['{MARKER}']\n"
    )
    return path


async def _scanned_by(stub: pb_grpc.ScannerServiceStub) -> str:
    reply = await stub.Scan(pb.ScanRequest(text=f"hello {MARKER}"), timeout=5)
    replicas = [f.rule_id for f in reply.findings if f.rule_id.startswith("replica.")]
    assert len(replicas) == 1, replicas
    return replicas[0].removeprefix("replica.")


async def test_two_scanner_replicas_share_the_calls_and_survive_one_dying(
    tmp_path: Path,
) -> None:
    from mithril.services.scanner.config import ScannerSettings
    from mithril.services.scanner.server import create_server

    replicas = {}
    for name in ("a", "b"):
        settings = ScannerSettings(
            host="127.0.0.1", port=0, rule_files=[_replica_rules(tmp_path, name)]
        )
        replicas[name] = await create_server(settings)
        await replicas[name].server.start()
    channel = open_channel(",".join(f"127.0.0.1:{r.port}" for r in replicas.values()))
    try:
        stub = pb_grpc.ScannerServiceStub(channel)
        # Until both connections are up, round robin uses the ready one only.
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 10
        seen: collections.Counter[str] = collections.Counter()
        while len(seen) < 2 and loop.time() < deadline:
            seen[await _scanned_by(stub)] += 1
        assert set(seen) == {"a", "b"}
        served = collections.Counter(await asyncio.gather(*(_scanned_by(stub) for _ in range(40))))
        assert served["a"] >= 10 and served["b"] >= 10, served

        # One replica stops abruptly while calls are in flight: every call is answered
        # (a call it dropped is retried on the other), then the survivor serves all.
        calls = [asyncio.ensure_future(_scanned_by(stub)) for _ in range(40)]
        await asyncio.sleep(0)
        await replicas["b"].server.stop(0)
        answered = await asyncio.gather(*calls)
        assert len(answered) == 40
        after = collections.Counter(await asyncio.gather(*(_scanned_by(stub) for _ in range(20))))
        assert after == {"a": 20}
    finally:
        await channel.close()
        for replica in replicas.values():
            await replica.server.stop(0)


class _Replica(grpc.GenericRpcHandler):
    """Answers every call with its name, or fails it with `fails_with` (a server going away
    or stopping); counts the calls of each method."""

    def __init__(self, name: str, fails_with: grpc.StatusCode | None = None) -> None:
        self.name = name
        self.fails_with = fails_with
        self.calls: collections.Counter[str] = collections.Counter()

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
        method = details.method  # type: ignore[attr-defined]

        async def answer(_request: bytes, context: grpc.aio.ServicerContext) -> bytes:
            self.calls[method] += 1
            if self.fails_with is not None:
                await context.abort(self.fails_with, "going away")
            return self.name.encode()

        return grpc.unary_unary_rpc_method_handler(answer)


async def test_a_read_a_stopping_replica_cancels_is_answered_by_another() -> None:
    """A replica past its shutdown grace cancels the calls it still serves (CI saw one so
    in the test above): a read-only call is retried on the next replica."""
    stopping = _Replica("stopping", fails_with=grpc.StatusCode.CANCELLED)
    serving = _Replica("serving")
    servers = []
    for handler in (stopping, serving):
        server = grpc.aio.server()
        server.add_generic_rpc_handlers((handler,))
        servers.append((server, server.add_insecure_port("127.0.0.1:0")))
        await server.start()
    channel = open_channel(",".join(f"127.0.0.1:{port}" for _, port in servers))
    try:
        scan = channel.unary_unary("/mithril.scanner.v1.ScannerService/Scan")
        answers = [await scan(b"", timeout=5, wait_for_ready=True) for _ in range(20)]
        assert sum(stopping.calls.values()) >= 1  # round robin sent it some
        assert set(answers) == {b"serving"}
        # A call that changes state is not retried: its cancellation reaches the caller.
        record = channel.unary_unary("/mithril.reputation.v1.ReputationService/RecordOutcome")
        failed = 0
        for _ in range(4):
            try:
                await record(b"", timeout=5)
            except grpc.aio.AioRpcError as error:
                assert error.code() == grpc.StatusCode.CANCELLED
                failed += 1
        assert failed >= 1
    finally:
        await channel.close()
        for server, _ in servers:
            await server.stop(0)


async def test_calls_that_change_state_are_not_retried(tmp_path: Path) -> None:
    """A dropped RecordOutcome might have been applied: it fails, it is not sent twice."""
    handler = _Replica("going", fails_with=grpc.StatusCode.UNAVAILABLE)
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = open_channel(f"127.0.0.1:{port},127.0.0.1:{port}")
    try:
        for method in (
            "/mithril.reputation.v1.ReputationService/RecordOutcome",
            "/mithril.reputation.v1.ReputationService/GetReputation",
        ):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await channel.unary_unary(method)(b"", timeout=5)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
        assert handler.calls["/mithril.reputation.v1.ReputationService/RecordOutcome"] == 1
        assert handler.calls["/mithril.reputation.v1.ReputationService/GetReputation"] == 3
    finally:
        await channel.close()
        await server.stop(0)


async def test_a_new_channel_connects_afresh_beside_one_backing_off() -> None:
    """A channel opened to an address where another channel of this process is waiting out
    its reconnect backoff (its service was down a moment ago) connects now: gRPC's global
    subchannel pool would hand it the failing connection, and its first call would fail."""
    port = free_port()
    stale = open_channel(f"127.0.0.1:{port}")
    fresh: grpc.aio.Channel | None = None
    server = grpc.aio.server()
    try:
        for _ in range(4):  # a few refused connections: the backoff grows towards a second
            with pytest.raises(grpc.aio.AioRpcError):
                await stale.unary_unary("/test.Echo/Call")(b"", timeout=0.5, wait_for_ready=True)

        class Echo(grpc.GenericRpcHandler):
            def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler:
                async def echo(request: bytes, _context: grpc.aio.ServicerContext) -> bytes:
                    return request

                return grpc.unary_unary_rpc_method_handler(echo)

        server.add_generic_rpc_handlers((Echo(),))
        assert server.add_insecure_port(f"127.0.0.1:{port}") == port
        await server.start()
        fresh = open_channel(f"127.0.0.1:{port}")
        assert await fresh.unary_unary("/test.Echo/Call")(b"hello", timeout=5) == b"hello"
    finally:
        await stale.close()
        if fresh is not None:
            await fresh.close()
        await server.stop(0)
