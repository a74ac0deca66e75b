"""Prometheus metrics of the gateway, defined in one place."""

from __future__ import annotations

import functools

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
OUTPUT_BLOCKED = Counter(
    "mithril_output_blocked_total",
    "Model responses blocked by the output policy, by output mode and finding severity.",
    ["mode", "severity"],
)
JUDGE_CALLS = Counter(
    "mithril_judge_calls_total",
    "Calls to the judge on the ambiguous band, by verdict (the judge arrives in issue 4).",
    ["verdict"],
)
SERVICE_CALL_DURATION = Histogram(
    "mithril_service_call_duration_seconds",
    "Latency of each gRPC call from the gateway to a service, by service and method.",
    ["service", "method"],
    buckets=(0.0002, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0),
)
HTTP_REQUESTS = Counter(
    "mithril_http_requests_total",
    "HTTP requests by route template, method and status code.",
    ["route", "method", "status"],
)
HTTP_DURATION = Histogram(
    "mithril_http_request_duration_seconds",
    "HTTP request latency by route template (until the response starts for streams).",
    ["route", "method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
)
TIER_DURATION = Histogram(
    "mithril_tier_duration_seconds",
    "Time spent in each tier after the fast one (learned, judge), per text.",
    ["tier"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0),
)


# Children of the labelled metrics the request path touches every time, looked up once per
# label set (prometheus_client's `labels()` takes a lock and builds a key on every call).
# Each label set is bounded: actions x directions, route labels x methods x statuses.


@functools.cache
def decisions(action: str, direction: str) -> Counter:
    return DECISIONS.labels(action, direction)


@functools.cache
def http_requests(route: str, method: str, status: int) -> Counter:
    return HTTP_REQUESTS.labels(route, method, str(status))


@functools.cache
def http_duration(route: str, method: str) -> Histogram:
    return HTTP_DURATION.labels(route, method)
