"""ReputationService over real gRPC, on SQLite and PostgreSQL, through the raw stub and
through `ReputationClient`; several client processes at once give the sequential result."""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import os
import signal
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from multiprocessing.synchronize import Barrier
from pathlib import Path

import grpc
import pytest
import pytest_asyncio
from google.rpc import code_pb2, error_details_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mithril.reputation.v1 import reputation_service_pb2 as pb
from mithril.reputation.v1 import reputation_service_pb2_grpc as pb_grpc
from mithril.runtime import attributes
from mithril.runtime.errors import details_of
from mithril.services.reputation.client import ReputationClient, ReputationUnavailable
from mithril.services.reputation.config import ReputationSettings
from mithril.services.reputation.ewma import EwmaParams, Outcome, initial, repeated, replay
from mithril.services.reputation.model import ReputationArgumentError, ReputationChange
from mithril.services.reputation.server import ReputationServer, create_server
from tests.conftest import REPO, free_port

TOKEN = "reputation-test-token"
WORKERS = 4
PER_WORKER = 25
MIXED = "Mixed Agent"
SAME = "Steady Agent"
PRIORS = {MIXED: 0.5, SAME: 0.3}
# Small rates, so 100 good outcomes stay below the ceiling and a lost one would show.
PARAMS = EwmaParams(good_rate=0.02, bad_rate=0.03, floor=0.05, ceiling=0.99)


@pytest.fixture
def reputation_db_url(event_store_url: str) -> str:
    """An empty database, SQLite or PostgreSQL (a throwaway schema); see tests/conftest.py."""
    return event_store_url


Start = Callable[..., Awaitable[tuple[ReputationServer, ReputationClient]]]


@pytest_asyncio.fixture
async def start(reputation_db_url: str, tmp_path: Path) -> AsyncIterator[Start]:
    """Start a reputation service (port 0) on the test database with settings overrides;
    returns it and a client holding the right token."""
    servers: list[ReputationServer] = []
    clients: list[ReputationClient] = []
    priors = tmp_path / "priors.yaml"
    priors.write_text(
        "priors:\n  Security Policy: 0.98\n  Slack: 0.60\n"
        + "".join(f"  {name}: {value}\n" for name, value in PRIORS.items())
    )

    async def make(**overrides: object) -> tuple[ReputationServer, ReputationClient]:
        values: dict[str, object] = {
            "host": "127.0.0.1",
            "port": 0,
            "database_url": reputation_db_url,
            "priors_file": priors,
            "auth_token": TOKEN,
            "grace_seconds": 0,
        }
        values.update(overrides)
        handle = await create_server(ReputationSettings(**values))  # type: ignore[arg-type]
        await handle.server.start()
        servers.append(handle)
        client = ReputationClient(f"127.0.0.1:{handle.port}", token=TOKEN, timeout=10)
        clients.append(client)
        return handle, client

    yield make
    for client in clients:
        await client.close()
    for server in servers:
        await server.stop(0)


def stub_of(client: ReputationClient) -> pb_grpc.ReputationServiceStub:
    return pb_grpc.ReputationServiceStub(client.channel)


AUTH = (("authorization", f"Bearer {TOKEN}"),)


async def test_serving_and_the_full_round_trip(start: Start) -> None:
    _, client = await start()
    health = health_pb2_grpc.HealthStub(client.channel)
    for service in ("", "mithril.reputation.v1.ReputationService"):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING

    stub = stub_of(client)
    unseen = await stub.GetReputation(pb.GetReputationRequest(source=" slack"), metadata=AUTH)
    assert (unseen.reputation.source, unseen.reputation.score) == ("Slack", 0.60)
    assert not unseen.reputation.HasField("update_time")

    good = await stub.RecordOutcome(
        pb.RecordOutcomeRequest(
            source="SLACK", outcome=pb.OUTCOME_GOOD, reason="accepted", decision_id="d-1"
        ),
        metadata=AUTH,
    )
    assert good.reputation.score == pytest.approx(0.64)
    assert (good.reputation.good_count, good.reputation.bad_count) == (1, 0)
    assert good.reputation.HasField("update_time")

    bad = await client.record("slack", Outcome.BAD, "contradiction", "d-2")
    assert float(bad) == pytest.approx(0.64 * 0.78)
    neutral = await client.record("Slack", "neutral", "review", "d-3")
    assert neutral.score == bad.score and neutral.bad_count == 1
    await client.record("Newcomer", Outcome.GOOD)
    assert (await client.get("newcomer")).score == pytest.approx(0.30 + 0.1 * 0.7)

    listed = await client.list(page_size=1)
    assert [r.source for r in listed.items] == ["Newcomer"] and listed.next_page_token
    rest = await client.list(page_token=listed.next_page_token)
    assert [r.source for r in rest.items] == ["Slack"] and rest.next_page_token == ""
    assert rest.items[0] == await client.get("Slack")

    history = await client.history("Slack", page_size=2)
    assert [c.decision_id for c in history.items] == ["d-3", "d-2"]
    older = await client.history("Slack", page_size=2, page_token=history.next_page_token)
    assert [(c.outcome, c.reason) for c in older.items] == [(Outcome.GOOD, "accepted")]
    assert older.items[0].old_score == 0.60 and older.next_page_token == ""

    assert await client.reset("Slack") == 1
    assert (await client.get("Slack")).score == 0.60
    raw = await stub.GetHistory(pb.GetHistoryRequest(source="Slack"), metadata=AUTH)
    assert raw.changes[0].outcome == pb.OUTCOME_UNSPECIFIED
    assert raw.changes[0].reason == "reset" and raw.changes[0].new_score == 0.60
    assert await client.reset() == 2
    assert (await client.get("Newcomer")).score == 0.30


