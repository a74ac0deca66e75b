"""Request rate, errors and latency per route, as plain ASGI middleware."""

from __future__ import annotations

import time

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mithril.gateway import metrics

_ROUTES = frozenset(
    {
        "/",
        "/v1/chat/completions",
        "/v1/completions",
        "/v1/embeddings",
        "/v1/models",
        "/v1/scan",
        "/v1/redact",
        "/healthz",
        "/admin/login",
        "/admin/logout",
        "/admin/api/events",
        "/admin/api/stats",
    }
)


def route_label(path: str) -> str:
    """A bounded label set: known routes by name, the rest grouped."""
    if path in _ROUTES:
        return path
    if path.startswith("/admin/api/events/"):
        return "/admin/api/events/{id}"
    if path.startswith("/dashboard/static/"):
        return "/dashboard/static"
    if path.startswith("/metrics"):
        return "/metrics"
    return "other"


class HttpMetrics:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        route = route_label(scope.get("path", ""))
        method = scope.get("method", "GET")
        status = 500

        async def observed_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                metrics.HTTP_DURATION.labels(route, method).observe(time.perf_counter() - started)
            await send(message)

        try:
            await self.app(scope, receive, observed_send)
        finally:
            metrics.HTTP_REQUESTS.labels(route, method, str(status)).inc()
