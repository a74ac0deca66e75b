"""EventRecord: built from a Decision, serialised, never holding matched text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from mithril.domain import Finding, Severity
from mithril.gateway.decision import Mode, Policy, decide
from mithril.gateway.events import EXCERPT_MAX_CHARS, EventRecord, redacted_excerpt


def _findings() -> list[Finding]:
    return [
        Finding("secrets.aws_access_key", "secrets", "credential", Severity.CRITICAL, 0.95,
                "AWS access key (20 characters)", 8, 28, "raw", "aws_access_key"),
        Finding("override.ignore_previous", "scanner", "instruction_override", Severity.HIGH,
                0.9, "asks the model to drop its instructions", 30, 60),
        Finding("pii.email", "secrets", "pii", Severity.LOW, 0.3, "email address", 70, 80),
    ]  # fmt: skip


def test_from_decision_copies_the_verdict() -> None:
    decision = decide(_findings(), Policy(Mode.BLOCK, 0.5), ("judge",), latency_ms=3.25)
    record = EventRecord.from_decision(
        decision,
        tenant="acme",
        route="/v1/chat/completions",
        direction="input",
        excerpt="my key is [REDACTED:aws_access_key]",
        request_id="req-1",
        model="gpt-4o",
    )
    assert record.decision_id == decision.decision_id
    assert record.action == "block" and record.mode == "block" and record.flagged
    assert record.score == decision.score
    assert record.severity == "critical"
    assert record.rule_ids == (
        "override.ignore_previous",
        "pii.email",
        "secrets.aws_access_key",
    )
    assert record.detectors == ("scanner", "secrets")
    assert record.latency_ms == 3.25
    assert record.unavailable_services == ("judge",)
    assert (record.request_id, record.model, record.tenant) == ("req-1", "gpt-4o", "acme")
    assert record.time.tzinfo is not None and record.time.utcoffset() == timedelta(0)
    assert abs((datetime.now(UTC) - record.time).total_seconds()) < 5
    assert [f["rule_id"] for f in record.findings] == [
        "secrets.aws_access_key",
        "override.ignore_previous",
        "pii.email",
    ]
    assert set(record.findings[0]) == {
        "rule_id", "detector", "category", "severity", "confidence",
        "message", "start", "end", "view", "kind",
    }  # fmt: skip


def test_from_decision_without_findings_and_mode_override() -> None:
    decision = decide([], Policy(Mode.LOG, 0.5))
    record = EventRecord.from_decision(
        decision, tenant="t", route="/v1/scan", direction="output", excerpt="", mode="monitor"
    )
    assert record.severity is None
    assert record.rule_ids == () and record.detectors == () and record.findings == ()
    assert (record.action, record.mode, record.flagged) == ("allow", "monitor", False)


def test_time_is_normalised_to_utc() -> None:
    decision = decide([], Policy(Mode.BLOCK, 0.5))
    paris = timezone(timedelta(hours=2))
    record = EventRecord.from_decision(
        decision,
        tenant="t",
        route="r",
        direction="input",
        excerpt="",
        time=datetime(2025, 6, 1, 12, 0, tzinfo=paris),
    )
    assert record.time == datetime(2025, 6, 1, 10, 0, tzinfo=UTC)
    assert record.time.tzinfo == UTC


def test_to_dict_is_json_ready(make_event) -> None:  # type: ignore[no-untyped-def]
    record = make_event(time=datetime(2025, 1, 2, 3, 4, 5, 678000, tzinfo=UTC))
    body = record.to_dict()
    assert body["time"] == "2025-01-02T03:04:05.678Z"
    assert body["finding_count"] == 1 and len(body["findings"]) == 1  # type: ignore[arg-type]
    assert "findings" not in record.to_dict(with_findings=False)


def _secret(start: int, end: int, kind: str = "aws_access_key") -> Finding:
    return Finding(f"secrets.{kind}", "secrets", "credential", Severity.CRITICAL, 0.95,
                   "m", start, end, "raw", kind)  # fmt: skip


def test_redacted_excerpt_replaces_reported_spans() -> None:
    key = "AKIAQ3EGRZLNW7T2X5PB"
    text = f"my key is {key}, thanks"
    attack = Finding("override.x", "scanner", "instruction_override", Severity.HIGH, 0.9, "m", 0, 2)
    assert redacted_excerpt(text, [attack, _secret(10, 30)]) == (
        "my key is [REDACTED:aws_access_key], thanks"
    )
    # Overlapping and nested spans, decoded-view findings without a span.
    decoded = Finding("x", "scanner", "c", Severity.LOW, 0.1, "m", None, None, "base64", "k")
    nested = [_secret(10, 30), _secret(12, 20, "email"), decoded]
    assert redacted_excerpt(text, nested) == "my key is [REDACTED:aws_access_key], thanks"


def test_redacted_excerpt_is_bounded_and_never_leaves_a_fragment() -> None:
    text = "a" * 230 + "SECRETSECRETSECRETSECRET" + "b" * 10_000
    out = redacted_excerpt(text, [_secret(230, 254, "generic")])
    assert out == "a" * 230 + "[REDACTED:generic]"[:10]
    assert "SECRET" not in out and len(out) == EXCERPT_MAX_CHARS
    assert redacted_excerpt("short", []) == "short"
    assert len(redacted_excerpt("z" * 10_000, [])) == EXCERPT_MAX_CHARS
