"""Per-source trust: an asymmetric bounded EWMA per source, atomic under concurrency.

Public API: `Reputation` (the async library), `ReputationStore` (its blocking store),
`ReputationClient` and `ReputationUnavailable` (the service over gRPC), `Outcome`,
`EwmaParams`, `SourceReputation`, `ReputationChange`, `Page`, `ReputationArgumentError`,
`Priors`, `PriorsError`, `load_priors`, `canonical_source`, `ReputationSettings`.
"""

from .client import ReputationClient, ReputationUnavailable
from .config import ReputationSettings
from .ewma import EwmaParams, Outcome
from .model import Page, ReputationArgumentError, ReputationChange, SourceReputation
from .priors import Priors, PriorsError, canonical_source, load_priors
from .reputation import Reputation
from .store import ReputationStore

__all__ = [
    "EwmaParams",
    "Outcome",
    "Page",
    "Priors",
    "PriorsError",
    "Reputation",
    "ReputationArgumentError",
    "ReputationChange",
    "ReputationClient",
    "ReputationSettings",
    "ReputationStore",
    "ReputationUnavailable",
    "SourceReputation",
    "canonical_source",
    "load_priors",
]
