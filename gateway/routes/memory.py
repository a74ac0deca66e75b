"""`/v1/memory/*`: shared agent memory through the memory gate, and source reputation.

Who may call what:

- `remember` and `recall` are agent calls: the same credentials as the OpenAI routes (a
  gateway API key of a tenant from the policy file; with no keys configured, anyone, as
  tenant `default`). The admin token is accepted too, so the CLI and the MCP server, which
  carry the admin token, can remember and recall on a keyed gateway.
- Everything else (quarantine, review, audit, reputation, improve) is an operator's call:
  the admin token as `Authorization: Bearer <token>`, or the dashboard's session cookie.

Bodies are validated here before any gRPC call (400 in the OpenAI envelope with `param`);
the services' own refusals come back in the same envelope (see `memory_api.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Request
from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr
from starlette.responses import Response

from mithril.gateway.body import OrjsonRoute
from mithril.gateway.errors import ApiError
from mithril.gateway.memory_api import (
    HELD_STATUSES,
    MemoryServices,
    audit_json,
    change_json,
    decision_json,
    held_json,
    memory_json,
    page_json,
    reputation_json,
    status_value,
    timestamp,
    verdict_value,
)
from mithril.gateway.responses import json_response
from mithril.gateway.routes.admin import is_admin, require_admin
from mithril.memorygate.v1 import memorygate_service_pb2 as mg_pb
from mithril.reputation.v1 import reputation_service_pb2 as rep_pb

router = APIRouter(route_class=OrjsonRoute)
admin_only = [Depends(require_admin)]

PREFIX = "/v1/memory"
MAX_SOURCE_CHARS = 200
MAX_ID_CHARS = 128
MAX_TOKEN_CHARS = 1024
MAX_PAGE_SIZE = 500
MAX_METADATA = 32
MAX_NOTE_CHARS = 4000
_HEADERS = {"Cache-Control": "no-store"}


def _json(payload: object) -> Response:
    response = json_response(payload)
    response.headers.update(_HEADERS)
    return response


def _services(request: Request) -> MemoryServices:
    services = getattr(request.app.state, "memory", None)
    if services is None:
        raise ApiError(
            503,
            "shared memory is not configured on this gateway",
            type_="mithril_unavailable",
            code="memory_gate_unavailable",
        )
    return services  # type: ignore[no-any-return]


def _bad(param: str, message: str, code: str = "invalid_value") -> ApiError:
    return ApiError(400, f"{param}: {message}", code=code, param=param)


async def authenticate_agent(request: Request) -> str:
    """Who is remembering or recalling: the admin, or a tenant of the policy (401 else)."""
    if is_admin(request):
        return "admin"
    tenant = request.app.state.policy_book.authenticate(request.headers.get("authorization"))
    if tenant is None:
        raise ApiError(
            401, "Incorrect or missing API key for this Mithril gateway.", code="invalid_api_key"
        )
    return str(tenant.name)


def _text(param: str, value: str, limit: int) -> str:
    if not value.strip():
        raise _bad(param, "must not be empty", code="empty_text")
    if len(value) > limit:
        raise ApiError(
            413,
            f"{param} has {len(value)} characters; the limit is {limit}",
            code="text_too_long",
            param=param,
        )
    return value


def _source(value: str, param: str = "source") -> str:
    value = value.strip()
    if not value:
        raise _bad(param, "must not be empty", code="empty_text")
    if len(value) > MAX_SOURCE_CHARS:
        raise _bad(param, f"longer than {MAX_SOURCE_CHARS} characters")
    return value


def parse_observed(value: str) -> datetime:
    """RFC 3339 (ISO 8601 with an offset; without one, UTC)."""
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        raise _bad(
            "observed_at", "expected an RFC 3339 time such as 2025-01-31T12:00:00Z"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


agent_only = [Depends(authenticate_agent)]


# -- bodies -------------------------------------------------------------------------------


class RememberBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    claim: StrictStr = Field(description="The claim to remember.")
    source: StrictStr = Field(description='Who makes it, e.g. "Slack" or an agent\'s name.')
    metadata: dict[StrictStr, StrictStr] | None = Field(
        None, description="String key/value pairs stored with the claim."
    )
    observed_at: StrictStr | None = Field(
        None, description="When the claim was observed (RFC 3339); default now."
    )


class RecallBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: StrictStr = Field(description="What to look for in verified memory.")
    top_k: Annotated[StrictInt, Field(ge=1, le=100)] | None = Field(
        None, description="How many memories at most; default the memory gate's."
    )


class ReviewBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    verdict: Literal["approve", "reject"] = Field(
        description="approve: into verified memory; reject: discard."
    )
    reviewer: StrictStr = Field(description="Who reviewed it.")
    note: StrictStr = Field("", max_length=MAX_NOTE_CHARS, description="Why.")


class ResetBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: StrictStr | None = Field(None, description="The source to reset; empty: all.")


# -- query parameters ---------------------------------------------------------------------


def _query(request: Request, allowed: tuple[str, ...]) -> dict[str, str]:
    """One value per parameter; unknown or repeated ones are a 400; empty ones absent."""
    values: dict[str, str] = {}
    for name in request.query_params:
        if name not in allowed:
            expected = ", ".join(allowed) if allowed else "none"
            raise _bad(name, f"unknown parameter; expected one of {expected}")
        given = request.query_params.getlist(name)
        if len(given) > 1:
            raise _bad(name, "given more than once")
        if given[0].strip():
            values[name] = given[0].strip()
    return values


def _paging(raw: Mapping[str, str]) -> tuple[int, str]:
    size = 0
    if "page_size" in raw:
        text = raw["page_size"]
        if not text.isdigit() or not 1 <= int(text) <= MAX_PAGE_SIZE:
            raise _bad("page_size", f"expected an integer from 1 to {MAX_PAGE_SIZE}")
        size = int(text)
    token = raw.get("page_token", "")
    if len(token) > MAX_TOKEN_CHARS:
        raise _bad("page_token", "not a token this server issued")
    return size, token


def _flag(raw: Mapping[str, str], name: str) -> bool:
    value = raw.get(name, "false").lower()
    if value not in ("true", "false", "1", "0"):
        raise _bad(name, "expected true or false")
    return value in ("true", "1")


def _held_id(value: str) -> str:
    if not value.strip() or len(value) > MAX_ID_CHARS:
        raise ApiError(
            404,
            f"no held claim {value[:MAX_ID_CHARS]!r}",
            type_="not_found_error",
            code="not_found",
        )
    return value


# -- agent routes -------------------------------------------------------------------------


@router.post(f"{PREFIX}/remember", dependencies=agent_only)
async def remember(body: RememberBody, request: Request) -> Response:
    """Run a claim through the memory gate; it is stored, held or refused as decided."""
    claim = _text("claim", body.claim, request.app.state.settings.max_text_chars)
    source = _source(body.source)
    metadata = body.metadata or {}
    if len(metadata) > MAX_METADATA:
        raise _bad("metadata", f"more than {MAX_METADATA} entries")
    message = mg_pb.RememberRequest(claim=claim, source=source, metadata=metadata)
    if body.observed_at is not None:
        message.observe_time.CopyFrom(timestamp(parse_observed(body.observed_at)))
    reply = await _services(request).remember(message)
    return _json({"decision": decision_json(reply.decision)})


@router.post(f"{PREFIX}/recall", dependencies=agent_only)
async def recall(body: RecallBody, request: Request) -> Response:
    """Search verified memory only (never held claims), scrubbed of secrets."""
    query = _text("query", body.query, request.app.state.settings.max_text_chars)
    reply = await _services(request).recall(mg_pb.RecallRequest(query=query, top_k=body.top_k or 0))
    return _json({"memories": [memory_json(m) for m in reply.memories]})


# -- operator routes ----------------------------------------------------------------------


@router.get(f"{PREFIX}/quarantine", dependencies=admin_only)
async def list_quarantined(request: Request) -> Response:
    """Held claims, newest first: `status=review|quarantine|reject`, `include_reviewed`."""
    raw = _query(request, ("status", "include_reviewed", "page_size", "page_token"))
    status = 0
    if "status" in raw:
        if raw["status"].lower() not in HELD_STATUSES:
            raise _bad("status", f"expected one of {', '.join(HELD_STATUSES)}")
        status = status_value(raw["status"])
    size, token = _paging(raw)
    reply = await _services(request).list_held(
        mg_pb.ListQuarantinedRequest(
            status=status,  # type: ignore[arg-type]
            include_reviewed=_flag(raw, "include_reviewed"),
            page_size=size,
            page_token=token,
        )
    )
    return _json(page_json([held_json(c) for c in reply.claims], reply.next_page_token))


@router.get(f"{PREFIX}/quarantine/{{held_id}}", dependencies=admin_only)
async def get_quarantined(held_id: str, request: Request) -> Response:
    """One held claim with the gate's decision on it."""
    _query(request, ())
    reply = await _services(request).get_held(_held_id(held_id))
    return _json(held_json(reply.claim))


