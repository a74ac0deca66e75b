"""The trust score and the gate, against values worked out by hand from the formula."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from mithril.services.memorygate.config import MemoryGateSettings
from mithril.services.memorygate.steps.reputation import Outcome, outcome_of
from mithril.services.memorygate.trust import Signals, Status, TrustModel

MODEL = TrustModel()
NOW = datetime(2026, 11, 30, tzinfo=UTC)
BEST = 0.40 + 0.25 * 0.3 + 0.05  # full reputation, three corroborations, brand new


def test_best_possible_claim_scores_one() -> None:
    assert MODEL.score(Signals(1.0, 0.3, 1.0, 0.0, 0.0)) == pytest.approx(1.0)


def test_score_is_the_weighted_sum_normalised_by_the_best_raw_score() -> None:
    signals = Signals(
        reputation=0.60, corroboration=0.1, freshness=0.5, contradiction=0.2, danger=0.1
    )
    raw = 0.60 * 0.40 + 0.1 * 0.25 + 0.5 * 0.05 - 0.2 * 0.40 - 0.1 * 0.35
    assert MODEL.score(signals) == pytest.approx(raw / BEST)


def test_score_is_clamped_to_zero_and_one() -> None:
    assert MODEL.score(Signals(0.05, 0.0, 0.0, 1.0, 1.0)) == 0.0
    assert MODEL.score(Signals(5.0, 0.3, 1.0, 0.0, 0.0)) == 1.0


@pytest.mark.parametrize(
    ("aligned", "expected"), [(0, 0.0), (1, 0.0), (2, 0.1), (3, 0.2), (4, 0.3), (9, 0.3)]
)
def test_each_aligned_chunk_beyond_the_first_corroborates_up_to_three(
    aligned: int, expected: float
) -> None:
    assert MODEL.corroboration(aligned) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("age_days", "expected"), [(0, 1.0), (45, 0.5), (90, 0.0), (400, 0.0), (-3, 1.0)]
)
def test_freshness_falls_linearly_over_ninety_days(age_days: float, expected: float) -> None:
    assert MODEL.freshness(NOW - timedelta(days=age_days), NOW) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("score", "status"),
    [
        (1.0, Status.ACCEPT),
        (0.85, Status.ACCEPT),
        (0.8499, Status.WARN),
        (0.60, Status.WARN),
        (0.5999, Status.REVIEW),
        (0.40, Status.REVIEW),
        (0.3999, Status.QUARANTINE),
        (0.20, Status.QUARANTINE),
        (0.1999, Status.REJECT),
        (0.0, Status.REJECT),
    ],
)
def test_gate_thresholds(score: float, status: Status) -> None:
    assert MODEL.gate(score) is status


def test_default_priors_land_where_the_design_expects() -> None:
    """A fresh claim with no corroboration and nothing against it, per default prior."""

    def fresh(reputation: float) -> Status:
        return MODEL.gate(MODEL.score(Signals(reputation, 0.0, 1.0, 0.0, 0.0)))

    assert fresh(0.98) is Status.WARN  # (0.392 + 0.05) / 0.525 = 0.842
    assert fresh(0.60) is Status.REVIEW
    assert fresh(0.30) is Status.QUARANTINE
    # One corroborating chunk lifts the security policy's claim to accept.
    assert MODEL.gate(MODEL.score(Signals(0.98, 0.1, 1.0, 0.0, 0.0))) is Status.ACCEPT


def test_model_follows_settings() -> None:
    settings = MemoryGateSettings(weight_danger=0.9, accept_at=0.9, warn_at=0.7)
    model = TrustModel.from_settings(settings)
    assert model.weight_danger == 0.9
    assert model.gate(0.89) is Status.WARN


def test_thresholds_must_descend() -> None:
    with pytest.raises(ValueError, match="descend"):
        MemoryGateSettings(accept_at=0.5, warn_at=0.6)


@pytest.mark.parametrize(
    ("status", "credential", "contradicted", "outcome"),
    [
        (Status.ACCEPT, False, False, Outcome.GOOD),
        (Status.WARN, False, False, Outcome.GOOD),
        (Status.REVIEW, False, False, Outcome.NEUTRAL),
        (Status.QUARANTINE, False, False, Outcome.BAD),
        (Status.REJECT, False, False, Outcome.BAD),
        (Status.ACCEPT, True, False, Outcome.BAD),
        (Status.REVIEW, False, True, Outcome.BAD),
    ],
)
def test_outcome_follows_the_decision_and_credentials_or_contradictions_are_bad(
    status: Status, credential: bool, contradicted: bool, outcome: Outcome
) -> None:
    got, _ = outcome_of(status, planted_credential=credential, contradicted=contradicted)
    assert got is outcome
