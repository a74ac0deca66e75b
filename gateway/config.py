"""Settings of the gateway (env prefix MITHRIL_GATEWAY_)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

LearnedTier = Literal["embedding", "classifier", "judge"]
ALL_LEARNED_TIERS: tuple[LearnedTier, ...] = ("embedding", "classifier", "judge")
HTTP_PORT = 8080
GRPC_PORT = 50050


class GatewaySettings(BaseSettings):
    """The gateway's settings; every field can be set as MITHRIL_GATEWAY_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="MITHRIL_GATEWAY_", extra="ignore")

    http_host: str = Field("127.0.0.1", description="Address the HTTP server binds to.")
    http_port: int = Field(HTTP_PORT, ge=0, le=65535, description="HTTP port; 0 picks one.")
    grpc_host: str = Field("[::]", description="Address the FirewallService gRPC server binds to.")
    grpc_port: int = Field(GRPC_PORT, ge=0, le=65535, description="gRPC port; 0 picks one.")
    scanner_addr: str = Field(
        "127.0.0.1:50051",
        description="Scanner service address: host:port, or a gRPC target such as"
        " dns:///scanner:50051 (load-balanced round robin over every address).",
    )
    secrets_addr: str = Field("127.0.0.1:50052", description="Secrets service address.")
    embedding_addr: str = Field(
        "127.0.0.1:50053", description="Embedding service address (similarity, classifier)."
    )
    judge_addr: str = Field("127.0.0.1:50054", description="Judge service address.")
    local_embedding_models: list[str] = Field(
        ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"],
        description="Model names /v1/embeddings answers from the embedding service instead of"
        " the upstream; [] passes every embeddings request through.",
    )
    memory_gate_addr: str = Field(
        "127.0.0.1:50056",
        description="Memory gate service address (/v1/memory/remember, recall, quarantine,"
        " audit, improve).",
    )
    reputation_addr: str = Field(
        "127.0.0.1:50055", description="Reputation service address (/v1/memory/reputation)."
    )
    memory_timeout_seconds: float = Field(
        60.0,
        gt=0,
        description="Deadline for one memory gate call (a claim is checked against verified"
        " memory, maybe by an LLM, then written to it).",
    )
    memory_improve_timeout_seconds: float = Field(
        600.0, gt=0, description="Deadline for the memory store's improvement pass."
    )
    learned_tiers: list[LearnedTier] = Field(
        default_factory=lambda: list(ALL_LEARNED_TIERS),
        description="The tiers after the fast one this deployment runs, as a JSON list (their"
        " services must be up: a listed tier that is down fails closed in block mode, except"
        " the judge, which is skipped). [] runs the fast tier only, whatever policies list.",
    )
    judge_timeout_seconds: float = Field(
        5.0, gt=0, description="Deadline for one judge call; past it the judge is skipped."
    )
    fast_tier: Literal["remote", "local"] = Field(
        "local",
        description="local: the scanner and secrets libraries run inside the gateway process"
        " (no hop on the request path; the services still serve the memory gate and direct"
        " callers); remote: the gateway calls the scanner and secrets services over gRPC"
        " (two hops per scanned text, so they scale apart from the gateway).",
    )
    rule_files: list[Path] = Field(
        default_factory=list,
        description="Extra rule files for the in-process fast tier, as a JSON list (the"
        " scanner's own MITHRIL_SCANNER_RULE_FILES for a remote one).",
    )
    service_token: str = Field(
        "", description="Bearer token sent to the services (their MITHRIL_<SVC>_AUTH_TOKEN)."
    )
    service_timeout_seconds: float = Field(
        2.0, gt=0, description="Deadline for each call to a service."
    )
    policy_file: Path | None = Field(
        None,
        description="YAML policy file (tenants, keys, per-route policy); unset uses the"
        " embedded default: one open tenant with the mode, threshold and upstream below.",
    )
    mode: Literal["block", "log", "monitor"] = Field(
        "block",
        description="Embedded default policy. block: flagged input is refused and a service"
        " that is down fails closed (503); log: flagged input is recorded and allowed, and a"
        " service that is down fails open; monitor: decide and record, never block anything.",
    )
    threshold: float = Field(
        0.5, ge=0, le=1, description="Embedded default policy: score that flags content."
    )
    document_classifier_threshold: float = Field(
        0.5,
        gt=0,
        lt=1,
        description="The attack classifier's probability at which retrieved and tool content"
        " counts as 0.5 (prompts: 0.5); 0.5 leaves it alone (gateway/document_scale.py).",
    )
    document_attack_encoder: bool = Field(
        False,
        description="Let the attack encoder flag retrieved and tool content on its own, at"
        " the operating point chosen on prompts, as it flags prompts (false: documents are"
        " read by the combiner alone; services/embedding/combiner.py says why).",
    )
    upstream_url: str = Field(
        "https://api.openai.com/v1",
        description="Embedded default policy: the OpenAI-compatible upstream; callers' own"
        " API keys are forwarded to it.",
    )
    database_url: str = Field(
        "",
        description="Event log database: sqlite:///path or postgresql+psycopg://...; empty"
        " uses SQLite under MITHRIL_HOME.",
    )
    admin_token: str = Field(
        "",
        description="Token for the dashboard and admin API; empty takes the policy file's,"
        " else one generated once and kept in MITHRIL_HOME/admin-token.",
    )
    event_queue_size: int = Field(
        10_000, gt=0, description="Events held in memory before the log counts overflow."
    )
    event_batch_size: int = Field(
        256, gt=0, description="Most events written per database transaction."
    )
    event_flush_seconds: float = Field(
        0.25, gt=0, description="Longest an event waits in memory before it is written."
    )
    max_text_chars: int = Field(
        1_048_576, gt=0, description="Longest text accepted in one request, in characters."
    )
    max_body_bytes: int = Field(
        8 * 1_048_576, gt=0, description="Largest HTTP request body accepted, in bytes."
    )
    max_batch_items: int = Field(256, gt=0, description="Most items accepted in one batch.")
    auth_token: str = Field(
        "",
        description="Bearer token callers of the FirewallService gRPC API must send; empty"
        " disables auth.",
    )
    grace_seconds: float = Field(5.0, ge=0, description="Drain time after SIGTERM.")
    log_level: str = Field("INFO", description="Python log level name.")
