"""Turn a raw tier score into a calibrated probability with 0.5 at the operating point.

`probability = sigmoid(slope * (raw - threshold))`: `threshold` is the raw score picked on
the train-validation slice (false-positive rate at most 1 % on each benign source there),
`slope` a logistic (Platt) fit of the labels on `raw - threshold` over the same slice,
without intercept so that 0.5 stays exactly at the threshold. The gateway's noisy-OR of
tiers then means the same thing for every tier: >= 0.5 is flagged.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True, slots=True)
class Calibration:
    threshold: float
    slope: float

    def __post_init__(self) -> None:
        if not self.slope > 0:
            raise ValueError(f"calibration slope must be positive, got {self.slope}")

    def probability(self, raw: np.ndarray) -> np.ndarray:
        z = np.clip(self.slope * (np.asarray(raw, dtype=np.float64) - self.threshold), -50, 50)
        return np.asarray(1.0 / (1.0 + np.exp(-z)), dtype=np.float64)

    def raw_at(self, probability: float) -> float:
        """The raw score this calibration maps to `probability` (0 < probability < 1)."""
        if not 0.0 < probability < 1.0:
            raise ValueError(f"probability must be strictly between 0 and 1, got {probability}")
        return self.threshold + float(np.log(probability / (1.0 - probability))) / self.slope

    def to_dict(self) -> dict[str, float]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Calibration:
        return cls(threshold=float(data["threshold"]), slope=float(data["slope"]))

    @classmethod
    def from_file(cls, path: Path) -> Calibration:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8"))["calibration"])
