"""E-mail addresses (low confidence on their own: an address in a prompt is not a leak)."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._pii import PiiDetector
from mithril.services.secrets.kinds import PII, KindInfo

_LOCAL = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._%+-'")
_DOMAIN = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
_FILE_SUFFIXES = frozenset(
    {"png", "jpg", "jpeg", "gif", "svg", "webp", "ico", "bmp", "css", "js", "ts", "py", "json",
     "map", "min", "lock", "tgz", "zip", "md", "txt", "html", "xml", "yaml", "yml"}
)  # fmt: skip
MAX_LOCAL = 64
MAX_DOMAIN = 253


def _validate(text: str, start: int, end: int) -> tuple[int, float] | None:
    if start > 0 and text[start - 1] in _LOCAL:
        return None
    if end < len(text) and (
        text[end] in _DOMAIN
        or (text[end] == "." and end + 1 < len(text) and text[end + 1] in _DOMAIN)
    ):
        return None
    local, _, domain = text[start:end].partition("@")
    if len(local) > MAX_LOCAL or len(domain) > MAX_DOMAIN or local[0] == "." or local[-1] == ".":
        return None
    tld = domain.rsplit(".", 1)[-1]
    if not tld.isalpha() or not 2 <= len(tld) <= 24 or tld.lower() in _FILE_SUFFIXES:
        return None
    return end, 0.3


DETECTOR = PiiDetector(
    info=KindInfo("email", PII, Severity.LOW, "E-mail address"),
    priority=20,
    pattern=r"[A-Za-z0-9._%+'-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}",
    partial=r"[A-Za-z0-9._%+'-]+(?:@[A-Za-z0-9.-]*)?",
    prefilter=r"@[A-Za-z0-9-]+\.",
    max_window=MAX_LOCAL + 1 + MAX_DOMAIN + 2,
    validate=_validate,
)
