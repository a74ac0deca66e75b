"""The gateway's HTTP application: routes, error envelope, body limits, metrics, tracing."""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.telemetry import TelemetryConfig
from prometheus_client import make_asgi_app
from starlette.types import ASGIApp

import mithril
from mithril.gateway.body import BodySizeLimit
from mithril.gateway.components import Components
from mithril.gateway.direct import DirectRoutes
from mithril.gateway.errors import install_error_handlers
from mithril.gateway.http_telemetry import HttpTelemetry
from mithril.gateway.openai import routes as openai_routes
from mithril.gateway.routes import admin, memory, scan

NATIVE_TELEMETRY_OFF: TelemetryConfig = {"tracing": False, "metrics": False, "logs": False}


def create_app(components: Components) -> ASGIApp:
    """Telemetry, then the body limit, then the OpenAI routes served directly, then the
    FastAPI app for everything else (`gateway/direct.py` says why)."""
    api = create_api(components)
    direct = DirectRoutes(api, openai_routes.DIRECT)
    return HttpTelemetry(BodySizeLimit(direct, max_bytes=components.settings.max_body_bytes))


def create_api(components: Components) -> FastAPI:
    """The FastAPI app: every route, the error envelope, `/metrics`, the dashboard."""
    app = FastAPI(
        title="Mithril gateway",
        version=mithril.__version__,
        docs_url=None,
        redoc_url=None,
        # HttpTelemetry is the gateway's one HTTP instrumentation. FastAPI's built-in
        # telemetry would add a second server span (and operation spans) to every request
        # once a tracer provider is installed, and costs a provider lookup per request even
        # when none is.
        telemetry=NATIVE_TELEMETRY_OFF,
    )
    app.state.settings = components.settings
    app.state.firewall = components.firewall
    app.state.policy_book = components.policy_book
    app.state.upstream = components.upstream
    app.state.event_store = components.event_store
    app.state.event_log = components.event_log
    app.state.admin_token = components.admin_token
    app.state.memory = components.memory
    app.state.local_embeddings = components.local_embeddings
    install_error_handlers(app)
    app.router.routes.extend(openai_routes.ROUTES)
    app.include_router(scan.router)
    app.include_router(memory.router)
    app.include_router(admin.router)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    app.mount("/metrics", make_asgi_app())
    return app
