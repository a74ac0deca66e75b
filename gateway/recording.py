"""Recording decisions in the event log: a redacted excerpt, never a raw secret."""

from __future__ import annotations

import logging

from fastapi import Request

from mithril.domain import Finding
from mithril.gateway.decision import Decision
from mithril.runtime.logs import request_id_var

_log = logging.getLogger(__name__)

EXCERPT_CHARS = 240
_SECRET_CATEGORIES = frozenset({"credential", "pii"})


def excerpt(text: str, findings: tuple[Finding, ...] | list[Finding]) -> str:
    """The start of `text` with every credential/PII span the decision found replaced.

    The spans come from detection over the whole text, so a secret that straddles the cut
    is still replaced; the event store redacts once more before writing.
    """
    spans = sorted(
        (f.start, f.end, f.kind or f.category)
        for f in findings
        if f.category in _SECRET_CATEGORIES and f.start is not None and f.end is not None
    )
    pieces: list[str] = []
    cursor = 0
    for start, end, kind in spans:
        if start < cursor:
            continue
        if start >= EXCERPT_CHARS * 2:
            break
        pieces += [text[cursor:start], f"[REDACTED:{kind}]"]
        cursor = end
    pieces.append(text[cursor : cursor + EXCERPT_CHARS * 2])
    return "".join(pieces)[:EXCERPT_CHARS]


def record(
    request: Request,
    decision: Decision,
    *,
    tenant: str,
    route: str,
    direction: str,
    excerpt_text: str,
    model: str = "",
    mode: str | None = None,
) -> None:
    """Queue the decision for the event log; never blocks, never raises."""
    event_log = getattr(request.app.state, "event_log", None)
    if event_log is None:
        return
    from mithril.gateway.events.record import EventRecord

    try:
        event_log.record(
            EventRecord.from_decision(
                decision,
                tenant=tenant,
                route=route,
                direction=direction,
                excerpt=excerpt_text,
                request_id=request_id_var.get(),
                model=model,
                mode=mode,
            )
        )
    except Exception:  # the event log must never take a request down with it
        _log.exception("could not queue an event", extra={"decision_id": decision.decision_id})
