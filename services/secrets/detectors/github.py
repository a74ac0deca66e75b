"""GitHub tokens: ghp_/gho_/ghu_/ghs_/ghr_ + 36, and fine-grained github_pat_ tokens."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._token import TokenDetector
from mithril.services.secrets.detectors.base import ALT, L, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import distinct, looks_sequential


def _plausible(value: str) -> bool:
    body = value[4:] if value.startswith("gh") and value[3] == "_" else value[11:]
    if value.startswith("github_pat_"):
        body = value[11:]
        if not 82 <= len(body) <= 93:
            return False
    elif len(value) != 40:
        return False
    return distinct(body) >= 10 and not looks_sequential(body)


DETECTOR = TokenDetector(
    info=KindInfo("github_token", CREDENTIAL, Severity.CRITICAL, "GitHub personal/app token"),
    priority=90,
    pieces=(
        ALT(
            (L("gh"), R("[pousr]"), L("_"), R("[A-Za-z0-9]")),
            (L("github_pat_"), R("[A-Za-z0-9_]")),
        ),
    ),
    prefilter=r"gh[pousr]_|github_pat_",
    min_len=40,
    max_len=104,
    confidence=0.97,
    check=_plausible,
)