@router.post(f"{PREFIX}/quarantine/{{held_id}}/review", dependencies=admin_only)
async def review(held_id: str, body: ReviewBody, request: Request) -> Response:
    """Approve a held claim into verified memory, or reject it; once only (409 after)."""
    reviewer = body.reviewer.strip()
    if not reviewer:
        raise _bad("reviewer", "must not be empty", code="empty_text")
    if len(reviewer) > MAX_SOURCE_CHARS:
        raise _bad("reviewer", f"longer than {MAX_SOURCE_CHARS} characters")
    reply = await _services(request).review(
        mg_pb.ReviewQuarantinedRequest(
            id=_held_id(held_id),
            verdict=verdict_value(body.verdict),  # type: ignore[arg-type]
            reviewer=reviewer,
            note=body.note,
        )
    )
    return _json(held_json(reply.claim))


@router.get(f"{PREFIX}/audit", dependencies=admin_only)
async def audit(request: Request) -> Response:
    """Gate decisions and reviews, newest first; `source=` narrows to one source."""
    raw = _query(request, ("source", "page_size", "page_token"))
    source = _source(raw["source"]) if "source" in raw else ""
    size, token = _paging(raw)
    reply = await _services(request).audit(
        mg_pb.ListAuditEventsRequest(source=source, page_size=size, page_token=token)
    )
    return _json(page_json([audit_json(e) for e in reply.events], reply.next_page_token))


