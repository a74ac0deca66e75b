"""Settings of the judge service (env prefix MITHRIL_JUDGE_)."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import SettingsConfigDict

from mithril.runtime.settings import ServiceSettings

DEFAULT_PORT = 50054


class JudgeSettings(ServiceSettings):
    """The judge's settings; every field can be set as MITHRIL_JUDGE_<FIELD>.

    `max_text_chars` (inherited) bounds what a caller may send; `max_prompt_chars` bounds
    what the judge forwards to the LLM (the middle of a longer text is left out, and the
    prompt says so).
    """

    model_config = SettingsConfigDict(env_prefix="MITHRIL_JUDGE_", extra="ignore")

    port: int = Field(DEFAULT_PORT, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    base_url: str = Field(
        "",
        description="Base URL of an OpenAI-compatible API, up to and including /v1"
        " (e.g. http://127.0.0.1:11434/v1 for Ollama). Empty: no LLM; every call answers"
        " UNAVAILABLE.",
    )
    model: str = Field("", description="Model name sent to the LLM; required with base_url.")
    api_key: SecretStr = Field(
        SecretStr(""),
        description="Sent as `Authorization: Bearer <key>` when set; never logged.",
    )
    timeout_seconds: float = Field(
        10.0, gt=0, description="Timeout of one attempt (connect, send, wait, read)."
    )
    deadline_seconds: float = Field(
        30.0, gt=0, description="Budget for one call across all attempts and backoff."
    )
    max_retries: int = Field(
        2,
        ge=0,
        le=5,
        description="Attempts after the first, on timeouts, connection errors, 429, 5xx and"
        " unparseable replies.",
    )
    backoff_seconds: float = Field(
        0.25, ge=0, description="Base of the exponential backoff (full jitter) between attempts."
    )
    backoff_max_seconds: float = Field(
        4.0, ge=0, description="Longest single wait between attempts (also caps Retry-After)."
    )
    cache_size: int = Field(
        4096, ge=0, description="Answers kept in the LRU cache; 0 disables caching."
    )
    cache_ttl_seconds: float = Field(3600.0, gt=0, description="How long a cached answer lives.")
    max_prompt_chars: int = Field(
        12_000,
        ge=200,
        description="Most characters of untrusted text forwarded to the LLM per call; the"
        " middle of longer texts is left out and the prompt says so.",
    )
    max_contexts: int = Field(
        16, ge=1, description="Most verified contexts forwarded for ScoreContradiction."
    )
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(300, ge=16, description="Longest reply requested from the LLM.")
    max_connections: int = Field(
        32, ge=1, description="Concurrent HTTP connections to the LLM endpoint."
    )

    @property
    def configured(self) -> bool:
        return bool(self.base_url.strip())
