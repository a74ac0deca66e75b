"""The HTTP client's retry policy: which failures retry, how often, how long, and what the
final error is. Driven by httpx.MockTransport (no network, no model)."""

from __future__ import annotations

import logging
import random
from collections.abc import Callable

import httpx
import orjson
import pytest

from mithril.services.judge.client import (
    ChatClient,
    RetryPolicy,
    display_url,
    is_retryable_exception,
    is_retryable_status,
)
from mithril.services.judge.errors import (
    BAD_REPLY,
    REJECTED,
    UNREACHABLE,
    JudgeFailed,
    JudgeUnavailable,
)
from mithril.services.judge.verdict import parse_verdict

GOOD = '{"verdict": "attack", "score": 0.9, "rationale": "r"}'
KEY = "sk-unit-SECRET-5c1e4b"
MESSAGES = ({"role": "user", "content": "hello"},)

Step = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


def chat(content: str, model: str = "stand-in-1") -> httpx.Response:
    return httpx.Response(
        200,
        json={
            "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
        },
    )


class Script:
    """Answers requests with the given steps in order; records every request."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        if isinstance(step, httpx.Response):
            return step
        return step(request)

    def bodies(self) -> list[dict]:
        return [orjson.loads(r.content) for r in self.requests]


class Sleeps:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def client(script: Script, sleeps: Sleeps | None = None, **policy: float) -> ChatClient:
    return ChatClient(
        "http://llm.test/v1/",
        "m-1",
        KEY,
        policy=RetryPolicy(**{"max_retries": 2, "backoff_seconds": 0.1, **policy}),  # type: ignore[arg-type]
        transport=httpx.MockTransport(script),
        sleep=sleeps or Sleeps(),
        rng=random.Random(7),
    )


@pytest.mark.parametrize(
    ("status", "retry"),
    [
        (429, True),
        (500, True),
        (502, True),
        (503, True),
        (504, True),
        (400, False),
        (401, False),
        (403, False),
        (404, False),
        (422, False),
    ],
)
def test_retryable_statuses(status: int, retry: bool) -> None:
    assert is_retryable_status(status) is retry


@pytest.mark.parametrize(
    ("error", "retry"),
    [
        (httpx.ConnectError("refused"), True),
        (httpx.ReadTimeout("slow"), True),
        (httpx.ConnectTimeout("slow"), True),
        (httpx.ReadError("reset"), True),
        (httpx.RemoteProtocolError("closed"), True),
        (TimeoutError(), True),
        (httpx.UnsupportedProtocol("ftp"), False),
        (httpx.InvalidURL("bad"), False),
        (ValueError("x"), False),
    ],
)
def test_retryable_exceptions(error: Exception, retry: bool) -> None:
    assert is_retryable_exception(error) is retry


async def test_a_good_reply_is_parsed_and_the_request_is_well_formed() -> None:
    script = Script(chat(GOOD, model="served-name"))
    done = await client(script).complete(MESSAGES, parse_verdict)
    assert (done.value.score, done.model, done.attempts) == (0.9, "served-name", 1)
    request = script.requests[0]
    assert str(request.url) == "http://llm.test/v1/chat/completions"
    assert request.headers["authorization"] == f"Bearer {KEY}"
    body = script.bodies()[0]
    assert body["model"] == "m-1" and body["temperature"] == 0.0
    assert body["response_format"] == {"type": "json_object"}
    assert body["messages"] == list(MESSAGES) and body["stream"] is False


async def test_no_key_no_authorization_header() -> None:
    script = Script(chat(GOOD))
    chat_client = ChatClient("http://llm.test/v1", "m", "", transport=httpx.MockTransport(script))
    await chat_client.complete(MESSAGES, parse_verdict)
    assert "authorization" not in script.requests[0].headers


@pytest.mark.parametrize(
    "failure",
    [
        httpx.Response(500),
        httpx.Response(503),
        httpx.Response(429),
        httpx.ConnectError("refused"),
        httpx.ReadTimeout("slow"),
        httpx.RemoteProtocolError("closed"),
    ],
)
async def test_transient_failures_are_retried_then_succeed(failure: Step) -> None:
    sleeps = Sleeps()
    script = Script(failure, failure, chat(GOOD))
    done = await client(script, sleeps).complete(MESSAGES, parse_verdict)
    assert done.attempts == 3 and len(script.requests) == 3
    assert len(sleeps.waits) == 2
    # Full jitter inside an exponentially growing window.
    assert 0 <= sleeps.waits[0] <= 0.1 and 0 <= sleeps.waits[1] <= 0.2


async def test_retries_are_bounded_and_end_unavailable(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    script = Script(*[httpx.Response(503)] * 10)
    with pytest.raises(JudgeUnavailable) as caught:
        await client(script).complete(MESSAGES, parse_verdict)
    assert len(script.requests) == 3  # one attempt and max_retries=2
    assert caught.value.reason == UNREACHABLE
    assert "3 attempts" in caught.value.message and "HTTP 503" in caught.value.message
    assert KEY not in caplog.text and KEY not in caught.value.message


async def test_zero_retries_means_one_attempt() -> None:
    script = Script(httpx.ConnectError("refused"), chat(GOOD))
    with pytest.raises(JudgeUnavailable):
        await client(script, max_retries=0).complete(MESSAGES, parse_verdict)
    assert len(script.requests) == 1


@pytest.mark.parametrize("status", [401, 403, 404])
async def test_client_errors_are_final(status: int) -> None:
    error = {"error": {"message": f"Incorrect API key provided: {KEY}", "type": "auth"}}
    script = Script(httpx.Response(status, json=error), chat(GOOD))
    with pytest.raises(JudgeFailed) as caught:
        await client(script).complete(MESSAGES, parse_verdict)
    assert len(script.requests) == 1
    assert caught.value.reason == REJECTED
    assert f"HTTP {status}" in caught.value.message
    assert KEY not in caught.value.message and "[REDACTED]" in caught.value.message


async def test_retry_after_is_honoured_but_capped() -> None:
    sleeps = Sleeps()
    script = Script(
        httpx.Response(429, headers={"retry-after": "2"}),
        httpx.Response(429, headers={"retry-after": "600"}),
        chat(GOOD),
    )
    await client(script, sleeps, backoff_max_seconds=5).complete(MESSAGES, parse_verdict)
    assert sleeps.waits == [2.0, 5.0]


async def test_unparseable_replies_are_retried_without_backoff_then_fail() -> None:
    sleeps = Sleeps()
    script = Script(chat("I refuse."), chat("still no json"), chat("{}"))
    with pytest.raises(JudgeFailed) as caught:
        await client(script, sleeps).complete(MESSAGES, parse_verdict)
    assert caught.value.reason == BAD_REPLY
    assert "I refuse" not in caught.value.message
    assert len(script.requests) == 3 and sleeps.waits == []


@pytest.mark.parametrize(
    "body",
    [b"<html>proxy error</html>", b"[]", b'{"choices": []}', b'{"choices": [{"message": {}}]}'],
)
async def test_malformed_response_bodies_count_as_bad_replies(body: bytes) -> None:
    script = Script(httpx.Response(200, content=body), chat(GOOD))
    done = await client(script).complete(MESSAGES, parse_verdict)
    assert done.attempts == 2


async def test_a_bad_reply_then_a_good_one_succeeds() -> None:
    script = Script(chat("nope"), chat(GOOD))
    assert (await client(script).complete(MESSAGES, parse_verdict)).attempts == 2


async def test_response_format_refused_is_retried_once_without_and_remembered() -> None:
    script = Script(httpx.Response(400, json={"error": "unknown field"}), chat(GOOD), chat(GOOD))
    chat_client = client(script)
    done = await chat_client.complete(MESSAGES, parse_verdict)
    assert done.attempts == 1
    bodies = script.bodies()
    assert "response_format" in bodies[0] and "response_format" not in bodies[1]
    assert chat_client.json_mode is False
    await chat_client.complete(MESSAGES, parse_verdict)
    assert "response_format" not in script.bodies()[2]


async def test_a_400_without_response_format_is_final() -> None:
    script = Script(httpx.Response(400), httpx.Response(400), chat(GOOD))
    chat_client = client(script)
    with pytest.raises(JudgeFailed):
        await chat_client.complete(MESSAGES, parse_verdict)
    assert len(script.requests) == 2
    assert chat_client.json_mode is True  # the fallback did not help: not remembered


async def test_the_deadline_bounds_the_whole_call() -> None:
    import asyncio

    async def slow(request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(5)
        return chat(GOOD)

    class SlowTransport(httpx.AsyncBaseTransport):
        def __init__(self) -> None:
            self.calls = 0

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            self.calls += 1
            return await slow(request)

    transport = SlowTransport()
    chat_client = ChatClient(
        "http://llm.test/v1",
        "m",
        policy=RetryPolicy(
            max_retries=5, timeout_seconds=0.1, deadline_seconds=0.25, backoff_seconds=0
        ),
        transport=transport,
    )
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(JudgeUnavailable) as caught:
        await chat_client.complete(MESSAGES, parse_verdict)
    elapsed = loop.time() - started
    assert elapsed < 1.0
    assert 2 <= transport.calls <= 3
    assert "timed out" in caught.value.message


def test_display_url_drops_credentials_and_query() -> None:
    assert display_url("https://user:pw@llm.example/v1?key=abc") == "https://llm.example/v1"
    assert display_url("http://127.0.0.1:11434/v1") == "http://127.0.0.1:11434/v1"
