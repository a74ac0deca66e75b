"""The attack classifier's probability read on retrieved and tool content's own scale.

The classifier's operating point (probability 0.5) was chosen mostly on prompts, and
retrieved documents are another population: a README's badge table, a CLI's box-drawn help
or a docstring with a chat example score 0.50-0.57. A deployment that retrieves such
documentation can read the classifier's probability on untrusted content
(`Origin.is_untrusted_content`) on a scale of its own, 0.5 moved to a document threshold t
in logit space:

    p' = sigmoid(logit(p) - logit(t))

A document then flags at the policy's threshold where the classifier gives at least t, and
the score still adds up with the other tiers as a calibrated probability. Only the
classifier's finding moves: the planted-line head has its operating point chosen on
documents already, and the similarity's near-copy is a near-copy whatever carries it.

t is 0.5 (off) unless MITHRIL_GATEWAY_DOCUMENT_CLASSIFIER_THRESHOLD sets it. On DEV, 0.56
(the lowest holding every DEV document source at 1 %: `services/embedding/training/
document_threshold.py`, its figures in `data/document_threshold_report.json`) flags 8
instead of 13 of 823 README chunks and 4 instead of 7 of 750 docstrings; it misses 2 more
of 270 translated attacks planted in DEV documents, and no more BIPIA attack or prompt
planted in a VALIDATION document. The held-out BIPIA attacks say
otherwise: the cascade caught 565 of 600 instead of 574 at 0.56, for 4 fewer of 268 README
chunks flagged. DEV's BIPIA attacks are caught by rules written on them and the planted
prompts by the planted-line head, so neither shows what the classifier's band just above
0.5 catches in a document; a deployment whose retrieval is documentation rather than mail
and web pages may still want it.
"""

from __future__ import annotations

import dataclasses
import math

from mithril.domain import Finding
from mithril.gateway.detectors import Analysis, canonical, learned_severity

CLASSIFIER_RULE = "embedding.classifier"
OFF = 0.5
"""The document threshold that leaves probabilities as they are."""
_EDGE = 1e-9  # keeps logit() finite at probabilities of exactly 0 or 1


def _logit(p: float) -> float:
    p = min(max(p, _EDGE), 1 - _EDGE)
    return math.log(p / (1 - p))


def on_document_scale(probability: float, threshold: float) -> float:
    """`probability` with 0.5 moved to `threshold` (the module docstring's p')."""
    if threshold == OFF:
        return probability
    return 1 / (1 + math.exp(-(_logit(probability) - _logit(threshold))))


def rescaled(analysis: Analysis, threshold: float) -> Analysis:
    """`analysis` with its classifier finding on the document scale, saying so."""
    if threshold == OFF:
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
