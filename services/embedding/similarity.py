"""Nearest-neighbour similarity of texts to the attack corpus.

A text's raw score is its highest cosine similarity to any corpus entry over all of its
windows; `Calibration` turns that into a probability (0.5 at the operating point).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.corpus import Corpus, CorpusEntry
from mithril.services.embedding.encoder import Windows


@dataclass(frozen=True, slots=True)
class Neighbor:
    entry: CorpusEntry
    similarity: float


@dataclass(frozen=True, slots=True)
class SimilarityResult:
    raw: float
    """The highest cosine similarity to the corpus, -1 to 1."""
    score: float
    """Calibrated probability that the text is an attack."""
    neighbors: tuple[Neighbor, ...]


class SimilarityIndex:
    def __init__(self, corpus: Corpus, matrix: np.ndarray, calibration: Calibration) -> None:
        if len(corpus) and matrix.shape[0] != len(corpus):
            raise ValueError(f"{matrix.shape[0]} vectors for {len(corpus)} corpus entries")
        self.corpus = corpus
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        self.calibration = calibration

    def __len__(self) -> int:
        return len(self.corpus)

    def search(self, windows: Windows, count: int, top_k: int) -> list[SimilarityResult]:
        """One result per text (`count` texts), `top_k` neighbours each, closest first."""
        if not len(self.corpus):
            return [SimilarityResult(-1.0, 0.0, ()) for _ in range(count)]
        sims = windows.vectors @ self.matrix.T  # (windows, entries)
        best = np.full((count, sims.shape[1]), -np.inf, dtype=np.float32)
        np.maximum.at(best, windows.owner, sims)
        k = min(top_k, best.shape[1])
        top = np.argpartition(-best, k - 1, axis=1)[:, :k]
        raws = best.max(axis=1)
        scores = self.calibration.probability(raws)
        results: list[SimilarityResult] = []
        for row in range(count):
            order = top[row][np.argsort(-best[row, top[row]], kind="stable")]
            neighbors = tuple(Neighbor(self.corpus.entries[i], float(best[row, i])) for i in order)
            results.append(SimilarityResult(float(raws[row]), float(scores[row]), neighbors))
        return results
