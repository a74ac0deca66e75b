"""A small OpenAI-compatible HTTP server on loopback, standing in for a model.

No LLM runs on these machines; this server answers with fixed text so the gateway can be
driven by the real `openai` SDK (tests) and loaded by `mithril bench gateway`. It decides
nothing about detection quality. `python -m mithril.benchmark.stand_in_upstream PORT`
runs it alone.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web


@dataclass
class Behaviour:
    """What the next responses look like; tests change it between requests."""

    content: str = "Hello from the stand-in model."
    chunks: list[str] | None = None
    """For streams: the content in these pieces (default: one word per chunk)."""
    tool_arguments: list[str] | None = None
    """For streams: a tool call whose arguments arrive in these pieces."""
    status: int = 200
    error_body: dict[str, Any] | None = None
    delay_seconds: float = 0.0
    """Wait this long before answering (to provoke timeouts)."""
    drop_after_chunks: int | None = None
    """Cut the connection after this many chunks of a stream."""
    chunk_delay_seconds: float = 0.0
    """Pause between streamed chunks, as a model generating tokens would."""
    models: list[str] = field(default_factory=lambda: ["gpt-4o-mini", "gpt-4o", "o3-mini"])
    status_sequence: list[int] = field(default_factory=list)
    """Statuses of the next responses, one taken per request; `status` once it is empty."""
    content_sequence: list[str] = field(default_factory=list)
    """Contents of the next non-streamed chat replies, one taken per reply; `content` once
    it is empty (e.g. a JSON verdict for the judge, then another)."""
    reject_response_format: bool = False
    """Answer 400 to chat requests that carry `response_format`, as some servers do."""
    set_cookie: str | None = None
    """A `Set-Cookie` value for every non-streamed response (as the CDNs in front of real
    APIs send)."""


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: bytes


class FakeUpstream:
    def __init__(self) -> None:
        self.behaviour = Behaviour()
        self.requests: list[Seen] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reset(self) -> None:
        self.behaviour = Behaviour()
        self.requests.clear()

    async def start(self, port: int = 0) -> None:
        app = web.Application(middlewares=[self._cookies])
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_get("/v1/models", self._models)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    @web.middleware
    async def _cookies(self, request: web.Request, handler: Any) -> web.StreamResponse:
        cookie = self.behaviour.set_cookie
        if cookie is None:
            return await handler(request)
        response = await handler(request)
        if not response.prepared:  # a stream's headers have already gone
            response.headers["Set-Cookie"] = cookie
        return response

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _prelude(self, request: web.Request) -> tuple[dict[str, Any], web.Response | None]:
        raw = await request.read()
        self.requests.append(Seen(request.path, dict(request.headers), raw))
        if self.behaviour.delay_seconds:
            await asyncio.sleep(self.behaviour.delay_seconds)
        status = (
            self.behaviour.status_sequence.pop(0)
            if self.behaviour.status_sequence
            else self.behaviour.status
        )
        if status != 200:
            body = self.behaviour.error_body or {
                "error": {"message": "stand-in error", "type": "server_error", "code": None}
            }
            return {}, web.json_response(body, status=status)
        return orjson.loads(raw or b"{}"), None

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body, error = await self._prelude(request)
        if error is not None:
            return error
        model = body.get("model", "gpt-4o-mini")
        if self.behaviour.reject_response_format and "response_format" in body:
            return web.json_response(
                {
                    "error": {
                        "message": "Unrecognized request argument supplied: response_format",
                        "type": "invalid_request_error",
                        "code": None,
                    }
                },
                status=400,
            )
        if body.get("stream"):
            return await self._stream_chat(request, model)
        content = (
            self.behaviour.content_sequence.pop(0)
            if self.behaviour.content_sequence
            else self.behaviour.content
        )
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if self.behaviour.tool_arguments is not None:
            message["tool_calls"] = [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {
                        "name": "lookup",
                        "arguments": "".join(self.behaviour.tool_arguments),
                    },
                }
            ]
        return web.json_response(
            {
                "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
                "system_fingerprint": "fp_stand_in",
            }
        )

    def _pieces(self) -> list[str]:
        if self.behaviour.chunks is not None:
            return self.behaviour.chunks
        words = self.behaviour.content.split(" ")
        return [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]

    async def _stream_chat(self, request: web.Request, model: str) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        base = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:12]}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
        }

        async def send(delta: dict[str, Any], finish: str | None = None) -> None:
            chunk = base | {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            await response.write(b"data: " + orjson.dumps(chunk) + b"\n\n")

        await send({"role": "assistant", "content": ""})
        for sent, piece in enumerate(self._pieces()):
            if (
                self.behaviour.drop_after_chunks is not None
                and sent >= self.behaviour.drop_after_chunks
            ):
                request.transport.close()  # type: ignore[union-attr]
                return response
            await send({"content": piece})
            if self.behaviour.chunk_delay_seconds:
                await asyncio.sleep(self.behaviour.chunk_delay_seconds)
        for index, piece in enumerate(self.behaviour.tool_arguments or []):
            call: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
            if index == 0:
                call |= {"id": "call_1", "type": "function"}
                call["function"]["name"] = "lookup"
            await send({"tool_calls": [call]})
        await send({}, "stop")
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body, error = await self._prelude(request)
        if error is not None:
            return error
        return web.json_response(
            {
                "id": f"cmpl-{uuid.uuid4().hex[:12]}",
                "object": "text_completion",
                "created": int(time.time()),
                "model": body.get("model", "gpt-3.5-turbo-instruct"),
                "choices": [
                    {
                        "index": 0,
                        "text": self.behaviour.content,
                        "finish_reason": "stop",
                        "logprobs": None,
                    }
                ],
            }
        )

    async def _embeddings(self, request: web.Request) -> web.StreamResponse:
        body, error = await self._prelude(request)
        if error is not None:
            return error
        inputs = body.get("input")
        count = len(inputs) if isinstance(inputs, list) else 1
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {"object": "embedding", "index": i, "embedding": [0.1, 0.2, 0.3]}
                    for i in range(count)
                ],
                "model": body.get("model", "text-embedding-3-small"),
                "usage": {"prompt_tokens": 3, "total_tokens": 3},
            }
        )

    async def _models(self, request: web.Request) -> web.StreamResponse:
        _, error = await self._prelude(request)
        if error is not None:
            return error
        return web.json_response(
            {
                "object": "list",
                "data": [
                    {"id": m, "object": "model", "created": 0, "owned_by": "stand-in"}
                    for m in self.behaviour.models
                ],
            }
        )


def main() -> None:
    import sys

    async def serve(port: int) -> None:
        upstream = FakeUpstream()
        await upstream.start(port)
        print(upstream.port, flush=True)
        await asyncio.Event().wait()

    import uvloop

    uvloop.run(serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0))


if __name__ == "__main__":
    main()
