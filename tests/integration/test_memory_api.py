"""`/v1/memory/*` on the gateway, over real HTTP, in front of the real memory gate (embedded
Cognee), reputation, secrets and scanner services (`tests.memory_stack`).

Remember answers the decision; a planted credential is redacted before anything keeps it
and never comes back in any answer; recall returns verified memory only; held claims are
listed, shown and reviewed once; the audit log records decisions and reviews; reputations
are listed, shown with their history and reset; every error is the OpenAI envelope.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from mithril.gateway.policy import hash_key
from mithril.gateway.server import Gateway, create_gateway
from mithril.services.reputation.config import ReputationSettings
from mithril.services.reputation.server import create_server as create_reputation
from tests.conftest import free_port
from tests.integration.conftest import Services, gateway_settings
from tests.memory_stack import MemoryStack, shared_stack

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

AWS_KEY = "AKIAQ3EGRZLNW7T2X5PB"
TRUSTED = "Security Policy"  # prior 0.98: a fresh claim from it is stored
STATUSES = {"accept", "warn", "review", "quarantine", "reject"}
HELD = {"review", "quarantine", "reject"}
SIGNALS = {"reputation", "corroboration", "freshness", "contradiction", "danger"}
DECISION_KEYS = {
    "decision_id",
    "status",
    "trust_score",
    "signals",
    "weights",
    "redacted_kinds",
    "findings",
    "stored",
    "quarantine_id",
    "reasons",
}
HELD_KEYS = {"id", "claim", "source", "status", "decision", "create_time", "review_verdict"}
HELD_KEYS |= {"reviewer"}


@pytest.fixture(scope="module")
def stack(request: pytest.FixtureRequest) -> MemoryStack:
    return shared_stack(request)


@pytest_asyncio.fixture
async def http(stack: MemoryStack) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=stack.url, timeout=120) as client:
        yield client


@pytest.fixture
def admin(stack: MemoryStack) -> dict[str, str]:
    return stack.bearer


def unique(name: str) -> str:
    return f"{name}-{uuid.uuid4().hex[:8]}"


def assert_envelope(
    response: httpx.Response, status: int, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) == {"message", "type", "code", "param"}
    assert error["message"]
    if code is not None:
        assert error["code"] == code, error
    if param is not None:
        assert error["param"] == param, error
    return error


async def remember(
    http: httpx.AsyncClient, claim: str, source: str, **extra: Any
) -> dict[str, Any]:
    response = await http.post(
        "/v1/memory/remember", json={"claim": claim, "source": source, **extra}
    )
    assert response.status_code == 200, response.text
    body = response.json()
    assert set(body) == {"decision"}
    return body["decision"]  # type: ignore[no-any-return]


def assert_decision(decision: dict[str, Any]) -> None:
    assert set(decision) == DECISION_KEYS
    assert decision["status"] in STATUSES
    assert 0.0 <= decision["trust_score"] <= 1.0
    assert set(decision["signals"]) == SIGNALS
    assert set(decision["weights"]) == SIGNALS
    assert decision["stored"] == (decision["status"] in ("accept", "warn"))
    assert bool(decision["quarantine_id"]) == (not decision["stored"])
    for finding in decision["findings"]:
        assert set(finding) == {
            "rule_id",
            "detector",
            "category",
            "severity",
            "confidence",
            "message",
            "kind",
        }


async def audit_of(http: httpx.AsyncClient, admin: dict[str, str], source: str) -> list[Any]:
    response = await http.get("/v1/memory/audit", params={"source": source}, headers=admin)
    assert response.status_code == 200, response.text
    return response.json()["data"]  # type: ignore[no-any-return]


# -- remember and recall ----------------------------------------------------------------------


async def test_remember_answers_the_decision_and_recall_finds_it(http, admin) -> None:  # type: ignore[no-untyped-def]
    topic = unique("heliotrope")
    claim = f"The {topic} build server moved to build-7.internal on port 8443."
    decision = await remember(
        http,
        claim,
        TRUSTED,
        metadata={"ticket": "OPS-1"},
        observed_at="2030-01-01T00:00:00Z",
    )
    assert_decision(decision)
    assert decision["stored"], decision
    recalled = await http.post("/v1/memory/recall", json={"query": f"{topic} build server"})
    assert recalled.status_code == 200, recalled.text
    memories = recalled.json()["memories"]
    assert memories and all(
        set(m) == {"text", "source", "score", "low_confidence"} for m in memories
    )
    mine = [m for m in memories if topic in m["text"]]
    assert mine and mine[0]["source"] == TRUSTED


async def test_recall_returns_verified_memory_only(http) -> None:  # type: ignore[no-untyped-def]
    topic = unique("marigold")
    stored = await remember(http, f"The {topic} team deploys on Tuesdays.", TRUSTED)
    held = await remember(http, f"The {topic} team deploys on Saturdays at 3am.", unique("agent"))
    assert stored["stored"] and not held["stored"], (stored, held)
    recalled = await http.post(
        "/v1/memory/recall", json={"query": f"when does {topic} deploy", "top_k": 20}
    )
    texts = [m["text"] for m in recalled.json()["memories"]]
    assert any("Tuesdays" in t for t in texts if topic in t)
    assert not any("Saturdays" in t for t in texts if topic in t)


async def test_a_planted_key_is_redacted_and_never_comes_back(http, admin) -> None:  # type: ignore[no-untyped-def]
    source = unique("agent")
    topic = unique("cobalt")
    decision = await remember(
        http, f"The {topic} deploy bot uses the AWS key {AWS_KEY} for S3 uploads.", source
    )
    assert_decision(decision)
    assert "aws_access_key" in decision["redacted_kinds"]
    seen: list[str] = [str(decision)]
    if decision["quarantine_id"]:
        held = await http.get(f"/v1/memory/quarantine/{decision['quarantine_id']}", headers=admin)
        assert held.status_code == 200
        assert "[REDACTED:aws_access_key]" in held.json()["claim"]
        seen.append(held.text)
    listing = await http.get(
        "/v1/memory/quarantine",
        params={"include_reviewed": "true", "page_size": 500},
        headers=admin,
    )
    seen.append(listing.text)
    seen.append(str(await audit_of(http, admin, source)))
    recalled = await http.post("/v1/memory/recall", json={"query": f"{topic} AWS key"})
    seen.append(recalled.text)
    history = await http.get(f"/v1/memory/reputation/{source}/history", headers=admin)
    seen.append(history.text)
    for text in seen:
        assert AWS_KEY not in text


# -- quarantine and review --------------------------------------------------------------------


async def test_quarantine_list_detail_review_and_recall(http, admin) -> None:  # type: ignore[no-untyped-def]
    topic = unique("vermilion")
    source = unique("agent")
    claim = f"The {topic} cluster's on-call rotation is handled by team Nimbus."
    decision = await remember(http, claim, source)
    assert decision["status"] in HELD, decision
    held_id = decision["quarantine_id"]

    listing = await http.get(
        "/v1/memory/quarantine", params={"status": decision["status"]}, headers=admin
    )
    assert listing.status_code == 200, listing.text
    page = listing.json()
    assert set(page) == {"data", "next_page_token"}
    found = [h for h in page["data"] if h["id"] == held_id]
    assert found and set(found[0]) == HELD_KEYS
    assert found[0]["status"] == decision["status"]
    assert found[0]["review_verdict"] is None
    assert all(h["status"] == decision["status"] for h in page["data"])

    detail = (await http.get(f"/v1/memory/quarantine/{held_id}", headers=admin)).json()
    assert detail["claim"] == claim and detail["source"] == source
    assert detail["decision"]["decision_id"] == decision["decision_id"]
    assert detail["create_time"].endswith("Z")

    reviewed = await http.post(
        f"/v1/memory/quarantine/{held_id}/review",
        json={"verdict": "approve", "reviewer": "alice", "note": "checked with Nimbus"},
        headers=admin,
    )
    assert reviewed.status_code == 200, reviewed.text
    assert reviewed.json()["review_verdict"] == "approve"
    assert reviewed.json()["reviewer"] == "alice"

    recalled = await http.post("/v1/memory/recall", json={"query": f"{topic} on-call rotation"})
    assert any(topic in m["text"] for m in recalled.json()["memories"])

    pending = await http.get("/v1/memory/quarantine", params={"page_size": 500}, headers=admin)
    assert held_id not in {h["id"] for h in pending.json()["data"]}
    everything = await http.get(
        "/v1/memory/quarantine",
        params={"include_reviewed": "true", "page_size": 500},
        headers=admin,
    )
    assert held_id in {h["id"] for h in everything.json()["data"]}

    again = await http.post(
        f"/v1/memory/quarantine/{held_id}/review",
        json={"verdict": "reject", "reviewer": "bob"},
        headers=admin,
    )
    assert_envelope(again, 409, "already_reviewed")

    events = await audit_of(http, admin, source)
    kinds = [e["event_type"] for e in events]
    assert kinds[0] == "review" and "decision" in kinds  # newest first
    assert events[0]["reviewer"] == "alice"
    assert all(e["source"] == source for e in events)
    assert set(events[0]) == {"id", "event_type", "source", "reviewer", "create_time", "decision"}


async def test_rejected_review_stays_out_of_memory(http, admin) -> None:  # type: ignore[no-untyped-def]
    topic = unique("saffron")
    decision = await remember(http, f"The {topic} office closes at noon.", unique("agent"))
    held_id = decision["quarantine_id"]
    reviewed = await http.post(
        f"/v1/memory/quarantine/{held_id}/review",
        json={"verdict": "reject", "reviewer": "carol"},
        headers=admin,
    )
    assert reviewed.json()["review_verdict"] == "reject"
    recalled = await http.post("/v1/memory/recall", json={"query": f"{topic} office hours"})
    assert not any(topic in m["text"] for m in recalled.json()["memories"])


async def test_paging_through_the_audit_log(http, admin) -> None:  # type: ignore[no-untyped-def]
    source = unique("agent")
    for n in range(3):
        await remember(http, f"Fact number {n} about {source}.", source)
    first = (
        await http.get("/v1/memory/audit", params={"source": source, "page_size": 2}, headers=admin)
    ).json()
    assert len(first["data"]) == 2 and first["next_page_token"]
    second = (
        await http.get(
            "/v1/memory/audit",
            params={"source": source, "page_size": 2, "page_token": first["next_page_token"]},
            headers=admin,
        )
    ).json()
    assert len(second["data"]) == 1 and second["next_page_token"] == ""
    ids = [e["id"] for e in first["data"] + second["data"]]
    assert len(set(ids)) == 3


# -- reputation and improve -------------------------------------------------------------------


async def test_reputation_list_get_history_and_reset(http, admin) -> None:  # type: ignore[no-untyped-def]
    source = unique("agent")
    await remember(http, f"{source} says the cafeteria serves soup on Mondays.", source)
    listing = await http.get("/v1/memory/reputation", params={"page_size": 500}, headers=admin)
    assert listing.status_code == 200, listing.text
    assert set(listing.json()) == {"data", "next_page_token"}
    one = await http.get(f"/v1/memory/reputation/{source}", headers=admin)
    assert one.status_code == 200, one.text
    item = one.json()
    assert set(item) == {"source", "score", "prior", "update_time", "good_count", "bad_count"}
    assert item["source"] == source

    # A source with a space and a slash in its name survives the URL.
    odd = f"team a/{unique('b')}"
    await remember(http, "The printer on floor 3 is out of toner.", odd)
    fetched = await http.get(
        f"/v1/memory/reputation/{httpx.URL(odd).raw_path.decode()}", headers=admin
    )
    assert fetched.status_code == 200 and fetched.json()["source"] == odd

    # An unknown agent's held claim, rejected on review, is a bad outcome.
    decision = await remember(http, f"{source} says the cafeteria is closed forever.", source)
    await http.post(
        f"/v1/memory/quarantine/{decision['quarantine_id']}/review",
        json={"verdict": "reject", "reviewer": "dave"},
        headers=admin,
    )
    history = await http.get(f"/v1/memory/reputation/{source}/history", headers=admin)
    assert history.status_code == 200, history.text
    changes = history.json()["data"]
    for change in changes:
        assert set(change) == {
            "source",
            "old_score",
            "new_score",
            "outcome",
            "reason",
            "decision_id",
            "create_time",
        }
        assert change["outcome"] in {"good", "bad", "neutral"}
        assert change["source"] == source
    assert any(c["outcome"] == "bad" for c in changes), changes
    lowered = (await http.get(f"/v1/memory/reputation/{source}", headers=admin)).json()
    assert lowered["score"] < lowered["prior"]

    reset = await http.post("/v1/memory/reputation/reset", json={"source": source}, headers=admin)
    assert reset.status_code == 200, reset.text
    assert reset.json() == {"reset_count": 1}
    after = (await http.get(f"/v1/memory/reputation/{source}", headers=admin)).json()
    assert after["score"] == pytest.approx(after["prior"])

    everyone = await http.post("/v1/memory/reputation/reset", headers=admin)
    assert everyone.status_code == 200, everyone.text
    assert everyone.json()["reset_count"] >= 2


async def test_improve(http, admin) -> None:  # type: ignore[no-untyped-def]
    response = await http.post("/v1/memory/improve", headers=admin)
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"summary"}
    assert isinstance(response.json()["summary"], str) and response.json()["summary"]


# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "code", "param"),
    [
        ({"claim": "", "source": "x"}, "empty_text", "claim"),
        ({"claim": "   \n", "source": "x"}, "empty_text", "claim"),
        ({"source": "x"}, "invalid_value", "claim"),
        ({"claim": "a fact", "source": "  "}, "empty_text", "source"),
        ({"claim": "a fact"}, "invalid_value", "source"),
        ({"claim": 5, "source": "x"}, "invalid_value", "claim"),
        ({"claim": "a fact", "source": "x", "metadata": {"n": 1}}, "invalid_value", "metadata.n"),
        ({"claim": "a fact", "source": "x", "metadata": ["a"]}, "invalid_value", "metadata"),
        ({"claim": "a fact", "source": "x", "observed_at": "yesterday"}, None, "observed_at"),
        ({"claim": "a fact", "source": "x", "extra": 1}, "invalid_value", "extra"),
        ({"claim": "a fact", "source": "x" * 201}, "invalid_value", "source"),
    ],
)
async def test_remember_rejects_bad_bodies(http, body, code, param) -> None:  # type: ignore[no-untyped-def]
    assert_envelope(await http.post("/v1/memory/remember", json=body), 400, code, param)


async def test_bad_json_and_oversized_claims(http) -> None:  # type: ignore[no-untyped-def]
    response = await http.post(
        "/v1/memory/remember", content=b'{"claim": ', headers={"content-type": "application/json"}
    )
    assert_envelope(response, 400, "invalid_json")
    # The memory gate's own limit (8000 characters): RESOURCE_EXHAUSTED becomes 413.
    big = await http.post("/v1/memory/remember", json={"claim": "x" * 8001, "source": "x"})
    assert_envelope(big, 413, param="claim")


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"query": ""}, "query"),
        ({"query": "x", "top_k": 0}, "top_k"),
        ({"query": "x", "top_k": "3"}, "top_k"),
    ],
)
async def test_recall_rejects_bad_bodies(http, body, param) -> None:  # type: ignore[no-untyped-def]
    assert_envelope(await http.post("/v1/memory/recall", json=body), 400, param=param)


async def test_review_and_query_errors(http, admin) -> None:  # type: ignore[no-untyped-def]
    decision = await remember(http, f"{unique('x')} is a placeholder fact.", unique("agent"))
    path = f"/v1/memory/quarantine/{decision['quarantine_id']}/review"
    assert_envelope(
        await http.post(path, json={"verdict": "maybe", "reviewer": "a"}, headers=admin),
        400,
        param="verdict",
    )
    assert_envelope(
        await http.post(path, json={"verdict": "approve", "reviewer": " "}, headers=admin),
        400,
        param="reviewer",
    )
    assert_envelope(
        await http.post(path, json={"verdict": "approve"}, headers=admin), 400, param="reviewer"
    )
    assert_envelope(
        await http.get("/v1/memory/quarantine", params={"status": "accept"}, headers=admin),
        400,
        param="status",
    )
    assert_envelope(
        await http.get("/v1/memory/quarantine", params={"colour": "red"}, headers=admin),
        400,
        param="colour",
    )
    assert_envelope(
        await http.get("/v1/memory/audit", params={"page_size": "0"}, headers=admin),
        400,
        param="page_size",
    )
    # A token the memory gate never issued: its INVALID_ARGUMENT names the field.
    assert_envelope(
        await http.get("/v1/memory/audit", params={"page_token": "bm9wZQ"}, headers=admin),
        400,
        param="page_token",
    )


async def test_unknown_ids_are_404(http, admin) -> None:  # type: ignore[no-untyped-def]
    assert_envelope(
        await http.get("/v1/memory/quarantine/no-such-claim", headers=admin), 404, "not_found"
    )
    review = await http.post(
        "/v1/memory/quarantine/no-such-claim/review",
        json={"verdict": "approve", "reviewer": "a"},
        headers=admin,
    )
    assert_envelope(review, 404, "not_found")
    assert_envelope(
        await http.get(f"/v1/memory/quarantine/{'z' * 500}", headers=admin), 404, "not_found"
    )


ADMIN_ROUTES = [
    ("GET", "/v1/memory/quarantine", None),
    ("GET", "/v1/memory/quarantine/some-id", None),
    ("POST", "/v1/memory/quarantine/some-id/review", {"verdict": "approve", "reviewer": "a"}),
    ("GET", "/v1/memory/audit", None),
    ("GET", "/v1/memory/reputation", None),
    ("GET", "/v1/memory/reputation/Slack", None),
    ("GET", "/v1/memory/reputation/Slack/history", None),
    ("POST", "/v1/memory/reputation/reset", {}),
    ("POST", "/v1/memory/improve", None),
]


@pytest.mark.parametrize(("method", "path", "body"), ADMIN_ROUTES)
async def test_operator_routes_need_the_admin_token(http, method, path, body) -> None:  # type: ignore[no-untyped-def]
    missing = await http.request(method, path, json=body)
    assert_envelope(missing, 401, "missing_admin_token")
    wrong = await http.request(method, path, json=body, headers={"Authorization": "Bearer nope"})
    assert_envelope(wrong, 401, "invalid_admin_token")


async def test_the_dashboard_session_cookie_is_enough(http, stack) -> None:  # type: ignore[no-untyped-def]
    login = await http.post("/admin/login", json={"token": stack.token})
    assert login.status_code == 303
    cookie = login.cookies.get("mithril_admin")
    assert cookie
    response = await http.get("/v1/memory/reputation", cookies={"mithril_admin": cookie})
    assert response.status_code == 200, response.text


# -- gateways of their own ----------------------------------------------------------------


@pytest_asyncio.fixture
async def own_gateway(services: Services, tmp_path: Path) -> AsyncIterator[Any]:
    started: list[Gateway] = []

    async def make(**overrides: object) -> httpx.AsyncClient:
        values: dict[str, object] = {
            "admin_token": "own-admin-token",
            "database_url": f"sqlite:///{tmp_path}/events-{len(started)}.db",
        }
        values.update(overrides)
        gateway = await create_gateway(gateway_settings(services, **values))
        await gateway.start()
        started.append(gateway)
        client = httpx.AsyncClient(base_url=f"http://127.0.0.1:{gateway.http_port}", timeout=30)
        clients.append(client)
        return client

    clients: list[httpx.AsyncClient] = []
    yield make
    for client in clients:
        await client.aclose()
    for gateway in started:
        await gateway.stop()


async def test_remember_and_recall_take_tenant_keys(own_gateway, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Auth comes before the memory gate is called: with the gate down, a refused caller
    gets 401 and an accepted one gets as far as the 503."""
    key = "mk-tenant-key-for-memory-tests-0123456789"
    policy = tmp_path / "policy.yaml"
    policy.write_text(f"version: 1\ntenants:\n  acme:\n    keys: ['{hash_key(key)}']\n")
    http = await own_gateway(
        policy_file=policy,
        memory_gate_addr=f"127.0.0.1:{free_port()}",
        reputation_addr=f"127.0.0.1:{free_port()}",
    )
    tenant = {"Authorization": f"Bearer {key}"}
    admin = {"Authorization": "Bearer own-admin-token"}
    remember_body = {"claim": "a fact", "source": "agent"}
    for path, body in (
        ("/v1/memory/remember", remember_body),
        ("/v1/memory/recall", {"query": "a fact"}),
    ):
        assert_envelope(await http.post(path, json=body), 401, "invalid_api_key")
        wrong = {"Authorization": "Bearer mk-wrong"}
        assert_envelope(await http.post(path, json=body, headers=wrong), 401, "invalid_api_key")
        # An unauthenticated caller learns nothing about the body: 401 comes before 400.
        assert_envelope(await http.post(path, json={}), 401, "invalid_api_key")
        # A tenant key, and the admin token (the CLI and the MCP server carry it), get in.
        assert_envelope(await http.post(path, json=body, headers=tenant), 503)
        assert_envelope(await http.post(path, json=body, headers=admin), 503)
    # A tenant key is not an admin token.
    assert_envelope(await http.get("/v1/memory/quarantine", headers=tenant), 401)
    assert_envelope(await http.get("/v1/memory/quarantine", headers=admin), 503)


