"""US Social Security numbers: AAA-GG-SSSS (or spaced / bare with an SSN keyword nearby)."""

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
from mithril.services.secrets.validators import ssn_ok

_CONTEXT = re.compile(r"(?i)\bssn|social[ -]?security|\bss#|\bsocial\b|\bssa\b")

# Matches wherever _CONTEXT does (see _digits.keyword_gate).
_KEYWORDS = "|".join(
    [
        keyword_gate("ssn", before=True),
        keyword_gate("social") + "[ -]?" + keyword_gate("security"),
        keyword_gate("ss#", before=True),
        keyword_gate("social", before=True, after=True),
        keyword_gate("ssa", before=True, after=True),
    ]
)
_KEYWORDS_RE2 = compile_re2(_KEYWORDS)
# Necessary conditions of acceptance (see _digits): NNN-NN-NNNN, or a _CONTEXT keyword.
_GATE = NOT_AFTER_RUN + r"\d{3}-\d{2}-\d{4}|" + _KEYWORDS


def _validate(text: str, start: int, end: int) -> tuple[int, float] | None:
    if digit_run_edge_before(text, start) or digit_run_edge_after(text, end):
        return None
    value = text[start:end]
    digits = "".join(c for c in value if c.isdigit())
    separators = {c for c in value if not c.isdigit()}
    if len(digits) != 9 or len(separators) > 1:
        return None
    if separators and (value[3] not in separators or value[6] not in separators):
        return None
    if not ssn_ok(digits[:3], digits[3:5], digits[5:]):
        return None
    keyword = context_before(text, start, _CONTEXT, precheck=_KEYWORDS_RE2)
    if separators == {"-"}:
        return end, 0.85 if keyword else 0.7
    if keyword:
        return end, 0.7 if separators else 0.65
    return None


DETECTOR = PiiDetector(
    info=KindInfo("ssn", PII, Severity.HIGH, "US Social Security number"),
    priority=40,
    pattern=r"\d{3}[- ]?\d{2}[- ]?\d{4}",
    partial=r"\d[\d -]*",
    prefilter=r"\d{3}[- ]?\d{2}[- ]?\d{4}",
    max_window=13,
    validate=_validate,
    gate=_GATE,
    min_digits=9,
)
