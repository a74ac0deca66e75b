"""Shared machinery for PII detectors: a regex, Python validation, and a prefix pattern."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import re2

from mithril.services.secrets.detectors.base import (
    Candidate,
    compile_re2,
    partial_regex,
    tail_start,
)
from mithril.services.secrets.kinds import KindInfo

Validate = Callable[[str, int, int], "tuple[int, float] | None"]
"""(text, start, end) -> (span end, confidence), or None to reject."""


def digit_run_edge_before(text: str, start: int) -> bool:
    """True when `start` is inside a longer run of digits/letters (so not a match start)."""
    if start == 0:
        return False
    before = text[start - 1]
    if before.isalnum() or before in "+_":
        return True
    return before in " .-/" and start >= 2 and text[start - 2].isdigit()


def digit_run_edge_after(text: str, end: int) -> bool:
    """True when the run continues after `end` (more digits, or a decimal/time part)."""
    if end >= len(text):
        return False
    after = text[end]
    if after.isalnum() or after == "_":
        return True
    return after in " .,-:/" and end + 1 < len(text) and text[end + 1].isdigit()


def context_before(text: str, start: int, pattern: re.Pattern[str], width: int = 48) -> bool:
    """True when `pattern` occurs in the `width` characters before `start`."""
    return pattern.search(text, max(0, start - width), start) is not None


@dataclass(frozen=True, eq=False)
class PiiDetector:
    info: KindInfo
    priority: int
    pattern: str
    partial: str
    prefilter: str
    max_window: int
    validate: Validate
    lookbehind: int = 0
    _full: re2._Regexp = field(init=False, repr=False)
    _partial: re2._Regexp = field(init=False, repr=False)

    @property
    def partial_pattern(self) -> str:
        return self.partial

    def __post_init__(self) -> None:
        object.__setattr__(self, "_full", compile_re2(self.pattern))
        object.__setattr__(self, "_partial", partial_regex(self.partial))

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        for match in self._full.finditer(text, pos):
            start, end = match.span()
            verdict = self.validate(text, start, end)
            if verdict is None:
                continue
            span_end, confidence = verdict
            yield Candidate(
                start,
                span_end,
                self.info.name,
                confidence,
                self.info.severity,
                self.priority,
                end + 2,
            )

    def partial_start(self, text: str, pos: int) -> int | None:
        return tail_start(self._partial, text, pos, self.max_window)
