"""How the n-gram part's line probability is chosen (training/lines.py), and that the
shipped one is the one its report chose."""

from __future__ import annotations

import re

import numpy as np
import pytest

from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.config import DATA_DIR, NGRAM_LINE_PROBABILITY
from mithril.services.embedding.training.lines import CANDIDATES, choose


def test_the_lowest_candidate_above_every_clean_context_is_chosen() -> None:
    assert choose([0.0, 0.2, 0.754, 0.548]) == 0.8
    assert choose([0.0, 0.1]) == 0.5
    assert choose([0.8]) == 0.9  # reaching the threshold flags, so it must lie above


def test_no_candidate_above_the_clean_contexts_is_an_error() -> None:
    with pytest.raises(ValueError, match="no candidate"):
        choose([0.995])


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
