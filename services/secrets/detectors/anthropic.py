"""Anthropic API keys: sk-ant-<type><2 digits>-<~93 chars>AA (api03, admin01, ...)."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._token import TokenDetector
from mithril.services.secrets.detectors.base import L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import distinct

_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _plausible(value: str) -> bool:
    body = value[7:]
    kind, _, secret = body.partition("-")
    if not (kind[-2:].isdigit() and kind[:-2].isalpha() and 3 <= len(kind) <= 9):
        return False
    return secret.endswith("AA") and 80 <= len(secret) <= 110 and distinct(secret) >= 16


DETECTOR = TokenDetector(
    info=KindInfo("anthropic_api_key", CREDENTIAL, Severity.CRITICAL, "Anthropic API key"),
    priority=95,
    pieces=(L("sk-ant-"), R("[a-z]"), R("[0-9]"), L("-"), R("[A-Za-z0-9_-]")),
    prefilter="sk-ant-",
    min_len=95,
    max_len=130,
    confidence=0.97,
    body_chars=_CHARS,
    check=_plausible,
)
