"""The real shared-memory stack for tests: scanner, secrets, reputation, the memory gate
(embedded Cognee) and the gateway in front of them, each on an ephemeral port.

Everything runs on its own event loop in a background thread, so sync tests (Playwright)
and async ones (the MCP client) can both drive it over HTTP. Cognee's first start in a
process is slow and its configuration is process-wide, so one stack serves the whole test
session: `shared_stack(request)` starts it on first use and stops it when pytest ends.
Tests keep out of each other's way by using their own source names.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ADMIN_TOKEN = "memory-stack-admin-token"
START_TIMEOUT_SECONDS = 240.0


@dataclass
class MemoryStack:
    root: Path
    token: str = ADMIN_TOKEN
    url: str = ""
    _loop: asyncio.AbstractEventLoop | None = None
    _thread: threading.Thread | None = None
    _stops: list[Callable[[], Awaitable[Any]]] = field(default_factory=list)
    _error: BaseException | None = None
    store: Any = None
    """A started verified store to use instead of embedded Cognee (None: Cognee)."""
    addrs: dict[str, str] = field(default_factory=dict)
    """Where each service listens: scanner, secrets, reputation, memory-gate."""
    gate: Any = None
    """The memory gate's server (its `.gate` is the MemoryGate, its store the Cognee one)."""

    def gate_settings(self, **overrides: Any) -> Any:
        """Settings for another memory gate over the same services and databases."""
        from mithril.services.memorygate.config import MemoryGateSettings

        values: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": 0,
            "grace_seconds": 0,
            "secrets_addr": self.addrs["secrets"],
            "scanner_addr": self.addrs["scanner"],
            "reputation_addr": self.addrs["reputation"],
            "judge_addr": "",
            "database_url": f"sqlite:///{self.root / 'memory-gate.db'}",
            "memory_root": self.root / "cognee",
        }
        values.update(overrides)
        return MemoryGateSettings(**values)

    @property
    def bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def start(self) -> None:
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._start())
            except BaseException as exc:  # reported to the test thread
                self._error = exc
                ready.set()
                loop.run_until_complete(self._stop())
                loop.close()
                return
            ready.set()
            loop.run_forever()
            loop.run_until_complete(self._stop())
            loop.close()

        self._thread = threading.Thread(target=run, name="memory-stack", daemon=True)
        self._thread.start()
        if not ready.wait(START_TIMEOUT_SECONDS):
            raise RuntimeError("the memory stack did not start in time")
        if self._error is not None:
            raise RuntimeError(f"the memory stack did not start: {self._error!r}") from (
                self._error
            )

    async def _start(self) -> None:
        from mithril.gateway.server import create_gateway
        from mithril.services.memorygate.server import create_server as create_memory_gate
        from mithril.services.reputation.config import ReputationSettings
        from mithril.services.reputation.server import create_server as create_reputation
        from mithril.services.scanner.config import ScannerSettings
        from mithril.services.scanner.server import create_server as create_scanner
        from mithril.services.secrets.config import SecretsSettings
        from mithril.services.secrets.server import create_server as create_secrets
        from tests.integration.conftest import Services, gateway_settings

        scanner = await create_scanner(ScannerSettings(host="127.0.0.1", port=0))
        self._stops.append(lambda: scanner.stop(0))
        secrets = await create_secrets(SecretsSettings(host="127.0.0.1", port=0))
        self._stops.append(lambda: secrets.stop(0))
        await scanner.server.start()
        await secrets.server.start()
        reputation = await create_reputation(
            ReputationSettings(
                host="127.0.0.1", port=0, database_url=f"sqlite:///{self.root / 'rep.db'}"
            )
        )
        self._stops.append(lambda: reputation.stop(0))
        await reputation.server.start()
        services = Services(scanner, secrets)
        self.addrs = {
            "scanner": services.scanner_addr,
            "secrets": services.secrets_addr,
            "reputation": f"127.0.0.1:{reputation.port}",
        }
        gate = await create_memory_gate(self.gate_settings(), store=self.store)
        self._stops.append(lambda: gate.stop(0))
        await gate.server.start()
        self.gate = gate
        self.addrs["memory-gate"] = f"127.0.0.1:{gate.port}"
        gateway = await create_gateway(
            gateway_settings(
                services,
                memory_gate_addr=f"127.0.0.1:{gate.port}",
                reputation_addr=f"127.0.0.1:{reputation.port}",
                admin_token=self.token,
                database_url=f"sqlite:///{self.root / 'events.db'}",
            )
        )
        await gateway.start()
        self._stops.append(gateway.stop)
        self.url = f"http://127.0.0.1:{gateway.http_port}"

    async def _stop(self) -> None:
        while self._stops:
            stop = self._stops.pop()
            with contextlib.suppress(Exception):  # stopping the rest matters more
                await stop()

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None and self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(60)

    def run(self, work: Awaitable[Any]) -> Any:
        """Run a coroutine on the stack's loop (from another thread) and wait for it."""
        assert self._loop is not None
        future: Future[Any] = asyncio.run_coroutine_threadsafe(work, self._loop)  # type: ignore[arg-type]
        return future.result(120)


_STACK: MemoryStack | None = None


def shared_stack(request: pytest.FixtureRequest) -> MemoryStack:
    """The session's stack, started on first use, stopped when pytest ends."""
    global _STACK
    if _STACK is None:
        root = Path(tempfile.mkdtemp(prefix="mithril-memory-stack-"))
        stack = MemoryStack(root)
        stack.start()
        _STACK = stack

        def stop() -> None:
            global _STACK
            stack.stop()
            _STACK = None
            shutil.rmtree(root, ignore_errors=True)

        request.config.add_cleanup(stop)
    return _STACK
