"""The detector protocol: programmatic rules that look at a whole scan, not one pattern.

Regex rules are matched by the RE2 engine in `engine.py`; a rule with `detector: <name>` is
instead handed to the detector registered under that name in `DETECTORS`, after the regex
pass, together with a `ScanContext` describing everything the pass found.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from mithril.domain import Origin

from ..decode import Segment
from ..rules import Rule


@dataclass(frozen=True, slots=True)
class Hit:
    """Where a detector found its evidence: a view, and a span in the original text if any."""

    view: str = "raw"
    start: int | None = None
    end: int | None = None


@dataclass(frozen=True, slots=True)
class RegexHit:
    """A regex rule that matched during the scan."""

    rule: Rule
    view: str
    start: int | None
    end: int | None


@dataclass(frozen=True, slots=True)
class DecodedSegment:
    """A decoded segment, its span in the original text, and the rule ids it matched."""

    segment: Segment
    start: int
    end: int
    rule_ids: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class ScanContext:
    """What the regex pass saw: input, origin, regex hits per view, decoded segments."""

    text: str
    origin: Origin
    hits: tuple[RegexHit, ...] = ()
    segments: tuple[DecodedSegment, ...] = ()
    views: tuple[str, ...] = field(default=())
    triggers: frozenset[str] = frozenset()
    """Names of `DETECTOR_TRIGGERS` patterns that matched the raw text."""

    def rule_ids_in(self, view: str) -> set[str]:
        return {hit.rule.id for hit in self.hits if hit.view == view}


class Detector(Protocol):
    """A programmatic rule implementation; `name` is what rule files refer to.

    Detectors only run when the regex pass found something (a hit, a decoded segment) or when
    one of the cheap `DETECTOR_TRIGGERS` patterns matched; a detector that needs a trigger
    declares it there under its own name.
    """

    name: str

    def detect(self, rule: Rule, context: ScanContext) -> Iterable[Hit]: ...


def build_registry(*detectors: Detector) -> Mapping[str, Detector]:
    registry: dict[str, Detector] = {}
    for detector in detectors:
        if detector.name in registry or detector.name == "regex":
            raise ValueError(f"duplicate detector name {detector.name!r}")
        registry[detector.name] = detector
    return registry
