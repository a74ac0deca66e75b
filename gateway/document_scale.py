"""The attack classifier's probability read on retrieved and tool content's own scale.

The classifier's operating point (probability 0.5) was chosen mostly on prompts. Retrieved
documents are another population: README badge tables, a CLI's box-drawn help, a
docstring with a chat example score 0.50-0.57 there, and flagged 1.7 % of the benign README
chunks and 0.9 % of the docstrings that DEV holds while no planted attack among DEV's
documents needed them. So for untrusted content (`Origin.is_untrusted_content`) the
classifier's probability is moved in logit space to put 0.5 at the document threshold t:

    p' = sigmoid(logit(p) - logit(t))

A document then flags at the policy's threshold where the classifier gives at least t, and
the score still adds up with the other tiers as a calibrated probability. t is chosen on
DEV's documents by `services/embedding/training/document_threshold.py` (the lowest that
holds every DEV document source at 1 % or less) and shipped beside the classifier in
`data/document_threshold.json`; a deployment can set its own
(MITHRIL_GATEWAY_DOCUMENT_CLASSIFIER_THRESHOLD). Only the classifier's finding moves: the
planted-line head has its operating point chosen on documents already, and the
similarity's near-copy is a near-copy whatever carries it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
from pathlib import Path

from mithril.domain import Finding
from mithril.gateway.detectors import Analysis, canonical, learned_severity
from mithril.services.embedding.config import DATA_DIR

DOCUMENT_THRESHOLD_FILE = DATA_DIR / "document_threshold.json"
CLASSIFIER_RULE = "embedding.classifier"
_EDGE = 1e-9  # keeps logit() finite at probabilities of exactly 0 or 1


@functools.cache
def shipped_threshold(path: Path = DOCUMENT_THRESHOLD_FILE) -> float:
    """The document threshold chosen for the shipped classifier."""
    threshold = float(json.loads(Path(path).read_text(encoding="utf-8"))["threshold"])
    if not 0 < threshold < 1:
        raise ValueError(f"{path}: the document threshold must lie in (0, 1), not {threshold}")
    return threshold


def _logit(p: float) -> float:
    p = min(max(p, _EDGE), 1 - _EDGE)
    return math.log(p / (1 - p))


def on_document_scale(probability: float, threshold: float) -> float:
    """`probability` with 0.5 moved to `threshold` (the module docstring's p')."""
    if threshold == 0.5:
        return probability
    return 1 / (1 + math.exp(-(_logit(probability) - _logit(threshold))))


def rescaled(analysis: Analysis, threshold: float) -> Analysis:
    """`analysis` with its classifier finding on the document scale, saying so."""
    if threshold == 0.5:
        return analysis
    return dataclasses.replace(
        analysis, findings=tuple(_rescaled(f, threshold) for f in analysis.findings)
    )


def _rescaled(finding: Finding, threshold: float) -> Finding:
    if finding.rule_id != CLASSIFIER_RULE:
        return finding
    moved = on_document_scale(finding.confidence, threshold)
    return canonical(
        dataclasses.replace(
            finding,
            confidence=round(moved, 6),
            severity=learned_severity(moved),
            message=f"{finding.message}; {moved:.2f} as content, whose threshold is"
            f" {threshold:.2f}",
        )
    )
