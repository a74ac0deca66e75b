"""Programmatic detectors, looked up by name from rule files (`detector: <name>`)."""

from __future__ import annotations

from collections.abc import Mapping

from .base import DecodedSegment, Detector, Hit, RegexHit, ScanContext, build_registry
from .encoded_payload import EncodedPayloadDetector
from .gibberish_suffix import TRIGGER as GIBBERISH_TRIGGER
from .gibberish_suffix import GibberishSuffixDetector
from .normalization_evasion import NormalizationEvasionDetector
from .request_in_table import TRIGGER as TABLE_TRIGGER
from .request_in_table import RequestInTableDetector
from .squeezed_phrase import TRIGGER as SQUEEZED_TRIGGER
from .squeezed_phrase import SqueezedPhraseDetector

DETECTORS: Mapping[str, Detector] = build_registry(
    EncodedPayloadDetector(),
    GibberishSuffixDetector(),
    NormalizationEvasionDetector(),
    RequestInTableDetector(),
    SqueezedPhraseDetector(),
)
"""Every detector a rule may name, keyed by `Detector.name`."""

DETECTOR_TRIGGERS: Mapping[str, str] = {
    "gibberish_suffix": GIBBERISH_TRIGGER,
    "request_in_table": TABLE_TRIGGER,
    "squeezed_phrase": SQUEEZED_TRIGGER,
}
"""Cheap RE2 patterns (added to the rule set) that let a detector run; keyed by detector name."""

__all__ = [
    "DETECTORS",
    "DETECTOR_TRIGGERS",
    "DecodedSegment",
    "Detector",
    "Hit",
    "RegexHit",
    "ScanContext",
]
