"""Latency of the fast tier against a bare RE2 set, and of the FirewallService round trip.

Both sides of every ratio are measured in the same run on the same inputs: the machines
are shared and noisy, so absolute times drift between runs while ratios hold. Each figure
is the median of `repeat` timed runs; each run repeats the call enough times to last at
least `min_run_seconds`.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

import re2

SIZES = {"200 B": 200, "4 KB": 4_096, "100 KB": 102_400, "1 MB": 1_048_576}
TEXTS_PER_SIZE = {"200 B": 8, "4 KB": 8}
"""Different texts timed per size (their mean per text): one short text says more about which
words it happens to hold than about the engine. Larger sizes use one (the bare set takes
seconds on a megabyte)."""

_WORDS = tuple(
    " ".join(
        (
            "the a of to and in is it you that he was for on are with as his they be at one have",
            "this from or had by word but what some we can out other were all there when up use",
            "your how said an each she which do their time if will way about many then them write",
            "would like so these her long make thing see him two has look more day could go come",
            "did number sound no most people my over know water than call first who may down side",
            "been now find any new work part take get place made live where after back little",
            "only round man year came show every good me give our under name very through just",
            "form sentence great think say help low line differ turn cause much mean before move",
            "right boy old too same tell does set three want air well also play small end put",
            "home read hand port large spell add even land here must big high such follow act why",
            "ask men change went light kind off need house picture try us again animal point",
            "mother world near build self earth father head stand own page should country found",
            "answer school grow study still learn plant cover food sun four between state keep",
            "eye never last let thought city tree cross farm hard start might story saw far sea",
            "draw left late run don't while press close night real life few north open seem",
            "together next white children begin got walk example ease paper group always music",
            "those both mark often letter until mile river car feet care second book carry took",
            "science eat room friend began idea fish mountain stop once base hear horse cut sure",
            "watch color face wood main",
        )
    ).split()
)


def benign_text(size: int, seed: int = 7) -> str:
    """Deterministic English-like prose with numbers and punctuation, exactly `size` chars."""
    rng = random.Random(seed)
    parts: list[str] = []
    length = 0
    while length < size:
        sentence = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 18)))
        if rng.random() < 0.2:
            sentence += f" {rng.randint(1, 9999)}"
        sentence = sentence.capitalize() + rng.choice([". ", ", ", "? ", ".\n"])
        parts.append(sentence)
        length += len(sentence)
    return "".join(parts)[:size]


def median_seconds(call: Callable[[], object], repeat: int, min_run_seconds: float) -> float:
    """Median per-call time over `repeat` runs of a calibrated loop."""
    started = time.perf_counter()
    call()
    once = max(time.perf_counter() - started, 1e-7)
    loops = max(1, int(min_run_seconds / once))
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        for _ in range(loops):
            call()
        samples.append((time.perf_counter() - started) / loops)
    return statistics.median(samples)


@dataclass(frozen=True, slots=True)
class SizeRow:
    size: str
    baseline_ms: float
    """A bare RE2 set of the scanner's rule patterns."""
    scanner_ms: float
    fast_baseline_ms: float
    """A bare RE2 set of the rule patterns plus the secrets detectors' prefilters."""
    fast_tier_ms: float

    @property
    def scanner_ratio(self) -> float:
        return self.scanner_ms / self.baseline_ms

    @property
    def fast_tier_ratio(self) -> float:
        return self.fast_tier_ms / self.fast_baseline_ms


@dataclass(frozen=True, slots=True)
class RoundTripRow:
    size: str
    in_process_p50_ms: float
    grpc_p50_ms: float
    grpc_p99_ms: float
    http_p50_ms: float


def _bare_set(patterns: list[str]) -> re2.Set:
    options = re2.Options()
    options.max_mem = 256 << 20
    options.case_sensitive = False
    bare = re2.Set.SearchSet(options)
    for pattern in patterns:
        bare.Add(pattern)
    bare.Compile()
    return bare


def fast_tier(repeat: int = 7, min_run_seconds: float = 0.2) -> list[SizeRow]:
    from mithril.domain import Origin
    from mithril.gateway.detectors import LocalDetectors
    from mithril.services.scanner.scanner import Scanner
    from mithril.services.secrets.detectors import REGISTRY

    detectors = LocalDetectors()  # the fast tier as the gateway and the CLI run it
    scanner = Scanner.from_rule_files()  # the scanner as its service runs it

    patterns = [p for rule in scanner.rules for p in rule.compiled_patterns()]
    baseline = _bare_set(patterns)
    # The fast tier's own baseline: one set holding the rule patterns and the secrets
    # detectors' prefilters, i.e. every pattern either library must look for.
    fast_baseline = _bare_set(patterns + [d.prefilter for d in REGISTRY.values()])
    rows = []
    for label, size in SIZES.items():
        texts = [benign_text(size, seed) for seed in range(TEXTS_PER_SIZE.get(label, 1))]

        def bare(texts: list[str] = texts) -> object:
            return [baseline.Match(text) for text in texts]

        def bare_fast(texts: list[str] = texts) -> object:
            return [fast_baseline.Match(text) for text in texts]

        def scan(texts: list[str] = texts) -> object:
            return [scanner.scan(text, Origin.USER) for text in texts]

        def both(texts: list[str] = texts) -> object:
            return [detectors.analyse_now(text, Origin.USER) for text in texts]

        timings = [
            median_seconds(call, repeat, min_run_seconds) * 1e3 / len(texts)
            for call in (bare, scan, bare_fast, both)
        ]
        rows.append(SizeRow(label, *timings))
    return rows


