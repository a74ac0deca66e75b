"""JSON Web Tokens: three base64url segments whose header decodes to JSON with "alg"/"typ"."""

import base64
import binascii
import json

from mithril.domain import Severity
from mithril.services.secrets.detectors._token import TokenDetector
from mithril.services.secrets.detectors.base import L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo

_B64URL = "[A-Za-z0-9_-]"
_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
MAX_JWT = 4096


def _decode_json(segment: str) -> object:
    padded = segment + "=" * (-len(segment) % 4)
    try:
        return json.loads(base64.urlsafe_b64decode(padded))
    except (binascii.Error, ValueError, UnicodeDecodeError):
        return None


def _plausible(value: str) -> bool:
    header, payload, signature = value.split(".")
    if len(header) < 10 or len(payload) < 10 or len(signature) < 16:
        return False
    decoded = _decode_json(header)
    return isinstance(decoded, dict) and ("alg" in decoded or "typ" in decoded)


DETECTOR = TokenDetector(
    info=KindInfo("jwt", CREDENTIAL, Severity.HIGH, "JSON Web Token"),
    priority=80,
    pieces=(L("eyJ"), R(_B64URL), L("."), L("eyJ"), R(_B64URL), L("."), R(_B64URL)),
    prefilter=r"eyJ[A-Za-z0-9_-]+\.eyJ",
    min_len=40,
    max_len=MAX_JWT,
    confidence=0.9,
    body_chars=_CHARS,
    check=_plausible,
)
