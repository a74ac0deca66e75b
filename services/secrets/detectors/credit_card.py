"""Payment card numbers (12-19 digits, optional single spaces/dashes) that pass Luhn."""

import re

from mithril.domain import Severity
from mithril.services.secrets.detectors._digits import NOT_AFTER_RUN, keyword_gate
from mithril.services.secrets.detectors._pii import (
    PiiDetector,
    context_before,
    digit_run_edge_after,
    digit_run_edge_before,
)
from mithril.services.secrets.detectors.base import compile_re2
from mithril.services.secrets.kinds import PII, KindInfo
from mithril.services.secrets.validators import luhn_ok

_CONTEXT = re.compile(r"(?i)card|visa|master|amex|american express|discover|\bcc\b|payment")
# Matches wherever _CONTEXT does (see _digits.keyword_gate).
_KEYWORDS_RE2 = compile_re2(
    "|".join(
        [
            keyword_gate("card"),
            keyword_gate("visa"),
            keyword_gate("master"),
            keyword_gate("amex"),
            keyword_gate("american express"),
            keyword_gate("discover"),
            keyword_gate("cc", before=True, after=True),
            keyword_gate("payment"),
        ]
    )
)
_MAESTRO_12 = ("50", "56", "57", "58", "6304", "6390", "6759", "676", "0604")
MAX_CARD = 19 + 18


def _issuer_ok(digits: str) -> bool:
    if digits.startswith("0604"):
        return len(digits) <= 13
    if digits[0] in "3456":
        return True
    if digits[0] == "2":
        return "2221" <= digits[:4] <= "2720" or digits.startswith("2131")
    return digits.startswith("1800")


def _inside_identifier(text: str, start: int, end: int) -> bool:
    """Whether the digits are glued into a longer word: a URL slug or an id such as
    "activity-6963242628536487936-trAp", where a 19-digit id passes Luhn one time in ten.
    A card number stands apart from letters; after '=' or in a path ("cc=4111...",
    "/cards/4111.../") it is still a card. Reads at most 2 characters after the match
    (the streaming redactor's RIGHT_CONTEXT)."""
    before = text[start - 1] if start > 0 else " "
    after = text[end] if end < len(text) else " "
    if before.isalpha() or before == "_" or after.isalpha() or after == "_":
        return True
    joined_before = before == "-" and start > 1 and text[start - 2].isalnum()
    joined_after = after == "-" and end + 1 < len(text) and text[end + 1].isalnum()
    return joined_before or joined_after


def _validate(text: str, start: int, end: int) -> tuple[int, float] | None:
    if end - start > MAX_CARD:
        return None
    if digit_run_edge_before(text, start) or digit_run_edge_after(text, end):
        return None
    if _inside_identifier(text, start, end):
        return None
    value = text[start:end]
    digits = "".join(c for c in value if c.isdigit())
    if not 12 <= len(digits) <= 19 or not _issuer_ok(digits):
        return None
    keyword = context_before(text, start, _CONTEXT, precheck=_KEYWORDS_RE2)
    if len(digits) == 12 and not (keyword and digits.startswith(_MAESTRO_12)):
        return None  # 12-digit Maestro numbers only next to a card keyword
    separators = {c for c in value if not c.isdigit()}
    if len(separators) > 1:
        return None
    if separators:
        groups = re.split(r"[ -]", value)
        if len(groups) < 3 or any(len(group) < 3 for group in groups):
            return None
    if len(set(digits)) < 2 or not luhn_ok(digits):
        return None
    return end, 0.9 if keyword else 0.8


DETECTOR = PiiDetector(
    info=KindInfo("credit_card", PII, Severity.HIGH, "Payment card number (Luhn-valid)"),
    priority=45,
    pattern=r"\d(?:[ -]?\d){11,}",
    partial=r"\d[\d -]*",
    prefilter=r"\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d[ -]?\d",
    max_window=MAX_CARD + 1,
    validate=_validate,
    # Necessary condition of acceptance (see _digits): 12+ digits from the match start.
    gate=NOT_AFTER_RUN + r"\d(?:[ -]?\d){11}",
    min_digits=12,
)
