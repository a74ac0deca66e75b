"""The judge's HTTP client for an OpenAI-compatible `POST {base_url}/chat/completions`.

One shared `httpx.AsyncClient`; each call has a per-attempt timeout and a total deadline,
and retries (exponential backoff, full jitter, Retry-After honoured up to the cap) only
what may pass: timeouts, connection errors, HTTP 429 and 5xx, and replies that are not the
JSON asked for. Any other 4xx is final, except that a 400/422 to a request carrying
`response_format` is retried once without it (some servers do not know the field), and
the client then stops sending it.

Logs and error messages name the endpoint, status codes and exception types; never the
text, the reply, or the API key (which is also scrubbed from any error body quoted).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar
from urllib.parse import urlsplit, urlunsplit

import httpx
import orjson

from mithril.services.judge.errors import (
    BAD_REPLY,
    REJECTED,
    UNREACHABLE,
    JudgeFailed,
    JudgeUnavailable,
    UnparseableReply,
)

T = TypeVar("T")

_log = logging.getLogger(__name__)

FALLBACK_STATUSES = frozenset({400, 422})
"""Answers to a request with `response_format` that make us retry once without it."""

_RETRYABLE_EXCEPTIONS = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
    TimeoutError,
)


def is_retryable_status(status: int) -> bool:
    return status == 429 or status >= 500


def is_retryable_exception(error: BaseException) -> bool:
    """Timeouts and connection failures; not bad URLs, proxies or TLS misconfiguration."""
    return isinstance(error, _RETRYABLE_EXCEPTIONS)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_retries: int = 2
    timeout_seconds: float = 10.0
    deadline_seconds: float = 30.0
    backoff_seconds: float = 0.25
    backoff_max_seconds: float = 4.0

    def backoff(self, retry: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1-based): full jitter over an
        exponentially growing window, or the server's Retry-After, both capped."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.backoff_max_seconds)
        window = min(self.backoff_max_seconds, self.backoff_seconds * 2 ** (retry - 1))
        return rng.uniform(0, window)


@dataclass(frozen=True, slots=True)
class Completion(Generic[T]):
    value: T
    model: str
    attempts: int


Sleep = Callable[[float], Awaitable[None]]


def _retry_after(response: httpx.Response) -> float | None:
    value = response.headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None  # an HTTP date: fall back to our own backoff


class ChatClient:
    """Sends chat messages, returns the parsed reply of the first good attempt."""

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str = "",
        *,
        policy: RetryPolicy | None = None,
        temperature: float = 0.0,
        max_tokens: int = 300,
        max_connections: int = 32,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.url = f"{base_url.rstrip('/')}/chat/completions"
        self.endpoint = display_url(base_url.rstrip("/"))
        """The base URL without any user:password part, for logs and messages."""
        self.model = model
        self.policy = policy or RetryPolicy()
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.json_mode = True
        """Whether requests carry `response_format`; off once the server refused it."""
        self._secret = api_key
        headers = {"content-type": "application/json", "user-agent": "mithril-judge"}
        if api_key:
            headers["authorization"] = f"Bearer {api_key}"
        self._http = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(self.policy.timeout_seconds),
            limits=httpx.Limits(
                max_connections=max_connections, max_keepalive_connections=max_connections
            ),
            transport=transport,
            follow_redirects=False,
        )
        self._sleep = sleep
        self._rng = rng or random.Random()

    async def aclose(self) -> None:
        await self._http.aclose()

    def _body(self, messages: Sequence[dict[str, str]], json_mode: bool) -> bytes:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "stream": False,
        }
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        return orjson.dumps(body)

    async def _post(self, body: bytes, seconds: float) -> httpx.Response:
        """One attempt, bounded as a whole (httpx's timeouts bound each phase only)."""
        async with asyncio.timeout(seconds):
            return await self._http.post(self.url, content=body, timeout=seconds)

    def _scrub(self, text: str) -> str:
        if self._secret:
            text = text.replace(self._secret, "[REDACTED]")
        return text

    def _refusal(self, response: httpx.Response) -> str:
        """What a 4xx said, briefly: status, and the error's type/code/message if JSON."""
        detail = ""
        try:
            error = orjson.loads(response.content).get("error")
        except (orjson.JSONDecodeError, AttributeError):
            error = None
        if isinstance(error, dict):
            parts = [str(error[k]) for k in ("type", "code", "message") if error.get(k)]
            detail = self._scrub(" ".join(parts))[:200]
        elif isinstance(error, str):
            detail = self._scrub(error)[:200]
        return f"HTTP {response.status_code}" + (f" ({detail})" if detail else "")

    def _content(self, response: httpx.Response) -> tuple[str, str]:
        """The reply's message content and the model that answered."""
        try:
            payload = orjson.loads(response.content)
        except orjson.JSONDecodeError:
            raise UnparseableReply("the response body is not JSON") from None
        if not isinstance(payload, dict):
            raise UnparseableReply("the response body is not a JSON object")
        model = payload.get("model")
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise UnparseableReply("the response has no choices")
        message = choices[0].get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, str) or not content.strip():
            raise UnparseableReply("the response's message has no content")
        return content, model if isinstance(model, str) and model else self.model

    async def complete(
        self, messages: Sequence[dict[str, str]], parse: Callable[[str], T]
    ) -> Completion[T]:
        """`parse` applied to the reply's content; raises JudgeUnavailable or JudgeFailed."""
        loop = asyncio.get_running_loop()
        policy = self.policy
        deadline = loop.time() + policy.deadline_seconds
        json_mode = self.json_mode
        fell_back = False
        attempts = 0
        problem = ""
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise JudgeUnavailable(
                    UNREACHABLE,
                    f"the judge LLM at {self.endpoint} gave no answer within the"
                    f" {policy.deadline_seconds:g}s deadline ({attempts} attempts; last:"
                    f" {problem or 'none'})",
                )
            attempts += 1
            retry_after: float | None = None
            bad_reply = False
            try:
                response = await self._post(
                    self._body(messages, json_mode),
                    attempt_timeout(policy.timeout_seconds, remaining),
                )
            except Exception as exc:
                if not is_retryable_exception(exc):
                    raise JudgeUnavailable(
                        UNREACHABLE,
                        f"cannot call the judge LLM at {self.endpoint}: {type(exc).__name__}",
                    ) from None
                problem = "timed out" if _is_timeout(exc) else f"{type(exc).__name__}"
            else:
                status = response.status_code
                if status == 200:
                    if fell_back:
                        self.json_mode = False
                    try:
                        content, model = self._content(response)
                        return Completion(parse(content), model, attempts)
                    except UnparseableReply as exc:
                        problem = f"unusable reply: {exc}"
                        bad_reply = True
                elif is_retryable_status(status):
                    problem = f"HTTP {status}"
                    retry_after = _retry_after(response)
                elif status in FALLBACK_STATUSES and json_mode:
                    _log.info(
                        "judge LLM refused response_format; retrying without it",
                        extra={"status": status, "endpoint": self.endpoint},
                    )
                    json_mode, fell_back = False, True
                    attempts -= 1  # a dialect difference, not a failed attempt
                    continue
                else:
                    raise JudgeFailed(
                        REJECTED,
                        f"the judge LLM at {self.endpoint} refused the request:"
                        f" {self._refusal(response)}; check MITHRIL_JUDGE_MODEL and"
                        " MITHRIL_JUDGE_API_KEY",
                    )
            if attempts > policy.max_retries:
                if bad_reply:
                    raise JudgeFailed(
                        BAD_REPLY,
                        f"the judge LLM at {self.endpoint} (model {self.model}) did not reply"
                        f" with the JSON asked for in {attempts} attempts ({problem})",
                    )
                raise JudgeUnavailable(
                    UNREACHABLE,
                    f"the judge LLM at {self.endpoint} could not answer in {attempts}"
                    f" attempts (last: {problem})",
                )
            wait = 0.0 if bad_reply else policy.backoff(attempts, self._rng, retry_after)
            wait = min(wait, max(deadline - loop.time(), 0.0))
            _log.warning(
                "judge LLM attempt failed; retrying",
                extra={
                    "attempt": attempts,
                    "problem": problem,
                    "endpoint": self.endpoint,
                    "backoff_seconds": round(wait, 3),
                },
            )
            if wait > 0:
                await self._sleep(wait)


def display_url(url: str) -> str:
    """`url` without credentials or query (http://user:secret@host/v1?k=v -> http://host/v1)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[-1], query="", fragment=""))


def attempt_timeout(timeout: float, remaining: float) -> float:
    """The attempt's timeout: the configured one, or less when the deadline is nearer."""
    return max(min(timeout, remaining), 0.001)


def _is_timeout(error: BaseException) -> bool:
    return isinstance(error, httpx.TimeoutException | TimeoutError)
