"""`DirectRoutes`: the OpenAI endpoints served ahead of FastAPI keep FastAPI's contract:
the same envelope for every error, `request.app` state, and everything else falls through."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from mithril.gateway.detectors import ServiceUnavailableError
from mithril.gateway.direct import DirectRoutes
from mithril.gateway.errors import ApiError, install_error_handlers


async def echo_state(request: Request) -> Response:
    return Response(request.app.state.greeting + (await request.body()).decode())


async def refuse(_: Request) -> Response:
    raise ApiError(403, "no", type_="mithril_blocked", code="prompt_blocked")


async def unavailable(_: Request) -> Response:
    raise ServiceUnavailableError("scanner", "down")


async def crash(_: Request) -> Response:
    raise RuntimeError("boom")


def build() -> tuple[FastAPI, httpx.AsyncClient]:
    api = FastAPI()
    api.state.greeting = "hello "
    install_error_handlers(api)
    api.router.routes.append(Route("/v1/echo", echo_state, methods=["POST"]))

    @api.get("/other")
    async def other() -> dict[str, str]:
        return {"served_by": "fastapi"}

    direct = DirectRoutes(
        api,
        {
            ("POST", "/v1/echo"): echo_state,
            ("POST", "/v1/refuse"): refuse,
            ("POST", "/v1/unavailable"): unavailable,
            ("POST", "/v1/crash"): crash,
        },
    )
    return api, httpx.AsyncClient(transport=httpx.ASGITransport(direct), base_url="http://t")


async def test_endpoints_see_the_app_state_and_body() -> None:
    _, client = build()
    async with client:
        response = await client.post("/v1/echo", content=b"world")
    assert response.status_code == 200 and response.text == "hello world"


async def test_everything_else_falls_through_to_the_app() -> None:
    _, client = build()
    async with client:
        other = await client.get("/other")
        wrong_method = await client.get("/v1/echo")
        missing = await client.post("/v1/missing")
    assert other.json() == {"served_by": "fastapi"}
    assert wrong_method.status_code == 405
    assert wrong_method.json()["error"]["type"] == "invalid_request_error"
    assert missing.status_code == 404
    assert missing.json()["error"]["type"] == "not_found_error"


async def test_errors_keep_the_envelope(caplog: pytest.LogCaptureFixture) -> None:
    _, client = build()
    caplog.set_level(logging.ERROR, logger="mithril.gateway.direct")
    async with client:
        refused = await client.post("/v1/refuse")
        down = await client.post("/v1/unavailable")
        crashed = await client.post("/v1/crash")
    assert refused.status_code == 403
    assert refused.json()["error"] == {
        "message": "no",
        "type": "mithril_blocked",
        "code": "prompt_blocked",
        "param": None,
    }
    assert down.status_code == 503 and down.json()["error"]["code"] == "scanner_unavailable"
    assert crashed.status_code == 500 and crashed.json()["error"]["type"] == "server_error"
    # Only the unexpected failure is logged, with its traceback.
    logged = [r for r in caplog.records if r.name == "mithril.gateway.direct"]
    assert len(logged) == 1 and logged[0].exc_info is not None
