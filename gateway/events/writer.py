"""The event log's writer: a bounded queue drained in batches on a worker thread.

`record()` is what the request path calls: it never blocks and never raises. A full queue
drops the event, counts it (`mithril_event_log_dropped_total{reason="queue_full"}`) and
logs a warning; a batch the store keeps refusing is retried with backoff, then dropped,
counted and logged the same way. Nothing is ever lost silently.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
import time
import weakref

from prometheus_client import Counter, Gauge

from mithril.gateway.events.record import EventRecord
from mithril.gateway.events.store import EventStore

_log = logging.getLogger(__name__)

WRITES = Counter(
    "mithril_event_log_writes_total",
    "Decisions written to the event log (duplicates of a decision already stored excluded).",
)
DROPPED = Counter(
    "mithril_event_log_dropped_total",
    "Decisions that never reached the event log, by reason: queue_full (the writer fell"
    " behind), write_failed (the store refused the batch after every retry), closed (recorded"
    " after shutdown began, or still queued when the shutdown deadline passed).",
    ["reason"],
)
WRITE_ERRORS = Counter(
    "mithril_event_log_write_errors_total",
    "Failed attempts to write a batch to the event log store (each retry counts).",
)
QUEUE_DEPTH = Gauge(
    "mithril_event_log_queue_depth", "Decisions queued for the event log, not yet written."
)
_LIVE_LOGS: weakref.WeakSet[EventLog] = weakref.WeakSet()
# The depth is read from the queues when scraped, summed over the process's event logs
# (one in a gateway), rather than set by each log, where one log's value would overwrite
# another's.
QUEUE_DEPTH.set_function(lambda: sum(log.queue_depth for log in list(_LIVE_LOGS)))

_WARN_EVERY_SECONDS = 10.0


class EventLog:
    """Queue of decisions in front of an `EventStore`.

    `record()` may be called from the event loop or any other thread; batches are written
    with `asyncio.to_thread` so the loop never waits on the database.
    """

    def __init__(
        self,
        store: EventStore,
        max_queue: int = 10_000,
        batch_size: int = 256,
        flush_interval: float = 0.25,
        *,
        max_retries: int = 3,
        retry_backoff: float = 0.2,
        close_timeout: float = 30.0,
    ) -> None:
        if max_queue < 1 or batch_size < 1 or flush_interval <= 0 or max_retries < 0:
            raise ValueError(
                "max_queue, batch_size, flush_interval must be positive, max_retries >= 0"
            )
        self.store = store
        self.max_queue = max_queue
        self.batch_size = batch_size
        self.flush_interval = flush_interval
        self.max_retries = max_retries
        self.retry_backoff = retry_backoff
        self.close_timeout = close_timeout
        self._queue: collections.deque[EventRecord] = collections.deque()
        _LIVE_LOGS.add(self)
        self._lock = threading.Lock()
        self._written = 0
        self._dropped = 0
        self._in_flight = 0
        self._closed = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._drain_requests = 0
        """Callers of `flush()` waiting: the writer then writes partial batches at once."""
        self._last_warning = 0.0

    # -- the request path ---------------------------------------------------------------

    def record(self, event: EventRecord) -> bool:
        """Queue `event`; False (and counted as dropped) when the queue is full or the log
        is closed. Never blocks, never raises."""
        try:
            with self._lock:
                if self._closed:
                    reason = "closed"
                elif len(self._queue) >= self.max_queue:
                    reason = "queue_full"
                else:
                    self._queue.append(event)
                    depth = len(self._queue)
                    reason = ""
            if reason:
                self._drop(1, reason)
                return False
            if depth >= self.batch_size:
                self._wake_writer()
            return True
        except Exception:  # never let the log break a request
            _log.exception("event log: could not queue a decision")
            return False

    # -- lifecycle ----------------------------------------------------------------------

    async def start(self) -> None:
        """Start the writer task on the running loop."""
        if self._task is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._task = asyncio.create_task(self._run(), name="mithril-event-log")

    async def flush(self) -> None:
        """Write everything queued so far (the writer keeps running)."""
        self._drain_requests += 1
        try:
            while self.queue_depth or self._in_flight:
                if self._task is None or self._task.done():
                    await self._write_available()
                else:
                    self._wake_writer()
                    await asyncio.sleep(min(self.flush_interval, 0.01))
        finally:
            self._drain_requests -= 1

    async def close(self) -> None:
        """Stop taking events, write everything still queued, stop the writer. What is
        still queued after `close_timeout` seconds is counted as dropped ("closed")."""
        timeout = self.close_timeout
        with self._lock:
            self._closed = True
        task, self._task = self._task, None
        if task is not None:
            self._wake_writer()
            unconfirmed = 0
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout)
            except TimeoutError:
                unconfirmed = self._in_flight  # the thread may still finish it (idempotent)
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            except Exception:
                _log.exception("event log: the writer failed", extra={"component": "event_log"})
            if unconfirmed:
                self._drop(unconfirmed, "closed")
        else:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._write_available(), timeout)
        with self._lock:
            left = len(self._queue)
            self._queue.clear()
        if left:
            self._drop(left, "closed")

    # -- counters -----------------------------------------------------------------------

    @property
    def written(self) -> int:
        """Rows inserted by this log (a decision already stored is not counted again)."""
        return self._written

    @property
    def dropped(self) -> int:
        """Decisions this log could not store, for any reason."""
        return self._dropped

    @property
    def queue_depth(self) -> int:
        return len(self._queue)

    @property
    def closed(self) -> bool:
        return self._closed

    def health(self) -> dict[str, object]:
        return {
            "written": self.written,
            "dropped": self.dropped,
            "queue_depth": self.queue_depth,
            "max_queue": self.max_queue,
            "running": self._task is not None and not self._task.done(),
        }

    # -- the writer ---------------------------------------------------------------------

    def _wake_writer(self) -> None:
        loop, wake = self._loop, self._wake
        if loop is None or wake is None or loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            wake.set()
        else:
            loop.call_soon_threadsafe(wake.set)

    async def _run(self) -> None:
        """Write full batches as they fill; a partial one only once `flush_interval` has
        passed without filling it, or when a flush or the shutdown asks. Under load that
        keeps every batch full: the remainder left after each write was otherwise written
        at once as a small batch, paying a whole batch's fixed costs for a few rows."""
        assert self._wake is not None
        while True:
            if self._closed and not self._queue:
                return
            interval_passed = False
            if not self._queue or (len(self._queue) < self.batch_size and not self._draining):
                try:
                    await asyncio.wait_for(self._wake.wait(), self.flush_interval)
                except TimeoutError:
                    interval_passed = True
                self._wake.clear()
            await self._write_available(whole_batches_only=not (interval_passed or self._draining))

    @property
    def _draining(self) -> bool:
        """Shutting down, or a flush is waiting: partial batches go out at once."""
        return self._closed or self._drain_requests > 0

    async def _write_available(self, *, whole_batches_only: bool = False) -> None:
        """Write batches until the queue is empty (or holds less than a batch)."""
        while not whole_batches_only or len(self._queue) >= self.batch_size:
            batch = self._take()
            if not batch:
                return
            self._in_flight = len(batch)
            try:
                await self._write(batch)
            finally:
                self._in_flight = 0

    def _take(self) -> list[EventRecord]:
        with self._lock:
            batch = [self._queue.popleft() for _ in range(min(self.batch_size, len(self._queue)))]
        return batch

    async def _write(self, batch: list[EventRecord]) -> None:
        for attempt in range(self.max_retries + 1):
            try:
                inserted = await asyncio.to_thread(self.store.write_batch, batch)
            except Exception as exc:
                WRITE_ERRORS.inc()
                if attempt < self.max_retries:
                    _log.warning(
                        "event log: writing %d decisions failed (%s); retrying",
                        len(batch),
                        type(exc).__name__,
                        extra={"component": "event_log", "attempt": attempt + 1},
                    )
                    await asyncio.sleep(self.retry_backoff * 2**attempt)
                    continue
                _log.error(
                    "event log: dropped %d decisions after %d failed attempts: %s",
                    len(batch),
                    attempt + 1,
                    exc,
                    extra={"component": "event_log"},
                )
                self._drop(len(batch), "write_failed", log=False)
                return
            self._written += inserted
            WRITES.inc(inserted)
            return

    def _drop(self, count: int, reason: str, *, log: bool = True) -> None:
        with self._lock:
            self._dropped += count
        DROPPED.labels(reason=reason).inc(count)
        now = time.monotonic()
        if log and now - self._last_warning >= _WARN_EVERY_SECONDS:
            self._last_warning = now
            _log.warning(
                "event log: dropped %d decision(s) (%s); %d dropped so far",
                count,
                reason,
                self._dropped,
                extra={"component": "event_log", "reason": reason},
            )
