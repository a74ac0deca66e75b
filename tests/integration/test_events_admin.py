"""The admin API and dashboard routes: auth, the event API, errors in the OpenAI envelope."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from fastapi import FastAPI

from mithril.gateway.errors import install_error_handlers
from mithril.gateway.events import EventLog, EventStore
from mithril.gateway.routes import admin

TOKEN = "s3cret-admin-token-for-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def build_app(store: EventStore | None, log: EventLog | None, token: str = TOKEN) -> FastAPI:
    app = FastAPI()
    install_error_handlers(app)
    app.include_router(admin.router)
    app.state.event_store = store
    app.state.event_log = log
    app.state.admin_token = token
    return app


@pytest_asyncio.fixture
async def setup(event_store_url: str, make_event) -> AsyncIterator[dict[str, Any]]:  # type: ignore[no-untyped-def]
    store = EventStore(event_store_url)
    events = {
        "allow": make_event(seconds_ago=120, severity=None, action="allow", tenant="acme"),
        "block": make_event(seconds_ago=60, severity="high", tenant="acme"),
        "redact": make_event(
            seconds_ago=30,
            severity="critical",
            action="redact",
            tenant="globex",
            detectors=("secrets",),
            excerpt="token is AKIAQ3EGRZLNW7T2X5PB",
        ),
        "old": make_event(seconds_ago=3 * 86400, severity="low", action="allow", tenant="acme"),
    }
    store.write_batch(list(events.values()))
    log = EventLog(store)
    await log.start()
    app = build_app(store, log)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        yield {"client": client, "events": events, "store": store, "log": log, "app": app}
    await log.close()
    store.close()


def assert_envelope(response: httpx.Response, status: int, code: str | None = None) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == {"error"}
    assert set(body["error"]) == {"message", "type", "code", "param"}
    assert body["error"]["message"]
    if code is not None:
        assert body["error"]["code"] == code


API_ROUTES = ["/admin/api/events", "/admin/api/stats", "/admin/api/events/abc"]


@pytest.mark.parametrize("path", API_ROUTES)
async def test_api_needs_the_token(setup, path: str) -> None:  # type: ignore[no-untyped-def]
    client = setup["client"]
    assert_envelope(await client.get(path), 401, "missing_admin_token")
    wrong = {"Authorization": "Bearer nope"}
    assert_envelope(await client.get(path, headers=wrong), 401, "invalid_admin_token")
    assert_envelope(await client.get(path, headers={"Authorization": TOKEN}), 401)
    forged = {"Cookie": f"{admin.SESSION_COOKIE}=9999999999.deadbeef"}
    assert_envelope(await client.get(path, headers=forged), 401, "invalid_admin_token")


async def test_bearer_token_opens_the_api(setup) -> None:  # type: ignore[no-untyped-def]
    client, events = setup["client"], setup["events"]
    response = await client.get("/admin/api/events", headers=BEARER)
    assert response.status_code == 200
    assert response.headers["cache-control"] == "no-store"
    body = response.json()
    assert body["object"] == "list" and body["has_more"] is False
    ids = [e["decision_id"] for e in body["data"]]
    assert ids == [events[n].decision_id for n in ("redact", "block", "allow", "old")]
    assert "findings" not in body["data"][0] and body["data"][0]["finding_count"] == 1
    assert "AKIA" not in response.text  # redacted by the store


async def test_login_cookie_opens_the_dashboard_and_api(setup) -> None:  # type: ignore[no-untyped-def]
    client = setup["client"]
    page = await client.get("/")
    assert page.status_code == 200 and 'action="/admin/login"' in page.text
    assert "dashboard.js" not in page.text  # the login form, not the dashboard

    bad = await client.post("/admin/login", data={"token": "wrong"})
    assert_envelope(bad, 401, "invalid_admin_token")
    bad_html = await client.post(
        "/admin/login", data={"token": "wrong"}, headers={"Accept": "text/html"}
    )
    assert bad_html.status_code == 401 and "not the admin token" in bad_html.text
    assert admin.SESSION_COOKIE not in client.cookies

    response = await client.post("/admin/login", data={"token": TOKEN})
    assert response.status_code == 303 and response.headers["location"] == "/"
    cookie = response.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie.replace("Strict", "strict")
    assert TOKEN not in cookie  # the cookie is a signed expiry, not the token

    page = await client.get("/")
    assert page.status_code == 200 and "/dashboard/static/dashboard.js" in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]
    assert (await client.get("/admin/api/stats")).status_code == 200

    out = await client.post("/admin/logout")
    assert out.status_code == 303
    assert admin.SESSION_COOKIE not in client.cookies
    assert_envelope(await client.get("/admin/api/stats"), 401)


async def test_login_accepts_json(setup) -> None:  # type: ignore[no-untyped-def]
    response = await setup["client"].post("/admin/login", json={"token": TOKEN})
    assert response.status_code == 303


async def test_a_changed_token_ends_sessions(setup) -> None:  # type: ignore[no-untyped-def]
    client, app = setup["client"], setup["app"]
    await client.post("/admin/login", data={"token": TOKEN})
    assert (await client.get("/admin/api/stats")).status_code == 200
    app.state.admin_token = "another-token"
    assert_envelope(await client.get("/admin/api/stats"), 401)


async def test_without_an_admin_token_the_dashboard_is_disabled(setup) -> None:  # type: ignore[no-untyped-def]
    client, app = setup["client"], setup["app"]
    app.state.admin_token = ""
    assert_envelope(await client.get("/admin/api/events", headers=BEARER), 403, "admin_disabled")
    assert_envelope(
        await client.get("/admin/api/events", headers={"Authorization": "Bearer "}), 403
    )
    page = await client.get("/")
    assert page.status_code == 403 and "MITHRIL_GATEWAY_ADMIN_TOKEN" in page.text
    assert_envelope(await client.post("/admin/login", data={"token": ""}), 403)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("action=block", ["block"]),
        ("action=allow", ["allow", "old"]),
        ("severity=critical", ["redact"]),
        ("severity=none", ["allow"]),
        ("detector=secrets", ["redact"]),
        ("tenant=globex", ["redact"]),
        ("since=24h", ["redact", "block", "allow"]),
        ("since=90s", ["redact", "block"]),
        ("since=24h&action=allow", ["allow"]),
        ("until=2d", ["old"]),
        ("action=&severity=", ["redact", "block", "allow", "old"]),  # empty = any
    ],
)
async def test_event_filters(setup, query: str, expected: list[str]) -> None:  # type: ignore[no-untyped-def]
    events = setup["events"]
    response = await setup["client"].get(f"/admin/api/events?{query}", headers=BEARER)
    assert response.status_code == 200, response.text
    names = {e.decision_id: n for n, e in events.items()}
    assert [names[e["decision_id"]] for e in response.json()["data"]] == expected


async def test_absolute_times(setup) -> None:  # type: ignore[no-untyped-def]
    events, client = setup["events"], setup["client"]
    since = events["block"].time.isoformat().replace("+00:00", "Z")
    response = await client.get("/admin/api/events", params={"since": since}, headers=BEARER)
    assert [e["decision_id"] for e in response.json()["data"]] == [
        events["redact"].decision_id,
        events["block"].decision_id,
    ]


async def test_paging(setup) -> None:  # type: ignore[no-untyped-def]
    client = setup["client"]
    first = (await client.get("/admin/api/events?limit=3", headers=BEARER)).json()
    assert len(first["data"]) == 3 and first["has_more"] is True
    rest = (
        await client.get(f"/admin/api/events?limit=3&before={first['next_before']}", headers=BEARER)
    ).json()
    assert len(rest["data"]) == 1 and rest["has_more"] is False and rest["next_before"] is None


@pytest.mark.parametrize(
    ("query", "param"),
    [
        ("action=explode", "action"),
        ("severity=urgent", "severity"),
        ("detector=a%20b", "detector"),
        ("since=yesterday", "since"),
        ("until=2025-13-40", "until"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=ten", "limit"),
        ("before=nope", "before"),
        ("before=bad%20id", "before"),
        ("action=block&action=allow", "action"),
        ("colour=red", "colour"),
    ],
)
async def test_bad_query_params_are_400(setup, query: str, param: str) -> None:  # type: ignore[no-untyped-def]
    response = await setup["client"].get(f"/admin/api/events?{query}", headers=BEARER)
    assert_envelope(response, 400)
    assert response.json()["error"]["param"] == param


async def test_event_detail(setup) -> None:  # type: ignore[no-untyped-def]
    client, events = setup["client"], setup["events"]
    event = events["redact"]
    response = await client.get(f"/admin/api/events/{event.decision_id}", headers=BEARER)
    assert response.status_code == 200
    body = response.json()
    assert body["decision_id"] == event.decision_id and body["action"] == "redact"
    assert body["findings"][0]["rule_id"] == "override.ignore_previous"
    assert body["excerpt"] == "token is [REDACTED:aws_access_key]"
    assert_envelope(
        await client.get("/admin/api/events/unknown", headers=BEARER), 404, "event_not_found"
    )
    assert_envelope(await client.get("/admin/api/events/%3Cscript%3E", headers=BEARER), 404)


async def test_stats(setup, make_event) -> None:  # type: ignore[no-untyped-def]
    client, log = setup["client"], setup["log"]
    log.record(make_event(tenant="initech"))
    await log.flush()
    body = (await client.get("/admin/api/stats", headers=BEARER)).json()
    assert body["totals"]["total"] == 5
    assert body["totals"]["by_action"] == {"allow": 2, "block": 2, "redact": 1}
    assert body["totals"]["by_tenant"] == {"acme": 3, "globex": 1, "initech": 1}
    assert body["event_log"] == {
        "written": 1,
        "dropped": 0,
        "queue_depth": 0,
        "max_queue": 10_000,
        "running": True,
    }
    recent = (await client.get("/admin/api/stats?since=24h", headers=BEARER)).json()
    assert recent["totals"]["total"] == 4 and recent["since"].endswith("Z")
    assert_envelope(await client.get("/admin/api/stats?since=soon", headers=BEARER), 400)
    assert_envelope(await client.get("/admin/api/stats?action=block", headers=BEARER), 400)


async def test_static_assets(setup) -> None:  # type: ignore[no-untyped-def]
    client = setup["client"]
    js = await client.get("/dashboard/static/dashboard.js")
    assert js.status_code == 200 and js.headers["content-type"].startswith("text/javascript")
    assert "innerHTML" not in js.text  # everything is rendered with textContent
    css = await client.get("/dashboard/static/dashboard.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    again = await client.get(
        "/dashboard/static/dashboard.css", headers={"If-None-Match": css.headers["etag"]}
    )
    assert again.status_code == 304
    for path in ("index.html", "..%2Fstore.py", "nope.js", "login.html"):
        assert_envelope(await client.get(f"/dashboard/static/{path}"), 404)


async def test_no_store_configured_is_503(make_event) -> None:  # type: ignore[no-untyped-def]
    app = build_app(None, None)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        assert_envelope(await client.get("/admin/api/events", headers=BEARER), 503)
