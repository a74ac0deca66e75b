"""Conversions between domain types (mithril.domain) and mithril.common.v1 messages."""

from __future__ import annotations

from collections.abc import Iterable

from mithril.common.v1 import common_pb2
from mithril.domain import Finding, Origin, Severity


def finding_to_proto(finding: Finding) -> common_pb2.Finding:
    message = common_pb2.Finding(
        rule_id=finding.rule_id,
        detector=finding.detector,
        category=finding.category,
        severity=int(finding.severity),  # type: ignore[arg-type]
        confidence=finding.confidence,
        message=finding.message,
        view=finding.view,
        kind=finding.kind,
    )
    if finding.start is not None and finding.end is not None:
        message.span.start = finding.start
        message.span.end = finding.end
    return message


def findings_to_proto(findings: Iterable[Finding]) -> list[common_pb2.Finding]:
    return [finding_to_proto(finding) for finding in findings]


def finding_from_proto(message: common_pb2.Finding) -> Finding:
    has_span = message.HasField("span")
    return Finding(
        rule_id=message.rule_id,
        detector=message.detector,
        category=message.category,
        severity=Severity(message.severity or Severity.LOW),
        confidence=message.confidence,
        message=message.message,
        start=message.span.start if has_span else None,
        end=message.span.end if has_span else None,
        view=message.view or "raw",
        kind=message.kind,
    )


def origin_from_proto(value: int) -> Origin:
    """Unset means user input, as the proto documents."""
    return Origin(value) if value in Origin._value2member_map_ else Origin.USER


def finding_to_dict(finding: Finding) -> dict[str, object]:
    return {
        "rule_id": finding.rule_id,
        "detector": finding.detector,
        "category": finding.category,
        "severity": finding.severity.name.lower(),
        "confidence": round(finding.confidence, 6),
        "message": finding.message,
        "start": finding.start,
        "end": finding.end,
        "view": finding.view,
        "kind": finding.kind,
    }


def finding_from_dict(data: dict[str, object]) -> Finding:
    """The inverse of finding_to_dict (for findings kept as JSON)."""
    start, end = data.get("start"), data.get("end")
    return Finding(
        rule_id=str(data["rule_id"]),
        detector=str(data["detector"]),
        category=str(data["category"]),
        severity=Severity[str(data["severity"]).upper()],
        confidence=float(data["confidence"]),  # type: ignore[arg-type]
        message=str(data.get("message", "")),
        start=None if start is None else int(start),  # type: ignore[call-overload]
        end=None if end is None else int(end),  # type: ignore[call-overload]
        view=str(data.get("view", "raw")),
        kind=str(data.get("kind", "")),
    )
