"""Shared machinery for "keyword context, then value" detectors (the value is the span)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import re2

from mithril.domain import Severity
from mithril.services.secrets.detectors.base import (
    Candidate,
    Piece,
    compile_bounds,
    compile_re2,
    iter_bounded_spans,
    partial_regex,
    prefix_pattern,
    tail_start,
)
from mithril.services.secrets.kinds import KindInfo
from mithril.services.secrets.textview import TextView

Validate = Callable[[str, int, int, str, str], float | None]
"""(text, value start, value end, context text, value) -> confidence, or None to reject."""


@dataclass(frozen=True, eq=False)
class KeywordValueDetector:
    """A regex whose capture groups hold the value; the first group that matched is the span."""

    info: KindInfo
    priority: int
    pattern: str
    partial_pieces: Sequence[Piece]
    prefilter: str
    lookbehind: int
    max_value: int
    validate: Validate
    severity: Severity | None = None
    max_window: int = field(init=False)
    partial_pattern: str = field(init=False, repr=False)
    _full: re2._Regexp = field(init=False, repr=False)
    _bounds: re2._Regexp = field(init=False, repr=False)
    _partial: re2._Regexp = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_window", self.lookbehind + self.max_value + 2)
        object.__setattr__(self, "partial_pattern", prefix_pattern(self.partial_pieces))
        object.__setattr__(self, "_full", compile_re2(self.pattern))
        object.__setattr__(self, "_bounds", compile_bounds(self.pattern))
        object.__setattr__(self, "_partial", partial_regex(self.partial_pattern))

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        return self.find_in(TextView(text), pos)

    def find_in(self, view: TextView, pos: int = 0) -> Iterator[Candidate]:
        text, to_char = view.text, view.to_char
        # A match longer than this has a key over `lookbehind` or a value over `max_value`
        # (the value is followed by at most a closing quote).
        max_len = 4 * (self.lookbehind + self.max_value + 1)
        bounded = iter_bounded_spans(
            self._bounds, self._full, view.data, view.to_byte(pos), max_len
        )
        for spans in bounded:
            if spans is None:
                continue
            group = next((span for span in spans[1:] if span[0] >= 0), None)
            if group is None:
                continue
            match_start = to_char(spans[0][0])
            start, end = to_char(group[0]), to_char(group[1])
            if start - match_start > self.lookbehind or end - start > self.max_value:
                continue
            context = text[match_start:start]
            confidence = self.validate(text, start, end, context, text[start:end])
            if confidence is None:
                continue
            yield Candidate(
                start,
                end,
                self.info.name,
                confidence,
                self.severity or self.info.severity,
                self.priority,
                to_char(spans[0][1]) + 1,
            )

    def partial_start(self, text: str, pos: int) -> int | None:
        return tail_start(self._partial, text, pos, self.max_window)