@pytest.mark.parametrize(
    ("method", "request_message", "field"),
    [
        ("RecordOutcome", pb.RecordOutcomeRequest(source="Slack"), "outcome"),
        ("RecordOutcome", pb.RecordOutcomeRequest(source="Slack", outcome=9), "outcome"),  # type: ignore[arg-type]
        ("RecordOutcome", pb.RecordOutcomeRequest(outcome=pb.OUTCOME_GOOD), "source"),
        ("RecordOutcome", pb.RecordOutcomeRequest(source=" \t", outcome=pb.OUTCOME_BAD), "source"),
        ("GetReputation", pb.GetReputationRequest(source="x" * 201), "source"),
        ("GetHistory", pb.GetHistoryRequest(), "source"),
        ("GetHistory", pb.GetHistoryRequest(source="Slack", page_token="bogus"), "page_token"),
        ("ListReputations", pb.ListReputationsRequest(page_token="bogus"), "page_token"),
        ("ListReputations", pb.ListReputationsRequest(page_size=-5), "page_size"),
        ("ResetReputation", pb.ResetReputationRequest(source="   "), "source"),
    ],
)
async def test_invalid_arguments_carry_a_bad_request(
    start: Start, method: str, request_message: object, field: str
) -> None:
    _, client = await start()
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await getattr(stub_of(client), method)(request_message, metadata=AUTH)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    status = details_of(error.value)
    assert status is not None and status.code == code_pb2.INVALID_ARGUMENT
    bad_request = error_details_pb2.BadRequest()
    assert status.details[0].Unpack(bad_request)
    assert [v.field for v in bad_request.field_violations] == [field]
    assert (await client.list()).items == []  # nothing was written


async def test_a_history_token_only_continues_its_own_source(start: Start) -> None:
    _, client = await start()
    for _ in range(3):
        await client.record("Slack", Outcome.GOOD)
    token = (await client.history("Slack", page_size=1)).next_page_token
    with pytest.raises(ReputationArgumentError) as error:
        await client.history("Pastebin", page_token=token)
    assert error.value.field == "page_token"


async def test_client_errors(start: Start) -> None:
    handle, client = await start()
    with pytest.raises(ReputationArgumentError) as error:
        await client.record("   ", Outcome.GOOD)
    assert error.value.field == "source"
    with pytest.raises(ValueError):
        await client.record("Slack", "excellent")  # refused before any call

    anonymous = ReputationClient(f"127.0.0.1:{handle.port}")
    try:
        with pytest.raises(grpc.aio.AioRpcError) as denied:
            await anonymous.get("Slack")
        assert denied.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await anonymous.close()

    nobody = ReputationClient(f"127.0.0.1:{free_port()}", timeout=0.5)
    try:
        with pytest.raises(ReputationUnavailable):
            await nobody.get("Slack")
    finally:
        await nobody.close()


async def test_client_on_a_channel_it_does_not_own(start: Start) -> None:
    handle, _ = await start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{handle.port}")
    async with ReputationClient(channel, token=TOKEN) as client:
        assert (await client.get("Security Policy")).score == 0.98
    # Still open: the client did not close what it was given.
    health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    await channel.close()


async def test_spans_carry_service_score_and_decision(start: Start, spans) -> None:  # type: ignore[no-untyped-def]
    _, client = await start()
    updated = await client.record("Slack", Outcome.BAD, "contradiction", "decision-77")
    (span,) = [
        s
        for s in spans.get_finished_spans()
        if s.name.endswith("ReputationService/RecordOutcome") and s.kind.name == "SERVER"
    ]
    assert span.attributes[attributes.SERVICE] == "reputation"
    assert span.attributes[attributes.SCORE] == updated.score
    assert span.attributes[attributes.DECISION_ID] == "decision-77"
    assert all("Slack" not in str(value) for value in span.attributes.values())


