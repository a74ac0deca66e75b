"""Settings of the reputation service (env prefix MITHRIL_REPUTATION_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, model_validator
from pydantic_settings import SettingsConfigDict

from mithril.runtime.settings import ServiceSettings
from mithril.services.reputation.ewma import EwmaParams

DEFAULT_PORT = 50055


class ReputationSettings(ServiceSettings):
    """The reputation service's settings; every field can be set as
    MITHRIL_REPUTATION_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="MITHRIL_REPUTATION_", extra="ignore")

    port: int = Field(DEFAULT_PORT, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    database_url: str = Field(
        "",
        description="Reputation database: sqlite:///path or postgresql+psycopg://...; empty"
        " uses SQLite (reputation.db) under MITHRIL_HOME.",
    )
    priors_file: Path | None = Field(
        None,
        description="YAML file `priors: {source name: prior}` with each source's starting"
        " trust in [0, 1]; unset uses the packaged priors.yaml (Security Policy 0.98,"
        " Slack 0.60, Unknown Agent 0.30).",
    )
    default_prior: float = Field(
        0.30, ge=0.0, le=1.0, description="Starting trust of a source the priors do not name."
    )
    good_rate: float = Field(
        0.10,
        gt=0.0,
        le=1.0,
        description="Step towards 1 on a good outcome: score += good_rate * (1 - score).",
    )
    bad_rate: float = Field(
        0.22,
        gt=0.0,
        le=1.0,
        description="Step towards 0 on a bad outcome: score -= bad_rate * score.",
    )
    floor: float = Field(0.05, ge=0.0, le=1.0, description="Lowest score a source can reach.")
    ceiling: float = Field(0.99, ge=0.0, le=1.0, description="Highest score a source can reach.")
    db_threads: int = Field(
        8,
        ge=1,
        le=64,
        description="Threads (and database connections) running the blocking database work"
        " off the gRPC event loop.",
    )

    @model_validator(mode="after")
    def _bounds(self) -> ReputationSettings:
        if self.floor >= self.ceiling:
            raise ValueError(f"floor ({self.floor}) must be below ceiling ({self.ceiling})")
        return self

    @property
    def ewma(self) -> EwmaParams:
        return EwmaParams(self.good_rate, self.bad_rate, self.floor, self.ceiling)
