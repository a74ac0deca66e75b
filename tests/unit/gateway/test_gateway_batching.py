"""MicroBatcher: concurrent calls share batches; a lone call goes alone and at once."""

from __future__ import annotations

import asyncio

import pytest

from mithril.gateway.batching import MicroBatcher


class Recorder:
    def __init__(self, delay: float = 0.01, fail: bool = False) -> None:
        self.batches: list[list[str]] = []
        self.delay = delay
        self.fail = fail

    async def __call__(self, items: list[str]) -> list[str]:
        self.batches.append(list(items))
        await asyncio.sleep(self.delay)
        if self.fail:
            raise ConnectionError("down")
        return [item.upper() for item in items]


async def test_lone_calls_are_not_batched() -> None:
    send = Recorder()
    batcher = MicroBatcher(send, max_in_flight=1)
    assert await batcher.submit("a") == "A"
    assert await batcher.submit("b") == "B"
    assert send.batches == [["a"], ["b"]]


async def test_concurrent_calls_share_batches_and_keep_their_results() -> None:
    send = Recorder()
    batcher = MicroBatcher(send, max_items=8, max_in_flight=1)
    items = [f"x{i}" for i in range(20)]
    results = await asyncio.gather(*(batcher.submit(item) for item in items))
    assert results == [item.upper() for item in items]
    assert send.batches[0] == ["x0"]  # the first goes at once
    assert max(len(batch) for batch in send.batches) == 8
    assert sorted(item for batch in send.batches for item in batch) == sorted(items)


async def test_weight_limit_splits_batches() -> None:
    send = Recorder()
    batcher = MicroBatcher(send, max_weight=10, weight=len, max_in_flight=1)
    await asyncio.gather(*(batcher.submit("abcd") for _ in range(7)))
    assert all(sum(map(len, batch)) <= 10 for batch in send.batches)


async def test_oversized_item_still_goes_alone() -> None:
    send = Recorder()
    batcher = MicroBatcher(send, max_weight=3, weight=len)
    assert await batcher.submit("abcdef") == "ABCDEF"


async def test_a_failed_batch_fails_every_waiter() -> None:
    batcher = MicroBatcher(Recorder(fail=True), max_in_flight=1)
    results = await asyncio.gather(*(batcher.submit("a") for _ in range(5)), return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)


async def test_cancelled_waiter_does_not_block_others() -> None:
    send = Recorder(delay=0.05)
    batcher = MicroBatcher(send, max_in_flight=1)
    first = asyncio.create_task(batcher.submit("first"))
    await asyncio.sleep(0)
    doomed = asyncio.create_task(batcher.submit("doomed"))
    survivor = asyncio.create_task(batcher.submit("survivor"))
    await asyncio.sleep(0)
    doomed.cancel()
    assert await survivor == "SURVIVOR" and await first == "FIRST"
    with pytest.raises(asyncio.CancelledError):
        await doomed
    assert ["doomed"] not in send.batches and all("doomed" not in b for b in send.batches)
