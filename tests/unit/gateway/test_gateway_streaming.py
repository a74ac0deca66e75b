"""The SSE relay over the in-process redactor: chunk rewriting, held text, one [DONE]."""

from __future__ import annotations

from collections.abc import AsyncIterator

import orjson

from mithril.gateway.detectors import LocalDetectors
from mithril.gateway.openai.streaming import DONE, StreamOutcome, StreamScanner, relay

KEY = "AKIAQ3EGRZLNW7T2X5PB"
DETECTORS = LocalDetectors()


def chunk(content: str | None = None, finish: str | None = None, **delta: object) -> bytes:
    body = dict(delta)
    if content is not None:
        body["content"] = content
    return orjson.dumps(
        {
            "id": "c1",
            "object": "chat.completion.chunk",
            "model": "m",
            "choices": [{"index": 0, "delta": body, "finish_reason": finish}],
        }
    )


async def events(*items: bytes) -> AsyncIterator[bytes]:
    for item in items:
        yield item


async def run(mode: str, *items: bytes) -> tuple[list[dict], list[bytes], StreamOutcome]:  # type: ignore[type-arg]
    outcome = StreamOutcome()
    scanner = StreamScanner(lambda: DETECTORS.redact_stream(None), mode, 0.5, outcome)
    raw = [
        piece
        async for piece in relay(
            events(*items),
            scanner,
            lambda findings: {"error": {"message": "blocked", "type": "mithril_output_blocked"}},
            lambda message: {"error": {"message": message, "type": "upstream_error"}},
        )
    ]
    parsed = [orjson.loads(p[6:]) for p in raw if p != DONE]
    return parsed, raw, outcome


def content(chunks: list[dict]) -> str:  # type: ignore[type-arg]
    return "".join(
        c["choices"][0]["delta"].get("content") or "" for c in chunks if c.get("choices")
    )


async def test_held_text_goes_out_with_the_finishing_chunk() -> None:
    parsed, raw, outcome = await run(
        "redact",
        chunk("", role="assistant"),
        chunk("key AKIAQ3EG"),
        chunk("RZLNW7T2X5PB"),
        chunk(finish="stop"),
        b"[DONE]",
    )
    assert content(parsed) == "key [REDACTED:aws_access_key]"
    assert parsed[-1]["choices"][0]["finish_reason"] == "stop"
    assert raw.count(DONE) == 1 and raw[-1] == DONE
    assert [f.kind for f in outcome.findings] == ["aws_access_key"]


async def test_stream_without_finish_reason_is_flushed_in_a_closing_chunk() -> None:
    parsed, raw, _ = await run("redact", chunk("ends with AKIAQ3EGRZ"), chunk("LNW7T2X5PB"))
    assert content(parsed) == "ends with [REDACTED:aws_access_key]"
    assert raw[-1] == DONE


async def test_block_mode_stops_at_the_finding() -> None:
    parsed, raw, outcome = await run(
        "block", chunk("fine. "), chunk(f"{KEY} "), chunk("never sent"), b"[DONE]"
    )
    assert outcome.blocked
    assert parsed[-1]["error"]["type"] == "mithril_output_blocked"
    assert "never sent" not in content(parsed[:-1]) and KEY not in str(parsed)
    assert raw[-1] == DONE and raw.count(DONE) == 1


async def test_log_mode_forwards_bytes_untouched_and_records() -> None:
    original = chunk(f"key {KEY} ")
    _, raw, outcome = await run("log", original, b"[DONE]")
    assert raw[0] == b"data: " + original + b"\n\n"
    assert [f.kind for f in outcome.findings] == ["aws_access_key"]


async def test_non_json_data_is_dropped_and_upstream_done_swallowed() -> None:
    _, raw, _ = await run("redact", b"not json", chunk("hi "), b"[DONE]", chunk("after done"))
    assert raw.count(DONE) == 1
    assert b"after done" not in b"".join(raw)
