"""Scanning a complete (non-streamed) model response for credentials and PII.

Output policy: `redact` replaces every finding of the selected kinds with
`[REDACTED:<kind>]`, whatever its score; `block` refuses the response when the findings
reach the threshold (sub-threshold ones are redacted, never passed raw); `log` changes
nothing. Monitor mode always behaves as `log`. Findings are recorded in every mode.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from mithril.domain import Finding
from mithril.gateway.decision import Decision, Policy, decide
from mithril.gateway.detectors import Redaction
from mithril.runtime.aio import gather_all


@dataclass(frozen=True, slots=True)
class Field:
    """One piece of model-written text in a response body, and how to write it back."""

    param: str
    text: str
    write: Callable[[str], None]


def _setter(container: dict[str, Any], key: str) -> Callable[[str], None]:
    def write(value: str) -> None:
        container[key] = value

    return write


def response_fields(body: Any) -> list[Field]:
    """Model-written text: message content, refusals, tool-call arguments, legacy `text`."""
    fields: list[Field] = []
    choices = body.get("choices") if isinstance(body, dict) else None
    if not isinstance(choices, list):
        return fields
    for index, choice in enumerate(choices):
        if not isinstance(choice, dict):
            continue
        prefix = f"choices[{index}]"
        if isinstance(choice.get("text"), str):
            fields.append(Field(f"{prefix}.text", choice["text"], _setter(choice, "text")))
        for key in ("message", "delta"):
            message = choice.get(key)
            if isinstance(message, dict):
                fields += _message_fields(message, f"{prefix}.{key}")
    return fields


def _message_fields(message: dict[str, Any], prefix: str) -> list[Field]:
    fields = []
    for key in ("content", "refusal"):
        if isinstance(message.get(key), str):
            fields.append(Field(f"{prefix}.{key}", message[key], _setter(message, key)))
    calls = message.get("tool_calls")
    for index, call in enumerate(calls if isinstance(calls, list) else []):
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("arguments"), str):
            fields.append(
                Field(
                    f"{prefix}.tool_calls[{index}].function.arguments",
                    function["arguments"],
                    _setter(function, "arguments"),
                )
            )
    return fields


def plainly_clean(body: bytes, may_redact: Callable[[bytes], bool]) -> bool:
    """True when a JSON response body certainly holds nothing to redact, judged on its raw
    bytes without parsing it: with no backslash in it, every string in the body (escapes
    would be backslashes) appears verbatim in those bytes, so a screen that finds nothing
    in the whole body finds nothing in any field either."""
    return b"\\" not in body and not may_redact(body)


@dataclass(frozen=True, slots=True)
class OutputVerdict:
    decision: Decision | None
    """None when nothing was found: a clean answer needs no decision of its own."""
    blocked: bool
    redacted: bool
    findings: tuple[Finding, ...]


CLEAN = OutputVerdict(None, blocked=False, redacted=False, findings=())


async def scan_response(
    body: dict[str, Any],
    redact: Callable[[str, Collection[str] | None], Any],
    policy: Policy,
    output_mode: str,
    kinds: Collection[str] | None,
    may_redact: Callable[[bytes], bool] | None = None,
) -> OutputVerdict:
    """Scan every field; in redact or block mode rewrite `body` in place. Fields that
    `may_redact` clears are not sent to `redact` (with the fast tier over gRPC, a clean
    answer then costs no call)."""
    fields = [
        field
        for field in response_fields(body)
        if field.text and (may_redact is None or may_redact(field.text.encode()))
    ]
    if not fields:
        return CLEAN
    redactions: list[Redaction] = await gather_all(redact(field.text, kinds) for field in fields)
    findings = tuple(f for redaction in redactions for f in redaction.findings)
    if not findings:
        return CLEAN
    decision = decide(findings, policy)
    blocked = output_mode == "block" and decision.flagged
    rewrite = output_mode in ("redact", "block") and not blocked
    changed = False
    if rewrite:
        for field, redaction in zip(fields, redactions, strict=True):
            if redaction.findings:
                field.write(redaction.text)
                changed = True
    return OutputVerdict(decision, blocked, changed, findings)
