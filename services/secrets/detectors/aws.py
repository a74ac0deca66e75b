"""AWS access key ids: AKIA/ASIA (and other documented 4-letter prefixes) + 16 characters."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._token import TokenDetector
from mithril.services.secrets.detectors.base import ALT, L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import distinct

_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA")


def _plausible(value: str) -> bool:
    body = value[4:]
    return "EXAMPLE" not in value and distinct(body) >= 6 and not body.isalpha()


DETECTOR = TokenDetector(
    info=KindInfo(
        "aws_access_key", CREDENTIAL, Severity.CRITICAL, "AWS access key id (AKIA/ASIA...)"
    ),
    priority=90,
    pieces=(ALT(*[(L(prefix),) for prefix in _PREFIXES]), R("[A-Z0-9]")),
    prefilter="|".join(_PREFIXES),
    min_len=20,
    max_len=20,
    confidence=0.95,
    check=_plausible,
)
