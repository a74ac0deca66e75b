"""The gateway's HTTP application: routes, error envelope, body limits, metrics, tracing."""

from __future__ import annotations

from fastapi import FastAPI
from prometheus_client import make_asgi_app

import mithril
from mithril.gateway.body import BodySizeLimit
from mithril.gateway.components import Components
from mithril.gateway.errors import install_error_handlers
from mithril.gateway.http_telemetry import HttpTelemetry
from mithril.gateway.openai import routes as openai_routes
from mithril.gateway.routes import admin, memory, scan


def create_app(components: Components) -> FastAPI:
    settings = components.settings
    app = FastAPI(
        title="Mithril gateway", version=mithril.__version__, docs_url=None, redoc_url=None
    )
    app.state.settings = settings
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
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    app.add_middleware(HttpTelemetry)
    return app
