"""The judge as a library: a second opinion from an OpenAI-compatible LLM.

`Judge.from_settings(settings)` works with or without an LLM; `available` says which.
Without one every call raises `JudgeUnavailable` naming MITHRIL_JUDGE_BASE_URL, so callers
(the gateway's cascade, the memory gate) skip the judge. Answers are cached by a hash of
what was asked (LRU + TTL) and concurrent identical questions share one LLM call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import TypeVar

import httpx
from opentelemetry import trace

from mithril.domain import Origin
from mithril.runtime import attributes, telemetry
from mithril.runtime.cache import TTLCache, cache_key
from mithril.services.judge import prompts
from mithril.services.judge.cache import SingleFlight
from mithril.services.judge.client import ChatClient, Completion, RetryPolicy, Sleep
from mithril.services.judge.config import JudgeSettings
from mithril.services.judge.errors import NOT_CONFIGURED, JudgeUnavailable
from mithril.services.judge.verdict import Verdict, parse_score, parse_verdict

_log = logging.getLogger(__name__)
_tracer = telemetry.tracer(__name__)

P = TypeVar("P")

NO_CONTEXT_RATIONALE = "no verified statements to contradict"


@dataclass(frozen=True, slots=True)
class JudgeResult:
    verdict: Verdict
    score: float
    """Probability that the text is an attack, in [0, 1]."""
    rationale: str
    model: str
    cached: bool = False
    """True when no LLM call was made for this request (cache hit, or joined an identical
    call already in flight)."""


@dataclass(frozen=True, slots=True)
class ScoreResult:
    score: float
    rationale: str
    model: str
    cached: bool = False


class Judge:
    """Ask the configured LLM; see the module docstring."""

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        sleep: Sleep | None = None,
        clock: Callable[[], float] | None = None,
        token_factory: prompts.TokenFactory = prompts.new_token,
    ) -> None:
        self.settings = settings
        self.model = settings.model.strip()
        self._why_unavailable = _unavailability(settings)
        self._client: ChatClient | None = None
        if not self._why_unavailable:
            self._client = ChatClient(
                settings.base_url.strip(),
                self.model,
                settings.api_key.get_secret_value(),
                policy=RetryPolicy(
                    max_retries=settings.max_retries,
                    timeout_seconds=settings.timeout_seconds,
                    deadline_seconds=settings.deadline_seconds,
                    backoff_seconds=settings.backoff_seconds,
                    backoff_max_seconds=settings.backoff_max_seconds,
                ),
                temperature=settings.temperature,
                max_tokens=settings.max_tokens,
                max_connections=settings.max_connections,
                transport=transport,
                sleep=sleep or asyncio.sleep,
            )
        self._cache: TTLCache[JudgeResult | ScoreResult] = TTLCache(
            settings.cache_size, settings.cache_ttl_seconds, clock or time.monotonic
        )
        self._flight: SingleFlight[JudgeResult | ScoreResult] = SingleFlight()
        self._token_factory = token_factory

    @classmethod
    def from_settings(cls, settings: JudgeSettings | None = None) -> Judge:
        return cls(settings or JudgeSettings())

    @property
    def available(self) -> bool:
        """Whether an LLM is configured (not whether it is reachable right now)."""
        return self._client is not None

    @property
    def unavailable_reason(self) -> str:
        """Why every call fails ("" when an LLM is configured)."""
        return self._why_unavailable

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    def _require(self) -> ChatClient:
        if self._client is None:
            raise JudgeUnavailable(NOT_CONFIGURED, self._why_unavailable)
        return self._client

    async def judge(self, text: str, origin: Origin = Origin.USER) -> JudgeResult:
        """Is `text` an attack? Raises JudgeUnavailable or JudgeFailed when no answer."""
        client = self._require()
        key = cache_key("judge", prompts.PROMPT_VERSION, self.model, origin.name, text)

        async def ask() -> JudgeResult:
            prompt = prompts.judge_prompt(
                text, origin, self.settings.max_prompt_chars, self._token_factory
            )
            done = await self._ask(client, "judge", prompt, parse_verdict)
            parsed = done.value
            return JudgeResult(parsed.verdict, parsed.score, parsed.rationale, done.model)

        result = await self._cached(key, ask)
        assert isinstance(result, JudgeResult)
        span = trace.get_current_span()
        span.set_attribute(attributes.JUDGE_VERDICT, result.verdict.value)
        return result

    async def contradiction(self, claim: str, contexts: Sequence[str]) -> ScoreResult:
        """How strongly `claim` contradicts `contexts`, 0..1. Blank contexts are ignored;
        with none left the answer is 0 without asking the LLM (nor needing one)."""
        kept = [context for context in contexts if context.strip()]
        if not kept:
            return ScoreResult(0.0, NO_CONTEXT_RATIONALE, self.model, cached=False)
        client = self._require()
        key = cache_key("contradiction", prompts.PROMPT_VERSION, self.model, claim, *kept)

        async def ask() -> ScoreResult:
            prompt = prompts.contradiction_prompt(
                claim,
                kept,
                self.settings.max_prompt_chars,
                self.settings.max_contexts,
                self._token_factory,
            )
            done = await self._ask(client, "contradiction", prompt, parse_score)
            return ScoreResult(done.value.score, done.value.rationale, done.model)

        result = await self._cached(key, ask)
        assert isinstance(result, ScoreResult)
        return result

    async def danger(self, claim: str) -> ScoreResult:
        """How dangerous `claim` would be if agents acted on it, 0..1."""
        client = self._require()
        key = cache_key("danger", prompts.PROMPT_VERSION, self.model, claim)

        async def ask() -> ScoreResult:
            prompt = prompts.danger_prompt(
                claim, self.settings.max_prompt_chars, self._token_factory
            )
            done = await self._ask(client, "danger", prompt, parse_score)
            return ScoreResult(done.value.score, done.value.rationale, done.model)

        result = await self._cached(key, ask)
        assert isinstance(result, ScoreResult)
        return result

    async def _cached(
        self,
        key: str,
        ask: Callable[[], Awaitable[JudgeResult | ScoreResult]],
    ) -> JudgeResult | ScoreResult:
        hit = self._cache.get(key)
        if hit is None:

            async def ask_and_store() -> JudgeResult | ScoreResult:
                answer = await ask()
                self._cache.put(key, answer)
                return answer

            answer, joined = await self._flight.run(key, ask_and_store)
            hit = replace(answer, cached=True) if joined else answer
        else:
            hit = replace(hit, cached=True)
        span = trace.get_current_span()
        span.set_attribute(attributes.JUDGE_CACHED, hit.cached)
        span.set_attribute(attributes.JUDGE_MODEL, hit.model)
        span.set_attribute(attributes.SCORE, hit.score)
        return hit

    async def _ask(
        self,
        client: ChatClient,
        kind: str,
        prompt: prompts.Prompt,
        parse: Callable[[str], P],
    ) -> Completion[P]:
        with telemetry.span(_tracer, f"mithril.judge.llm.{kind}") as span:
            span.set_attribute(attributes.SERVICE, "judge")
            span.set_attribute(attributes.JUDGE_MODEL, self.model)
            try:
                done = await client.complete(prompt.messages, parse)
            except Exception as exc:
                _log.warning(
                    "judge LLM gave no answer",
                    extra={"kind": kind, "reason": getattr(exc, "reason", type(exc).__name__)},
                )
                raise
            span.set_attribute(attributes.JUDGE_ATTEMPTS, done.attempts)
            return done


def _unavailability(settings: JudgeSettings) -> str:
    if not settings.base_url.strip():
        return (
            "no judge LLM is configured: set MITHRIL_JUDGE_BASE_URL (an OpenAI-compatible"
            " API, e.g. http://127.0.0.1:11434/v1) and MITHRIL_JUDGE_MODEL"
        )
    if not settings.model.strip():
        return (
            "MITHRIL_JUDGE_BASE_URL is set but MITHRIL_JUDGE_MODEL is empty: name the model"
            " the judge should ask"
        )
    if not settings.base_url.strip().lower().startswith(("http://", "https://")):
        return "MITHRIL_JUDGE_BASE_URL must start with http:// or https://"
    return ""
