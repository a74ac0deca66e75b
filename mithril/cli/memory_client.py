"""`MemoryClient`: a running gateway's `/v1/memory/*` API over HTTP (sync httpx), for the
`mithril memory`, `mithril ingest` and `mithril mcp` commands.

    client = MemoryClient("http://127.0.0.1:8080", token)
    decision = client.remember("The VPN moved to vpn2.example.com", "Slack")["decision"]

Every method returns the gateway's JSON. An error answer raises `MemoryApiError` with the
envelope's fields; a gateway that cannot be reached raises `GatewayUnreachable` (a
`MemoryApiError` with status 0), whose message says how to start one.
"""

from __future__ import annotations

import os
from datetime import datetime
from types import TracebackType
from typing import Any
from urllib.parse import quote

import httpx

from mithril.runtime.settings import ADMIN_TOKEN_FILE, mithril_home

DEFAULT_REMOTE = "http://127.0.0.1:8080"
TOKEN_ENV = "MITHRIL_ADMIN_TOKEN"
DEFAULT_TIMEOUT_SECONDS = 120.0
IMPROVE_TIMEOUT_SECONDS = 900.0


class MemoryApiError(Exception):
    """The gateway answered with an error (`status` is the HTTP status; 0: no answer)."""

    def __init__(self, status: int, type: str, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.type = type
        self.message = message
        self.param = param

    def __str__(self) -> str:
        if self.status == 0:
            return self.message
        return f"{self.message} (HTTP {self.status}, {self.type})"


class GatewayUnreachable(MemoryApiError):
    """No gateway answered at the address."""

    def __init__(self, base_url: str, detail: str) -> None:
        super().__init__(
            0,
            "gateway_unreachable",
            f"cannot reach the gateway at {base_url} ({detail}); start one with `mithril up`"
            " or point --remote at a running one",
        )


def resolve_token(token: str | None = None) -> str:
    """`token`, else $MITHRIL_ADMIN_TOKEN, else MITHRIL_HOME/admin-token, else ""."""
    if token:
        return token.strip()
    from_env = os.environ.get(TOKEN_ENV, "").strip()
    if from_env:
        return from_env
    path = mithril_home() / ADMIN_TOKEN_FILE
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _path_part(value: str) -> str:
    return quote(value, safe="")


def _observed(value: datetime | str | None) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return value.isoformat()


class MemoryClient:
    """Thread-safe (one httpx.Client); close it, or use it as a context manager."""

    def __init__(
        self,
        base_url: str = DEFAULT_REMOTE,
        token: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.token = token or ""
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
        self._http = httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, transport=transport
        )

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(
        self,
        _type: type[BaseException] | None,
        _error: BaseException | None,
        _traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _request(
        self,
        method: str,
        path: str,
        *,
        body: dict[str, Any] | None = None,
        params: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        query = {k: v for k, v in (params or {}).items() if v is not None}
        extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        try:
            response = self._http.request(method, path, json=body, params=query, **extra)
        except httpx.TimeoutException as exc:
            raise MemoryApiError(
                0, "timeout", f"the gateway at {self.base_url} did not answer in time ({exc})"
            ) from exc
        except httpx.TransportError as exc:
            raise GatewayUnreachable(self.base_url, str(exc) or type(exc).__name__) from exc
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if response.status_code >= 400 or not isinstance(payload, dict):
            error = payload.get("error") if isinstance(payload, dict) else None
            if isinstance(error, dict):
                raise MemoryApiError(
                    response.status_code,
                    str(error.get("type") or "error"),
                    str(error.get("message") or response.reason_phrase),
                    error.get("param"),
                )
            raise MemoryApiError(
                response.status_code,
                "unexpected_response",
                f"unexpected answer from {self.base_url}{path}: HTTP {response.status_code}"
                " (is this a Mithril gateway?)",
            )
        return payload

    # -- agent calls

    def remember(
        self,
        claim: str,
        source: str,
        metadata: dict[str, str] | None = None,
        observed_at: datetime | str | None = None,
    ) -> dict[str, Any]:
        """`{"decision": {...}}`: the gate's decision on the claim."""
        body: dict[str, Any] = {"claim": claim, "source": source}
        if metadata:
            body["metadata"] = metadata
        if observed_at is not None:
            body["observed_at"] = _observed(observed_at)
        return self._request("POST", "/v1/memory/remember", body=body)

    def recall(self, query: str, top_k: int | None = None) -> dict[str, Any]:
        """`{"memories": [...]}`: verified memory only, most relevant first."""
        body: dict[str, Any] = {"query": query}
        if top_k is not None:
            body["top_k"] = top_k
        return self._request("POST", "/v1/memory/recall", body=body)

    # -- operator calls

    def quarantine_list(
        self,
        status: str | None = None,
        include_reviewed: bool = False,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        return self._request(
            "GET",
            "/v1/memory/quarantine",
            params={
                "status": status,
                "include_reviewed": "true" if include_reviewed else None,
                "page_size": page_size,
                "page_token": page_token or None,
            },
        )

    def quarantine_get(self, id: str) -> dict[str, Any]:
        return self._request("GET", f"/v1/memory/quarantine/{_path_part(id)}")

    def review(self, id: str, verdict: str, reviewer: str, note: str = "") -> dict[str, Any]:
        return self._request(
            "POST",
            f"/v1/memory/quarantine/{_path_part(id)}/review",
            body={"verdict": verdict, "reviewer": reviewer, "note": note},
        )

    def audit(
        self,
        source: str | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
    ) -> dict[str, Any]:
        return self._request(
            "GET",
            "/v1/memory/audit",
            params={"source": source, "page_size": page_size, "page_token": page_token or None},
        )

    def reputation_list(
        self, page_size: int | None = None, page_token: str | None = None
    ) -> dict[str, Any]:
        return self._request(
            "GET",
            "/v1/memory/reputation",
            params={"page_size": page_size, "page_token": page_token or None},
        )

    def reputation_get(self, source: str) -> dict[str, Any]:
        return self._request("GET", f"/v1/memory/reputation/{_path_part(source)}")

    def reputation_history(
        self, source: str, page_size: int | None = None, page_token: str | None = None
    ) -> dict[str, Any]:
        return self._request(
            "GET",
            f"/v1/memory/reputation/{_path_part(source)}/history",
            params={"page_size": page_size, "page_token": page_token or None},
        )

    def reputation_reset(self, source: str | None = None) -> dict[str, Any]:
        """Reset one source, or every source when `source` is None."""
        body = {"source": source} if source else {}
        return self._request("POST", "/v1/memory/reputation/reset", body=body)

    def improve(self) -> dict[str, Any]:
        return self._request("POST", "/v1/memory/improve", timeout=IMPROVE_TIMEOUT_SECONDS)
