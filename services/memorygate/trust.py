"""The trust score and the gate: pure arithmetic over the signals, no I/O.

    raw = rep*w_rep + corroboration*w_cor + freshness*w_fresh
          - contradiction*w_con - danger*w_dan

normalised by the best raw score a claim can reach (full reputation, full corroboration,
brand new, no contradiction, no danger) and clamped to [0, 1]. Corroboration is a sum of
`corroboration_step` per aligned verified chunk beyond the first, at most
`corroboration_max_chunks` of them (0.1 x 3 by default); freshness falls linearly from 1
to 0 over `freshness_days`, so with w_fresh = 0.05 its contribution falls from 0.05 to 0.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from datetime import datetime

from mithril.services.memorygate.config import MemoryGateSettings


class Status(enum.StrEnum):
    ACCEPT = "accept"
    WARN = "warn"
    REVIEW = "review"
    QUARANTINE = "quarantine"
    REJECT = "reject"

    @property
    def stored(self) -> bool:
        """Accept and warn go to verified memory; the rest are held."""
        return self in (Status.ACCEPT, Status.WARN)


@dataclass(frozen=True, slots=True)
class Signals:
    reputation: float
    corroboration: float
    freshness: float
    contradiction: float
    danger: float


@dataclass(frozen=True, slots=True)
class TrustModel:
    """Weights, the corroboration and freshness rules and the gate's thresholds."""

    weight_reputation: float = 0.40
    weight_corroboration: float = 0.25
    weight_freshness: float = 0.05
    weight_contradiction: float = 0.40
    weight_danger: float = 0.35
    corroboration_step: float = 0.1
    corroboration_max_chunks: int = 3
    freshness_days: float = 90.0
    accept_at: float = 0.85
    warn_at: float = 0.60
    review_at: float = 0.40
    quarantine_at: float = 0.20

    @classmethod
    def from_settings(cls, settings: MemoryGateSettings) -> TrustModel:
        return cls(**{name: getattr(settings, name) for name in cls.__dataclass_fields__})

    @property
    def weights(self) -> dict[str, float]:
        return {
            "reputation": self.weight_reputation,
            "corroboration": self.weight_corroboration,
            "freshness": self.weight_freshness,
            "contradiction": -self.weight_contradiction,
            "danger": -self.weight_danger,
        }

    @property
    def max_corroboration(self) -> float:
        return self.corroboration_step * self.corroboration_max_chunks

    def corroboration(self, aligned_chunks: int) -> float:
        """The first aligned chunk is the claim's own topic; each one after it corroborates."""
        beyond_first = max(0, aligned_chunks - 1)
        return self.corroboration_step * min(beyond_first, self.corroboration_max_chunks)

    def freshness(self, observed: datetime, now: datetime) -> float:
        """1 for a claim observed now (or in the future), falling to 0 at `freshness_days`."""
        age_days = max(0.0, (now - observed).total_seconds() / 86_400)
        return max(0.0, 1.0 - age_days / self.freshness_days)

    def score(self, signals: Signals) -> float:
        raw = (
            signals.reputation * self.weight_reputation
            + signals.corroboration * self.weight_corroboration
            + signals.freshness * self.weight_freshness
            - signals.contradiction * self.weight_contradiction
            - signals.danger * self.weight_danger
        )
        best = (
            self.weight_reputation
            + self.max_corroboration * self.weight_corroboration
            + self.weight_freshness
        )
        if best <= 0:
            return 0.0
        return min(1.0, max(0.0, raw / best))

    def gate(self, trust_score: float) -> Status:
        if trust_score >= self.accept_at:
            return Status.ACCEPT
        if trust_score >= self.warn_at:
            return Status.WARN
        if trust_score >= self.review_at:
            return Status.REVIEW
        if trust_score >= self.quarantine_at:
            return Status.QUARANTINE
        return Status.REJECT
