"""Slack incoming-webhook and workflow URLs (hooks.slack.com/services|workflows/...)."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._token import TokenDetector
from mithril.services.secrets.detectors.base import ALT, L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import distinct

_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/_")


def _plausible(value: str) -> bool:
    path = value.split("/", 2)[2]
    parts = [part for part in path.split("/") if part]
    return len(parts) >= 3 and distinct(parts[-1]) >= 10 and len(parts[-1]) >= 16


DETECTOR = TokenDetector(
    info=KindInfo("slack_webhook", CREDENTIAL, Severity.HIGH, "Slack incoming webhook URL"),
    priority=92,
    pieces=(
        L("hooks.slack.com/"),
        ALT((L("services/"),), (L("workflows/"),), (L("triggers/"),)),
        R("[A-Za-z0-9/_]"),
    ),
    prefilter=r"hooks\.slack\.com/",
    min_len=40,
    max_len=200,
    confidence=0.93,
    body_chars=_CHARS,
    check=_plausible,
)
