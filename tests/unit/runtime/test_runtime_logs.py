"""JSON log lines carry trace, span and request ids."""

from __future__ import annotations

import json
import logging

from opentelemetry.sdk.trace import TracerProvider

from mithril.runtime.logs import JsonFormatter, request_id_var


def test_json_line_has_ids_and_extras() -> None:
    formatter = JsonFormatter("scanner")
    tracer = TracerProvider().get_tracer("test")
    token = request_id_var.set("req-7")
    try:
        with tracer.start_as_current_span("work") as span:
            record = logging.makeLogRecord(
                {
                    "name": "x",
                    "levelno": 20,
                    "levelname": "INFO",
                    "msg": "hello %s",
                    "args": ("you",),
                    "rule_count": 3,
                }
            )
            line = json.loads(formatter.format(record))
            context = span.get_span_context()
    finally:
        request_id_var.reset(token)
    assert line["message"] == "hello you"
    assert line["service"] == "scanner"
    assert line["trace_id"] == f"{context.trace_id:032x}"
    assert line["span_id"] == f"{context.span_id:016x}"
    assert line["request_id"] == "req-7"
    assert line["rule_count"] == 3


def test_no_trace_ids_outside_a_span() -> None:
    record = logging.makeLogRecord({"msg": "plain", "levelname": "INFO"})
    line = json.loads(JsonFormatter("gateway").format(record))
    assert "trace_id" not in line and "request_id" not in line
