"""Google API keys: AIza + 35 characters of [A-Za-z0-9_-]."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._token import TokenDetector
from mithril.services.secrets.detectors.base import L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import distinct, looks_sequential

_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")


def _plausible(value: str) -> bool:
    body = value[4:]
    return distinct(body) >= 12 and not looks_sequential(body)


DETECTOR = TokenDetector(
    info=KindInfo("google_api_key", CREDENTIAL, Severity.HIGH, "Google API key (AIza...)"),
    priority=90,
    pieces=(L("AIza"), R("[A-Za-z0-9_-]")),
    prefilter="AIza",
    min_len=39,
    max_len=39,
    confidence=0.92,
    body_chars=_CHARS,
    check=_plausible,
)
