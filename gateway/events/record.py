"""One decision as the event log keeps it: no raw text beyond a short redacted excerpt."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mithril.runtime.convert import finding_to_dict
from mithril.runtime.db import utc

if TYPE_CHECKING:
    from mithril.domain import Finding
    from mithril.gateway.decision import Decision

EXCERPT_MAX_CHARS = 240
"""The longest excerpt the store keeps, in characters (after redaction)."""

DIRECTIONS = ("input", "output")
ACTIONS = ("allow", "block", "redact")
MODES = ("block", "log", "monitor")
SEVERITIES = ("low", "medium", "high", "critical")
"""Severity names, weakest first (the order of `mithril.domain.Severity`)."""

FINDING_KEYS = (
    "rule_id",
    "detector",
    "category",
    "severity",
    "confidence",
    "message",
    "start",
    "end",
    "view",
    "kind",
)
"""The keys of `finding_to_dict`: the only ones a stored finding keeps."""


def redacted_excerpt(text: str, findings: Iterable[Finding], limit: int = EXCERPT_MAX_CHARS) -> str:
    """The start of `text` with every credential or PII span the detectors reported
    replaced by [REDACTED:<kind>], at most `limit` characters: what callers pass as
    `excerpt`. Cost is bounded by `limit`, not by the text's length. A secret crossing the
    cut is replaced whole (its span is known), so no fragment of it survives."""
    window = limit * 2
    spans = sorted(
        (f.start, f.end, f.kind)
        for f in findings
        if f.kind and f.start is not None and f.end is not None and f.start < window
    )
    parts: list[str] = []
    length = position = 0
    for start, end, kind in spans:
        if end <= position:
            continue  # inside a span already replaced
        if start > position:
            parts.append(text[position:start])
            length += start - position
        parts.append(f"[REDACTED:{kind}]")
        length += len(parts[-1])
        position = end
        if length >= limit:
            break
    if position < window:
        parts.append(text[position:window])
    return "".join(parts)[:limit]


def highest_severity(findings: tuple[dict[str, Any], ...]) -> str | None:
    ranks = [SEVERITIES.index(s) for f in findings if (s := f.get("severity")) in SEVERITIES]
    return SEVERITIES[max(ranks)] if ranks else None


@dataclass(frozen=True, slots=True)
class EventRecord:
    """One decision on one text: when, for whom, what was decided and why."""

    decision_id: str
    time: datetime
    """When the decision was made; tz-aware UTC."""
    tenant: str
    route: str
    direction: str
    """"input" (prompt) or "output" (completion)."""
    action: str
    """"allow", "block" or "redact"."""
    mode: str
    """The policy mode it was decided under: "block", "log" or "monitor"."""
    flagged: bool
    score: float
    severity: str | None
    """The highest finding severity ("low".."critical"); None without findings."""
    rule_ids: tuple[str, ...]
    detectors: tuple[str, ...]
    latency_ms: float
    excerpt: str
    """Redacted by the caller; the store redacts again and caps it at EXCERPT_MAX_CHARS."""
    findings: tuple[dict[str, object], ...]
    """`finding_to_dict` output: rule, detector, severity, confidence, span; never the text."""
    request_id: str = ""
    model: str = ""
    unavailable_services: tuple[str, ...] = ()

    @classmethod
    def from_decision(
        cls,
        decision: Decision,
        *,
        tenant: str,
        route: str,
        direction: str,
        excerpt: str,
        request_id: str = "",
        model: str = "",
        mode: str | None = None,
        time: datetime | None = None,
    ) -> EventRecord:
        """The record of `decision`. `excerpt` must already be redacted (the store redacts
        it again as a safeguard); `mode` overrides the decision's own mode name."""
        findings = tuple(finding_to_dict(f) for f in decision.findings)
        return cls(
            decision_id=decision.decision_id,
            time=utc(time) if time is not None else datetime.now(UTC),
            tenant=tenant,
            route=route,
            direction=direction,
            action=str(decision.action.value),
            mode=mode if mode is not None else str(decision.mode.value),
            flagged=decision.flagged,
            score=float(decision.score),
            severity=highest_severity(findings),
            rule_ids=tuple(decision.rule_ids),
            detectors=tuple(sorted({f.detector for f in decision.findings})),
            latency_ms=float(decision.latency_ms),
            excerpt=excerpt,
            findings=findings,
            request_id=request_id,
            model=model,
            unavailable_services=tuple(decision.unavailable_services),
        )

    def to_dict(self, *, with_findings: bool = True) -> dict[str, object]:
        """JSON-ready; the time as RFC 3339 UTC with a "Z"."""
        body: dict[str, object] = {
            "decision_id": self.decision_id,
            "time": utc(self.time).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "tenant": self.tenant,
            "route": self.route,
            "direction": self.direction,
            "action": self.action,
            "mode": self.mode,
            "flagged": self.flagged,
            "score": round(self.score, 6),
            "severity": self.severity,
            "rule_ids": list(self.rule_ids),
            "detectors": list(self.detectors),
            "latency_ms": round(self.latency_ms, 3),
            "excerpt": self.excerpt,
            "request_id": self.request_id,
            "model": self.model,
            "unavailable_services": list(self.unavailable_services),
            "finding_count": len(self.findings),
        }
        if with_findings:
            body["findings"] = [dict(f) for f in self.findings]
        return body
