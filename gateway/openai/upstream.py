"""The HTTP client to upstream models: one shared aiohttp pool, keep-alive, streamed bodies.

aiohttp rather than httpx's default transport: measured here, a pass-through proxy did
~2,400 requests/s with aiohttp against ~310 with httpx, CPU-bound in the client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import aiohttp

# Hop-by-hop and per-connection headers are never forwarded; neither is the client's
# credential (the upstream key is chosen by policy) nor anything the client library sets
# about the body we may rewrite.
_DROP_REQUEST_HEADERS = frozenset(
    {
        "host",
        "content-length",
        "connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "authorization",
        "accept-encoding",
        "cookie",
        "x-request-id",
    }
)
# Headers that pick which organisation or project a request bills to. They belong with the
# key: forwarded with the caller's own key, dropped when the gateway sends its configured
# key, so a caller cannot steer the gateway's account.
_ACCOUNT_HEADERS = frozenset({"openai-organization", "openai-project"})
_DROP_WITH_GATEWAY_KEY = _DROP_REQUEST_HEADERS | _ACCOUNT_HEADERS
_DROP_RESPONSE_HEADERS = frozenset(
    {
        "content-length",
        "connection",
        "keep-alive",
        "transfer-encoding",
        "content-encoding",
        "set-cookie",
        "server",
        "date",
    }
)


class UpstreamError(Exception):
    """The upstream could not give an answer: unreachable (502) or too slow (504)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Target:
    base_url: str
    api_key: str | None
    timeout_seconds: float
    connect_timeout_seconds: float
    callers_credentials: bool = True
    """Whether `api_key` (or its absence) is the caller's own rather than the gateway's."""

    def url(self, path: str) -> str:
        """`path` relative to the base URL: "/chat/completions" on ".../v1"."""
        return self.base_url.rstrip("/") + "/" + path.lstrip("/")


def forward_headers(
    client_headers: Mapping[str, str], api_key: str | None, callers_credentials: bool = True
) -> dict[str, str]:
    dropped = _DROP_REQUEST_HEADERS if callers_credentials else _DROP_WITH_GATEWAY_KEY
    headers = {name: value for name, value in client_headers.items() if name.lower() not in dropped}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    return headers


def response_headers(upstream: Mapping[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in upstream.items()
        if name.lower() not in _DROP_RESPONSE_HEADERS
    }


class Upstream:
    """A shared connection pool to every upstream the policy names."""

    def __init__(self, max_connections: int = 512) -> None:
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(
                    limit=self._max_connections, keepalive_timeout=30, ttl_dns_cache=60
                ),
                auto_decompress=True,
                skip_auto_headers=("User-Agent",),
                # One pool serves every tenant: a cookie an upstream (or the CDN in front
                # of it) sets on one answer must never ride on anyone's next request.
                cookie_jar=aiohttp.DummyCookieJar(),
            )
        return self._session

    async def send(
        self,
        method: str,
        target: Target,
        path: str,
        headers: Mapping[str, str],
        body: bytes | None = None,
    ) -> aiohttp.ClientResponse:
        """The upstream's response with its body unread; the caller must release it."""
        timeout = aiohttp.ClientTimeout(
            total=None,
            connect=target.connect_timeout_seconds,
            sock_read=target.timeout_seconds,
        )
        try:
            return await self._client().request(
                method,
                target.url(path),
                data=body,
                headers=forward_headers(headers, target.api_key, target.callers_credentials),
                timeout=timeout,
                allow_redirects=False,
            )
        except aiohttp.ConnectionTimeoutError as exc:
            # Said apart from a slow answer: a connect that times out is an upstream (or a
            # connection pool) that is full or unreachable, not a model thinking.
            raise UpstreamError(
                504,
                "upstream_timeout",
                "the upstream did not accept a connection within"
                f" {target.connect_timeout_seconds:g} s",
            ) from exc
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise UpstreamError(
                504,
                "upstream_timeout",
                f"the upstream did not answer within {target.timeout_seconds:g} s",
            ) from exc
        except aiohttp.ClientError as exc:
            raise UpstreamError(
                502,
                "upstream_unreachable",
                f"the upstream could not be reached ({type(exc).__name__})",
            ) from exc

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