@router.post(f"{PREFIX}/improve", dependencies=admin_only)
async def improve(request: Request) -> Response:
    """Run the memory store's improvement pass over verified memory."""
    reply = await _services(request).improve()
    return _json({"summary": reply.summary})


@router.get(f"{PREFIX}/reputation", dependencies=admin_only)
async def list_reputations(request: Request) -> Response:
    """Every known source's trust, by name."""
    size, token = _paging(_query(request, ("page_size", "page_token")))
    reply = await _services(request).list_reputations(
        rep_pb.ListReputationsRequest(page_size=size, page_token=token)
    )
    return _json(page_json([reputation_json(r) for r in reply.reputations], reply.next_page_token))


@router.post(f"{PREFIX}/reputation/reset", dependencies=admin_only)
async def reset_reputation(request: Request, body: ResetBody | None = None) -> Response:
    """Put one source (`{"source": ...}`), or every source (no source), back to its prior."""
    source = (body.source if body is not None else None) or ""
    if source.strip():
        source = _source(source)
    reply = await _services(request).reset(source.strip())
    return _json({"reset_count": reply.reset_count})


@router.get(f"{PREFIX}/reputation/{{source:path}}/history", dependencies=admin_only)
async def reputation_history(source: str, request: Request) -> Response:
    """One source's changes, newest first."""
    size, token = _paging(_query(request, ("page_size", "page_token")))
    reply = await _services(request).history(
        rep_pb.GetHistoryRequest(source=_source(source), page_size=size, page_token=token)
    )
    return _json(page_json([change_json(c) for c in reply.changes], reply.next_page_token))


@router.get(f"{PREFIX}/reputation/{{source:path}}", dependencies=admin_only)
async def get_reputation(source: str, request: Request) -> Response:
    """One source's trust (its prior when it was never seen)."""
    _query(request, ())
    reply = await _services(request).get_reputation(_source(source))
    return _json(reputation_json(reply.reputation))
