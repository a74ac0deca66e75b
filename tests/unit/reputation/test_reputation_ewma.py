"""The update rule: asymmetric steps, bounds, neutral outcomes, and the closed form."""

from __future__ import annotations

import random

import pytest

from mithril.services.reputation.ewma import (
    EwmaParams,
    Outcome,
    initial,
    repeated,
    replay,
    update,
)

DEFAULT = EwmaParams()


@pytest.mark.parametrize(
    ("score", "outcome", "expected"),
    [
        (0.60, Outcome.GOOD, 0.60 + 0.10 * 0.40),
        (0.60, Outcome.BAD, 0.60 - 0.22 * 0.60),
        (0.30, Outcome.GOOD, 0.30 + 0.10 * 0.70),
        (0.30, Outcome.BAD, 0.30 * 0.78),
        (0.60, Outcome.NEUTRAL, 0.60),
        (0.06, Outcome.BAD, 0.05),  # 0.0468 is below the floor
        (0.989, Outcome.GOOD, 0.99),  # 0.9901 is above the ceiling
        (0.05, Outcome.BAD, 0.05),
        (0.99, Outcome.GOOD, 0.99),
    ],
)
def test_one_step(score: float, outcome: Outcome, expected: float) -> None:
    assert update(score, outcome, DEFAULT) == pytest.approx(expected, abs=1e-15)


def test_trust_is_lost_faster_than_it_is_earned() -> None:
    gained = update(0.5, Outcome.GOOD, DEFAULT) - 0.5
    lost = 0.5 - update(0.5, Outcome.BAD, DEFAULT)
    assert lost > 2 * gained
    # One bad outcome undoes more than two good ones from the same point.
    after = replay(0.5, [Outcome.GOOD, Outcome.GOOD, Outcome.BAD], DEFAULT)
    assert after < 0.5


def test_bounds_hold_for_any_sequence() -> None:
    rng = random.Random(7)
    score = initial(0.3, DEFAULT)
    for _ in range(2000):
        score = update(score, rng.choice(list(Outcome)), DEFAULT)
        assert DEFAULT.floor <= score <= DEFAULT.ceiling
    assert replay(0.9, [Outcome.BAD] * 100, DEFAULT) == DEFAULT.floor
    assert replay(0.1, [Outcome.GOOD] * 200, DEFAULT) == DEFAULT.ceiling


def test_rates_and_bounds_are_configurable() -> None:
    params = EwmaParams(good_rate=0.5, bad_rate=0.5, floor=0.2, ceiling=0.8)
    assert update(0.4, Outcome.GOOD, params) == pytest.approx(0.7)
    assert update(0.7, Outcome.GOOD, params) == 0.8
    assert update(0.3, Outcome.BAD, params) == 0.2


def test_initial_score_is_the_prior_inside_the_bounds() -> None:
    assert initial(0.6, DEFAULT) == 0.6
    assert initial(1.0, DEFAULT) == 0.99
    assert initial(0.0, DEFAULT) == 0.05


@pytest.mark.parametrize("outcome", list(Outcome))
@pytest.mark.parametrize("start", [0.05, 0.3, 0.6, 0.98])
@pytest.mark.parametrize("times", [0, 1, 7, 40, 100])
def test_closed_form_matches_one_at_a_time(outcome: Outcome, start: float, times: int) -> None:
    params = EwmaParams(good_rate=0.02, bad_rate=0.03)
    stepwise = replay(start, [outcome] * times, params)
    assert repeated(start, outcome, times, params) == pytest.approx(stepwise, rel=1e-12)


@pytest.mark.parametrize(
    "fields",
    [
        {"good_rate": 0.0},
        {"bad_rate": 1.5},
        {"floor": 0.5, "ceiling": 0.5},
        {"floor": -0.1},
        {"ceiling": 1.1},
    ],
)
def test_params_refuse_nonsense(fields: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        EwmaParams(**fields)
