"""`mithril up`: every component as its own process, supervised until Ctrl-C or SIGTERM.

Ports come from each component's own MITHRIL_* variable (default ports otherwise), and the
gateway is pointed at the services the supervisor started unless its *_ADDR is set.
`--database-url` puts every store (event log, reputation, memory ledger) in one database.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

import grpc
import httpx
from grpc_health.v1 import health_pb2, health_pb2_grpc
from rich.console import Console
from rich.table import Table
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from mithril.cli.components import CONSUMERS, Component
from mithril.runtime.db import normalise_url
from mithril.runtime.settings import ADMIN_TOKEN_FILE, mithril_home

READY_TIMEOUT_SECONDS = 300.0
"""The embedding service's first start embeds its attack corpus (about a minute)."""
STOP_TIMEOUT_SECONDS = 15.0
DATABASE_URL_ENVS = (
    "MITHRIL_GATEWAY_DATABASE_URL",
    "MITHRIL_REPUTATION_DATABASE_URL",
    "MITHRIL_MEMORY_GATE_DATABASE_URL",
)
"""The stores `--database-url` sets: the event log, reputation, the memory gate's ledger."""


def check_database_url(url: str) -> str:
    """`url` if every store can use it (PostgreSQL as postgres://, postgresql:// or
    postgresql+psycopg://, or a SQLite file); else ValueError saying why."""
    try:
        parsed = make_url(normalise_url(url.strip()))
    except ArgumentError:
        raise ValueError(f"{url!r} is not a database URL (postgresql://user@host/db)") from None
    if parsed.get_backend_name() not in ("postgresql", "sqlite"):
        raise ValueError(
            f"{parsed.render_as_string()!r}: the stores run on PostgreSQL"
            " (postgresql://user@host/db) or SQLite (sqlite:///path)"
        )
    return url.strip()


def shown_database_url(url: str) -> str:
    """`url` with its password masked, for printing."""
    return make_url(normalise_url(url)).render_as_string(hide_password=True)


def serving(port: int) -> bool:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=1.0
            )
        except grpc.RpcError:
            return False
    return reply.status == health_pb2.HealthCheckResponse.SERVING


def _http_ok(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False


def _environment(
    components: list[Component], home: Path, database_url: str | None = None
) -> dict[str, str]:
    env = dict(os.environ)
    env["MITHRIL_HOME"] = str(home)
    env.setdefault("PYTHONUNBUFFERED", "1")
    if database_url:  # given on the command line: it beats the variables
        env.update(dict.fromkeys(DATABASE_URL_ENVS, database_url))
    for component in components:
        if component.http_port is None:  # a service the gateway (and memory gate) call
            for consumer in CONSUMERS:
                env.setdefault(component.addr_env(consumer), f"127.0.0.1:{component.grpc_port}")
    return env


def _wait_ready(component: Component, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{component.name} exited with code {process.returncode}")
        http_port = component.http_port
        if serving(component.grpc_port) and (http_port is None or _http_ok(http_port)):
            return
        time.sleep(0.1)
    raise RuntimeError(f"{component.name} was not SERVING after {READY_TIMEOUT_SECONDS:.0f}s")


def _stop(processes: list[tuple[Component, subprocess.Popen[bytes]]]) -> None:
    """SIGTERM in reverse start order (gateway first), then wait; kill what lingers."""
    for _, process in reversed(processes):
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_SECONDS
    for _, process in reversed(processes):
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_all(
    components: list[Component],
    home: Path | None,
    console: Console,
    database_url: str | None = None,
) -> int:
    home = (home or mithril_home()).expanduser().resolve()
    home.mkdir(parents=True, exist_ok=True)
    env = _environment(components, home, database_url)
    processes: list[tuple[Component, subprocess.Popen[bytes]]] = []
    stop_requested = False

    def request_stop(signum: int, _frame: FrameType | None) -> None:
        nonlocal stop_requested
        stop_requested = True

    previous = {s: signal.signal(s, request_stop) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        # The services need nothing of each other to start, and two of them are slow
        # (the embedding index, Cognee): all of them at once, then the gateway.
        services = [c for c in components if c.http_port is None]
        front = [c for c in components if c.http_port is not None]
        for wave in (services, front):
            started = [
                (component, subprocess.Popen([sys.executable, "-m", component.module], env=env))
                for component in wave
            ]
            processes.extend(started)
            for component, process in started:
                _wait_ready(component, process)
            if stop_requested:
                return 0
        table = Table(title=f"Mithril is up (MITHRIL_HOME={home})", show_edge=False)
        for column in ("component", "pid", "listens on"):
            table.add_column(column)
        for component, process in processes:
            where = f"grpc 127.0.0.1:{component.grpc_port}"
            if component.http_port is not None:
                where = f"http://127.0.0.1:{component.http_port}  ·  {where}"
            table.add_row(component.name, str(process.pid), where)
        console.print(table)
        gateway = next((c for c, _ in processes if c.http_port is not None), None)
        if gateway is not None:
            token_file = home / ADMIN_TOKEN_FILE
            where = f"token in {token_file}" if token_file.exists() else "token as configured"
            console.print(
                f"dashboard: http://127.0.0.1:{gateway.http_port}/ ({where})  ·  "
                f"OpenAI base_url: http://127.0.0.1:{gateway.http_port}/v1",
                highlight=False,
            )
        if database_url:
            console.print(f"stores: {shown_database_url(database_url)}", highlight=False)
        console.print("all SERVING; Ctrl-C stops everything", highlight=False)
        while not stop_requested:
            for component, process in processes:
                if process.poll() is not None:
                    console.print(f"[red]{component.name} exited ({process.returncode})[/red]")
                    return 1
            time.sleep(0.2)
        return 0
    except RuntimeError as exc:
        console.print(f"[red]error:[/red] {exc}")
        return 1
    finally:
        _stop(processes)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        console.print("stopped", highlight=False)
