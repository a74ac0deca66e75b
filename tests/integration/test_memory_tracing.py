"""One /v1/memory/remember is one trace across the gateway, the memory gate and the
services it calls; no span holds the claim or the credential planted in it."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest

from mithril.runtime import attributes
from tests.memory_stack import MemoryStack, shared_stack

pytestmark = pytest.mark.slow

CANARY_KEY = "AKIAQ3EGRZLNW7T2X5PB"


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest) -> MemoryStack:
    return shared_stack(request)


async def test_remember_is_one_trace_across_services_and_holds_no_text(
    stack: MemoryStack, spans
) -> None:  # type: ignore[no-untyped-def]
    claim = f"Tracing note {uuid.uuid4().hex[:6]}: the job key is {CANARY_KEY}"
    async with httpx.AsyncClient(base_url=stack.url, headers=stack.bearer, timeout=120) as http:
        response = await http.post(
            "/v1/memory/remember", json={"claim": claim, "source": "trace-agent"}
        )
    assert response.status_code == 200
    decision_id = response.json()["decision"]["decision_id"]
    # The gateway ends its HTTP span once the last body message is sent, which can be just
    # after the client has the response: wait for it rather than race it.
    deadline = asyncio.get_running_loop().time() + 10
    while True:
        finished = spans.get_finished_spans()
        (gate,) = [
            s
            for s in finished
            if s.name == "/mithril.memorygate.v1.MemoryGateService/Remember"
            and s.kind.name == "SERVER"
            and (s.attributes or {}).get(attributes.DECISION_ID) == decision_id
        ]
        trace = [s for s in finished if s.context.trace_id == gate.context.trace_id]
        names = {s.name for s in trace}
        if "POST /v1/memory/remember" in names or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.05)
    assert "POST /v1/memory/remember" in names  # the gateway's HTTP span is the root
    # The claim and its metadata are guarded in one call: Detect or DetectBatch.
    assert names & {
        "/mithril.secrets.v1.SecretsService/Detect",
        "/mithril.secrets.v1.SecretsService/DetectBatch",
    }
    for call in (
        "/mithril.scanner.v1.ScannerService/Scan",
        "/mithril.reputation.v1.ReputationService/GetReputation",
        "/mithril.reputation.v1.ReputationService/RecordOutcome",
    ):
        assert call in names, call
    assert gate.attributes[attributes.MEMORY_STATUS] in {"quarantine", "reject", "review"}
    for span in trace:
        for key, value in (span.attributes or {}).items():
            assert CANARY_KEY not in str(value), (span.name, key)
            assert "Tracing note" not in str(value), (span.name, key)
