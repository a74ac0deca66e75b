"""The dashboard and its admin API.

`GET /` is the dashboard (a login form until the admin token is presented), assets are
under `/dashboard/static/`, the JSON API under `/admin/api/`. Every admin route needs the
admin token (`request.app.state.admin_token`), sent as `Authorization: Bearer <token>` or
through the session cookie `POST /admin/login` sets. The cookie holds no token: it is an
expiry time and an HMAC of it keyed with the token, so changing the token ends every
session. With no admin token configured the dashboard is disabled (403).
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import html
import re
import time
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qs

import orjson
from fastapi import APIRouter, Depends, Request
from starlette.responses import RedirectResponse, Response

from mithril.gateway import dashboard
from mithril.gateway.errors import ApiError
from mithril.gateway.events.record import ACTIONS, SEVERITIES, utc
from mithril.gateway.events.store import NO_SEVERITY, EventStore
from mithril.gateway.events.writer import EventLog
from mithril.gateway.responses import json_response

router = APIRouter()

SESSION_COOKIE = "mithril_admin"
SESSION_SECONDS = 12 * 3600
MAX_PAGE = 500
DEFAULT_PAGE = 100
MAX_LOGIN_BODY = 4096

_RELATIVE = re.compile(r"^(\d{1,6})([smhd])$")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}
_DETECTOR = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_DECISION_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")
_EVENT_PARAMS = ("action", "severity", "detector", "tenant", "since", "until", "limit", "before")

_HEADERS = {
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
_PAGE_HEADERS = _HEADERS | {
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self';"
    " img-src 'self'; connect-src 'self'; form-action 'self'; base-uri 'none';"
    " frame-ancestors 'none'",
    "X-Frame-Options": "DENY",
}

# -- authentication ----------------------------------------------------------------------


def _admin_token(request: Request) -> str:
    return str(getattr(request.app.state, "admin_token", "") or "")


def _signature(token: str, expires: int) -> str:
    message = f"mithril-dashboard-session:{expires}".encode()
    return hmac.new(token.encode(), message, hashlib.sha256).hexdigest()


def session_cookie_value(token: str, now: float | None = None) -> str:
    expires = int((now if now is not None else time.time()) + SESSION_SECONDS)
    return f"{expires}.{_signature(token, expires)}"


def _valid_session(token: str, value: str) -> bool:
    expires_text, _, signature = value.partition(".")
    if not expires_text.isdigit() or len(expires_text) > 12:
        return False
    expires = int(expires_text)
    good = hmac.compare_digest(signature.encode(), _signature(token, expires).encode())
    return good and expires > time.time()


def _same(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode(), token.encode())


def is_admin(request: Request) -> bool:
    """The request carries the admin token (bearer) or a valid session cookie."""
    token = _admin_token(request)
    if not token:
        return False
    scheme, _, credentials = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() == "bearer" and _same(credentials.strip(), token):
        return True
    cookie = request.cookies.get(SESSION_COOKIE)
    return bool(cookie) and _valid_session(token, cookie or "")


def _disabled() -> ApiError:
    return ApiError(
        403,
        "the dashboard and admin API are disabled: no admin token is configured"
        " (set MITHRIL_GATEWAY_ADMIN_TOKEN)",
        type_="permission_error",
        code="admin_disabled",
    )


async def require_admin(request: Request) -> None:
    """Dependency of every admin API route: 401 in the OpenAI envelope without the token."""
    if not _admin_token(request):
        raise _disabled()
    if not is_admin(request):
        has_credentials = "authorization" in request.headers or SESSION_COOKIE in request.cookies
        raise ApiError(
            401,
            "invalid admin token"
            if has_credentials
            else "the admin token is required: send Authorization: Bearer <token> or log in at /",
            code="invalid_admin_token" if has_credentials else "missing_admin_token",
        )


# -- pages and assets --------------------------------------------------------------------


def _login_page(notice: str = "", status: int = 200) -> Response:
    markup = f'<p class="notice" role="alert">{html.escape(notice)}</p>' if notice else ""
    body = dashboard.page("login").replace("<!--NOTICE-->", markup)
    return Response(body, status, headers=_PAGE_HEADERS, media_type="text/html")


@router.get("/", include_in_schema=False)
async def home(request: Request) -> Response:
    """The dashboard, or a login form until the admin token is presented."""
    if not _admin_token(request):
        return _login_page(_disabled().message, 403)
    if not is_admin(request):
        return _login_page()
    return Response(dashboard.page("index"), headers=_PAGE_HEADERS, media_type="text/html")


@router.get("/dashboard/static/{name}", include_in_schema=False)
async def static(name: str, request: Request) -> Response:
    """The dashboard's JS, CSS and icons (no data in them, so no login needed)."""
    asset = dashboard.static_asset(name)
    if asset is None:
        raise ApiError(404, f"no dashboard asset {name!r}", type_="not_found_error")
    headers = {"ETag": asset.etag, "Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}
    if request.headers.get("if-none-match") == asset.etag:
        return Response(status_code=304, headers=headers)
    return Response(asset.body, headers=headers, media_type=asset.content_type)


def _wants_html(request: Request) -> bool:
    return "text/html" in request.headers.get("accept", "")


@router.post("/admin/login", include_in_schema=False)
async def login(request: Request) -> Response:
    """Form field (or JSON key) `token`; on success a session cookie and a redirect to /."""
    token = _admin_token(request)
    body = await request.body()
    if len(body) > MAX_LOGIN_BODY:
        raise ApiError(413, "the login body is too large", code="request_too_large")
    given = _login_token(request, body)
    if not token:
        if _wants_html(request):
            return _login_page(_disabled().message, 403)
        raise _disabled()
    if not _same(given, token):
        if _wants_html(request):
            return _login_page("That is not the admin token.", 401)
        raise ApiError(401, "invalid admin token", code="invalid_admin_token", param="token")
    response = RedirectResponse("/", status_code=303, headers=_HEADERS)
    response.set_cookie(
        SESSION_COOKIE,
        session_cookie_value(token),
        max_age=SESSION_SECONDS,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


def _login_token(request: Request, body: bytes) -> str:
    if request.headers.get("content-type", "").startswith("application/json"):
        try:
            payload = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise ApiError(400, "the request body is not valid JSON", code="invalid_json") from None
        value = payload.get("token") if isinstance(payload, dict) else None
        return value if isinstance(value, str) else ""
    try:
        fields = parse_qs(body.decode("utf-8"), max_num_fields=8)
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, "the login form could not be read", code="invalid_form") from None
    return (fields.get("token") or [""])[0]


@router.post("/admin/logout", include_in_schema=False, dependencies=[Depends(require_admin)])
async def logout(request: Request) -> Response:
    """Forget the session cookie; back to the login form."""
    response = RedirectResponse("/", status_code=303, headers=_HEADERS)
    response.delete_cookie(
        SESSION_COOKIE,
        path="/",
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )
    return response


# -- the API -----------------------------------------------------------------------------


def _store(request: Request) -> EventStore:
    store = getattr(request.app.state, "event_store", None)
    if store is None:
        raise ApiError(503, "the event log is not configured", type_="server_error")
    return store  # type: ignore[no-any-return]


def _bad(param: str, message: str) -> ApiError:
    return ApiError(400, f"{param}: {message}", code="invalid_value", param=param)


def parse_time(param: str, value: str, now: datetime | None = None) -> datetime:
    """RFC 3339 / ISO 8601 (naive means UTC) or a duration back from now: 90s, 15m, 24h, 7d."""
    relative = _RELATIVE.fullmatch(value)
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        return (now or datetime.now(UTC)) - timedelta(**{_UNITS[unit]: amount})
    try:
        return utc(datetime.fromisoformat(value))
    except ValueError:
        raise _bad(param, "expected an ISO 8601 time or a duration such as 15m, 24h, 7d") from None


def _single(request: Request, allowed: tuple[str, ...]) -> dict[str, str]:
    """Query parameters as one value each; unknown or repeated ones are a 400. Empty values
    count as absent (a form's "any")."""
    values: dict[str, str] = {}
    for name in request.query_params:
        if name not in allowed:
            raise _bad(name, f"unknown parameter; expected one of {', '.join(allowed)}")
        given = request.query_params.getlist(name)
        if len(given) > 1:
            raise _bad(name, "given more than once")
        if given[0].strip():
            values[name] = given[0].strip()
    return values


def event_filters(request: Request) -> dict[str, Any]:
    """The `EventStore.query` keyword arguments a request asks for, validated."""
    raw = _single(request, _EVENT_PARAMS)
    filters: dict[str, Any] = {}
    if "action" in raw:
        if raw["action"] not in ACTIONS:
            raise _bad("action", f"expected one of {', '.join(ACTIONS)}")
        filters["action"] = raw["action"]
    if "severity" in raw:
        if raw["severity"] not in (*SEVERITIES, NO_SEVERITY):
            raise _bad("severity", f"expected one of {', '.join((*SEVERITIES, NO_SEVERITY))}")
        filters["severity"] = raw["severity"]
    if "detector" in raw:
        if not _DETECTOR.fullmatch(raw["detector"]):
            raise _bad("detector", "expected a detector name such as scanner or secrets")
        filters["detector"] = raw["detector"]
    if "tenant" in raw:
        if len(raw["tenant"]) > 200:
            raise _bad("tenant", "longer than 200 characters")
        filters["tenant"] = raw["tenant"]
    for name in ("since", "until"):
        if name in raw:
            filters[name] = parse_time(name, raw[name])
    if "before" in raw:
        if not _DECISION_ID.fullmatch(raw["before"]):
            raise _bad("before", "expected a decision id")
        filters["before"] = raw["before"]
    limit = DEFAULT_PAGE
    if "limit" in raw:
        if not raw["limit"].isdigit() or not 1 <= int(raw["limit"]) <= MAX_PAGE:
            raise _bad("limit", f"expected an integer from 1 to {MAX_PAGE}")
        limit = int(raw["limit"])
    filters["limit"] = limit
    return filters


def _json(payload: dict[str, Any]) -> Response:
    response = json_response(payload)
    response.headers.update(_HEADERS)
    return response


def _iso(value: datetime) -> str:
    return utc(value).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@router.get("/admin/api/events", dependencies=[Depends(require_admin)])
async def list_events(request: Request) -> Response:
    """Events newest first, filtered; page with `before=<next_before>`."""
    filters = event_filters(request)
    store = _store(request)
    limit = filters.pop("limit")
    try:
        found = await asyncio.to_thread(store.query, limit=limit + 1, **filters)
    except KeyError:
        raise ApiError(
            400, "before: no event has that decision id", code="invalid_cursor", param="before"
        ) from None
    has_more = len(found) > limit
    page = found[:limit]
    return _json(
        {
            "object": "list",
            "data": [event.to_dict(with_findings=False) for event in page],
            "has_more": has_more,
            "next_before": page[-1].decision_id if has_more and page else None,
        }
    )


@router.get("/admin/api/events/{decision_id}", dependencies=[Depends(require_admin)])
async def get_event(decision_id: str, request: Request) -> Response:
    """One event with its findings."""
    event = None
    if _DECISION_ID.fullmatch(decision_id):
        event = await asyncio.to_thread(_store(request).get, decision_id)
    if event is None:
        raise ApiError(
            404, f"no event {decision_id[:64]!r}", type_="not_found_error", code="event_not_found"
        )
    return _json(event.to_dict())


@router.get("/admin/api/stats", dependencies=[Depends(require_admin)])
async def stats(request: Request) -> Response:
    """Totals (since `since`, default all time) and the event log's health."""
    raw = _single(request, ("since",))
    since = parse_time("since", raw["since"]) if "since" in raw else None
    totals = await asyncio.to_thread(_store(request).totals, since)
    event_log: EventLog | None = getattr(request.app.state, "event_log", None)
    return _json(
        {
            "object": "stats",
            "time": _iso(datetime.now(UTC)),
            "since": _iso(since) if since else None,
            "totals": totals,
            "event_log": event_log.health() if event_log is not None else None,
        }
    )
