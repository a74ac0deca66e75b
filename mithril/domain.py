"""Domain types shared by every detector and service: findings and their severities.

These are the library-level twins of `mithril.common.v1` messages; servicers convert
between the two in `mithril.runtime.convert`, nothing else touches protobuf.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Severity(enum.IntEnum):
    """How bad a finding is if it is real; values match `mithril.common.v1.Severity`."""

    LOW = 1
    MEDIUM = 2
    HIGH = 3
    CRITICAL = 4

    @classmethod
    def parse(cls, value: str | int | Severity) -> Severity:
        if isinstance(value, Severity):
            return value
        if isinstance(value, int):
            return cls(value)
        return cls[value.strip().upper()]


class Origin(enum.IntEnum):
    """Who controls a piece of text; values match `mithril.common.v1.ContentOrigin`."""

    USER = 1
    SYSTEM = 2
    ASSISTANT = 3
    TOOL = 4
    RETRIEVAL = 5

    @property
    def is_untrusted_content(self) -> bool:
        """Content that should carry data, not instructions (tool output, retrieved text)."""
        return self in (Origin.TOOL, Origin.RETRIEVAL)


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing a detector found. Never holds the matched text itself."""

    rule_id: str
    detector: str
    category: str
    severity: Severity
    confidence: float
    message: str
    start: int | None = None
    """Code-point offset in the original text; None when found only in a decoded view."""
    end: int | None = None
    view: str = "raw"
    """The view the match was made on: raw, normalized, squeezed, base64, hex, rot13 or url."""
    kind: str = ""
    """For credentials and PII: the redaction kind, e.g. "aws_access_key"."""

    @property
    def has_span(self) -> bool:
        return self.start is not None and self.end is not None


def combine_confidences(confidences: list[float] | tuple[float, ...]) -> float:
    """Noisy-OR: independent pieces of evidence raise the score without exceeding 1."""
    remaining = 1.0
    for confidence in confidences:
        remaining *= 1.0 - min(max(confidence, 0.0), 1.0)
    return 1.0 - remaining
