"""The reputation update rule: an asymmetric, bounded exponentially weighted moving average.

A good outcome moves the score a small step towards 1, a bad one a larger step towards 0,
so trust is earned slowly and lost fast; the result is clamped to [floor, ceiling] so no
source is ever trusted blindly or written off for good. Pure functions, no I/O.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass


class Outcome(enum.StrEnum):
    """What a source's contribution turned out to be."""

    GOOD = "good"
    BAD = "bad"
    NEUTRAL = "neutral"
    """Sent to review: recorded, but the score does not move."""


@dataclass(frozen=True, slots=True)
class EwmaParams:
    good_rate: float = 0.10
    bad_rate: float = 0.22
    floor: float = 0.05
    ceiling: float = 0.99

    def __post_init__(self) -> None:
        for name in ("good_rate", "bad_rate"):
            rate = getattr(self, name)
            if not 0.0 < rate <= 1.0:
                raise ValueError(f"{name} must be in (0, 1], not {rate}")
        if not 0.0 <= self.floor < self.ceiling <= 1.0:
            raise ValueError(
                f"need 0 <= floor < ceiling <= 1, not floor={self.floor} ceiling={self.ceiling}"
            )

    def clamp(self, score: float) -> float:
        return min(self.ceiling, max(self.floor, score))


def initial(prior: float, params: EwmaParams) -> float:
    """The score a source starts from: its prior, inside the bounds."""
    return params.clamp(prior)


def update(score: float, outcome: Outcome, params: EwmaParams) -> float:
    """The score after one outcome."""
    if outcome is Outcome.GOOD:
        return params.clamp(score + params.good_rate * (1.0 - score))
    if outcome is Outcome.BAD:
        return params.clamp(score + params.bad_rate * (0.0 - score))
    return score


def replay(start: float, outcomes: Iterable[Outcome], params: EwmaParams) -> float:
    """The score after applying `outcomes` in order to `start`, one at a time."""
    score = start
    for outcome in outcomes:
        score = update(score, outcome, params)
    return score


def repeated(start: float, outcome: Outcome, times: int, params: EwmaParams) -> float:
    """Closed form of `times` identical outcomes from `start` (equal to `replay` up to
    rounding) for a `start` inside the bounds: the distance to the target shrinks by
    (1 - rate) each step, and since the score moves monotonically, clamping once at the end
    is the same as clamping each step."""
    if outcome is Outcome.GOOD:
        return params.clamp(1.0 - (1.0 - start) * (1.0 - params.good_rate) ** times)
    if outcome is Outcome.BAD:
        return params.clamp(start * (1.0 - params.bad_rate) ** times)
    return start
