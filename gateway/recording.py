"""Recording decisions in the event log: a redacted excerpt, never a raw secret."""

from __future__ import annotations

import logging

from fastapi import Request

from mithril.gateway.decision import Decision
from mithril.gateway.events.record import EventRecord, redacted_excerpt
from mithril.runtime.logs import request_id_var

__all__ = ["record", "redacted_excerpt"]

_log = logging.getLogger(__name__)


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
