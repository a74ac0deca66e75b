"""The raw-body screen in front of output scanning: it may only ever wave through a body in
which the full scan would find nothing."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from secrets_samples import ALL

from mithril.gateway.decision import Mode, Policy
from mithril.gateway.detectors import LocalDetectors
from mithril.gateway.events.store import redact_excerpt
from mithril.gateway.openai.output import plainly_clean, scan_response

DETECTORS = LocalDetectors()
OUTPUT_POLICY = Policy(Mode.BLOCK, 0.5, frozenset({"secrets"}))


def chat_body(content: str, *, ensure_ascii: bool = False) -> bytes:
    answer = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
    }
    if ensure_ascii:  # Python's json escapes every non-ASCII character as \\uXXXX
        import json

        return json.dumps(answer).encode()
    return orjson.dumps(answer)


def findings_in(body: bytes) -> int:
    verdict = asyncio.run(
        scan_response(orjson.loads(body), DETECTORS.redact, OUTPUT_POLICY, "redact", None)
    )
    return len(verdict.findings)


@pytest.mark.parametrize("sample", ALL, ids=lambda s: s.id)
def test_a_body_holding_any_secret_sample_is_never_waved_through(sample) -> None:
    for body in (chat_body(sample.text), chat_body(sample.text, ensure_ascii=True)):
        assert findings_in(body) > 0
        assert not plainly_clean(body, DETECTORS.may_redact)


def test_ordinary_answers_pass_the_screen_without_parsing() -> None:
    for content in (
        "Hello from the stand-in model.",
        "The capital of France is Paris. It has about 2.1 million inhabitants.",
        "Here is a haiku:\u3000静かな海",
    ):
        body = chat_body(content)
        assert findings_in(body) == 0
        assert plainly_clean(body, DETECTORS.may_redact)


def test_escapes_defeat_the_screen() -> None:
    # "\\u0041KIA..." decodes to an AWS key id the raw bytes never show: any backslash sends
    # the body to the full scan.
    body = chat_body("plain text").replace(b"plain text", b"key \\u0041KIAZ3MXQ7LKJHGFDSA1")
    assert findings_in(body) > 0
    assert not plainly_clean(body, DETECTORS.may_redact)
    assert not plainly_clean(chat_body("a\nb"), DETECTORS.may_redact)


@pytest.mark.parametrize("sample", ALL, ids=lambda s: s.id)
def test_the_event_store_safeguard_still_redacts_every_sample(sample) -> None:
    # The store screens excerpts with the prefilters before redacting them again; that
    # screen must never let a sample through.
    excerpt = redact_excerpt(f"note: {sample.text}")
    assert sample.secret not in excerpt
    assert "[REDACTED:" in excerpt
