"""The learned tier: a small network over sentence embeddings, weights shipped as .npz.

`data/classifier.npz` holds `w0, b0, w1, b1, ...` (ReLU between layers, one logit out) and
`meta`, a JSON string with the version, the calibration and how the weights were made
(`services/embedding/training/train.py`, its seed and data; see `classifier.meta.json`).
A text's raw score is its highest logit over its windows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.encoder import Windows


@dataclass(frozen=True, slots=True)
class ClassifierResult:
    raw: float
    """The highest logit over the text's windows."""
    probability: float
    """Calibrated probability that the text is an attack."""


class Classifier:
    def __init__(
        self, layers: list[tuple[np.ndarray, np.ndarray]], calibration: Calibration, meta: dict
    ) -> None:
        if not layers or layers[-1][0].shape[1] != 1:
            raise ValueError("the classifier must end in a single logit")
        self.layers = layers
        self.calibration = calibration
        self.meta = meta
        self.version = str(meta.get("version", "unknown"))

    @classmethod
    def from_file(cls, path: Path) -> Classifier:
        with np.load(Path(path), allow_pickle=False) as data:
            meta: dict[str, Any] = json.loads(str(data["meta"]))
            layers = []
            index = 0
            while f"w{index}" in data:
                layers.append(
                    (
                        data[f"w{index}"].astype(np.float32),
                        data[f"b{index}"].astype(np.float32),
                    )
                )
                index += 1
        return cls(layers, Calibration.from_dict(meta["calibration"]), meta)

    def logits(self, vectors: np.ndarray) -> np.ndarray:
        """One logit per vector."""
        hidden = np.asarray(vectors, dtype=np.float32)
        for position, (weight, bias) in enumerate(self.layers):
            hidden = hidden @ weight + bias
            if position < len(self.layers) - 1:
                np.maximum(hidden, 0, out=hidden)
        return np.asarray(hidden[:, 0], dtype=np.float64)

    def classify(self, windows: Windows, count: int) -> list[ClassifierResult]:
        raws = windows.max_per_text(self.logits(windows.vectors), count)
        probabilities = self.calibration.probability(raws)
        return [
            ClassifierResult(float(raw), float(p))
            for raw, p in zip(raws, probabilities, strict=True)
        ]
