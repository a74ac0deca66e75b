"""HTTP Basic credentials: "Authorization: Basic <base64 of user:password>"."""

import base64
import binascii

from mithril.domain import Severity
from mithril.services.secrets.detectors._keyword import KeywordValueDetector
from mithril.services.secrets.detectors.base import C, L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo

PATTERN = r"(?i:authorization)[\"']?[ \t]*[:=][ \t]*[\"']?(?i:basic)[ \t]+([A-Za-z0-9+/]+=*)"
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def _validate(text: str, start: int, end: int, context: str, value: str) -> float | None:
    if end < len(text) and text[end] in _B64_CHARS:
        return None
    if len(value) < 8:
        return None
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
    except (binascii.Error, ValueError):
        return None
    plain = decoded.decode("utf-8", errors="replace")
    printable = sum(c.isprintable() and c != "\ufffd" for c in plain)
    if ":" not in plain or printable < 0.8 * len(plain):
        return None
    return 0.9


DETECTOR = KeywordValueDetector(
    info=KindInfo("basic_auth", CREDENTIAL, Severity.HIGH, "HTTP Basic authorization header"),
    priority=65,
    pattern=PATTERN,
    partial_pieces=(
        L("authorization", True),
        R("[\"' \t]", False),
        C("[:=]"),
        R("[\"' \t]", False),
        L("basic", True),
        R("[ \t]"),
        R("[A-Za-z0-9+/=]", False),
    ),
    prefilter=r"(?i)authorization",
    lookbehind=40,
    max_value=1024,
    validate=_validate,
)
