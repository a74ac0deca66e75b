"""`mithril bench gateway`: the gateway against a bare pass-through proxy, in one run.

Both proxies sit in front of the same stand-in upstream (benchmark/stand_in_upstream.py,
a fixed answer: it stands in for a model and decides nothing). The gateway runs as it is
deployed: its own process, with the scanner and secrets services in theirs (`mithril up`).
For each concurrency a bounded number of requests is sent; throughput, p50 and p99 are
reported with the server-side CPU time per request (the proxy's process, or the gateway's
plus its services'), since these shared 2-core machines are noisy. Each figure is the
median of several alternating runs; ratios compare runs made back to back.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import aiohttp
import orjson

from mithril.cli.components import GATEWAY, SERVICES

BODY = orjson.dumps(
    {
        "model": "gpt-4o-mini",
        "messages": [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Write a short poem about the sea and the sky at dusk."},
        ],
    }
)
STREAM_BODY = orjson.dumps({**orjson.loads(BODY), "stream": True})
_TICKS = os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cpu_seconds(pids: list[int]) -> float:
    total = 0
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += int(fields[11]) + int(fields[12])  # utime + stime
    return total / _TICKS


def _wait_http(url: str, timeout: float = 90) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def _wait_serving(port: int, timeout: float = 90) -> None:
    from mithril.cli.supervisor import serving

    deadline = time.monotonic() + timeout
    while not serving(port):
        if time.monotonic() > deadline:
            raise RuntimeError(f"the service on port {port} never became SERVING")
        time.sleep(0.1)


@dataclass(frozen=True, slots=True)
class LoadResult:
    target: str
    concurrency: int
    requests: int
    throughput_rps: float
    p50_ms: float
    p99_ms: float
    cpu_ms_per_request: float
    errors: int


async def _load(
    url: str, concurrency: int, requests: int, pids: list[int], target: str
) -> LoadResult:
    latencies: list[float] = []
    errors = 0
    queue = iter(range(requests))
    connector = aiohttp.TCPConnector(limit=concurrency)
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}
    async with aiohttp.ClientSession(connector=connector) as session:

        async def worker() -> None:
            nonlocal errors
            for _ in queue:
                started = time.perf_counter()
                async with session.post(url, data=BODY, headers=headers) as response:
                    await response.read()
                    if response.status != 200:
                        errors += 1
                latencies.append(time.perf_counter() - started)

        cpu_before = _cpu_seconds(pids)
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        elapsed = time.perf_counter() - started
        cpu = _cpu_seconds(pids) - cpu_before
    latencies.sort()
    return LoadResult(
        target,
        concurrency,
        requests,
        requests / elapsed,
        statistics.median(latencies) * 1e3,
        latencies[int(0.99 * (len(latencies) - 1))] * 1e3,
        cpu / requests * 1e3,
        errors,
    )


async def _time_to_first_token(url: str, samples: int) -> float:
    """Median time from sending a streamed request to the first non-empty content delta."""
    times = []
    headers = {"Content-Type": "application/json", "Authorization": "Bearer sk-bench"}
    async with aiohttp.ClientSession() as session:
        for _ in range(samples):
            started = time.perf_counter()
            first = None
            async with session.post(url, data=STREAM_BODY, headers=headers) as response:
                async for line in response.content:
                    if first is None and line.startswith(b"data: {") and b'"content":"' in line:
                        chunk = orjson.loads(line[6:])
                        if chunk["choices"] and chunk["choices"][0]["delta"].get("content"):
                            first = time.perf_counter() - started
            times.append(first if first is not None else float("nan"))
    return statistics.median(times) * 1e3


TARGETS = ("bare", "remote", "local")
"""The bare proxy; the gateway calling the scanner and secrets services over gRPC; the
gateway running the same fast tier in-process (MITHRIL_GATEWAY_FAST_TIER=local)."""


class Stack:
    """The upstream, the bare proxy, the services and two gateways, each its own process."""

    def __init__(self) -> None:
        self.home = tempfile.mkdtemp(prefix="mithril-bench-")
        self.processes: list[subprocess.Popen[bytes]] = []
        self.upstream_port = _free_port()
        self.http_ports = {target: _free_port() for target in TARGETS}
        self.service_pids: list[int] = []
        self.target_pids: dict[str, int] = {}

    def _spawn(
        self, command: list[str], env: dict[str, str] | None = None
    ) -> subprocess.Popen[bytes]:
        process = subprocess.Popen(
            command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.processes.append(process)
        return process

    def start(self) -> None:
        python = sys.executable
        upstream_url = f"http://127.0.0.1:{self.upstream_port}/v1"
        self._spawn([python, "-m", "mithril.benchmark.stand_in_upstream", str(self.upstream_port)])
        self.target_pids["bare"] = self._spawn(
            [
                python,
                "-m",
                "mithril.benchmark.bare_proxy",
                str(self.http_ports["bare"]),
                upstream_url,
            ]
        ).pid
        env = {k: v for k, v in os.environ.items() if not k.startswith(("MITHRIL_", "OTEL_"))}
        env |= {
            "MITHRIL_HOME": self.home,
            "MITHRIL_GATEWAY_UPSTREAM_URL": upstream_url,
            "MITHRIL_GATEWAY_LOG_LEVEL": "WARNING",
            # The comparison is the gateway with the fast tier.
            "MITHRIL_GATEWAY_LEARNED_TIERS": "[]",
        }
        for service in SERVICES:
            port = _free_port()
            env[service.grpc_port_env] = str(port)
            env[service.gateway_addr_env] = f"127.0.0.1:{port}"
            self.service_pids.append(self._spawn([python, "-m", service.module], env).pid)
            _wait_serving(port)
        for target in ("remote", "local"):
            gateway_env = env | {
                "MITHRIL_GATEWAY_FAST_TIER": target,
                "MITHRIL_GATEWAY_HTTP_PORT": str(self.http_ports[target]),
                "MITHRIL_GATEWAY_GRPC_PORT": str(_free_port()),
                "MITHRIL_GATEWAY_DATABASE_URL": f"sqlite:///{self.home}/events-{target}.db",
            }
            self.target_pids[target] = self._spawn([python, "-m", GATEWAY.module], gateway_env).pid
        _wait_http(f"http://127.0.0.1:{self.upstream_port}/v1/models")
        _wait_http(f"http://127.0.0.1:{self.http_ports['bare']}/v1/models")
        for target in ("remote", "local"):
            _wait_http(f"http://127.0.0.1:{self.http_ports[target]}/healthz")

    def url(self, target: str) -> str:
        return f"http://127.0.0.1:{self.http_ports[target]}/v1/chat/completions"

    def pids(self, target: str) -> list[int]:
        """Whose CPU a request to `target` costs (the services only serve `remote`)."""
        pid = self.target_pids[target]
        return [pid, *self.service_pids] if target == "remote" else [pid]

    def stop(self) -> None:
        for process in self.processes:
            process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


@dataclass(frozen=True, slots=True)
class GatewayReport:
    rows: list[dict[str, object]]
    ttft_ms: dict[str, float]


def run(
    requests: int = 2000, runs: int = 3, concurrencies: tuple[int, ...] = (1, 64)
) -> GatewayReport:
    stack = Stack()
    stack.start()
    try:
        return asyncio.run(_run(stack, requests, runs, concurrencies))
    finally:
        stack.stop()


async def _run(
    stack: Stack, requests: int, runs: int, concurrencies: tuple[int, ...]
) -> GatewayReport:
    for target in TARGETS:  # warm every target: connections, caches, first-call costs
        await _load(stack.url(target), 8, 200, stack.pids(target), target)
    rows = []
    for concurrency in concurrencies:
        count = requests if concurrency > 1 else max(200, requests // 4)
        results: dict[str, list[LoadResult]] = {target: [] for target in TARGETS}
        for run_index in range(runs):
            order = TARGETS if run_index % 2 == 0 else TARGETS[::-1]
            for target in order:
                results[target].append(
                    await _load(stack.url(target), concurrency, count, stack.pids(target), target)
                )
        row: dict[str, object] = {"concurrency": concurrency, "requests": count, "runs": runs}
        for target, measured in results.items():
            row[target] = {
                "throughput_rps": statistics.median(r.throughput_rps for r in measured),
                "p50_ms": statistics.median(r.p50_ms for r in measured),
                "p99_ms": statistics.median(r.p99_ms for r in measured),
                "cpu_ms_per_request": statistics.median(r.cpu_ms_per_request for r in measured),
                "errors": sum(r.errors for r in measured),
                "runs": [asdict(r) for r in measured],
            }
        rows.append(row)
    ttft = {target: await _time_to_first_token(stack.url(target), 50) for target in TARGETS}
    return GatewayReport(rows, ttft)


def format_markdown(report: GatewayReport) -> str:
    lines = [
        "## Gateway vs bare pass-through proxy (loopback, same run, medians of alternating runs)",
        "",
        "remote = the gateway calling the scanner and secrets services over gRPC (CPU includes"
        " theirs); local = the same fast tier inside the gateway process.",
        "",
        "| concurrency | target | req/s | vs proxy | p50 ms | Δp50 ms | p99 ms | CPU ms/req"
        " | errors |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in report.rows:
        bare = row["bare"]
        assert isinstance(bare, dict)
        for target in TARGETS:
            measured = row[target]
            assert isinstance(measured, dict)
            lines.append(
                f"| {row['concurrency']} | {target} | {measured['throughput_rps']:.0f}"
                f" | {measured['throughput_rps'] / bare['throughput_rps']:.0%}"
                f" | {measured['p50_ms']:.2f} | {measured['p50_ms'] - bare['p50_ms']:+.2f}"
                f" | {measured['p99_ms']:.2f} | {measured['cpu_ms_per_request']:.2f}"
                f" | {measured['errors']} |"
            )
    bare_ttft = report.ttft_ms["bare"]
    lines += [
        "",
        "Streaming time to first token (median of 50; output policy redact): "
        + ", ".join(
            f"{target} {ms:.2f} ms ({ms - bare_ttft:+.2f})" for target, ms in report.ttft_ms.items()
        )
        + ".",
        "",
        "CPU is server-side (the stand-in upstream's is in no column).",
    ]
    return "\n".join(lines) + "\n"
