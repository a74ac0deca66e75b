"""The attack encoder: all-MiniLM-L6-v2 fine-tuned to tell attacks from requests, the
classifier tier's third part.

The shipped model's vectors say what a text is about, not whether it is an attack, and a
network over them (`classifier.py`) misses what reads like an ordinary question on a
forbidden topic. Here the encoder itself is fitted: a low-rank adapter (LoRA, rank 16 on
every linear layer of the six blocks, about 0.68 M numbers in `data/attack_encoder.npz`,
fitted by `training/attack_encoder.py`) is merged into the shipped weights and quantised
to int8 on this machine, as the base network is (`network.derived_model(adapter=...)`).
A linear head on each window's L2-normalised mean-pooled vector gives a logit; a text's
raw score is its highest over its windows, calibrated like the other parts (0.5 at the
operating point chosen on VALIDATION rows).

It costs one more pass of the small network per window (about 1 ms for a short prompt).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.encoder import Encoder


class AttackEncoder:
    def __init__(
        self,
        encoder: Encoder,
        weight: np.ndarray,
        bias: float,
        calibration: Calibration,
        meta: dict[str, Any],
        max_windows: int = 8,
    ) -> None:
        if weight.shape != (encoder.dimensions,):
            raise ValueError(f"the head needs {encoder.dimensions} weights, got {weight.shape}")
        self.encoder = encoder
        self.weight = weight.astype(np.float32)
        self.bias = float(bias)
        self.calibration = calibration
        self.meta = meta
        self.max_windows = max_windows

    @property
    def version(self) -> str:
        return str(self.meta.get("version", "unknown"))

    @classmethod
    def load(
        cls,
        adapter: Path,
        *,
        threads: int = 0,
        max_tokens: int = 256,
        stride: int = 32,
        max_windows: int = 8,
        model: Path | None = None,
    ) -> AttackEncoder:
        """The adapter at `adapter` (.npz: low-rank factors, head, meta), on the int8 network
        derived from it (`model`, when already derived elsewhere)."""
        from mithril.services.embedding.network import derived_model

        weight, bias, meta = read_head(adapter)
        encoder = Encoder.load(
            spinning=False,  # it runs right after the base network (see `Encoder.load`)
            threads=threads,
            max_tokens=max_tokens,
            stride=stride,
            model=model or derived_model(adapter=adapter),
        )
        return cls(
            encoder,
            weight,
            bias,
            Calibration.from_dict(meta["calibration"]),
            meta,
            max_windows=max_windows,
        )

    def raws(self, texts: list[str]) -> np.ndarray:
        """Each text's highest logit over its windows."""
        if not texts:
            return np.zeros(0, dtype=np.float64)
        windows = self.encoder.encode_windows(list(texts), self.max_windows)
        logits = windows.vectors @ self.weight + self.bias
        return windows.max_per_text(logits.astype(np.float64), len(texts))

    def probabilities(self, raws: np.ndarray) -> np.ndarray:
        return self.calibration.probability(raws)


def read_head(adapter: Path) -> tuple[np.ndarray, float, dict[str, Any]]:
    """The head's weights and bias, and the meta (calibration, how it was made)."""
    with np.load(Path(adapter), allow_pickle=False) as data:
        missing = {"head.weight", "head.bias", "meta"} - set(data.files)
        if missing:
            raise ValueError(f"{adapter}: not an attack encoder adapter (no {sorted(missing)})")
        meta: dict[str, Any] = json.loads(str(data["meta"]))
        weight = data["head.weight"].astype(np.float32).reshape(-1)
        bias = float(data["head.bias"].reshape(-1)[0])
    if "calibration" not in meta:
        raise ValueError(f"{adapter}: its meta has no calibration")
    return weight, bias, meta
