"""The secrets library facade: detect, redact and stream-redact credentials and PII.

    detector = SecretsDetector.default()
    detector.detect(text)                 # -> list[Finding], text order, non-overlapping
    detector.redact(text).text            # each span -> "[REDACTED:<kind>]"
    stream = detector.stream()            # per-stream incremental redactor

Clean text costs one pass of an RE2 set (the prefilter); only detectors whose prefilter hit
run their own pattern and validators. Every regex is RE2, so matching is linear-time.
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import re2

from mithril.domain import Finding
from mithril.services.secrets.detectors import REGISTRY, Candidate, Detector
from mithril.services.secrets.kinds import KindInfo
from mithril.services.secrets.redact import apply_redactions

if TYPE_CHECKING:
    from mithril.services.secrets.streaming import StreamingRedactor

__all__ = ["KindInfo", "Redaction", "SecretsDetector"]

DETECTOR_NAME = "secrets"


@dataclass(frozen=True, slots=True)
class Redaction:
    """Redacted text plus the findings; finding spans refer to the ORIGINAL text."""

    text: str
    findings: tuple[Finding, ...]


def resolve_overlaps(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Keep a non-overlapping subset, preferring higher priority, then longer, then severer."""
    ranked = sorted(
        candidates,
        key=lambda c: (-c.priority, -(c.end - c.start), -int(c.severity), c.start),
    )
    starts: list[int] = []
    chosen: list[Candidate] = []
    for candidate in ranked:
        index = bisect.bisect_left(starts, candidate.start)
        if index > 0 and chosen[index - 1].end > candidate.start:
            continue
        if index < len(chosen) and chosen[index].start < candidate.end:
            continue
        starts.insert(index, candidate.start)
        chosen.insert(index, candidate)
    return chosen


class SecretsDetector:
    """Immutable after construction; safe to share across threads and async tasks."""

    __slots__ = ("_by_set_index", "_detectors", "_prefilter")

    def __init__(self, detectors: Mapping[str, Detector] = REGISTRY) -> None:
        self._detectors: tuple[Detector, ...] = tuple(detectors.values())
        prefilter = re2.Set.SearchSet()
        for detector in self._detectors:
            prefilter.Add(detector.prefilter)
        prefilter.Compile()
        self._prefilter = prefilter
        self._by_set_index = {detector: i for i, detector in enumerate(self._detectors)}

    @classmethod
    def default(cls) -> SecretsDetector:
        """The shared instance with every registered detector."""
        return _default_detector()

    @property
    def kinds(self) -> tuple[KindInfo, ...]:
        return tuple(detector.info for detector in self._detectors)

    def select(self, kinds: Collection[str] | None) -> tuple[Detector, ...]:
        """The detectors for `kinds` (all when None); ValueError names unknown kinds."""
        if kinds is None:
            return self._detectors
        wanted = set(kinds)
        known = {detector.info.name for detector in self._detectors}
        unknown = wanted - known
        if unknown:
            raise ValueError(f"unknown secret kinds: {', '.join(sorted(unknown))}")
        return tuple(d for d in self._detectors if d.info.name in wanted)

    def scan(self, text: str, detectors: tuple[Detector, ...], pos: int = 0) -> list[Candidate]:
        """Candidates (overlaps unresolved) of regex matches starting at or after
        `pos - detector.lookbehind`; text before that is only read as context."""
        if not detectors:
            return []
        lookbehind = max(detector.lookbehind for detector in detectors)
        lo = max(0, pos - lookbehind)
        hits = set(self._prefilter.Match(text[lo:] if lo else text) or ())
        if not hits:
            return []
        found: list[Candidate] = []
        for detector in detectors:
            if self._by_set_index[detector] in hits:
                found.extend(detector.find(text, max(0, pos - detector.lookbehind)))
        return found

    def findings(self, candidates: Iterable[Candidate], offset: int = 0) -> list[Finding]:
        """Findings for already-resolved candidates, spans shifted by `offset`."""
        infos = {detector.info.name: detector.info for detector in self._detectors}
        return [
            Finding(
                rule_id=f"{DETECTOR_NAME}.{c.kind}",
                detector=DETECTOR_NAME,
                category=infos[c.kind].category,
                severity=c.severity,
                confidence=c.confidence,
                message=f"{infos[c.kind].description} ({c.end - c.start} characters)",
                start=c.start + offset,
                end=c.end + offset,
                view="raw",
                kind=c.kind,
            )
            for c in candidates
        ]

    def detect(self, text: str, kinds: Collection[str] | None = None) -> list[Finding]:
        """Findings in text order, non-overlapping."""
        candidates = self.scan(text, self.select(kinds))
        return self.findings(resolve_overlaps(candidates))

    def redact(self, text: str, kinds: Collection[str] | None = None) -> Redaction:
        """Replace each finding's span with "[REDACTED:<kind>]"."""
        findings = self.detect(text, kinds)
        return Redaction(apply_redactions(text, findings), tuple(findings))

    def stream(self, kinds: Collection[str] | None = None) -> StreamingRedactor:
        """A new incremental redactor for one stream."""
        from mithril.services.secrets.streaming import StreamingRedactor

        return StreamingRedactor(self, self.select(kinds))


@functools.cache
def _default_detector() -> SecretsDetector:
    return SecretsDetector()
