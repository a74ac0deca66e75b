"""The secrets service's prefilters, matched in the gateway: a clean answer needs no hop.

The secrets service publishes every detector's prefilter, an RE2 pattern each of its
findings contains, with a fingerprint of the set (GetPrefilters); its Detect answers carry
the fingerprint too. When none of the prefilters occurs in an upstream answer, the service
would find nothing in it, so the gateway can pass it on without asking.

The screen only ever says "nothing to find" when it is sure it holds the service's current
set: it was fetched less than `max_age` ago and the service has not since answered with
another fingerprint (a rolling upgrade to other detectors). Otherwise it says "may find",
so the caller makes the call as it would without a screen, and a refresh starts in the
background. A service that cannot publish its prefilters (an older one) leaves every
answer to the call.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Mapping

from mithril.services.secrets.detector import prefilter_set

_log = logging.getLogger(__name__)

Fetch = Callable[[], Awaitable[tuple[Mapping[str, str], str]]]
"""Returns the service's prefilters (kind -> pattern) and their fingerprint."""


class SecretsScreen:
    def __init__(self, fetch: Fetch, *, max_age: float = 30.0, retry_after: float = 30.0) -> None:
        self._fetch = fetch
        self.max_age = max_age
        self.retry_after = retry_after
        self._match: Callable[[bytes], list[int]] | None = None
        self.fingerprint = ""
        """The fingerprint of the prefilters the screen holds ("" before the first fetch)."""
        self._latest = ""
        self._loaded_at = -float("inf")
        self._failed_at = -float("inf")
        self._refreshing: asyncio.Task[None] | None = None

    def may_find(self, data: bytes) -> bool:
        """False only when the service's current prefilters, all of them, are absent from
        `data` (UTF-8); True when one occurs or the screen cannot vouch for its set."""
        if not self.current():
            self._schedule_refresh()
            return True
        assert self._match is not None
        return bool(self._match(data))

    def current(self) -> bool:
        """Whether the screen holds the set the service last answered with, recently."""
        return (
            self._match is not None
            and self._latest == self.fingerprint
            and time.monotonic() - self._loaded_at <= self.max_age
        )

    def observe(self, fingerprint: str) -> None:
        """The fingerprint a Detect answer carried; another one than the screen's retires
        the screen until the new set is fetched."""
        if fingerprint and fingerprint != self._latest:
            self._latest = fingerprint
            if fingerprint != self.fingerprint:
                self._schedule_refresh()

    async def refresh(self) -> None:
        try:
            prefilters, fingerprint = await self._fetch()
            match = prefilter_set(prefilters.values())
        except Exception as error:  # the screen is an optimisation: without it, the calls go
            self._failed_at = time.monotonic()
            _log.info("secrets prefilters unavailable; answers are sent to the service: %r", error)
            return
        self._match = match
        self.fingerprint = fingerprint
        self._latest = fingerprint  # the service's newest word
        self._loaded_at = time.monotonic()

    def _schedule_refresh(self) -> None:
        if self._refreshing is not None and not self._refreshing.done():
            return
        if time.monotonic() - self._failed_at < self.retry_after:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop in this thread: the caller makes the call
            return
        self._refreshing = loop.create_task(self.refresh())

    async def close(self) -> None:
        if self._refreshing is not None and not self._refreshing.done():
            self._refreshing.cancel()
            await asyncio.gather(self._refreshing, return_exceptions=True)
