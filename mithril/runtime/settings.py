"""Settings shared by every gRPC service; each service subclasses with its own env prefix."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

ADMIN_TOKEN_FILE = "admin-token"
"""Under MITHRIL_HOME: the gateway's generated admin token, when none is configured."""


def mithril_home() -> Path:
    """Where embedded state lives (SQLite files, caches): `MITHRIL_HOME`, default ~/.mithril."""
    return Path(os.environ.get("MITHRIL_HOME", Path.home() / ".mithril")).expanduser()


class ServiceSettings(BaseSettings):
    """Fields every gRPC service has. Subclasses set `env_prefix="MITHRIL_<SVC>_"`."""

    model_config = SettingsConfigDict(env_prefix="MITHRIL_", extra="ignore")

    host: str = Field("[::]", description="Address the gRPC server binds to.")
    port: int = Field(0, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    grace_seconds: float = Field(
        5.0, ge=0, description="How long in-flight RPCs may finish after SIGTERM."
    )
    auth_token: str = Field(
        "",
        description="Shared token callers must send as `authorization: Bearer <token>`;"
        " empty disables auth. Health checks never need it.",
    )
    max_text_chars: int = Field(
        1_048_576, gt=0, description="Longest text accepted in one request, in characters."
    )
    max_batch_items: int = Field(256, gt=0, description="Most items accepted in one batch RPC.")
    reflection: bool = Field(True, description="Serve gRPC server reflection.")
    log_level: str = Field("INFO", description="Python log level name.")

    @property
    def max_message_bytes(self) -> int:
        """gRPC's own receive limit: generous, so our validator answers most oversize
        requests with a detailed RESOURCE_EXHAUSTED before the transport refuses them."""
        return max(4 * self.max_text_chars * self.max_batch_items // 16, 4 * self.max_text_chars)
