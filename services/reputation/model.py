"""The reputation service's domain types, shared by the library, the servicer and the client."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from mithril.services.reputation.ewma import Outcome

T = TypeVar("T")

MAX_SOURCE_CHARS = 200
"""Longest source name accepted, after canonicalisation."""
MAX_REASON_CHARS = 500
"""Longer reasons are cut (they are free text for people, not keys)."""
MAX_DECISION_ID_CHARS = 128
"""Longest decision id accepted (an identifier is refused rather than cut)."""
RESET_REASON = "reset"


class ReputationArgumentError(ValueError):
    """A caller's argument cannot be used; `field` names it (the proto field's name)."""

    def __init__(self, field: str, description: str) -> None:
        super().__init__(f"{field}: {description}")
        self.field = field
        self.description = description


def parse_outcome(value: Outcome | str) -> Outcome:
    """An Outcome from itself or its name ("good", "bad", "neutral")."""
    try:
        return Outcome(value)
    except ValueError:
        choices = ", ".join(o.value for o in Outcome)
        raise ReputationArgumentError("outcome", f"must be one of {choices}") from None


@dataclass(frozen=True, slots=True)
class SourceReputation:
    """One source's trust. Behaves as its score where a float is wanted: `float(rep)`."""

    source: str
    """The display name (as first seen, or as spelled in the priors file)."""
    score: float
    prior: float
    update_time: datetime | None
    """When an outcome or reset last applied to the score; None for a source never seen."""
    good_count: int = 0
    bad_count: int = 0

    def __float__(self) -> float:
        return self.score


@dataclass(frozen=True, slots=True)
class ReputationChange:
    """One recorded change. `outcome` is None for a reset."""

    source: str
    old_score: float
    new_score: float
    outcome: Outcome | None
    reason: str
    decision_id: str
    create_time: datetime


@dataclass(frozen=True, slots=True)
class Page(Generic[T]):
    items: Sequence[T]
    next_page_token: str = ""
    """Empty on the last page."""
