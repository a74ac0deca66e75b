"""POST /v1/scan and POST /v1/redact: the firewall policy over HTTP and JSON."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field, StrictStr
from starlette.responses import Response

from mithril.domain import Origin
from mithril.gateway.body import OrjsonRoute
from mithril.gateway.decision import Mode
from mithril.gateway.errors import ApiError
from mithril.gateway.firewall import Firewall, MessageInput
from mithril.gateway.openai.routes import authenticate
from mithril.gateway.recording import record, redacted_excerpt
from mithril.gateway.responses import json_response
from mithril.runtime.convert import finding_to_dict

router = APIRouter(route_class=OrjsonRoute)

SCAN = "/v1/scan"
REDACT = "/v1/redact"

OriginName = Literal["user", "system", "assistant", "tool", "retrieval"]


class ScanBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Annotated[StrictStr, Field(description="The text to scan.")]
    origin: OriginName = Field("user", description="Who controls the text.")
    direction: Literal["input", "output"] = Field("input", description="Which way it travels.")
    mode: Literal["block", "log", "monitor"] | None = Field(
        None, description="Override the policy mode."
    )


class RedactBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: Annotated[StrictStr, Field(description="The text to redact.")]


def _firewall(request: Request) -> Firewall:
    return request.app.state.firewall  # type: ignore[no-any-return]


def check_text(text: str, limit: int, param: str = "text") -> None:
    if not text.strip():
        raise ApiError(400, f"{param} must not be empty", code="empty_text", param=param)
    if len(text) > limit:
        raise ApiError(
            413,
            f"{param} has {len(text)} characters; the limit is {limit}",
            code="text_too_long",
            param=param,
        )


@router.post(SCAN)
async def scan(body: ScanBody, request: Request) -> Response:
    """Decide on one text with the caller's policy; the decision is returned, not enforced."""
    caller = authenticate(request, SCAN)
    check_text(
        body.text, min(caller.policy.max_input_chars, request.app.state.settings.max_text_chars)
    )
    # Credentials and personal data in a model's answer follow the output policy.
    output = body.direction == "output"
    policy = caller.policy.scan_output_policy if output else caller.policy.decision_policy
    result = await _firewall(request).scan_messages(
        [MessageInput(Origin[body.origin.upper()], body.text)],
        body.direction,
        Mode(body.mode) if body.mode else None,
        policy=policy,
    )
    decision = result.decision
    record(
        request,
        decision,
        tenant=caller.tenant.name,
        route=SCAN,
        direction=body.direction,
        excerpt_text=redacted_excerpt(body.text, decision.findings),
    )
    return json_response(result.scan_answer(body.text))


@router.post(REDACT)
async def redact(body: RedactBody, request: Request) -> Response:
    """Replace credentials and PII with [REDACTED:<kind>]."""
    caller = authenticate(request, REDACT)
    check_text(
        body.text, min(caller.policy.max_input_chars, request.app.state.settings.max_text_chars)
    )
    redaction = await _firewall(request).redact(body.text)
    return json_response(
        {"text": redaction.text, "findings": [finding_to_dict(f) for f in redaction.findings]}
    )
