"""What can go wrong in the gate, as exceptions the servicer maps to google.rpc statuses."""

from __future__ import annotations


class DependencyUnavailable(Exception):
    """A service the gate cannot decide without (secrets, scanner, reputation) did not
    answer: the gate fails closed and writes nothing."""

    def __init__(self, service: str, detail: str) -> None:
        super().__init__(f"{service} service unavailable: {detail}")
        self.service = service
        self.detail = detail


class MemoryWriteFailed(Exception):
    """Cognee refused or failed the write; the audit row says so and nothing was stored."""


class HeldClaimNotFound(KeyError):
    pass


class ReviewConflict(Exception):
    """The held claim was reviewed already, or another review of it is in flight."""
