"""Shared machinery for detectors of prefixed tokens (AKIA..., ghp_..., xoxb-..., sk-...)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import re2

from mithril.domain import Severity
from mithril.services.secrets.detectors.base import (
    TOKEN_CHARS,
    Candidate,
    Piece,
    compile_re2,
    full_pattern,
    iter_spans,
    partial_regex,
    prefix_pattern,
    tail_start,
    token_after,
    token_before,
)
from mithril.services.secrets.kinds import KindInfo
from mithril.services.secrets.textview import TextView


@dataclass(frozen=True, eq=False)
class TokenDetector:
    """A token that starts with a known prefix and is bounded by non-token characters."""

    info: KindInfo
    priority: int
    pieces: tuple[Piece, ...]
    prefilter: str
    min_len: int
    max_len: int
    confidence: float
    body_chars: frozenset[str] = TOKEN_CHARS
    check: Callable[[str], bool] | None = None
    severity_of: Callable[[str], Severity] | None = None
    lookbehind: int = 0
    max_window: int = field(init=False)
    partial_pattern: str = field(init=False, repr=False)
    _full: re2._Regexp = field(init=False, repr=False)
    _partial: re2._Regexp = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "max_window", self.max_len)
        object.__setattr__(self, "partial_pattern", prefix_pattern(self.pieces))
        object.__setattr__(self, "_full", compile_re2(full_pattern(self.pieces)))
        object.__setattr__(self, "_partial", partial_regex(self.partial_pattern))

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        return self.find_in(TextView(text), pos)

    def find_in(self, view: TextView, pos: int = 0) -> Iterator[Candidate]:
        text, to_char = view.text, view.to_char
        for spans in iter_spans(self._full, view.data, view.to_byte(pos)):
            start, end = to_char(spans[0][0]), to_char(spans[0][1])
            if token_before(text, start) or token_after(text, end, self.body_chars):
                continue
            if not self.min_len <= end - start <= self.max_len:
                continue
            value = text[start:end]
            if self.check is not None and not self.check(value):
                continue
            severity = self.severity_of(value) if self.severity_of else self.info.severity
            yield Candidate(start, end, self.info.name, self.confidence, severity, self.priority)

    def partial_start(self, text: str, pos: int) -> int | None:
        return tail_start(self._partial, text, pos, self.max_len)
