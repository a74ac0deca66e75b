"""The gateway's HTTP application: routes, error envelope, body limits, metrics, tracing."""

from __future__ import annotations

from fastapi import FastAPI
from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor
from prometheus_client import make_asgi_app

import mithril
from mithril.gateway.body import BodySizeLimit
from mithril.gateway.config import GatewaySettings
from mithril.gateway.errors import install_error_handlers
from mithril.gateway.firewall import Firewall
from mithril.gateway.routes import scan


def create_app(settings: GatewaySettings, firewall: Firewall) -> FastAPI:
    app = FastAPI(
        title="Mithril gateway",
        version=mithril.__version__,
    )
    app.state.settings = settings
    app.state.firewall = firewall
    install_error_handlers(app)
    app.include_router(scan.router)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        """Liveness: the process answers."""
        return {"status": "ok"}

    app.mount("/metrics", make_asgi_app())
    app.add_middleware(BodySizeLimit, max_bytes=settings.max_body_bytes)
    FastAPIInstrumentor.instrument_app(app, excluded_urls="healthz,metrics")
    return app
