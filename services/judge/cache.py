"""Single-flight coalescing of the judge's calls (its answer cache is
`mithril.runtime.cache.TTLCache`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

V = TypeVar("V")


class SingleFlight(Generic[V]):
    """Concurrent calls with the same key share one computation.

    The computation runs as its own task, so a caller that is cancelled (its deadline
    passed) neither cancels it for the others nor loses the result for the cache.
    """

    def __init__(self) -> None:
        self._inflight: dict[str, asyncio.Task[V]] = {}

    def __len__(self) -> int:
        return len(self._inflight)

    async def run(self, key: str, compute: Callable[[], Awaitable[V]]) -> tuple[V, bool]:
        """The computation's result, and whether this call joined one already running."""
        task = self._inflight.get(key)
        joined = task is not None
        if task is None:
            task = asyncio.ensure_future(compute())
            self._inflight[key] = task
            task.add_done_callback(lambda done: self._finished(key, done))
        return await asyncio.shield(task), joined

    def _finished(self, key: str, task: asyncio.Task[V]) -> None:
        if self._inflight.get(key) is task:
            del self._inflight[key]
        if not task.cancelled():
            task.exception()  # retrieved: no "exception was never retrieved" when unawaited
