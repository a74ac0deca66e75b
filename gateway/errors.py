"""HTTP errors in the OpenAI envelope: {"error": {"message", "type", "code", "param"}}."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response

from mithril.gateway.detectors import ServiceUnavailableError
from mithril.gateway.responses import json_response


class ApiError(Exception):
    """An error the routes raise; rendered in the OpenAI envelope."""

    def __init__(
        self,
        status: int,
        message: str,
        type_: str = "invalid_request_error",
        code: str | None = None,
        param: str | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.code = code
        self.param = param
        self.extra = extra or {}


def envelope(
    message: str, type_: str, code: str | None = None, param: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type_, "code": code, "param": param}}


def error_response(error: ApiError) -> Response:
    body = envelope(error.message, error.type, error.code, error.param) | error.extra
    return json_response(body, error.status)


def _param(location: tuple[Any, ...]) -> str | None:
    parts = [str(p) for p in location if p != "body"]
    return ".".join(parts) or None


def _validation_response(exc: RequestValidationError) -> Response:
    problems = exc.errors()
    first = problems[0] if problems else {}
    if first.get("type") == "json_invalid":
        return error_response(
            ApiError(400, "the request body is not valid JSON", code="invalid_json")
        )
    location = tuple(first.get("loc", ()))
    message = f"{_param(location) or 'body'}: {first.get('msg', 'invalid value')}"
    if len(problems) > 1:
        message += f" (and {len(problems) - 1} more problem(s))"
    return error_response(ApiError(400, message, code="invalid_value", param=_param(location)))


def render_error(exc: Exception) -> Response:
    """The envelope a client sees for `exc`, whichever way the request was dispatched."""
    if isinstance(exc, ApiError):
        return error_response(exc)
    if isinstance(exc, RequestValidationError):
        return _validation_response(exc)
    if isinstance(exc, ServiceUnavailableError):
        return error_response(
            ApiError(
                503,
                f"{exc}; the policy is in block mode, so the request was not allowed through",
                type_="mithril_unavailable",
                code=f"{exc.service}_unavailable",
            )
        )
    if isinstance(exc, StarletteHTTPException):
        kind = "not_found_error" if exc.status_code == 404 else "invalid_request_error"
        return error_response(ApiError(exc.status_code, str(exc.detail), type_=kind))
    return error_response(
        ApiError(500, "internal error; see the gateway log", type_="server_error")
    )


def install_error_handlers(app: FastAPI) -> None:
    async def handler(_: Request, exc: Exception) -> Response:
        return render_error(exc)

    for kind in (
        ApiError,
        RequestValidationError,
        ServiceUnavailableError,
        StarletteHTTPException,
        Exception,
    ):
        app.add_exception_handler(kind, handler)
