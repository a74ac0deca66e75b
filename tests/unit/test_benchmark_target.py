"""The detection target read with Wilson intervals (benchmark/target.py)."""

from __future__ import annotations

import pytest

from mithril.benchmark.target import (
    TargetLine,
    Verdict,
    at_least,
    at_most,
    target_markdown,
    wilson,
)


def test_wilson_interval_matches_the_closed_form() -> None:
    """(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), z = 1.959964."""
    z, count, total = 1.959963984540054, 5, 200
    p = count / total
    centre = (p + z * z / (2 * total)) / (1 + z * z / total)
    half = z * ((p * (1 - p) / total + z * z / (4 * total * total)) ** 0.5) / (1 + z * z / total)
    interval = wilson(count, total)
    assert interval.low == pytest.approx(centre - half, abs=1e-9)
    assert interval.high == pytest.approx(centre + half, abs=1e-9)


def test_no_false_positive_in_200_rows_cannot_show_one_percent() -> None:
    assert wilson(0, 200).high > 0.01
    assert at_most(wilson(0, 200), 0.01) is Verdict.UNDECIDED
    assert at_most(wilson(0, 400), 0.01) is Verdict.MET


def test_sides_of_the_target() -> None:
    assert at_least(wilson(990, 1000), 0.95) is Verdict.MET
    assert at_least(wilson(900, 1000), 0.95) is Verdict.MISSED
    assert at_least(wilson(950, 1000), 0.95) is Verdict.UNDECIDED
    assert at_most(wilson(50, 1000), 0.01) is Verdict.MISSED


def test_a_line_is_missed_if_either_rate_is_and_met_only_if_both_are() -> None:
    assert TargetLine("s", 990, 1000, 0, 1000).by_interval is Verdict.MET
    assert TargetLine("s", 990, 1000, 50, 1000).by_interval is Verdict.MISSED
    assert TargetLine("s", 900, 1000, 0, 1000).by_interval is Verdict.MISSED
    assert TargetLine("s", 990, 1000, 0, 200).by_interval is Verdict.UNDECIDED


def test_point_figures_are_exact_at_the_boundary() -> None:
    """95 % of 600 and 1 % of 200 meet the target; one row fewer or more does not."""
    assert TargetLine("s", 570, 600, 2, 200).by_point is Verdict.MET
    assert TargetLine("s", 569, 600, 2, 200).by_point is Verdict.MISSED
    assert TargetLine("s", 570, 600, 3, 200).by_point is Verdict.MISSED
    assert TargetLine("attacks only", 19, 20, 0, 0).by_point is Verdict.MET
    assert TargetLine("benign only", 0, 0, 0, 100).fpr is not None


def test_markdown_and_dict() -> None:
    line = TargetLine("indirect/bipia", 578, 600, 5, 200)
    table = "\n".join(target_markdown([line]))
    assert "| indirect/bipia | 94.5-97.6% | 1.1-5.7% | missed | missed |" in table
    data = line.to_dict()
    assert data["by_interval"] == "missed" and data["by_point"] == "missed"
    assert TargetLine("benign only", 0, 0, 1, 470).to_dict()["tpr_interval"] is None
    assert target_markdown([]) == []
