"""Server interceptors, applied in a fixed order: request id, validation, auth.

Each one wraps the method handler's behaviour with a check that runs before the servicer
(on every message, for request streams). A check rejects a call by aborting with a
google.rpc status; it never lets an undecodable or oversized request reach a servicer.
"""

from __future__ import annotations

import hmac
import inspect
import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from google.protobuf.message import DecodeError
from opentelemetry import trace

from mithril.runtime import attributes, errors
from mithril.runtime.logs import request_id_var
from mithril.runtime.validation import Limits, validate

Check = Callable[[Any, grpc.aio.ServicerContext], Awaitable[None]]

_log = logging.getLogger(__name__)

HEALTH_PREFIX = "/grpc.health.v1.Health/"
REQUEST_ID_KEY = "x-request-id"


class _Undecodable:
    """Stands in for a request whose bytes were not a valid message (e.g. bad UTF-8)."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def _wrap(handler: grpc.RpcMethodHandler, check: Check) -> grpc.RpcMethodHandler:
    """The same handler with `check` run on each request message before the behaviour.

    Behaviours come in two styles (async generators, or coroutines that call
    `context.write`); the wrapper keeps whichever style the original had.
    """
    if handler.request_streaming:

        async def checked_stream(
            requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
        ) -> AsyncIterator[Any]:
            async for request in requests:
                await check(request, context)
                yield request

        async def admit(request: Any, context: grpc.aio.ServicerContext) -> Any:
            return checked_stream(request, context)

        attribute = "stream_stream" if handler.response_streaming else "stream_unary"
    else:

        async def admit(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await check(request, context)
            return request

        attribute = "unary_stream" if handler.response_streaming else "unary_unary"
    inner = getattr(handler, attribute)

    if inspect.isasyncgenfunction(inner):

        async def generator_behaviour(request, context):  # type: ignore[no-untyped-def]
            async for response in inner(await admit(request, context), context):
                yield response

        return handler._replace(**{attribute: generator_behaviour})

    async def coroutine_behaviour(request, context):  # type: ignore[no-untyped-def]
        return await inner(await admit(request, context), context)

    return handler._replace(**{attribute: coroutine_behaviour})


class RequestIdInterceptor(grpc.aio.ServerInterceptor):
    """Takes the caller's x-request-id (or makes one) for logs, spans and the response."""

    async def intercept_service(self, continuation, handler_call_details):  # type: ignore[no-untyped-def]
        handler = await continuation(handler_call_details)
        if handler is None:
            return None
        metadata = dict(handler_call_details.invocation_metadata or ())
        request_id = str(metadata.get(REQUEST_ID_KEY) or uuid.uuid4().hex)[:128]

        async def check(_request: Any, context: grpc.aio.ServicerContext) -> None:
            request_id_var.set(request_id)
            trace.get_current_span().set_attribute(attributes.REQUEST_ID, request_id)
            context.set_trailing_metadata(((REQUEST_ID_KEY, request_id),))

        return _wrap(handler, check)


class ValidationInterceptor(grpc.aio.ServerInterceptor):
    """Refuses undecodable, oversized or incomplete requests before any servicer sees them."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    async def intercept_service(self, continuation, handler_call_details):  # type: ignore[no-untyped-def]
        handler = await continuation(handler_call_details)
        if handler is None or handler_call_details.method.startswith(HEALTH_PREFIX):
            return handler
        deserializer = handler.request_deserializer

        def safe_deserializer(data: bytes) -> Any:
            try:
                return deserializer(data) if deserializer else data
            except (DecodeError, UnicodeDecodeError, ValueError) as exc:
                return _Undecodable(str(exc) or type(exc).__name__)

        async def check(request: Any, context: grpc.aio.ServicerContext) -> None:
            if isinstance(request, _Undecodable):
                await context.abort_with_status(
                    errors.invalid_argument(
                        [("request", "not a valid message (strings must be UTF-8)")]
                    )
                )
            status = validate(request, self.limits)
            if status is not None:
                await context.abort_with_status(status)

        return _wrap(handler._replace(request_deserializer=safe_deserializer), check)


class AuthInterceptor(grpc.aio.ServerInterceptor):
    """Requires `authorization: Bearer <token>` on every call except health checks."""

    def __init__(self, token: str) -> None:
        self._expected = f"Bearer {token}".encode()

    async def intercept_service(self, continuation, handler_call_details):  # type: ignore[no-untyped-def]
        handler = await continuation(handler_call_details)
        if handler is None or handler_call_details.method.startswith(HEALTH_PREFIX):
            return handler
        metadata = dict(handler_call_details.invocation_metadata or ())
        presented = str(metadata.get("authorization", "")).encode()
        if hmac.compare_digest(presented, self._expected):
            return handler

        async def check(_request: Any, context: grpc.aio.ServicerContext) -> None:
            reason = "missing" if not presented else "invalid"
            await context.abort_with_status(
                errors.unauthenticated(f"{reason} bearer token in `authorization` metadata")
            )

        return _wrap(handler, check)


class ErrorInterceptor(grpc.aio.ServerInterceptor):
    """Innermost: a servicer's ServiceError becomes its status; anything unexpected is logged
    with its trace and answered INTERNAL, without leaking the exception text to the caller."""

    async def intercept_service(self, continuation, handler_call_details):  # type: ignore[no-untyped-def]
        handler = await continuation(handler_call_details)
        if handler is None or handler.request_streaming or handler.response_streaming:
            # Streaming servicers convert their own errors (they must close the stream).
            return handler
        inner = handler.unary_unary
        method = handler_call_details.method

        async def unary_unary(request, context):  # type: ignore[no-untyped-def]
            try:
                return await inner(request, context)
            except grpc.aio.AbortError:
                raise
            except errors.ServiceError as exc:
                await context.abort_with_status(exc.status)
            except Exception:
                _log.exception("unhandled error in %s", method)
                await context.abort_with_status(errors.internal())

        return handler._replace(unary_unary=unary_unary)
