"""`Reputation`: the store's calls as coroutines, run on a small thread pool of their own.

The database work blocks (and may wait on another writer's lock), so it never runs on the
event loop; a dedicated pool, as large as the connection pool, keeps it from starving (or
being starved by) anything else using the loop's default executor.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from mithril.services.reputation.config import ReputationSettings
from mithril.services.reputation.ewma import Outcome
from mithril.services.reputation.model import Page, ReputationChange, SourceReputation
from mithril.services.reputation.priors import load_priors
from mithril.services.reputation.store import ReputationStore

P = ParamSpec("P")
R = TypeVar("R")


class Reputation:
    """Per-source trust, async. Build with `from_settings`; `aclose()` when done."""

    def __init__(self, store: ReputationStore, threads: int = 8) -> None:
        self.store = store
        self._pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="reputation-db")

    @classmethod
    def from_settings(cls, settings: ReputationSettings) -> Reputation:
        """Loads the priors (PriorsError if unusable) and opens the store (creating its
        tables if needed)."""
        priors = load_priors(settings.priors_file, settings.default_prior)
        store = ReputationStore(
            settings.database_url, priors, settings.ewma, pool_size=settings.db_threads
        )
        return cls(store, settings.db_threads)

    async def _run(self, call: Callable[P, R], *args: P.args, **kwargs: P.kwargs) -> R:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, functools.partial(call, *args, **kwargs))

    async def get(self, source: str) -> SourceReputation:
        return await self._run(self.store.get, source)

    async def record(
        self, source: str, outcome: Outcome | str, reason: str = "", decision_id: str = ""
    ) -> SourceReputation:
        return await self._run(self.store.record, source, outcome, reason, decision_id)

    async def list(self, page_size: int = 0, page_token: str = "") -> Page[SourceReputation]:
        return await self._run(self.store.list, page_size, page_token)

    async def history(
        self, source: str, page_size: int = 0, page_token: str = ""
    ) -> Page[ReputationChange]:
        return await self._run(self.store.history, source, page_size, page_token)

    async def reset(self, source: str = "") -> int:
        return await self._run(self.store.reset, source)

    async def aclose(self) -> None:
        """Waits for calls in flight (each is one short transaction), then closes."""
        await asyncio.get_running_loop().run_in_executor(None, self._close)

    def _close(self) -> None:
        self._pool.shutdown(wait=True)
        self.store.close()
