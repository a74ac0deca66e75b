"""Settings of the scanner service (env prefix MITHRIL_SCANNER_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from mithril.runtime.settings import ServiceSettings

DEFAULT_PORT = 50051


class ScannerSettings(ServiceSettings):
    """The scanner's settings; every field can be set as MITHRIL_SCANNER_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="MITHRIL_SCANNER_", extra="ignore")

    port: int = Field(DEFAULT_PORT, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    rule_files: list[Path] = Field(
        default_factory=list,
        description="Extra rule files (YAML, same schema as the bundled rules), as a JSON"
        " list: MITHRIL_SCANNER_RULE_FILES='[\"/etc/mithril/rules.yaml\"]'.",
    )
