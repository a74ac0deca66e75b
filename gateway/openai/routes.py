"""The OpenAI-compatible routes: authenticate, scan the input, forward, scan the output.

Request bodies are forwarded byte for byte (unknown fields pass through untouched); only
what a user or a tool controls is read out of them and scanned. Responses are rewritten
only when the output policy redacts something.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.background import BackgroundTask
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from mithril.domain import Finding
from mithril.gateway import metrics
from mithril.gateway.decision import (
    Action,
    Decision,
    FactsAction,
    Mode,
    Policy,
    decide,
)
from mithril.gateway.errors import ApiError
from mithril.gateway.firewall import Firewall, MessageInput
from mithril.gateway.openai import extract
from mithril.gateway.openai.output import plainly_clean, scan_response
from mithril.gateway.openai.streaming import StreamOutcome, StreamScanner, relay, sse_events
from mithril.gateway.openai.upstream import Target, Upstream, UpstreamError, response_headers
from mithril.gateway.policy.book import PolicyBook, Tenant, bearer_token
from mithril.gateway.policy.model import RoutePolicy
from mithril.gateway.recording import record, redacted_excerpt
from mithril.gateway.responses import json_response

CHAT = "/v1/chat/completions"
COMPLETIONS = "/v1/completions"
EMBEDDINGS = "/v1/embeddings"


@dataclass(frozen=True, slots=True)
class Caller:
    tenant: Tenant
    policy: RoutePolicy
    client_key: str | None


def authenticate(request: Request, route: str) -> Caller:
    """The caller's tenant and effective policy, or 401 in the OpenAI envelope."""
    book: PolicyBook = request.app.state.policy_book
    header = request.headers.get("authorization")
    tenant = book.authenticate(header)
    if tenant is None:
        raise ApiError(
            401,
            "Incorrect or missing API key for this Mithril gateway.",
            code="invalid_api_key",
        )
    return Caller(tenant, book.resolve(tenant, route), bearer_token(header))


def upstream_target(caller: Caller) -> Target:
    upstream = caller.policy.upstream
    configured = upstream.api_key.get_secret_value() if upstream.api_key is not None else None
    key = configured
    if key is None and upstream.forward_client_key:
        key = caller.client_key
    return Target(
        upstream.url,
        key,
        upstream.timeout_seconds,
        upstream.connect_timeout_seconds,
        callers_credentials=configured is None,
    )


def parse_body(raw: bytes) -> dict[str, Any]:
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ApiError(400, "the request body is not valid JSON", code="invalid_json") from exc
    if not isinstance(body, dict):
        raise ApiError(400, "the request body must be a JSON object", code="invalid_value")
    return body


def check_model(caller: Caller, model: str) -> None:
    if not caller.policy.model_allowed(model):
        raise ApiError(
            403,
            f"model {model!r} is not allowed for this tenant",
            type_="mithril_model_not_allowed",
            code="model_not_allowed",
            param="model",
        )


def check_size(caller: Caller, segments: list[extract.Segment]) -> None:
    total = sum(len(segment.text) for segment in segments)
    if total > caller.policy.max_input_chars:
        raise ApiError(
            413,
            f"the request has {total} characters of text to scan; the limit is "
            f"{caller.policy.max_input_chars}",
            code="input_too_long",
        )


def _mithril_object(decision: Decision) -> dict[str, Any]:
    return {
        "decision_id": decision.decision_id,
        "action": decision.action.value,
        "score": round(decision.score, 6),
        "threshold": decision.threshold,
        "rule_ids": decision.rule_ids,
    }


def blocked_error(decision: Decision, param: str | None) -> ApiError:
    strongest = decision.findings[0]
    message = (
        f"Request blocked by Mithril: {strongest.message} "
        f"({', '.join(decision.rule_ids)}; score {decision.score:.2f} >= {decision.threshold:.2f})."
    )
    return ApiError(
        403,
        message,
        type_="mithril_blocked",
        code="prompt_blocked",
        param=param,
        extra={"mithril": _mithril_object(decision)},
    )


