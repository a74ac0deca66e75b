"""The OpenAI routes dispatched straight from ASGI, ahead of the FastAPI app.

A request to the FastAPI app passes through about ten ASGI layers (server-error and
exception middleware, FastAPI's own telemetry and body-limit wrappers, the router, the
exit-stack middleware, the route wrapper), and every layer is re-entered each time the
request's task resumes; a proxied completion resumes many times while it waits on the
upstream. The OpenAI routes are plain `Request -> Response` functions that need none of
those layers, so they are called here, with the same error envelope. Everything else (and
these paths with another method) goes on to the FastAPI app.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mithril.gateway.detectors import ServiceUnavailableError
from mithril.gateway.errors import ApiError, render_error

Endpoint = Callable[[Request], Awaitable[Response]]

_log = logging.getLogger(__name__)


class DirectRoutes:
    def __init__(self, app: ASGIApp, routes: Mapping[tuple[str, str], Endpoint]) -> None:
        self.app = app
        """The application everything else goes to; also what `request.app` is."""
        self.routes = dict(routes)
        """(method, path) -> endpoint."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        endpoint = (
            self.routes.get((scope["method"], scope["path"])) if scope["type"] == "http" else None
        )
        if endpoint is None:
            await self.app(scope, receive, send)
            return
        scope["app"] = self.app  # the routes read the gateway's components from app.state
        try:
            response = await endpoint(Request(scope, receive, send))
        except Exception as exc:
            if not isinstance(exc, ApiError | ServiceUnavailableError):
                _log.exception("unhandled error", extra={"route": scope["path"]})
            response = render_error(exc)
        # A failure while sending (a stream cut mid-way) propagates to the server, which
        # closes the connection: nothing else can be said once a response has started.
        await response(scope, receive, send)
