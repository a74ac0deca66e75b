"""Phone numbers: international (+CC ...) and US formats; ambiguous shapes need a keyword.

Plain digit runs, dates, times, IP addresses and version strings are not phone numbers.
"""

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

_CONTEXT = re.compile(
    r"(?i)phone|\btel\b|tel:|telephone|mobile|\bcell|\bcall|\bfax|contact|reach|whatsapp|\bsms"
    r"|\btext\b|number|\bph\b|\bno\.|\bnr\b|\bmob\b|#|messag|answering|\bdial|\bring\b"
)
_US = re.compile(r"(?:\+?1[ .-]?|001[ .-]?)?(?:\(\d{3}\)[ .-]?|\d{3}[ .-])\d{3}[ .-]\d{4}")
_DATE = re.compile(
    r"\d{4}[-./ ]\d{1,2}[-./ ]\d{1,2}|\d{1,2}[-./ ]\d{1,2}[-./ ]\d{2,4}|\d{4}[-./ ]\d{2}"
)
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_EXTENSION = re.compile(r"[ ]?(?:x|ext\.?)[ ]?\d{1,5}$")
MAX_PHONE = 48

# Matches wherever _CONTEXT does (see _digits.keyword_gate).
_KEYWORDS = "|".join(
    [
        keyword_gate("phone"),
        keyword_gate("tel", before=True, after=True),
        keyword_gate("tel:"),
        keyword_gate("mobile"),
        keyword_gate("cell", before=True),
        keyword_gate("call", before=True),
        keyword_gate("fax", before=True),
        keyword_gate("contact"),
        keyword_gate("reach"),
        keyword_gate("whatsapp"),
        keyword_gate("sms", before=True),
        keyword_gate("text", before=True, after=True),
        keyword_gate("number"),
        keyword_gate("ph", before=True, after=True),
        keyword_gate("no.", before=True),
        keyword_gate("nr", before=True, after=True),
        keyword_gate("mob", before=True, after=True),
        keyword_gate("#"),
        keyword_gate("messag"),
        keyword_gate("answering"),
        keyword_gate("dial", before=True),
        keyword_gate("ring", before=True, after=True),
    ]
)
_KEYWORDS_RE2 = compile_re2(_KEYWORDS)
# Necessary conditions of acceptance (see _digits): every accepted number is "strong" (one of
# the shapes below, each contained in the match) or has a _CONTEXT keyword before it.
_GATE = "|".join(
    [
        r"\+[ ]?\d(?:[ .()\-]{0,3}\d){7}",  # international: "+" first, 8+ digits
        r"\(\d{1,5}\)[ .-]?\d{1,5}[ .-]\d",  # "(" first: (area) then two groups
        r"\d(?:[ .()\-]{0,3}\d){6}[ ]?(?:x|ext\.?)[ ]?\d",  # 7+ digits, an extension
        r"\d{3}[ .-]\d{4}",  # inside every US-format number
        NOT_AFTER_RUN + r"0(?:[ .-]?\d){8}",  # trunk "0" first, 9+ digits
        _KEYWORDS,
    ]
)


def _validate(text: str, start: int, end: int) -> tuple[int, float] | None:
    if end - start > MAX_PHONE:
        return None
    if digit_run_edge_before(text, start) or digit_run_edge_after(text, end):
        return None
    value = text[start:end]
    extension = _EXTENSION.search(value)
    core = value[: extension.start()] if extension else value
    digits = "".join(c for c in core if c.isdigit())
    if not 7 <= len(digits) <= 15:
        return None
    if _DATE.fullmatch(core) or _IPV4.fullmatch(core):
        return None
    groups = [g for g in re.split(r"[ .\-()+]+", core) if g]
    plus = core.startswith("+")
    paren = "(" in core
    keyword = context_before(text, start, _CONTEXT, precheck=_KEYWORDS_RE2)
    if len(groups) < 2 and not plus:
        # A plain run of digits: only a 10-12 digit run right after a phone keyword.
        near = context_before(text, start, _CONTEXT, width=16, precheck=_KEYWORDS_RE2)
        return (end, 0.25) if near and 10 <= len(digits) <= 12 else None
    separators = {c for c in core if c in " .-"}
    strong = (
        (plus and len(digits) >= 8)
        or _US.fullmatch(core) is not None
        or extension is not None
        or (core[0] == "0" and len(groups) >= 3 and 9 <= len(digits) <= 12)
        or (paren and len(digits) >= 9 and core.index("(") == 0)
    )
    if strong:
        return end, 0.3
    if keyword and "." not in separators:
        return end, 0.25
    return None


DETECTOR = PiiDetector(
    info=KindInfo("phone", PII, Severity.LOW, "Phone number"),
    priority=30,
    pattern=(
        r"\+\d{7,15}|\d{10,12}"
        r"|(?:\+[ ]?\d{1,4}[ .-]?)?(?:\(\d{1,5}\)[ .-]?)?\d{1,5}(?:[ .-]\d{1,8}){1,6}"
        r"(?:[ ]?(?:x|ext\.?)[ ]?\d{1,5})?"
    ),
    partial=r"[+(\d][\d() .\-]*(?:[ ]?(?:e|ex|ext|ext\.|x)[ ]?\d*)?",
    # Every accepted number has 7+ digits, at most 2 characters apart: "(415) 555", "+1 (".
    prefilter=r"\d(?:[ .()+\-]{0,3}\d){6}",
    max_window=MAX_PHONE + 2,
    validate=_validate,
    gate=_GATE,
    min_digits=7,
)
