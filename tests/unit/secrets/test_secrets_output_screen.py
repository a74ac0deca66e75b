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
    """What the gateway's output scan finds, its per-field screen included."""
    verdict = asyncio.run(
        scan_response(
            orjson.loads(body),
            DETECTORS.redact,
            OUTPUT_POLICY,
            "redact",
            None,
            DETECTORS.may_redact,
        )
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


def test_a_real_answers_metadata_defeats_the_raw_screen_but_not_the_field_screen() -> None:
    # A model's answer carries a timestamp and token counts: digits and "token" are
    # prefilters (phone numbers, credential assignments), so the raw body always "may"
    # hold something. The fields are screened one by one, and clean ones are not scanned.
    answer = orjson.loads(chat_body("The capital of France is Paris."))
    answer["created"] = 1764460800
    answer["usage"] = {"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19}
    assert not plainly_clean(orjson.dumps(answer), DETECTORS.may_redact)
    scanned: list[str] = []

    async def redact(text, kinds):  # type: ignore[no-untyped-def]
        scanned.append(text)
        return await DETECTORS.redact(text, kinds)

    def scan(content: str) -> int:
        answer["choices"][0]["message"]["content"] = content
        verdict = asyncio.run(
            scan_response(answer, redact, OUTPUT_POLICY, "redact", None, DETECTORS.may_redact)
        )
        return len(verdict.findings)

    assert scan("The capital of France is Paris.") == 0 and scanned == []
    assert scan("mail ana@example.com") == 1 and scanned == ["mail ana@example.com"]


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
