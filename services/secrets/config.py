"""Settings of the secrets service (env prefix MITHRIL_SECRETS_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from mithril.runtime.settings import ServiceSettings

DEFAULT_PORT = 50052


class SecretsSettings(ServiceSettings):
    """The secrets service's settings; every field can be set as MITHRIL_SECRETS_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="MITHRIL_SECRETS_", extra="ignore")

    port: int = Field(DEFAULT_PORT, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