# -- several processes at once --------------------------------------------------------


def _client_worker(target: str, worker: int, start: Barrier) -> None:
    async def run() -> None:
        async with ReputationClient(target, token=TOKEN, timeout=30) as client:
            await client.get(MIXED)  # connected before the race starts
            start.wait(timeout=60)
            for step in range(PER_WORKER):
                outcome = Outcome.BAD if (worker + step) % 3 == 0 else Outcome.GOOD
                await client.record(MIXED, outcome, "mixed", f"{worker}-{step}")
                await client.record(SAME, Outcome.GOOD, "same", f"{worker}-{step}")

    asyncio.run(run())


def _run_workers(target: str) -> list[int | None]:
    # A fork server with the modules preloaded: no fork of this threaded process, and no
    # second of imports per worker.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["mithril.services.reputation", "grpc"])
    start = context.Barrier(WORKERS)
    processes = [
        context.Process(target=_client_worker, args=(target, worker, start))
        for worker in range(WORKERS)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    return [process.exitcode for process in processes]


async def chronological_history(client: ReputationClient, source: str) -> list[ReputationChange]:
    changes: list[ReputationChange] = []
    token = ""
    while True:
        page = await client.history(source, page_size=30, page_token=token)
        changes += page.items
        token = page.next_page_token
        if not token:
            return changes[::-1]


async def assert_sequential(client: ReputationClient, source: str) -> list[ReputationChange]:
    """(a) one history row per call, (b) an unbroken chain, (c) replay reproduces the score."""
    changes = await chronological_history(client, source)
    assert len(changes) == WORKERS * PER_WORKER
    assert len({c.decision_id for c in changes}) == WORKERS * PER_WORKER
    start = initial(PRIORS[source], PARAMS)
    assert changes[0].old_score == start
    for earlier, later in itertools.pairwise(changes):
        assert later.old_score == earlier.new_score
    final = await client.get(source)
    assert final.score == changes[-1].new_score
    assert final.score == replay(start, [c.outcome for c in changes], PARAMS)  # type: ignore[misc]
    assert final.good_count + final.bad_count == WORKERS * PER_WORKER
    return changes


@pytest.mark.slow
async def test_client_processes_at_once_equal_one_at_a_time(start: Start) -> None:
    handle, client = await start(
        good_rate=PARAMS.good_rate,
        bad_rate=PARAMS.bad_rate,
        floor=PARAMS.floor,
        ceiling=PARAMS.ceiling,
    )
    exit_codes = await asyncio.to_thread(_run_workers, f"127.0.0.1:{handle.port}")
    assert exit_codes == [0] * WORKERS
    mixed = await assert_sequential(client, MIXED)
    assert {c.outcome for c in mixed} == {Outcome.GOOD, Outcome.BAD}
    await assert_sequential(client, SAME)
    total = WORKERS * PER_WORKER
    expected = repeated(PRIORS[SAME], Outcome.GOOD, total, PARAMS)
    assert expected < PARAMS.ceiling
    assert abs((await client.get(SAME)).score - expected) < 1e-12


# -- the process ----------------------------------------------------------------------


@pytest.mark.slow
async def test_python_dash_m_serves_until_sigterm(tmp_path: Path) -> None:
    port = free_port()
    env = {
        **os.environ,
        "MITHRIL_HOME": str(tmp_path / "home"),
        "MITHRIL_REPUTATION_HOST": "127.0.0.1",
        "MITHRIL_REPUTATION_PORT": str(port),
        "MITHRIL_REPUTATION_GRACE_SECONDS": "0",
        "MITHRIL_REPUTATION_AUTH_TOKEN": "",
        "MITHRIL_REPUTATION_DATABASE_URL": "",
        "OTEL_SDK_DISABLED": "true",
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "mithril.services.reputation",
        cwd=REPO,
        env=env,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        async with ReputationClient(f"127.0.0.1:{port}", timeout=1) as client:
            health = health_pb2_grpc.HealthStub(client.channel)
            for _ in range(150):
                try:
                    reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        break
                except grpc.aio.AioRpcError:
                    pass
                if process.returncode is not None:
                    stderr = await process.stderr.read() if process.stderr else b""
                    pytest.fail(f"the service exited: {stderr.decode(errors='replace')}")
                await asyncio.sleep(0.1)
            else:
                pytest.fail("the reputation service did not become SERVING")
            assert (await client.record("Slack", Outcome.GOOD)).score == pytest.approx(0.64)
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 20) == 0
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
    assert (tmp_path / "home" / "reputation.db").exists()
