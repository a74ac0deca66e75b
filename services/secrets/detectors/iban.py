"""IBANs (with or without spaces) that pass the ISO 13616 mod-97 check and country length."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._pii import PiiDetector
from mithril.services.secrets.kinds import PII, KindInfo
from mithril.services.secrets.validators import iban_ok

MAX_IBAN = 34 + 9


def _validate(text: str, start: int, end: int) -> tuple[int, float] | None:
    if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_-/"):
        return None
    value = text[start:end]
    # The regex may run on into following words; try each cut at a space from the right.
    cuts = [end] + [start + i for i in range(len(value) - 1, 3, -1) if value[i] == " "]
    for cut in cuts:
        if cut < len(text) and cut == end and (text[cut].isalnum() or text[cut] == "_"):
            continue
        compact = text[start:cut].replace(" ", "").upper()
        if iban_ok(compact):
            return cut, 0.7
    return None


DETECTOR = PiiDetector(
    info=KindInfo("iban", PII, Severity.MEDIUM, "International bank account number"),
    priority=48,
    pattern=r"[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}",
    partial=r"[A-Za-z](?:[A-Za-z](?:\d(?:\d[A-Za-z0-9 ]*)?)?)?",
    prefilter=r"[A-Za-z]{2}\d{2} ?[A-Za-z0-9]{4}",
    max_window=MAX_IBAN + 2,
    validate=_validate,
)
