"""Coalesce texts from concurrent requests into shared encoder runs.

One run at a time (the ONNX session already uses every core it is given). Items that
arrive while a run is in progress wait for it and go together in the next run, up to
`max_items`; a lone item arriving at an idle encoder waits at most `max_wait_ms` for
company (0: it goes at once). Runs execute in a worker thread so the event loop keeps
serving while the model computes.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


class EncoderBatcher(Generic[Item, Result]):
    def __init__(
        self,
        run: Callable[[list[Item]], Sequence[Result]],
        *,
        max_items: int = 64,
        max_wait_ms: float = 0.0,
        executor: ThreadPoolExecutor | None = None,
    ) -> None:
        self._run = run
        self._max_items = max_items
        self._max_wait = max_wait_ms / 1000
        self._executor = executor or ThreadPoolExecutor(1, thread_name_prefix="encoder")
        self._waiting: deque[tuple[Item, asyncio.Future[Result]]] = deque()
        self._worker: asyncio.Task[None] | None = None
        self.runs = 0
        """How many encoder runs have happened (for tests and metrics)."""
        self.largest_run = 0

    async def submit_many(self, items: Sequence[Item]) -> list[Result]:
        loop = asyncio.get_running_loop()
        futures: list[asyncio.Future[Result]] = []
        for item in items:
            future: asyncio.Future[Result] = loop.create_future()
            self._waiting.append((item, future))
            futures.append(future)
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain())
        try:
            return list(await asyncio.gather(*futures))
        except BaseException:
            for future in futures:
                future.cancel()
            raise

    async def _drain(self) -> None:
        loop = asyncio.get_running_loop()
        first = True
        while self._waiting:
            if first and self._max_wait > 0 and len(self._waiting) < self._max_items:
                await asyncio.sleep(self._max_wait)
            first = False
            batch: list[tuple[Item, asyncio.Future[Result]]] = []
            while self._waiting and len(batch) < self._max_items:
                item, future = self._waiting.popleft()
                if not future.cancelled():
                    batch.append((item, future))
            if not batch:
                continue
            self.runs += 1
            self.largest_run = max(self.largest_run, len(batch))
            try:
                results = await loop.run_in_executor(
                    self._executor, self._run, [item for item, _ in batch]
                )
                if len(results) != len(batch):
                    raise RuntimeError(f"{len(batch)} items answered with {len(results)}")
            except Exception as error:  # every waiter learns what happened to its item
                for _, future in batch:
                    if not future.done():
                        future.set_exception(error)
            else:
                for (_, future), result in zip(batch, results, strict=True):
                    if not future.done():
                        future.set_result(result)

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
