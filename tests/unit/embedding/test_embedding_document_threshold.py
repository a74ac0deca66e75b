"""The document threshold is the lowest candidate holding every benign document source at
MAX_FPR, counted as the gateway scores findings (training/document_threshold.py)."""

from __future__ import annotations

import json

import pytest

from mithril.domain import Finding, Severity
from mithril.services.embedding.config import DATA_DIR
from mithril.services.embedding.training.document_threshold import (
    CANDIDATES,
    MAX_FPR,
    REPORT,
    Scanned,
    choose,
    counts_at,
)


def classifier(probability: float) -> Finding:
    return Finding(
        "embedding.classifier", "classifier", "learned", Severity.MEDIUM, probability, ""
    )


def rule(confidence: float) -> Finding:
    return Finding("indirect.x", "scanner", "indirect", Severity.HIGH, confidence, "")


def benign(source: str, count: int, *probabilities: float) -> list[Scanned]:
    """`count` rows of `source`, the first ones with a classifier finding at `probabilities`."""
    found = [(classifier(p),) for p in probabilities]
    return [Scanned(source, 0, found[i] if i < len(found) else ()) for i in range(count)]


def test_the_lowest_threshold_holding_every_source_at_max_fpr_is_chosen() -> None:
    # 200 README rows: 1 % is 2 rows; three score 0.53, 0.55 and 0.58: 0.54 leaves two.
    rows = benign("readmes", 200, 0.53, 0.55, 0.58) + benign("docstrings", 200, 0.52)
    assert choose(rows) == 0.54
    assert counts_at(rows, 0.54)["readmes"].flagged == 2
    assert counts_at(rows, 0.53)["readmes"].flagged == 3
    assert counts_at(rows, 0.54)["docstrings"].flagged == 0


def test_a_source_already_within_bounds_keeps_the_prompts_threshold() -> None:
    assert choose(benign("readmes", 100, 0.9)) == 0.5


def test_attacks_are_counted_not_chosen_on() -> None:
    rows = [*benign("readmes", 100), Scanned("bipia", 1, (classifier(0.52),))]
    assert choose(rows) == 0.5
    assert counts_at(rows, 0.6)["bipia"].caught == 0
    assert counts_at(rows, 0.5)["bipia"].caught == 1


def test_a_rule_finding_is_not_rescaled() -> None:
    rows = [*benign("readmes", 10), Scanned("readmes", 0, (rule(0.7), classifier(0.6)))]
    assert counts_at(rows, 0.9)["readmes"].flagged == 1


def test_no_candidate_is_an_error() -> None:
    with pytest.raises(ValueError, match="no threshold"):
        choose(benign("readmes", 10, 0.99), candidates=(0.5, 0.6))


def test_the_shipped_report_suggests_a_candidate_that_holds_what_it_says() -> None:
    report = json.loads((DATA_DIR / REPORT).read_text())
    suggested = report["threshold"]
    assert suggested in CANDIDATES
    by_threshold = report["by_threshold"]
    assert list(by_threshold) == [f"{t:.2f}" for t in CANDIDATES if t <= suggested]
    for at, table in by_threshold.items():
        fprs = [c["flagged"] / c["benign"] for c in table.values() if c["benign"]]
        # The suggestion is the first candidate holding every benign source at MAX_FPR.
        assert all(fpr <= MAX_FPR for fpr in fprs) == (float(at) == suggested)
