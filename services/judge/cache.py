"""The judge's answer cache (LRU with a time to live) and single-flight coalescing.

Keys are sha256 digests of length-prefixed parts (kind, model, prompt version, texts), so
the cache never holds the texts themselves and no two different inputs share a key.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Generic, TypeVar

V = TypeVar("V")

Clock = Callable[[], float]


def cache_key(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()


class TTLCache(Generic[V]):
    """At most `size` entries, each for `ttl` seconds; the least recently used goes first.

    Used from one event loop only (no awaits inside), so it needs no lock.
    """

    def __init__(self, size: int, ttl: float, clock: Clock = time.monotonic) -> None:
        self.size = size
        self.ttl = ttl
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, V]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: str) -> V | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        expires, value = entry
        if self._clock() >= expires:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return value

    def put(self, key: str, value: V) -> None:
        if self.size <= 0:
            return
        self._entries[key] = (self._clock() + self.ttl, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        self._entries.clear()


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
