"""Slack tokens: xoxb (bot), xoxp (user), xoxa/xoxr (app/refresh), xoxe, and xapp tokens."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._token import TokenDetector
from mithril.services.secrets.detectors.base import ALT, C, L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import distinct, looks_sequential

_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")


def _plausible(value: str) -> bool:
    parts = value.split("-")
    if value.startswith("xapp-"):
        return len(parts) >= 4 and distinct(parts[-1]) >= 10
    numeric = [part for part in parts[1:-1] if part.isdigit()]
    secret = parts[-1]
    if not numeric or any(not 8 <= len(part) <= 14 for part in numeric):
        return False
    if len(numeric) != len(parts) - 2:
        return False
    return (
        18 <= len(secret) <= 48
        and distinct(secret) >= 10
        and not secret.isdigit()
        and not looks_sequential(secret)
    )


DETECTOR = TokenDetector(
    info=KindInfo("slack_token", CREDENTIAL, Severity.HIGH, "Slack bot/user/app token"),
    priority=90,
    pieces=(
        ALT((L("xox"), C("[abpres]"), L("-")), (L("xapp-"),)),
        R("[A-Za-z0-9-]"),
    ),
    prefilter=r"xox[abpres]-|xapp-",
    min_len=30,
    max_len=160,
    confidence=0.95,
    body_chars=_CHARS,
    check=_plausible,
)
