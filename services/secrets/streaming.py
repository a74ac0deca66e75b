"""Incremental redaction for streamed text (SSE completions).

The redactor emits only text that can no longer become part of a match. After each chunk it
asks every detector where, at the end of the received text, a match could still be growing
(`Detector.partial_start`): the trailing unfinished token, a keyword context such as
`password = ` or `Bearer `, trailing digit groups that could become a card, phone or IBAN, or a
PEM block from its BEGIN header up to its END footer. Everything before the earliest such
point is final, except that a match touching the held tail (or ending within
`RIGHT_CONTEXT` characters of the end) is held whole. Held text is bounded by the longest
window of any detector, which `max_holdback` reports (a PEM key: header + 8192 body chars).

Only the held tail plus `lookbehind` characters of emitted text are kept and rescanned, so
each chunk costs O(chunk + held tail + left context), never the whole stream.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

import re2

from mithril.domain import Finding
from mithril.services.secrets.detector import resolve_overlaps
from mithril.services.secrets.detectors.base import compile_re2, search_spans
from mithril.services.secrets.redact import apply_redactions
from mithril.services.secrets.textview import TextView

if TYPE_CHECKING:
    from mithril.services.secrets.detector import SecretsDetector
    from mithril.services.secrets.detectors import Detector

RIGHT_CONTEXT = 2
"""Characters after a match that may still change its verdict (boundaries, decimal parts)."""
EXTRA_LEFT_CONTEXT = 64
"""Emitted characters kept beyond the longest detector lookbehind (keyword context checks)."""


@dataclass(frozen=True, slots=True)
class StreamOutput:
    """Text safe to send now, and the findings completed in this step.

    Finding spans are offsets in the whole original stream so far.
    """

    text: str
    findings: tuple[Finding, ...]


_EMPTY = StreamOutput("", ())


@dataclass(frozen=True, slots=True)
class _PartialPlan:
    """All regex prefix patterns ORed into one RE2 (largest window first), plus the
    detectors that compute their partial start themselves."""

    combined: re2._Regexp | None
    by_group: tuple[Detector, ...]
    custom: tuple[Detector, ...]


@functools.lru_cache(maxsize=128)
def _partial_plan(detectors: tuple[Detector, ...]) -> _PartialPlan:
    with_pattern = sorted(
        (d for d in detectors if d.partial_pattern is not None), key=lambda d: -d.max_window
    )
    custom = tuple(d for d in detectors if d.partial_pattern is None)
    if not with_pattern:
        return _PartialPlan(None, (), custom)
    alternatives = "|".join(f"({d.partial_pattern})" for d in with_pattern)
    return _PartialPlan(compile_re2(f"(?:{alternatives})\\z"), tuple(with_pattern), custom)


class StreamingRedactor:
    """Feed chunks, send what comes back; call `flush` at the end of the stream. Per stream."""

    __slots__ = ("_bound", "_buffer", "_buffer_start", "_closed", "_detectors", "_emitted",
                 "_engine", "_left_context", "_plan")  # fmt: skip

    def __init__(self, engine: SecretsDetector, detectors: tuple[Detector, ...]) -> None:
        self._engine = engine
        self._detectors = detectors
        self._buffer = ""
        self._buffer_start = 0
        self._emitted = 0
        self._closed = False
        self._left_context = max((d.lookbehind for d in detectors), default=0) + (
            EXTRA_LEFT_CONTEXT
        )
        self._bound = max((d.max_window for d in detectors), default=0) + RIGHT_CONTEXT
        self._plan = _partial_plan(detectors)

    @property
    def max_holdback(self) -> int:
        """The most characters of received text this redactor ever holds back."""
        return self._bound

    @property
    def held(self) -> int:
        """How many received characters are currently held back."""
        return self._buffer_start + len(self._buffer) - self._emitted

    def feed(self, chunk: str) -> StreamOutput:
        if self._closed:
            raise RuntimeError("feed() after flush()")
        if not chunk:
            return _EMPTY
        self._buffer += chunk
        return self._advance(final=False)

    def flush(self) -> StreamOutput:
        """End of stream: emit everything held, redacted."""
        if self._closed:
            return _EMPTY
        output = self._advance(final=True)
        self._closed = True
        self._buffer = ""
        return output

    def _hold_point(self, view: TextView, lo: int) -> int:
        """The earliest index >= lo where a match could still be growing at the end."""
        text = view.text
        size = len(text)
        hold = size
        plan = self._plan
        spans = None
        if plan.combined is not None:
            spans = search_spans(plan.combined, view.data, view.to_byte(lo))
        if spans is not None and spans[0][0] < len(view.data):
            start = view.to_char(spans[0][0])
            group = next(i for i in range(1, len(plan.by_group) + 1) if spans[i][0] >= 0)
            if size - start <= plan.by_group[group - 1].max_window:
                # Within that detector's window, so its own (clamped) answer is `start`, and
                # no other detector can answer earlier than the leftmost start of all.
                hold = start
            else:
                for detector in plan.by_group:
                    found = detector.partial_start(text, lo)
                    if found is not None and found < hold:
                        hold = found
        for detector in plan.custom:
            found = detector.partial_start(text, lo)
            if found is not None and found < hold:
                hold = found
        return hold

    def _advance(self, final: bool) -> StreamOutput:
        text = self._buffer
        base = self._buffer_start
        lo = self._emitted - base
        size = len(text)
        if lo >= size:
            return _EMPTY
        view = TextView(text)
        hold = size if final else self._hold_point(view, lo)
        candidates = [c for c in self._engine.scan_view(view, self._detectors, lo) if c.start >= lo]
        if not final:
            changed = True
            while changed:
                changed = False
                for candidate in candidates:
                    if candidate.start < hold and (
                        candidate.end > hold or candidate.settled_end + RIGHT_CONTEXT > size
                    ):
                        hold = candidate.start
                        changed = True
            if size - hold > self._bound:
                # Pathological input (a chain of overlapping near-matches longer than any
                # single window): emit up to the bound, never cutting through a candidate.
                hold = size - self._bound
                for candidate in candidates:
                    if candidate.start < hold < candidate.end:
                        hold = candidate.end
        if hold <= lo:
            return _EMPTY
        chosen = resolve_overlaps(c for c in candidates if c.end <= hold)
        findings = self._engine.findings(chosen, base)
        emitted = apply_redactions(text[lo:hold], findings, offset=base + lo)
        self._emitted = base + hold
        new_start = max(base, self._emitted - self._left_context)
        if new_start > base:
            self._buffer = text[new_start - base :]
            self._buffer_start = new_start
        return StreamOutput(emitted, tuple(findings))
