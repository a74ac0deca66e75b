"""Credential and PII detection, redaction and streaming redaction (pure Python, RE2-based)."""

from mithril.services.secrets.detector import KindInfo, Redaction, SecretsDetector
from mithril.services.secrets.streaming import StreamingRedactor, StreamOutput

__all__ = ["KindInfo", "Redaction", "SecretsDetector", "StreamOutput", "StreamingRedactor"]
