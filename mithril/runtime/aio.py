"""Small asyncio helpers for hot paths."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

T = TypeVar("T")


async def gather_all(calls: Iterable[Awaitable[T]]) -> list[T]:
    """`asyncio.gather(*calls)`, except that a single call is simply awaited: most requests
    carry one message or one field, and a task per call is measurable CPU (~10-20 µs here)
    when the work itself runs in-process."""
    pending = list(calls)
    if len(pending) == 1:
        return [await pending[0]]
    return list(await asyncio.gather(*pending))
