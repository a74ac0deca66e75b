"""OpenAI-style API keys: sk-..., sk-proj-..., sk-svcacct-..., sk-admin-... (not sk-ant-)."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._token import TokenDetector
from mithril.services.secrets.detectors.base import L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import distinct, dominated_by_one_char, looks_sequential

_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _plausible(value: str) -> bool:
    body = value[3:]
    if body.startswith("ant-"):
        return False
    for prefix in ("proj-", "svcacct-", "admin-", "None-"):
        if body.startswith(prefix):
            body = body[len(prefix) :]
            break
    if len(body) < 20:
        return False
    has_digit = any(c.isdigit() for c in body)
    has_upper = any(c.isupper() for c in body)
    has_lower = any(c.islower() for c in body)
    return (
        has_digit
        and has_upper
        and has_lower
        and distinct(body) >= 12
        and not dominated_by_one_char(body, 0.3)
        and not looks_sequential(body)
    )


DETECTOR = TokenDetector(
    info=KindInfo(
        "openai_api_key", CREDENTIAL, Severity.CRITICAL, "OpenAI-style API key (sk-, sk-proj-)"
    ),
    priority=85,
    pieces=(L("sk-"), R("[A-Za-z0-9_-]")),
    prefilter="sk-",
    min_len=23,
    max_len=220,
    confidence=0.93,
    body_chars=_CHARS,
    check=_plausible,
)
