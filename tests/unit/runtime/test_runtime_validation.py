"""The table-driven request validation every service runs."""

from __future__ import annotations

import grpc
import pytest

from mithril.firewall.v1 import firewall_service_pb2 as fw
from mithril.memorygate.v1 import memorygate_service_pb2 as mg
from mithril.reputation.v1 import reputation_service_pb2 as rep
from mithril.runtime.validation import REQUIRED, Limits, validate
from mithril.scanner.v1 import scanner_service_pb2 as sc

LIMITS = Limits(max_text_chars=10, max_batch_items=3)


@pytest.mark.parametrize(
    ("message", "code", "field"),
    [
        (sc.ScanRequest(text=""), grpc.StatusCode.INVALID_ARGUMENT, "text"),
        (sc.ScanRequest(text="x" * 11), grpc.StatusCode.RESOURCE_EXHAUSTED, "text"),
        (sc.ScanBatchRequest(), grpc.StatusCode.INVALID_ARGUMENT, "requests"),
        (
            sc.ScanBatchRequest(requests=[sc.ScanRequest(text="a")] * 4),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "requests",
        ),
        (
            fw.ScanMessagesRequest(messages=[fw.Message(content="x" * 11)]),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "messages[0].content",
        ),
        (
            rep.RecordOutcomeRequest(source="slack"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "outcome",
        ),
        (
            mg.RememberRequest(claim="ok", source="s", metadata={"k": "v" * 11}),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "metadata",
        ),
    ],
)
def test_rejections(message, code, field) -> None:  # type: ignore[no-untyped-def]
    status = validate(message, LIMITS)
    assert status is not None
    assert status.code == code
    assert field in status.details


@pytest.mark.parametrize(
    "message",
    [
        sc.ScanRequest(text="fine"),
        sc.ScanBatchRequest(requests=[sc.ScanRequest(text="a")] * 3),
        rep.RecordOutcomeRequest(source="slack", outcome=rep.OUTCOME_GOOD),
        fw.ScanMessagesRequest(messages=[fw.Message(content="hi")]),
    ],
)
def test_acceptable_requests_pass(message) -> None:  # type: ignore[no-untyped-def]
    assert validate(message, LIMITS) is None


def test_required_table_names_real_fields() -> None:
    from google.protobuf import descriptor_pool

    import mithril.embedding.v1.embedding_service_pb2
    import mithril.judge.v1.judge_service_pb2
    import mithril.secrets.v1.secrets_service_pb2  # noqa: F401

    pool = descriptor_pool.Default()
    for message_name, fields in REQUIRED.items():
        descriptor = pool.FindMessageTypeByName(message_name)
        for field in fields:
            assert field in descriptor.fields_by_name, f"{message_name}.{field}"
