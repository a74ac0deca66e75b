"""Shared machinery for PII detectors: a regex, Python validation, and a prefix pattern."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import re2

from mithril.services.secrets.detectors.base import (
    Candidate,
    compile_re2,
    first_span,
    iter_spans,
    partial_regex,
    tail_start,
)
from mithril.services.secrets.kinds import KindInfo
from mithril.services.secrets.textview import TextView

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


def context_before(
    text: str,
    start: int,
    pattern: re.Pattern[str],
    width: int = 48,
    precheck: re2._Regexp | None = None,
) -> bool:
    """True when `pattern` occurs in the `width` characters before `start`.

    `precheck`, an RE2 pattern matching wherever `pattern` does (a superset, such as
    `_digits.keyword_gate`s), answers the common "no keyword" case without Python's re."""
    lo = max(0, start - width)
    if precheck is not None and first_span(precheck, text[lo:start].encode("utf-8")) is None:
        return False
    return pattern.search(text, lo, start) is not None


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
    gate: str | None = None
    """For digit detectors (see `_digits`): an RE2 pattern that matches, in every text where
    this detector accepts a match, at some position p with start - GATE_REACH <= p < end.
    Gated detectors' patterns use only `_digits.REGION_CHARS`; text with no gate hit never
    reaches their Python validation."""
    min_digits: int = 0
    """Every accepted match has at least this many (ASCII) digits."""
    _full: re2._Regexp = field(init=False, repr=False)
    _partial: re2._Regexp = field(init=False, repr=False)

    @property
    def partial_pattern(self) -> str:
        return self.partial

    def __post_init__(self) -> None:
        object.__setattr__(self, "_full", compile_re2(self.pattern))
        object.__setattr__(self, "_partial", partial_regex(self.partial))

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        return self.find_in(TextView(text), pos)

    def find_in(self, view: TextView, pos: int = 0) -> Iterator[Candidate]:
        return self.find_between(view, view.to_byte(pos), len(view.data))

    def find_between(self, view: TextView, lo: int, hi: int) -> Iterator[Candidate]:
        """Candidates of the regex run on `view.data[:hi]` from byte `lo` (which must not cut
        through a match of the full text, see `_digits`)."""
        text, to_char = view.text, view.to_char
        for spans in iter_spans(self._full, view.data, lo, hi):
            start, end = to_char(spans[0][0]), to_char(spans[0][1])
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
