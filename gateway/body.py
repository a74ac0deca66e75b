"""Request bodies: size-limited before parsing, parsed with orjson, validated by pydantic.

orjson refuses invalid UTF-8 and nesting deeper than 1024 levels with a JSONDecodeError,
which FastAPI reports as invalid JSON: neither can crash or stall the gateway.
"""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request
from fastapi.routing import APIRoute
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mithril.gateway.errors import ApiError, error_response


class OrjsonRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json"):
            self._json = orjson.loads(await self.body())
        return self._json


_JSON_TYPE = (b"content-type", b"application/json")


class OrjsonRoute(APIRoute):
    """Bodies are always JSON: parsed with orjson whatever content-type the client sent
    (`curl -d` sends form-urlencoded), so a missing header is never a confusing error."""

    def get_route_handler(self):  # type: ignore[no-untyped-def]
        handler = super().get_route_handler()

        async def route_handler(request: Request):  # type: ignore[no-untyped-def]
            headers = [(k, v) for k, v in request.scope["headers"] if k != b"content-type"]
            scope = {**request.scope, "headers": [*headers, _JSON_TYPE]}
            return await handler(OrjsonRequest(scope, request.receive))

        return route_handler


class BodySizeLimit:
    """Answers 413 as soon as a body is known to exceed the limit, without reading it all."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    def _too_large(self) -> ApiError:
        return ApiError(
            413,
            f"request body exceeds the limit of {self.max_bytes} bytes",
            code="request_too_large",
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await error_response(self._too_large())(scope, receive, send)
            return
        received = 0

        async def limited_receive() -> Message:
            # Raised inside the route while FastAPI reads the body, so the ApiError handler
            # answers 413 in the envelope.
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise self._too_large()
            return message

        await self.app(scope, limited_receive, send)
