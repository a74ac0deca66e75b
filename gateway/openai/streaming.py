"""Relaying a streamed (SSE) model response, scanning it as it flows.

Every text field of every chunk (choice content, refusals, tool-call argument deltas,
legacy `text`) goes through its own incremental redactor, which passes on only text that
can no longer become part of a secret; the hold-back is the redactor's, nothing more.

- redact: the redactor's output replaces the field, so no secret byte ever reaches the
  client, even split across chunks.
- block: the same, and as soon as the findings reach the threshold one error event is
  sent and the stream ends.
- log: chunks are forwarded untouched, then fed to the redactor only to record findings.

If the secrets service goes away mid-stream, redact and block fail closed (the rest is
withheld, with an error event), log fails open (chunks keep flowing, unscanned).

The upstream's `[DONE]` is swallowed; the relay always ends with its own single one.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp
import orjson

from mithril.domain import Finding
from mithril.gateway.decision import score_findings
from mithril.gateway.detectors import RedactStream, ServiceUnavailableError

_log = logging.getLogger(__name__)

DONE = b"data: [DONE]\n\n"


def sse_event(payload: Any) -> bytes:
    return b"data: " + orjson.dumps(payload) + b"\n\n"


async def sse_events(response: aiohttp.ClientResponse) -> AsyncIterator[bytes]:
    """The `data:` payloads of an SSE body, one per event (multi-line data joined)."""
    data: list[bytes] = []
    async for raw_line in response.content:
        line = raw_line.rstrip(b"\r\n")
        if not line:
            if data:
                yield b"\n".join(data)
                data = []
        elif line.startswith(b"data:"):
            value = line[5:]
            data.append(value[1:] if value.startswith(b" ") else value)
        # comments (":") and event/id/retry fields carry nothing to forward
    if data:
        yield b"\n".join(data)


@dataclass
class StreamOutcome:
    """What the relay saw, for the event log and metrics once the stream ends."""

    findings: list[Finding] = field(default_factory=list)
    blocked: bool = False
    error: str | None = None
    chunks: int = 0
    started: float = field(default_factory=time.perf_counter)


Slot = tuple[int, str, int]  # (choice index, field, tool-call index)


class StreamScanner:
    """Per-field incremental redaction for one streamed response."""

    def __init__(
        self,
        open_stream: Callable[[], Awaitable[RedactStream]],
        mode: str,
        threshold: float,
        outcome: StreamOutcome,
    ) -> None:
        self._open_stream = open_stream
        self._streams: dict[Slot, RedactStream] = {}
        self.mode = mode
        self.threshold = threshold
        self.outcome = outcome

    async def _redact(self, slot: Slot, text: str) -> str:
        if not text:  # e.g. the opening role chunk: nothing to hold, no stream to open
            return text
        stream = self._streams.get(slot)
        if stream is None:
            stream = self._streams[slot] = await self._open_stream()
        redaction = await stream.feed(text)
        self.outcome.findings += redaction.findings
        return redaction.text

    async def _flush(self, slot: Slot) -> str:
        stream = self._streams.pop(slot, None)
        if stream is None:
            return ""
        redaction = await stream.flush()
        self.outcome.findings += redaction.findings
        return redaction.text

    @property
    def should_block(self) -> bool:
        return (
            self.mode == "block"
            and bool(self.outcome.findings)
            and score_findings(self.outcome.findings) >= self.threshold
        )

    async def rewrite(self, chunk: dict[str, Any]) -> None:
        """Replace every text field of the chunk by its redacted, safe-to-send part."""
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            index = choice.get("index", 0) if isinstance(choice.get("index"), int) else 0
            finishing = choice.get("finish_reason") is not None
            if isinstance(choice.get("text"), str):
                choice["text"] = await self._redact((index, "text", 0), choice["text"])
                if finishing:
                    choice["text"] += await self._flush((index, "text", 0))
            delta = choice.get("delta")
            if isinstance(delta, dict):
                await self._rewrite_delta(index, delta, finishing)

    async def _rewrite_delta(self, index: int, delta: dict[str, Any], finishing: bool) -> None:
        for key in ("content", "refusal"):
            if isinstance(delta.get(key), str):
                delta[key] = await self._redact((index, key, 0), delta[key])
        calls = delta.get("tool_calls")
        for position, call in enumerate(calls if isinstance(calls, list) else []):
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and isinstance(function.get("arguments"), str):
                call_index = call.get("index", position)
                function["arguments"] = await self._redact(
                    (index, "tool", call_index), function["arguments"]
                )
        if finishing:
            await self._flush_into(index, delta)

    async def _flush_into(self, index: int, delta: dict[str, Any]) -> None:
        """Held text of a finishing choice goes out in its last delta."""
        for slot in [s for s in self._streams if s[0] == index]:
            held = await self._flush(slot)
            if not held:
                continue
            _, kind, call_index = slot
            if kind == "tool":
                calls = delta.setdefault("tool_calls", [])
                calls.append({"index": call_index, "function": {"arguments": held}})
            else:
                delta[kind] = (delta.get(kind) or "") + held

    async def flush_all(self) -> dict[int, dict[str, Any]]:
        """Everything still held, per choice, as deltas for one closing chunk."""
        deltas: dict[int, dict[str, Any]] = {}
        for index in sorted({slot[0] for slot in self._streams}):
            delta: dict[str, Any] = {}
            await self._flush_into(index, delta)
            if delta:
                deltas[index] = delta
        return deltas

    async def observe(self, chunk: dict[str, Any]) -> None:
        """Log mode: feed a copy of the text through the redactors for findings only."""
        scratch = orjson.loads(orjson.dumps(chunk))
        await self.rewrite(scratch)

    async def aclose(self) -> None:
        for stream in self._streams.values():
            await stream.aclose()
        self._streams.clear()


def _closing_chunk(last: dict[str, Any] | None, deltas: dict[int, dict[str, Any]]) -> bytes:
    template = {k: v for k, v in (last or {}).items() if k in ("id", "object", "created", "model")}
    legacy = (last or {}).get("object") == "text_completion"
    choices = [
        {"index": index, "text": delta.get("content", ""), "finish_reason": None}
        if legacy
        else {"index": index, "delta": delta, "finish_reason": None}
        for index, delta in deltas.items()
    ]
    return sse_event({**template, "choices": choices})


async def relay(
    events: AsyncIterator[bytes],
    scanner: StreamScanner,
    blocked_error: Callable[[list[Finding]], dict[str, Any]],
    upstream_error: Callable[[str], dict[str, Any]],
) -> AsyncIterator[bytes]:
    """The client's SSE body: scanned chunks, maybe one error event, then one [DONE]."""
    try:
        async for piece in _scanned(events, scanner, blocked_error, upstream_error):
            yield piece
    finally:
        await scanner.aclose()
    yield DONE