def output_blocked_body(decision: Decision) -> dict[str, Any]:
    kinds = sorted({f.kind or f.category for f in decision.findings})
    return {
        "error": {
            "message": "The model's response was blocked by Mithril: it contained "
            f"{', '.join(kinds)} (score {decision.score:.2f}).",
            "type": "mithril_output_blocked",
            "code": "output_blocked",
            "param": None,
        },
        "mithril": _mithril_object(decision),
    }


async def scan_input(
    request: Request, caller: Caller, route: str, segments: list[extract.Segment], model: str
) -> dict[extract.BodyPath, str]:
    """Decide on the input and record it; raise 403 when the policy blocks it. Returns
    the redacted text of each segment to redact (none unless the decision redacts)."""
    if not segments:
        return {}
    firewall: Firewall = request.app.state.firewall
    result = await firewall.scan_messages(
        [MessageInput(s.origin, s.text) for s in segments],
        direction="input",
        policy=caller.policy.decision_policy,
    )
    decision = result.decision
    # The excerpt and the error's `param` point at the segment that weighed most.
    index = _strongest_segment(result.per_message)
    record(
        request,
        decision,
        tenant=caller.tenant.name,
        route=route,
        direction="input",
        excerpt_text=redacted_excerpt(segments[index].text, result.per_message[index]),
        model=model,
    )
    if decision.action is Action.BLOCK:
        raise blocked_error(decision, segments[index].param)
    contents = result.redacted_contents([segment.text for segment in segments])
    return {
        segment.path: content
        for segment, content in zip(segments, contents, strict=True)
        if content is not None
    }


def _strongest_segment(per_message: tuple[tuple[Finding, ...], ...]) -> int:
    best, best_score = 0, -1.0
    for index, findings in enumerate(per_message):
        score = max((f.confidence for f in findings), default=-1.0)
        if score > best_score:
            best, best_score = index, score
    return best


def _upstream_failure(error: UpstreamError) -> ApiError:
    return ApiError(error.status, error.message, type_="upstream_error", code=error.code)


async def proxy_completion(
    request: Request, route: str, raw: bytes, body: dict[str, Any], caller: Caller, model: str
) -> Response:
    """Forward a chat or legacy completion and apply the output policy to the answer."""
    upstream: Upstream = request.app.state.upstream
    target = upstream_target(caller)
    path = route.removeprefix("/v1")
    try:
        response = await upstream.send("POST", target, path, request.headers, raw)
    except UpstreamError as error:
        raise _upstream_failure(error) from error
    streaming = body.get("stream") is True and response.content_type == "text/event-stream"
    if response.status != 200 or (not streaming and response.content_type != "application/json"):
        # Upstream errors (and anything we cannot read) pass through with status and body.
        try:
            content = await response.read()
        finally:
            response.release()
        return Response(content, response.status, headers=response_headers(response.headers))
    if streaming:
        return _stream(request, route, caller, model, response)
    try:
        content = await response.read()
    except (TimeoutError, OSError) as exc:
        response.release()
        raise ApiError(
            504,
            "the upstream stopped answering mid-response",
            type_="upstream_error",
            code="upstream_timeout",
        ) from exc
    response.release()
    return await _scan_output(
        request, route, caller, model, content, response_headers(response.headers)
    )


def _output_policy(caller: Caller, mode: str) -> Policy:
    enforcing = Mode.BLOCK if mode == "block" else Mode.LOG
    return Policy(
        enforcing, caller.policy.threshold, frozenset({"secrets"}), facts=FactsAction.BLOCK
    )


