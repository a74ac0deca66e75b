"""Metrics labels stay a bounded set: ids and source names never become labels."""

import pytest

from mithril.gateway.http_telemetry import route_label


@pytest.mark.parametrize(
    ("path", "label"),
    [
        ("/v1/chat/completions", "/v1/chat/completions"),
        ("/v1/memory/remember", "/v1/memory/remember"),
        ("/v1/memory/quarantine", "/v1/memory/quarantine"),
        ("/v1/memory/quarantine/3f2a9c/review", "/v1/memory/quarantine/{id}"),
        ("/v1/memory/reputation/reset", "/v1/memory/reputation/reset"),
        ("/v1/memory/reputation/Slack/history", "/v1/memory/reputation/{source}"),
        ("/admin/api/events/abc", "/admin/api/events/{id}"),
        ("/anything/else", "other"),
    ],
)
def test_route_label(path: str, label: str) -> None:
    assert route_label(path) == label
