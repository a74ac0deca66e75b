"""Per-request telemetry as one plain ASGI middleware: a SERVER span continuing the
caller's W3C trace context, and request rate, errors and latency per route.

The stock OpenTelemetry ASGI middleware cost ~0.3 ms of CPU per request here (it decodes
every header and builds a dozen attributes), a third of a pass-through proxy's budget.
"""

from __future__ import annotations

import time

from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mithril.gateway import metrics
from mithril.runtime import telemetry

_tracer = trace.get_tracer("mithril.http")
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
        "/v1/memory/remember",
        "/v1/memory/recall",
        "/v1/memory/quarantine",
        "/v1/memory/audit",
        "/v1/memory/reputation",
        "/v1/memory/reputation/reset",
        "/v1/memory/improve",
    }
)
_UNTRACED = frozenset({"/healthz", "/metrics"})
_PROPAGATION_HEADERS = frozenset({b"traceparent", b"tracestate", b"baggage"})


def route_label(path: str) -> str:
    """A bounded label set: known routes by name, the rest grouped."""
    if path in _ROUTES:
        return path
    if path.startswith("/admin/api/events/"):
        return "/admin/api/events/{id}"
    if path.startswith("/v1/memory/quarantine/"):
        return "/v1/memory/quarantine/{id}"
    if path.startswith("/v1/memory/reputation/"):
        return "/v1/memory/reputation/{source}"
    if path.startswith("/dashboard/static/"):
        return "/dashboard/static"
    if path.startswith("/metrics"):
        return "/metrics"
    return "other"


class HttpTelemetry:
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
                metrics.http_duration(route, method).observe(time.perf_counter() - started)
            await send(message)

        try:
            if route in _UNTRACED:
                await self.app(scope, receive, observed_send)
                return
            carrier = {
                name.decode("latin-1"): value.decode("latin-1")
                for name, value in scope.get("headers", ())
                if name in _PROPAGATION_HEADERS
            }
            with telemetry.span(
                _tracer,
                f"{method} {route}",
                propagate.extract(carrier) if carrier else None,
                kind=SpanKind.SERVER,
                attributes={"http.request.method": method, "http.route": route},
                record_exception=False,
                set_status_on_exception=False,
            ) as span:
                try:
                    await self.app(scope, receive, observed_send)
                finally:
                    span.set_attribute("http.response.status_code", status)
                    if status >= 500:
                        span.set_status(Status(StatusCode.ERROR))
        finally:
            metrics.http_requests(route, method, status).inc()
