"""Bearer tokens: "Bearer <token>" and "Authorization: [Token|Api-Token|...] <token>".

Only the token is redacted ("Authorization: Bearer [REDACTED:bearer_token]").
"""

from mithril.domain import Severity
from mithril.services.secrets.detectors._keyword import KeywordValueDetector
from mithril.services.secrets.detectors.base import ALT, C, L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import distinct, is_placeholder

_TOKEN = r"[A-Za-z0-9\-._~+/]"
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=")
_SCHEMES = r"(?i:bearer|token|api-token|apikey|api-key|bot|jwt|sso-key)"
PATTERN = (
    r"(?i:bearer)[ \t]+(" + _TOKEN + r"+=*)"
    r"|(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?:"
    + _SCHEMES
    + r"[ \t]+)?("
    + _TOKEN
    + r"+=*)"
)
MAX_TOKEN = 1024


def _validate(text: str, start: int, end: int, context: str, value: str) -> float | None:
    if start > 0 and text[start - 1] in _TOKEN_CHARS:
        return None
    if end < len(text) and text[end] in _TOKEN_CHARS:
        return None
    value = value.rstrip(".")
    if len(value) < 16 or is_placeholder(value) or distinct(value) < 8:
        return None
    if value.lower() in {"basic", "digest", "negotiate"}:
        return None
    if not any(c.isdigit() for c in value) and not any(c in "-_~+/" for c in value):
        return None  # an ordinary word, not a token
    return 0.9 if len(value) >= 24 else 0.85


DETECTOR = KeywordValueDetector(
    info=KindInfo("bearer_token", CREDENTIAL, Severity.HIGH, "Bearer / Authorization token"),
    priority=60,
    pattern=PATTERN,
    partial_pieces=(
        ALT(
            (L("bearer", True), R("[ \t]")),
            (
                L("authorization", True),
                R("[\"' \t]", False),
                C("[:=]"),
                R("[\"' \t]", False),
                R("[A-Za-z-]", False),
                R("[ \t]", False),
            ),
        ),
        R(_TOKEN + "|=", False),
    ),
    prefilter=r"(?i)bearer|authorization",
    lookbehind=48,
    max_value=MAX_TOKEN,
    validate=_validate,
)
