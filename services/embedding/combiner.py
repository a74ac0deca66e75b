"""The learned tiers' parts read together: one logistic regression over their raw scores.

Each part (similarity to the corpus, the network over the embedding, the n-gram model, the
attack encoder) used to flag on its own, at its own operating point, and the tier took the
highest probability. Their false positives then add up (four parts each at a 1 % bound
flagged 1.8 % of s-labs' benign VALIDATION rows), while a text two parts find fairly likely
passes. The combiner weighs the four raw scores into one logit:

    z = intercept + w_similarity * cosine + w_network * logit + w_ngrams * logit
        + w_attack_encoder * logit
    probability = calibration.probability(z)

Two parts still flag alone. Similarity, but only a near-copy of a corpus entry
(`similarity_alone`: closer than any benign VALIDATION row came), so an entry a user adds
to the corpus flags its copies whatever the other parts think: the tiers' `near_copy`,
which the gateway counts beside the classifier (ScoreSimilarity's own score keeps its
standalone calibration, for a caller that asks only it). And the attack encoder, the
strongest part, at its own operating point, in a prompt only (`ClassifierResult.
document_probability`): retrieved and tool content is read by the combiner alone.

The attack encoder flagged documents alone until the twenty-eighth session: BIPIA's
VALIDATION contexts carry attack strings the parts were fitted on, so they could not show
how the combiner reads a new attack planted in a document (and, read by the combiner
alone, the held-out BIPIA attacks caught had fallen from 94.3 to 90.5 %). DEV rows now
show it, and say otherwise: of the VALIDATION prompts planted in VALIDATION documents
(`train.planted_samples`), the encoder's own flag adds 1 of 831 to the cascade (and 3 of
633 BIPIA VALIDATION attacks, whose strings it was fitted on), while its operating point,
within 0.1 of the head's highest logit (3.64 of 3.73), is where clean documentation lands
too: it flagged 6 of DEV's 828 README chunks, 3 of its 1,530 chunks of the Rust books and
1 of its 750 docstrings that nothing else flags. `data/combiner.json` is written by
`training/combiner.py` (fitted on VALIDATION rows, its threshold chosen out of fold).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mithril.services.embedding.calibration import Calibration

FEATURES = ("similarity", "network", "ngrams", "attack_encoder")
"""The raw scores read, in the order of `weights`: the highest cosine to the corpus, and the
highest logit over the text's windows (and lines, for the n-grams) of the three others."""


@dataclass(frozen=True, slots=True)
class Combiner:
    weights: tuple[float, ...]
    intercept: float
    calibration: Calibration
    """0.5 at the operating point on `z`."""
    similarity_alone: Calibration
    """The similarity's calibration beside the combiner (`near_copy`): 0.5 at a near-copy."""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if len(self.weights) != len(FEATURES):
            raise ValueError(f"the combiner needs {len(FEATURES)} weights, got {len(self.weights)}")

    def logits(
        self,
        similarity: np.ndarray,
        network: np.ndarray,
        ngrams: np.ndarray,
        attack_encoder: np.ndarray,
    ) -> np.ndarray:
        columns = np.column_stack([similarity, network, ngrams, attack_encoder]).astype(np.float64)
        return np.asarray(columns @ np.asarray(self.weights) + self.intercept, dtype=np.float64)

    def probabilities(
        self,
        similarity: np.ndarray,
        network: np.ndarray,
        ngrams: np.ndarray,
        attack_encoder: np.ndarray,
    ) -> np.ndarray:
        return self.calibration.probability(
            self.logits(similarity, network, ngrams, attack_encoder)
        )

    @property
    def version(self) -> str:
        return str(self.meta.get("version", "unknown"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "weights": list(self.weights),
            "intercept": self.intercept,
            "calibration": self.calibration.to_dict(),
            "similarity_alone": self.similarity_alone.to_dict(),
            **self.meta,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Combiner:
        if list(data.get("features", [])) != list(FEATURES):
            raise ValueError(
                f"the combiner reads {list(FEATURES)}, the file {data.get('features')}"
            )
        known = {"features", "weights", "intercept", "calibration", "similarity_alone"}
        return cls(
            weights=tuple(float(w) for w in data["weights"]),
            intercept=float(data["intercept"]),
            calibration=Calibration.from_dict(data["calibration"]),
            similarity_alone=Calibration.from_dict(data["similarity_alone"]),
            meta={k: v for k, v in data.items() if k not in known},
        )

    @classmethod
    def from_file(cls, path: Path) -> Combiner:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
