"""EventLog: batching off the event loop, flush on close, overflow and failures counted."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from prometheus_client import REGISTRY

from mithril.gateway.events import EventLog, EventRecord, EventStore


class FakeStore:
    """Records batches; optionally slow (blocks until released) or failing."""

    def __init__(self, fail_times: int = 0) -> None:
        self.batches: list[list[str]] = []
        self.threads: set[int] = set()
        self.release = threading.Event()
        self.release.set()
        self.entered = threading.Event()
        self.fail_times = fail_times
        self.calls = 0

    def write_batch(self, records: Sequence[EventRecord]) -> int:
        self.calls += 1
        self.threads.add(threading.get_ident())
        self.entered.set()
        assert self.release.wait(10)
        if self.calls <= self.fail_times:
            raise ConnectionError("database unreachable")
        self.batches.append([r.decision_id for r in records])
        return len(records)

    @property
    def ids(self) -> list[str]:
        return [i for batch in self.batches for i in batch]


def _metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def _started_log_with(
    count: int, make_event: Callable[[], EventRecord], **options: Any
) -> tuple[FakeStore, EventLog, list[EventRecord]]:
    """A started log over a FakeStore, with `count` fresh events recorded."""
    store = FakeStore()
    log = EventLog(store, **options)  # type: ignore[arg-type]
    await log.start()
    events = [make_event() for _ in range(count)]
    for event in events:
        log.record(event)
    return store, log, events


async def test_batches_are_written_off_the_loop_thread(make_event) -> None:  # type: ignore[no-untyped-def]
    store = FakeStore()
    log = EventLog(store, batch_size=10, flush_interval=0.05)  # type: ignore[arg-type]
    await log.start()
    events = [make_event() for _ in range(25)]
    assert all(log.record(e) for e in events)
    await log.flush()
    assert store.ids == [e.decision_id for e in events]
    assert all(len(batch) <= 10 for batch in store.batches)
    assert threading.get_ident() not in store.threads
    assert (log.written, log.dropped, log.queue_depth) == (25, 0, 0)
    await log.close()


async def test_a_few_events_are_written_within_the_flush_interval(make_event) -> None:  # type: ignore[no-untyped-def]
    store = FakeStore()
    log = EventLog(store, batch_size=100, flush_interval=0.05)  # type: ignore[arg-type]
    await log.start()
    log.record(make_event())
    for _ in range(100):
        if store.ids:
            break
        await asyncio.sleep(0.01)
    assert len(store.ids) == 1
    await log.close()


async def test_a_busy_log_writes_full_batches_and_leaves_the_rest_for_later(make_event) -> None:  # type: ignore[no-untyped-def]
    """Under load the writer takes whole batches only; a remainder waits for the batch to
    fill or the interval to pass, rather than going out at once as a small batch."""
    store, log, events = await _started_log_with(25, make_event, batch_size=10, flush_interval=30)
    for _ in range(200):
        if len(store.ids) >= 20:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)  # time enough for a small batch to be written, were it to be
    assert [len(batch) for batch in store.batches] == [10, 10]
    assert log.queue_depth == 5
    await log.flush()  # a flush does not wait for the interval
    assert store.ids == [e.decision_id for e in events]
    await log.close()


async def test_close_flushes_everything_queued(make_event) -> None:  # type: ignore[no-untyped-def]
    store, log, events = await _started_log_with(50, make_event, batch_size=7, flush_interval=60)
    await log.close()
    assert sorted(store.ids) == sorted(e.decision_id for e in events)
    assert log.written == 50 and log.queue_depth == 0
    # After close: refused, counted, never raised.
    assert log.record(make_event()) is False
    assert log.dropped == 1


async def test_close_without_start_still_writes(make_event) -> None:  # type: ignore[no-untyped-def]
    store = FakeStore()
    log = EventLog(store)  # type: ignore[arg-type]
    log.record(make_event())
    await log.close()
    assert len(store.ids) == 1


async def test_overflow_is_counted_when_the_store_is_slow(make_event, caplog) -> None:  # type: ignore[no-untyped-def]
    store = FakeStore()
    store.release.clear()  # the first batch hangs in the store
    log = EventLog(store, max_queue=5, batch_size=2, flush_interval=0.01)  # type: ignore[arg-type]
    before = _metric("mithril_event_log_dropped_total", reason="queue_full")
    await log.start()
    log.record(make_event())
    log.record(make_event())
    await asyncio.to_thread(store.entered.wait, 5)  # 2 taken, stuck in write_batch
    with caplog.at_level(logging.WARNING, logger="mithril.gateway.events.writer"):
        results = [log.record(make_event()) for _ in range(8)]
    assert results == [True] * 5 + [False] * 3  # never blocks: False once full
    assert log.queue_depth == 5 and log.dropped == 3
    assert _metric("mithril_event_log_dropped_total", reason="queue_full") - before == 3
    assert _metric("mithril_event_log_queue_depth") == 5
    assert "dropped" in caplog.text  # visible, not silent
    store.release.set()
    await log.close()
    assert log.written == 7 and log.dropped == 3


async def test_a_failing_store_is_retried_then_counted(make_event, caplog) -> None:  # type: ignore[no-untyped-def]
    store = FakeStore(fail_times=2)
    log = EventLog(store, batch_size=10, max_retries=3, retry_backoff=0.01)  # type: ignore[arg-type]
    await log.start()
    log.record(make_event())
    await log.flush()
    assert store.calls == 3 and len(store.ids) == 1 and log.dropped == 0  # recovered

    always = FakeStore(fail_times=1000)
    errors_before = _metric("mithril_event_log_write_errors_total")
    failed_before = _metric("mithril_event_log_dropped_total", reason="write_failed")
    broken = EventLog(always, batch_size=10, max_retries=2, retry_backoff=0.01)  # type: ignore[arg-type]
    await broken.start()
    with caplog.at_level(logging.WARNING, logger="mithril.gateway.events.writer"):
        for _ in range(4):
            assert broken.record(make_event())
        await broken.flush()
    assert always.calls == 3  # one attempt and two retries
    assert (broken.written, broken.dropped) == (0, 4)
    assert _metric("mithril_event_log_write_errors_total") - errors_before == 3
    assert _metric("mithril_event_log_dropped_total", reason="write_failed") - failed_before == 4
    assert "dropped 4 decisions after 3 failed attempts" in caplog.text
    # The writer survives and keeps writing once the store is back.
    always.fail_times = 0
    broken.record(make_event())
    await broken.flush()
    assert broken.written == 1
    await broken.close()
    await log.close()


async def test_record_from_another_thread(make_event) -> None:  # type: ignore[no-untyped-def]
    store = FakeStore()
    log = EventLog(store, batch_size=5, flush_interval=10)  # type: ignore[arg-type]
    await log.start()
    events = [make_event() for _ in range(20)]
    await asyncio.to_thread(lambda: [log.record(e) for e in events])
    await log.flush()
    assert sorted(store.ids) == sorted(e.decision_id for e in events)
    await log.close()


async def test_close_gives_up_after_its_deadline(make_event) -> None:  # type: ignore[no-untyped-def]
    store = FakeStore()
    store.release.clear()
    log = EventLog(store, batch_size=1, flush_interval=0.01, close_timeout=0.2)  # type: ignore[arg-type]
    await log.start()
    for _ in range(3):
        log.record(make_event())
    await asyncio.to_thread(store.entered.wait, 5)
    await log.close()
    assert log.dropped == 3 and log.queue_depth == 0  # 1 unconfirmed in flight + 2 queued
    store.release.set()


async def test_with_a_real_store(event_store_url: str, make_event) -> None:  # type: ignore[no-untyped-def]
    store = EventStore(event_store_url)
    writes_before = _metric("mithril_event_log_writes_total")
    log = EventLog(store, batch_size=16, flush_interval=0.02)
    await log.start()
    events = [make_event(seconds_ago=i) for i in range(40)]
    for event in events + events[:10]:  # the repeats are stored once
        log.record(event)
    await log.close()
    assert store.totals()["total"] == 40
    assert log.written == 40 and log.dropped == 0
    assert _metric("mithril_event_log_writes_total") - writes_before == 40
    store.close()


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError):
        EventLog(FakeStore(), max_queue=0)  # type: ignore[arg-type]