async def _round_trip(calls: int) -> list[RoundTripRow]:
    import grpc
    import httpx

    from mithril.firewall.v1 import firewall_service_pb2 as pb
    from mithril.firewall.v1 import firewall_service_pb2_grpc as pb_grpc
    from mithril.gateway.config import GatewaySettings
    from mithril.gateway.server import create_gateway
    from mithril.services.scanner.config import ScannerSettings
    from mithril.services.scanner.server import create_server as create_scanner
    from mithril.services.secrets.config import SecretsSettings
    from mithril.services.secrets.server import create_server as create_secrets

    scanner = await create_scanner(ScannerSettings(host="127.0.0.1", port=0))
    secrets = await create_secrets(SecretsSettings(host="127.0.0.1", port=0))
    await scanner.server.start()
    await secrets.server.start()
    import tempfile

    state = tempfile.mkdtemp(prefix="mithril-bench-")
    gateway = await create_gateway(
        GatewaySettings(
            http_port=0,
            grpc_port=0,
            grpc_host="127.0.0.1",
            database_url=f"sqlite:///{state}/events.db",
            learned_tiers=[],  # the fast tier's round trip
            admin_token="benchmark-admin-token-not-used",
            scanner_addr=f"127.0.0.1:{scanner.port}",
            secrets_addr=f"127.0.0.1:{secrets.port}",
        )
    )
    await gateway.start()
    rows = []
    try:
        async with (
            grpc.aio.insecure_channel(f"127.0.0.1:{gateway.grpc_port}") as channel,
            httpx.AsyncClient(base_url=f"http://127.0.0.1:{gateway.http_port}") as client,
        ):
            stub = pb_grpc.FirewallServiceStub(channel)
            from mithril.gateway.decision import Mode, Policy
            from mithril.gateway.detectors import LocalDetectors
            from mithril.gateway.firewall import Firewall

            local = Firewall(LocalDetectors(), Policy(Mode.BLOCK, 0.5))
            for label in ("200 B", "4 KB", "100 KB"):
                text = benign_text(SIZES[label])
                grpc_times, http_times, local_times = [], [], []
                for _ in range(calls):
                    started = time.perf_counter()
                    await local.scan(text)
                    local_times.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    await stub.Scan(pb.ScanRequest(text=text))
                    grpc_times.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    await client.post("/v1/scan", json={"text": text})
                    http_times.append(time.perf_counter() - started)
                grpc_times.sort()
                rows.append(
                    RoundTripRow(
                        label,
                        statistics.median(local_times) * 1e3,
                        statistics.median(grpc_times) * 1e3,
                        grpc_times[int(0.99 * (len(grpc_times) - 1))] * 1e3,
                        statistics.median(http_times) * 1e3,
                    )
                )
    finally:
        await gateway.stop()
        await scanner.stop(0)
        await secrets.stop(0)
    return rows


def round_trip(calls: int = 300) -> list[RoundTripRow]:
    return asyncio.run(_round_trip(calls))


def format_markdown(sizes: list[SizeRow], trips: list[RoundTripRow]) -> str:
    lines = [
        "## Fast tier vs a bare RE2 set (same patterns, same inputs, same run)",
        "",
        "Milliseconds per text: the mean over "
        + ", ".join(f"{n} texts of {label}" for label, n in TEXTS_PER_SIZE.items())
        + " (benign prose, different seeds), one text of each larger size; each figure is"
        " the median of several timed runs.",
        "",
        "| input | rules set ms | scanner ms | ratio | rules + prefilters set ms"
        " | scanner + secrets ms | ratio |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for row in sizes:
        lines.append(
            f"| {row.size} | {row.baseline_ms:.4f} | {row.scanner_ms:.4f} | "
            f"{row.scanner_ratio:.2f}x | {row.fast_baseline_ms:.4f} | {row.fast_tier_ms:.4f} | "
            f"{row.fast_tier_ratio:.2f}x |"
        )
    lines += [
        "",
        "## Round trip (loopback, sequential calls)",
        "",
        "| input | in-process p50 ms | FirewallService gRPC p50 ms | gRPC p99 ms"
        " | HTTP /v1/scan p50 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for trip in trips:
        lines.append(
            f"| {trip.size} | {trip.in_process_p50_ms:.3f} | {trip.grpc_p50_ms:.3f} | "
            f"{trip.grpc_p99_ms:.3f} | {trip.http_p50_ms:.3f} |"
        )
    return "\n".join(lines) + "\n"


def to_json(sizes: list[SizeRow], trips: list[RoundTripRow]) -> dict[str, object]:
    return {
        "fast_tier": [
            asdict(r) | {"scanner_ratio": r.scanner_ratio, "fast_tier_ratio": r.fast_tier_ratio}
            for r in sizes
        ],
        "round_trip": [asdict(t) for t in trips],
    }