async def _scanned(
    events: AsyncIterator[bytes],
    scanner: StreamScanner,
    blocked_error: Callable[[list[Finding]], dict[str, Any]],
    upstream_error: Callable[[str], dict[str, Any]],
) -> AsyncIterator[bytes]:
    outcome = scanner.outcome
    last_chunk: dict[str, Any] | None = None
    try:
        async for data in events:
            if data.strip() == b"[DONE]":
                break
            try:
                chunk = orjson.loads(data)
            except orjson.JSONDecodeError:
                continue  # not a chunk: nothing a client could use
            if not isinstance(chunk, dict):
                continue
            outcome.chunks += 1
            if scanner.mode == "log":
                yield b"data: " + data + b"\n\n"
                if outcome.error is None:
                    try:
                        await scanner.observe(chunk)
                    except ServiceUnavailableError:  # log mode fails open: keep relaying
                        outcome.error = "secrets_unavailable"
                continue
            await scanner.rewrite(chunk)
            if scanner.should_block:
                outcome.blocked = True
                yield sse_event(blocked_error(outcome.findings))
                return
            last_chunk = chunk
            yield sse_event(chunk)
        if scanner.mode == "log":
            if outcome.error is None:
                # Only for the findings: the text already went out as it was.
                with contextlib.suppress(ServiceUnavailableError):
                    await scanner.flush_all()
        else:
            deltas = await scanner.flush_all()
            if scanner.should_block:
                outcome.blocked = True
                yield sse_event(blocked_error(outcome.findings))
                return
            if deltas:
                yield _closing_chunk(last_chunk, deltas)
    except ServiceUnavailableError as exc:
        # Mid-stream the secrets service went away: held text is never sent raw.
        outcome.error = "secrets_unavailable"
        _log.warning("secrets service lost mid-stream", extra={"detail": exc.detail})
        yield sse_event(upstream_error(f"{exc}; the rest of the response was withheld"))
    except (aiohttp.ClientError, TimeoutError) as exc:
        outcome.error = "upstream_interrupted"
        if scanner.mode != "log":
            deltas = await scanner.flush_all()
            if deltas and not scanner.should_block:
                yield _closing_chunk(last_chunk, deltas)
        yield sse_event(upstream_error(f"the upstream stream broke off ({type(exc).__name__})"))
