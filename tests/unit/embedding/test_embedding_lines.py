"""How the n-gram part's line probability is chosen (training/lines.py), and that the
shipped one is the one its report chose."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.config import DATA_DIR, NGRAM_LINE_PROBABILITY
from mithril.services.embedding.training.lines import CANDIDATES, choose


def test_among_few_documents_the_lowest_candidate_above_every_one_is_chosen() -> None:
    assert choose([0.0, 0.2, 0.754, 0.548]) == 0.8
    assert choose([0.0, 0.1]) == 0.5
    assert choose([0.8]) == 0.9  # reaching the threshold flags, so it must lie above


def test_no_candidate_above_the_clean_contexts_is_an_error() -> None:
    with pytest.raises(ValueError, match="every candidate flags more than 0"):
        choose([0.995])


def test_among_thousands_of_documents_a_tenth_of_a_percent_may_reach_it() -> None:
    clean = [0.1] * 1997 + [0.999, 0.905, 0.903]
    assert choose(clean) == 0.95  # 1 of 2,000 reaches 0.95; at 0.9, 3 of 2,000 (allowed: 2)
    assert choose(clean + [0.1] * 1000) == 0.5  # 3 of 3,000 reach even 0.5 (allowed: 3)


def test_the_shipped_line_probability_is_the_one_the_report_chose() -> None:
    report = (DATA_DIR / "line_threshold_report.md").read_text(encoding="utf-8")
    chosen = re.findall(r"^\| ([0-9.]+) \(chosen\) \|", report, flags=re.MULTILINE)
    assert chosen == [str(NGRAM_LINE_PROBABILITY)]
    assert NGRAM_LINE_PROBABILITY in CANDIDATES


@pytest.mark.parametrize("probability", [0.5, 0.8, 0.99])
def test_raw_at_inverts_the_calibration(probability: float) -> None:
    calibration = Calibration(threshold=3.1, slope=5.9)
    raw = calibration.raw_at(probability)
    assert calibration.probability(np.array([raw]))[0] == pytest.approx(probability)
    with pytest.raises(ValueError, match="strictly between"):
        calibration.raw_at(1.0)
