"""Pin the English classifier's probability of chosen texts, for tests of what the tiers do
with a probability in a band (the second opinion's): where a real text falls near the
classifier's threshold depends on the CPU (the int8 vectors), so such a test sets it, and
every other model involved stays real."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mithril.services.embedding.classifier import Classifier, ClassifierResult
from mithril.services.embedding.encoder import Windows


def pin_probabilities(
    classifier: Classifier, pinned: dict[str, float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`classifier.classify` answers `pinned[text]` for those texts, as before for others."""
    classify = classifier.classify

    def pinned_classify(
        windows: Windows, texts: list[str], similarity: np.ndarray | None = None
    ) -> list[ClassifierResult]:
        return [
            replace(result, probability=pinned.get(text, result.probability))
            for result, text in zip(classify(windows, texts, similarity), texts, strict=True)
        ]

    monkeypatch.setattr(classifier, "classify", pinned_classify)