async def test_services_down_are_503_not_a_crash(own_gateway) -> None:  # type: ignore[no-untyped-def]
    http = await own_gateway(
        memory_gate_addr=f"127.0.0.1:{free_port()}", reputation_addr=f"127.0.0.1:{free_port()}"
    )
    admin = {"Authorization": "Bearer own-admin-token"}
    calls = [
        ("POST", "/v1/memory/remember", {"claim": "a fact", "source": "x"}, "memory_gate"),
        ("POST", "/v1/memory/recall", {"query": "a fact"}, "memory_gate"),
        ("GET", "/v1/memory/quarantine", None, "memory_gate"),
        ("GET", "/v1/memory/quarantine/abc", None, "memory_gate"),
        ("GET", "/v1/memory/audit", None, "memory_gate"),
        ("POST", "/v1/memory/improve", None, "memory_gate"),
        ("GET", "/v1/memory/reputation", None, "reputation"),
        ("GET", "/v1/memory/reputation/Slack/history", None, "reputation"),
        ("POST", "/v1/memory/reputation/reset", {"source": "Slack"}, "reputation"),
    ]
    for method, path, body, service in calls:
        response = await http.request(method, path, json=body, headers=admin)
        error = assert_envelope(response, 503, f"{service}_unavailable")
        assert error["type"] == "mithril_unavailable"
    # Validation still comes first: a bad body is the caller's problem, whatever is down.
    assert_envelope(await http.post("/v1/memory/remember", json={"claim": ""}, headers=admin), 400)
    assert (await http.get("/healthz")).status_code == 200


async def test_a_wrong_service_token_is_502(own_gateway, tmp_path) -> None:  # type: ignore[no-untyped-def]
    reputation = await create_reputation(
        ReputationSettings(
            host="127.0.0.1",
            port=0,
            auth_token="the-real-service-token",
            database_url=f"sqlite:///{tmp_path / 'rep.db'}",
        )
    )
    await reputation.server.start()
    try:
        http = await own_gateway(
            reputation_addr=f"127.0.0.1:{reputation.port}", service_token="a-wrong-token"
        )
        response = await http.get(
            "/v1/memory/reputation", headers={"Authorization": "Bearer own-admin-token"}
        )
        error = assert_envelope(response, 502, "service_auth_failed")
        assert "MITHRIL_GATEWAY_SERVICE_TOKEN" in error["message"]
    finally:
        await reputation.stop(0)
