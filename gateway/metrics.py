"""Prometheus metrics of the gateway, defined in one place."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

DECISIONS = Counter(
    "mithril_decisions_total", "Policy decisions by action and direction.", ["action", "direction"]
)
BLOCKED = Counter(
    "mithril_blocked_total",
    "Blocked decisions, once per distinct rule that contributed.",
    ["severity", "rule_id", "detector"],
)
ALLOWED = Counter("mithril_allowed_total", "Allowed decisions.")
SERVICE_UNAVAILABLE = Counter(
    "mithril_service_unavailable_total",
    "Decisions made while a service could not be reached, by service and mode"
    " (block fails closed, log fails open).",
    ["service", "mode"],
)
SCAN_DURATION = Histogram(
    "mithril_scan_duration_seconds",
    "Time to decide on one text, end to end through the detectors.",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
)
