"""Stripe secret and restricted keys: sk_live_/rk_live_/sk_test_/rk_test_ (not pk_)."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._token import TokenDetector
from mithril.services.secrets.detectors.base import ALT, C, L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import distinct


def _plausible(value: str) -> bool:
    body = value.split("_", 2)[2]
    return 16 <= len(body) <= 247 and distinct(body) >= 10


def _severity(value: str) -> Severity:
    return Severity.CRITICAL if "_live_" in value else Severity.MEDIUM


DETECTOR = TokenDetector(
    info=KindInfo("stripe_key", CREDENTIAL, Severity.CRITICAL, "Stripe secret/restricted key"),
    priority=90,
    pieces=(C("[sr]"), L("k_"), ALT((L("live_"),), (L("test_"),)), R("[A-Za-z0-9]")),
    prefilter="[sr]k_(?:live|test)_",
    min_len=24,
    max_len=260,
    confidence=0.95,
    check=_plausible,
    severity_of=_severity,
)
