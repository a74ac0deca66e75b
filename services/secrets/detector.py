"""The secrets library facade: detect, redact and stream-redact credentials and PII.

    detector = SecretsDetector.default()
    detector.detect(text)                 # -> list[Finding], text order, non-overlapping
    detector.redact(text).text            # each span -> "[REDACTED:<kind>]"
    stream = detector.stream()            # per-stream incremental redactor

Clean text costs one pass of an RE2 set (the prefilter); only detectors whose prefilter hit
run their own pattern and validators. The digit PII detectors (phone, SSN, card), whose
prefilters hit on any number, share one more RE2 pass over their gates (`detectors._digits`),
so dates, prices and versions never reach Python. Every regex is RE2 and runs on the text's
UTF-8 bytes, encoded once (`textview`), so matching is linear-time.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mithril.domain import Finding
from mithril.services.secrets.detectors import REGISTRY, Candidate, Detector
from mithril.services.secrets.detectors._digits import scan_gated
from mithril.services.secrets.detectors._pii import PiiDetector
from mithril.services.secrets.detectors.base import prefilter_set
from mithril.services.secrets.kinds import KindInfo
from mithril.services.secrets.redact import apply_redactions
from mithril.services.secrets.textview import TextView

if TYPE_CHECKING:
    from mithril.services.secrets.streaming import StreamingRedactor

__all__ = ["KindInfo", "Redaction", "SecretsDetector", "prefilter_set"]

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


@dataclass(frozen=True, slots=True)
class _Plan:
    """How to scan with one selection of detectors (cached per selection)."""

    lookbehind: int
    entries: tuple[tuple[int, Detector, bool], ...]
    """(prefilter set index, detector, gated) in selection order."""


class SecretsDetector:
    """Immutable after construction; safe to share across threads and async tasks."""

    __slots__ = (
        "_by_set_index",
        "_detectors",
        "_fingerprint",
        "_index_by_kind",
        "_infos",
        "_plans",
        "_prefilter_match",
    )

    def __init__(self, detectors: Mapping[str, Detector] = REGISTRY) -> None:
        self._detectors: tuple[Detector, ...] = tuple(detectors.values())
        self._prefilter_match = prefilter_set(d.prefilter for d in self._detectors)
        self._by_set_index = {detector: i for i, detector in enumerate(self._detectors)}
        self._index_by_kind = {d.info.name: i for i, d in enumerate(self._detectors)}
        self._infos = {detector.info.name: detector.info for detector in self._detectors}
        self._plans: dict[tuple[Detector, ...], _Plan] = {}
        digest = hashlib.sha256()
        for kind, pattern in sorted(self.prefilters.items()):
            digest.update(f"{len(kind)}:{kind}{len(pattern)}:{pattern}".encode())
        self._fingerprint = digest.hexdigest()

    @classmethod
    def default(cls) -> SecretsDetector:
        """The shared instance with every registered detector."""
        return _default_detector()

    @property
    def kinds(self) -> tuple[KindInfo, ...]:
        return tuple(detector.info for detector in self._detectors)

    @property
    def prefilters(self) -> dict[str, str]:
        """Kind -> the RE2 pattern every match of that kind's detector contains (its
        prefilter), for a caller that matches them in an RE2 set of its own."""
        return {detector.info.name: detector.prefilter for detector in self._detectors}

    @property
    def prefilters_fingerprint(self) -> str:
        """Hex SHA-256 of `prefilters`: two detectors with equal fingerprints screen alike."""
        return self._fingerprint

    def may_find(self, data: bytes) -> bool:
        """False only when no detector's prefilter occurs in `data` (UTF-8): then no
        detector can find anything in it, nor in any part of it."""
        return bool(self._prefilter_match(data))

    def select(self, kinds: Collection[str] | None) -> tuple[Detector, ...]:
        """The detectors for `kinds` (all when None); ValueError names unknown kinds."""
        if kinds is None:
            return self._detectors
        wanted = set(kinds)
        unknown = wanted - self._infos.keys()
        if unknown:
            raise ValueError(f"unknown secret kinds: {', '.join(sorted(unknown))}")
        return tuple(d for d in self._detectors if d.info.name in wanted)

    def _plan(self, detectors: tuple[Detector, ...]) -> _Plan:
        plan = self._plans.get(detectors)
        if plan is None:
            plan = _Plan(
                max(detector.lookbehind for detector in detectors),
                tuple(
                    (
                        self._by_set_index[d],
                        d,
                        isinstance(d, PiiDetector) and d.gate is not None,
                    )
                    for d in detectors
                ),
            )
            if len(self._plans) < 256:
                self._plans[detectors] = plan
        return plan

    def scan(self, text: str, detectors: tuple[Detector, ...], pos: int = 0) -> list[Candidate]:
        """Candidates (overlaps unresolved) of regex matches starting at or after
        `pos - detector.lookbehind`; text before that is only read as context."""
        if not detectors or not text:
            return []
        return self.scan_view(TextView(text), detectors, pos)

    def scan_view(
        self, view: TextView, detectors: tuple[Detector, ...], pos: int = 0
    ) -> list[Candidate]:
        """`scan` of an already-encoded text."""
        if not detectors or not view.text:
            return []
        plan = self._plan(detectors)
        lo = view.to_byte(pos - plan.lookbehind) if pos > plan.lookbehind else 0
        hits = self._prefilter_match(view.data[lo:] if lo else view.data)
        if not hits:
            return []
        return self._run(view, plan, set(hits), pos)

    def _run(self, view: TextView, plan: _Plan, hits: set[int], pos: int) -> list[Candidate]:
        """The selected detectors whose prefilter entry is in `hits`, run on the text."""
        present = [(d, gated) for index, d, gated in plan.entries if index in hits]
        gated = [d for d, is_gated in present if is_gated]
        by_gated = dict(zip(gated, scan_gated(view, gated, pos), strict=True)) if gated else {}
        found: list[Candidate] = []
        for detector, is_gated in present:
            if is_gated:
                found.extend(by_gated[detector])
            else:
                found.extend(detector.find_in(view, max(0, pos - detector.lookbehind)))
        return found

    def findings(self, candidates: Iterable[Candidate], offset: int = 0) -> list[Finding]:
        """Findings for already-resolved candidates, spans shifted by `offset`."""
        infos = self._infos
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

    def detect_prefiltered(self, text: str, present: Collection[str]) -> list[Finding]:
        """`detect` of every kind, when the caller has already matched `prefilters` on the
        whole text: `present` names the kinds whose prefilter occurred."""
        if not present or not text:
            return []
        hits = {self._index_by_kind[name] for name in present}
        candidates = self._run(TextView(text), self._plan(self._detectors), hits, 0)
        return self.findings(resolve_overlaps(candidates))

    def redact(self, text: str, kinds: Collection[str] | None = None) -> Redaction:
        """Replace each finding's span with "[REDACTED:<kind>]"."""
        detectors = self.select(kinds)  # unknown kinds are an error, whatever the text
        if not self.may_find(text.encode("utf-8")):
            return Redaction(text, ())  # most texts: no prefilter occurs, nothing to rewrite
        findings = self.findings(resolve_overlaps(self.scan(text, detectors)))
        return Redaction(apply_redactions(text, findings), tuple(findings))

    def stream(self, kinds: Collection[str] | None = None) -> StreamingRedactor:
        """A new incremental redactor for one stream."""
        from mithril.services.secrets.streaming import StreamingRedactor

        return StreamingRedactor(self, self.select(kinds))


@functools.cache
def _default_detector() -> SecretsDetector:
    return SecretsDetector()
