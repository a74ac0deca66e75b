"""A small LRU cache with a time to live, keyed by digests (the judge's answers, the
embedding tiers' recent scores).

Keys are sha256 digests of length-prefixed parts (`cache_key`), so a cache never holds the
texts themselves and no two different inputs share a key.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Callable
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

    Not thread-safe: use it from one event loop (no awaits inside) or one thread.
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
