"""The baseline of `mithril bench gateway`: a pass-through proxy on the gateway's own HTTP
stack (uvicorn on uvloop + httptools, Starlette, the same shared aiohttp pool), with no
scanning. `python -m mithril.benchmark.bare_proxy PORT UPSTREAM_BASE_URL` runs it.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from mithril.gateway.openai.upstream import Target, Upstream, response_headers
from mithril.runtime.heap import settle_heap


def create_app(upstream_url: str) -> Starlette:
    upstream = Upstream()
    target = Target(upstream_url, None, 60.0, 5.0)

    async def forward(request: Request) -> Response:
        body = await request.body()
        path = request.url.path.removeprefix("/v1")
        response = await upstream.send(request.method, target, path, request.headers, body)
        headers = response_headers(response.headers)
        if response.content_type == "text/event-stream":

            async def relay() -> AsyncIterator[bytes]:
                try:
                    async for piece in response.content.iter_any():
                        yield piece
                finally:
                    response.release()

            return StreamingResponse(relay(), response.status, headers=headers)
        try:
            content = await response.read()
        finally:
            response.release()
        return Response(content, response.status, headers=headers)

    # The pool lives as long as the process: nothing to close on shutdown.
    return Starlette(routes=[Route("/v1/{path:path}", forward, methods=["GET", "POST"])])


def main() -> None:
    port, upstream_url = int(sys.argv[1]), sys.argv[2]
    app = create_app(upstream_url)
    settle_heap()  # as the gateway does after start-up, so the comparison stays even
    uvicorn.run(
        app,
        host="127.0.0.1",
        port=port,
        loop="uvloop",
        http="httptools",
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
