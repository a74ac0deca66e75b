"""The description of one redaction kind, shared by detectors and the facade."""

from __future__ import annotations

from dataclasses import dataclass

from mithril.domain import Severity

CREDENTIAL = "credential"
PII = "pii"


@dataclass(frozen=True, slots=True)
class KindInfo:
    """What a kind of secret is: its name, category ("credential" or "pii") and severity."""

    name: str
    category: str
    severity: Severity
    description: str
