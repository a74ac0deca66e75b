"""Coalesce concurrent single calls into batch calls, without adding latency.

No timer: while a batch is in flight, new items wait; when a slot frees up, everything
waiting (up to the limits) goes as the next batch. At concurrency 1 every item goes alone
and at once; at concurrency 64 one gRPC hop carries many scans, which is where the
per-call cost of a hop (~0.5 ms of CPU on each side here) stops dominating.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class MicroBatcher(Generic[Item, Result]):
    def __init__(
        self,
        send: Callable[[list[Item]], Awaitable[Sequence[Result]]],
        *,
        max_items: int = 64,
        max_weight: int = 1_048_576,
        weight: Callable[[Item], int] = lambda _: 1,
        max_in_flight: int = 2,
    ) -> None:
        self._send = send
        self._max_items = max_items
        self._max_weight = max_weight
        self._weight = weight
        self._max_in_flight = max_in_flight
        self._waiting: deque[tuple[Item, asyncio.Future[Result]]] = deque()
        self._in_flight = 0
        self._tasks: set[asyncio.Task[None]] = set()

    async def submit(self, item: Item) -> Result:
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, future))
        self._dispatch()
        return await future

    def _next_batch(self) -> list[tuple[Item, asyncio.Future[Result]]]:
        batch: list[tuple[Item, asyncio.Future[Result]]] = []
        weight = 0
        while self._waiting and len(batch) < self._max_items:
            item, future = self._waiting[0]
            if future.cancelled():
                self._waiting.popleft()
                continue
            item_weight = self._weight(item)
            if batch and weight + item_weight > self._max_weight:
                break
            batch.append(self._waiting.popleft())
            weight += item_weight
        return batch

    def _dispatch(self) -> None:
        while self._waiting and self._in_flight < self._max_in_flight:
            batch = self._next_batch()
            if not batch:
                return
            self._in_flight += 1
            task = asyncio.get_running_loop().create_task(self._run(batch))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            results = await self._send([item for item, _ in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"batch of {len(batch)} answered with {len(results)} results")
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except Exception as error:  # every waiter learns what happened to its item
            for _, future in batch:
                if not future.done():
                    future.set_exception(error)
        else:
            for (_, future), result in zip(batch, results, strict=True):
                if not future.done():
                    future.set_result(result)
        finally:
            self._in_flight -= 1
            self._dispatch()
