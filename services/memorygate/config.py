"""Settings of the memory-gate service (env prefix MITHRIL_MEMORY_GATE_).

The trust weights, the gate's thresholds and the corroboration and freshness rules are
settings, so an operator can tune them; the defaults are the ones the design names.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr, model_validator
from pydantic_settings import SettingsConfigDict

from mithril.runtime.settings import ServiceSettings, mithril_home

DEFAULT_PORT = 50056
DATABASE_FILE = "memory-gate.db"


def default_database_url() -> str:
    return f"sqlite:///{mithril_home() / DATABASE_FILE}"


class MemoryGateSettings(ServiceSettings):
    """Every field can be set as MITHRIL_MEMORY_GATE_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="MITHRIL_MEMORY_GATE_", extra="ignore")

    port: int = Field(DEFAULT_PORT, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    max_text_chars: int = Field(
        8_000, gt=0, description="Longest claim or query accepted, in characters."
    )
    database_url: str = Field(
        "",
        description="SQLAlchemy URL of the audit log, quarantine and memory ledger; empty"
        " means a SQLite file under MITHRIL_HOME.",
    )
    memory_root: Path | None = Field(
        None, description="Where Cognee keeps its stores; default MITHRIL_HOME/cognee."
    )
    secrets_addr: str = Field("127.0.0.1:50052", description="Secrets service address.")
    scanner_addr: str = Field("127.0.0.1:50051", description="Scanner service address.")
    reputation_addr: str = Field("127.0.0.1:50055", description="Reputation service address.")
    judge_addr: str = Field(
        "127.0.0.1:50054",
        description="Judge service address; empty skips the judge. A judge without an LLM"
        " answers UNAVAILABLE and the offline scorers decide.",
    )
    service_token: SecretStr = Field(
        SecretStr(""), description="Bearer token sent to the services it calls."
    )
    call_timeout_seconds: float = Field(
        5.0, gt=0, description="Deadline of one call to the secrets, scanner or reputation service."
    )
    judge_timeout_seconds: float = Field(
        15.0, gt=0, description="Deadline of one judge call (an LLM answers slowly)."
    )
    keep_kinds: list[str] = Field(
        ["email", "phone"],
        description="Kinds the secrets service finds that stay in a claim (contact details"
        " are often the point of a note); every other kind is redacted.",
    )
    internal_domains: list[str] = Field(
        [],
        description="Your organisation's domains: sending data to any other domain counts as"
        " exfiltration, and to these only half as much.",
    )
    llm_base_url: str = Field(
        "",
        description="OpenAI-compatible endpoint Cognee uses for graph extraction; empty runs"
        " Cognee's pipeline without an LLM (chunks and embeddings, no entity graph).",
    )
    llm_model: str = Field("", description="Model name for Cognee's LLM calls.")
    llm_api_key: SecretStr = Field(SecretStr(""), description="Key for Cognee's LLM calls.")
    context_top_k: int = Field(
        5, ge=1, le=50, description="Verified chunks fetched to check a claim against."
    )
    context_min_similarity: float = Field(
        0.35, ge=0, le=1, description="Chunks less similar than this are not context."
    )
    recall_top_k: int = Field(5, ge=1, le=100, description="Default number of memories recalled.")
    pending_grace_seconds: float = Field(
        120.0,
        ge=0,
        description="A write to verified memory pending this long is taken to be interrupted"
        " (a crash) and finished by the gate: at start and then every minute.",
    )

    # Trust score: raw = rep*w_rep + corroboration*w_cor + freshness*w_fresh
    #                   - contradiction*w_con - danger*w_dan, normalised by the best raw score.
    weight_reputation: float = Field(0.40, ge=0)
    weight_corroboration: float = Field(0.25, ge=0)
    weight_freshness: float = Field(0.05, ge=0)
    weight_contradiction: float = Field(0.40, ge=0)
    weight_danger: float = Field(0.35, ge=0)
    corroboration_step: float = Field(
        0.1, ge=0, le=1, description="Corroboration per aligned verified chunk beyond the first."
    )
    corroboration_max_chunks: int = Field(
        3, ge=0, description="Most aligned chunks that corroborate (so at most step x this)."
    )
    freshness_days: float = Field(
        90.0, gt=0, description="A claim's freshness falls linearly to 0 over this many days."
    )
    contradiction_flag: float = Field(
        0.3, ge=0, le=1, description="Contradiction above this is flagged and counts as bad."
    )

    # The gate: the first threshold the trust score reaches decides.
    accept_at: float = Field(0.85, ge=0, le=1)
    warn_at: float = Field(0.60, ge=0, le=1)
    review_at: float = Field(0.40, ge=0, le=1)
    quarantine_at: float = Field(0.20, ge=0, le=1)

    @model_validator(mode="after")
    def _thresholds_descend(self) -> MemoryGateSettings:
        order = [self.accept_at, self.warn_at, self.review_at, self.quarantine_at]
        if order != sorted(order, reverse=True):
            raise ValueError(
                "gate thresholds must descend: accept_at >= warn_at >= review_at >= quarantine_at"
            )
        return self

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or default_database_url()

    @property
    def resolved_memory_root(self) -> Path:
        return self.memory_root or mithril_home() / "cognee"
