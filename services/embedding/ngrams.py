"""The classifier's second part: a linear model over character n-grams, shipped as .npz.

Embeddings capture what a text means; attacks also give themselves away in how they are
written ("ur rules", "disregard", "dev mode"), which a sentence embedding smooths over.
The features are scikit-learn's `char_wb` analyzer with sublinear tf-idf, reimplemented
here so that the runtime needs no scikit-learn (a test checks the two agree):

    text -> lower-case words, each padded with one space -> every 3- to 5-character slice
    -> counts over the shipped vocabulary -> (1 + log count) x idf -> L2-normalised
    -> dot with the weights, plus the bias: one logit.

`data/ngram_classifier.npz` holds `vocabulary` (the n-grams joined by newlines, which no
n-gram contains), `idf`, `weights`, `bias` and `meta` (JSON: the calibration and how the
weights were made, by `services/embedding/training/train.py`). Like the network, it
scores each window of a text and keeps the highest logit.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import repeat
from pathlib import Path
from typing import Any

import numpy as np

from mithril.services.embedding.calibration import Calibration

SHORTEST, LONGEST = 3, 5
"""The n-gram lengths."""


def char_ngrams(text: str) -> list[str]:
    """scikit-learn's `char_wb` n-grams of `text`, lengths SHORTEST to LONGEST."""
    grams: list[str] = []
    for word in text.lower().split():
        padded = f" {word} "
        size = len(padded)
        for n in range(SHORTEST, LONGEST + 1):
            if size <= n:  # a short word counts once, whole
                grams.append(padded)
                break
            grams += [padded[i : i + n] for i in range(size - n + 1)]
    return grams


class NgramModel:
    def __init__(
        self,
        vocabulary: list[str],
        idf: np.ndarray,
        weights: np.ndarray,
        bias: float,
        calibration: Calibration,
        meta: dict[str, Any],
    ) -> None:
        if not len(vocabulary) == len(idf) == len(weights):
            raise ValueError("vocabulary, idf and weights must have one entry per n-gram")
        self.index = {gram: i for i, gram in enumerate(vocabulary)}
        self.idf = np.asarray(idf, dtype=np.float64)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.bias = float(bias)
        self.calibration = calibration
        self.meta = meta

    @classmethod
    def from_file(cls, path: Path) -> NgramModel:
        with np.load(Path(path), allow_pickle=False) as data:
            meta: dict[str, Any] = json.loads(str(data["meta"]))
            return cls(
                str(data["vocabulary"]).split("\n"),
                data["idf"],
                data["weights"],
                float(data["bias"]),
                Calibration.from_dict(meta["calibration"]),
                meta,
            )

    def to_file(self, path: Path) -> None:
        vocabulary = sorted(self.index, key=self.index.__getitem__)
        np.savez_compressed(
            Path(path),
            vocabulary=np.array("\n".join(vocabulary)),
            idf=self.idf.astype(np.float32),
            weights=self.weights.astype(np.float32),
            bias=np.array(self.bias),
            meta=np.array(json.dumps(self.meta | {"calibration": self.calibration.to_dict()})),
        )

    def logit(self, text: str) -> float:
        counts = Counter(char_ngrams(text))
        # map() with two iterables calls index.get(gram, -1) without a Python frame
        columns = np.fromiter(
            map(self.index.get, counts, repeat(-1)), dtype=np.int64, count=len(counts)
        )
        known = columns >= 0
        if not known.any():
            return self.bias
        occurrences = np.fromiter(counts.values(), dtype=np.float64, count=len(counts))
        where = columns[known]
        values = (1.0 + np.log(occurrences[known])) * self.idf[where]
        return float(values @ self.weights[where] / np.linalg.norm(values) + self.bias)

    def logits(self, texts: list[str]) -> np.ndarray:
        return np.array([self.logit(text) for text in texts], dtype=np.float64)
