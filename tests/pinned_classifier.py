"""Pin the English classifier's probability of chosen texts, and the multilingual head's
English operating point, for tests of what the tiers do with a probability in a band (the
second opinion's): where a real text falls near a threshold depends on the CPU (the int8
vectors), so such a test sets it, and every model's reading stays real."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.classifier import Classifier, ClassifierResult
from mithril.services.embedding.encoder import Windows
from mithril.services.embedding.multilingual import EnglishOpinion, Multilingual


def pin_probabilities(
    classifier: Classifier,
    pinned: dict[str, float],
    monkeypatch: pytest.MonkeyPatch,
    documents: dict[str, float] | None = None,
) -> None:
    """`classifier.classify` answers `pinned[text]` for those texts, as before for others:
    for prompts, and for documents too unless `documents` pins theirs apart (the combiner's
    reading below the attack encoder's own)."""
    classify = classifier.classify
    for_documents = pinned if documents is None else documents

    def pinned_classify(
        windows: Windows, texts: list[str], similarity: np.ndarray | None = None
    ) -> list[ClassifierResult]:
        return [
            replace(
                result,
                probability=pinned.get(text, result.probability),
                document_probability=for_documents.get(text, result.document_probability),
            )
            for result, text in zip(classify(windows, texts, similarity), texts, strict=True)
        ]

    monkeypatch.setattr(classifier, "classify", pinned_classify)


def pin_opinion_between(
    multilingual: Multilingual, attack: str, benign: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set the head's English operating point halfway between its real readings of
    `attack` and `benign` (which it must read in that order), steep enough that the first
    gets at least 0.9 and the second at most 0.1: the fine-tuned head's English attacks sit
    in a narrow band of logits just around its shipped point, where a text's side depends on
    the CPU, as the classifier's does near its threshold."""
    opinion = multilingual.english_opinion
    assert opinion is not None, "the head has no English operating point"
    high, low = multilingual.head.logits(multilingual.encoder.encode([attack, benign]))
    assert high > low, "the head reads the benign text as the likelier attack"
    middle = (float(high) + float(low)) / 2
    slope = 2 * float(np.log(9)) / (float(high) - float(low))  # 0.9 and 0.1 at the readings
    pinned = EnglishOpinion(Calibration(middle, slope), opinion.doubt_from)
    monkeypatch.setattr(multilingual, "english_opinion", pinned)