async def _scan_output(
    request: Request,
    route: str,
    caller: Caller,
    model: str,
    content: bytes,
    headers: dict[str, str],
) -> Response:
    firewall: Firewall = request.app.state.firewall
    if plainly_clean(content, firewall.detectors.may_redact):
        return Response(content, 200, headers=headers)  # the common case, without parsing
    try:
        answer = orjson.loads(content)
    except orjson.JSONDecodeError:
        return Response(content, 200, headers=headers)
    mode = caller.policy.output_mode
    kinds = caller.policy.output.kinds or None
    started = time.perf_counter()
    verdict = await scan_response(
        answer,
        firewall.redact,
        _output_policy(caller, mode),
        mode,
        kinds,
        firewall.detectors.may_redact,
    )
    if verdict.decision is None:
        return Response(content, 200, headers=headers)  # clean: the input event stands
    decision = dataclasses.replace(
        verdict.decision,
        action=Action.BLOCK
        if verdict.blocked
        else (Action.REDACT if verdict.redacted else Action.ALLOW),
        latency_ms=(time.perf_counter() - started) * 1000,
    )
    _record_output(request, caller, route, model, decision, mode)
    if verdict.blocked:
        return json_response(output_blocked_body(decision), 403)
    if verdict.redacted:
        return Response(orjson.dumps(answer), 200, headers=headers)
    return Response(content, 200, headers=headers)


def _record_output(
    request: Request, caller: Caller, route: str, model: str, decision: Decision, mode: str
) -> None:
    if decision.action is Action.BLOCK:
        for severity in {f.severity.name.lower() for f in decision.findings}:
            metrics.OUTPUT_BLOCKED.labels(mode, severity).inc()
    if not decision.findings and decision.action is Action.ALLOW:
        return  # clean output: the input event already stands for the request
    kinds = sorted({f.kind or f.category for f in decision.findings})
    record(
        request,
        decision,
        tenant=caller.tenant.name,
        route=route,
        direction="output",
        excerpt_text=f"[model output: {', '.join(kinds)}]",
        model=model,
    )


def _stream(request: Request, route: str, caller: Caller, model: str, response: Any) -> Response:
    firewall: Firewall = request.app.state.firewall
    mode = caller.policy.output_mode
    kinds = caller.policy.output.kinds or None
    outcome = StreamOutcome()
    scanner = StreamScanner(
        lambda: firewall.detectors.redact_stream(kinds), mode, caller.policy.threshold, outcome
    )

    def blocked(findings: list[Finding]) -> dict[str, Any]:
        decision = decide(findings, _output_policy(caller, "block"))
        return output_blocked_body(decision)

    def broken(message: str) -> dict[str, Any]:
        return {
            "error": {
                "message": message,
                "type": "upstream_error",
                "code": "stream_interrupted",
                "param": None,
            }
        }

    async def body() -> AsyncIterator[bytes]:
        try:
            async for piece in relay(sse_events(response), scanner, blocked, broken):
                yield piece
        finally:
            response.release()

    def finish() -> None:
        decision = decide(outcome.findings, _output_policy(caller, mode))
        action = (
            Action.BLOCK
            if outcome.blocked
            else (Action.REDACT if outcome.findings and mode != "log" else Action.ALLOW)
        )
        decision = dataclasses.replace(
            decision, action=action, latency_ms=(time.perf_counter() - outcome.started) * 1000
        )
        _record_output(request, caller, route, model, decision, mode)

    headers = response_headers(response.headers)
    headers.pop("Content-Type", None)
    headers.pop("content-type", None)
    return StreamingResponse(
        body(),
        media_type="text/event-stream",
        headers=headers | {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        background=BackgroundTask(finish),
    )


@dataclass(frozen=True, slots=True)
class Admitted:
    """A request that passed authentication, validation and the input scan."""

    caller: Caller
    raw: bytes
    body: dict[str, Any]
    model: str


async def admit(
    request: Request,
    route: str,
    segments_of: Callable[[dict[str, Any], Caller], list[extract.Segment]],
) -> Admitted:
    """Authenticate, parse, check the model and the size, scan: the same for every route
    that forwards a body; raises the error the client should see. A body the policy
    redacts is forwarded re-encoded, with only the redacted texts changed."""
    caller = authenticate(request, route)
    raw = await request.body()
    body = parse_body(raw)
    model = extract.model_of(body)
    check_model(caller, model)
    segments = segments_of(body, caller)
    check_size(caller, segments)
    if redacted := await scan_input(request, caller, route, segments, model):
        extract.replace_texts(body, redacted)
        raw = orjson.dumps(body)
    return Admitted(caller, raw, body, model)


async def chat_completions(request: Request) -> Response:
    admitted = await admit(
        request,
        CHAT,
        lambda body, caller: extract.chat_segments(body, caller.policy.scan_system_prompt),
    )
    return await proxy_completion(
        request, CHAT, admitted.raw, admitted.body, admitted.caller, admitted.model
    )


async def completions(request: Request) -> Response:
    admitted = await admit(
        request, COMPLETIONS, lambda body, _caller: extract.completion_segments(body)
    )
    return await proxy_completion(
        request, COMPLETIONS, admitted.raw, admitted.body, admitted.caller, admitted.model
    )


async def embeddings(request: Request) -> Response:
    """Checked with the route's detectors as retrieved content (what gets embedded is what
    RAG serves later), then answered by the embedding service for a local model name, else
    passed through to the upstream unchanged."""
    admitted = await admit(
        request, EMBEDDINGS, lambda body, _caller: extract.embedding_segments(body)
    )
    local = request.app.state.local_embeddings
    if local is not None and local.serves(admitted.model):
        assert admitted.model is not None
        return json_response(await local.create(admitted.body, admitted.model))
    return await _pass_through(request, admitted.caller, "POST", "/embeddings", admitted.raw)


async def models(request: Request) -> Response:
    """The upstream's model list, filtered by the tenant's allow-list."""
    caller = authenticate(request, CHAT)
    response = await _pass_through(request, caller, "GET", "/models", None)
    if response.status_code != 200 or not caller.policy.models:
        return response
    listing = orjson.loads(response.body)
    if isinstance(listing, dict) and isinstance(listing.get("data"), list):
        listing["data"] = [
            m
            for m in listing["data"]
            if isinstance(m, dict) and caller.policy.model_allowed(str(m.get("id", "")))
        ]
    return json_response(listing)


async def _pass_through(
    request: Request, caller: Caller, method: str, path: str, raw: bytes | None
) -> Response:
    upstream: Upstream = request.app.state.upstream
    try:
        response = await upstream.send(method, upstream_target(caller), path, request.headers, raw)
    except UpstreamError as error:
        raise _upstream_failure(error) from error
    try:
        content = await response.read()
    except (TimeoutError, OSError) as exc:
        raise ApiError(
            504,
            "the upstream stopped answering mid-response",
            type_="upstream_error",
            code="upstream_timeout",
        ) from exc
    finally:
        response.release()
    return Response(content, response.status, headers=response_headers(response.headers))


# Plain Starlette routes: these endpoints read and forward raw bodies, so FastAPI's
# parameter solving would only add per-request cost. The gateway serves the same endpoints
# ahead of FastAPI (`gateway/direct.py`); the routes stay registered so that other methods
# on these paths still get FastAPI's 405 in the envelope.
ROUTES = [
    Route(CHAT, chat_completions, methods=["POST"]),
    Route(COMPLETIONS, completions, methods=["POST"]),
    Route(EMBEDDINGS, embeddings, methods=["POST"]),
    Route("/v1/models", models, methods=["GET"]),
]
DIRECT = {
    ("POST", CHAT): chat_completions,
    ("POST", COMPLETIONS): completions,
    ("POST", EMBEDDINGS): embeddings,
    ("GET", "/v1/models"): models,
}
