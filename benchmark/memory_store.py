"""Timings of the memory gate's Cognee store (services/memorygate/cognee_store.py).

    python -m mithril.benchmark.memory_store [--claims 50] [--queries 30] [--root DIR]

Starts a store in a fresh root (no LLM: Cognee's no-LLM chunk pipeline), stores
`--claims` synthetic verified claims, then measures warm searches: the store's direct
LanceDB route (`search_verified`) against Cognee's `recall(CHUNKS, node_name=["verified"])`
(`recall_verified`), searches while writes run, and how long the caller's event loop is
stalled during a write (it should not be: Cognee runs on its own thread). Synthetic text
only; it measures speed, not retrieval quality.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

from mithril.services.memorygate.cognee_store import CogneeStore

SERVICES = ["billing", "search", "auth", "ledger", "mailer", "gateway", "reports"]


def claim(i: int) -> str:
    service = SERVICES[i % len(SERVICES)]
    return (
        f"The {service} service (instance {i}) listens on port {8000 + i}, is owned by "
        f"team {i % 5} and was last deployed on day {i % 28 + 1}."
    )


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def ms(value: float) -> str:
    return f"{value * 1000:.1f} ms"


async def timed(fn, runs: int) -> list[float]:  # type: ignore[no-untyped-def]
    out = []
    for i in range(runs):
        began = time.perf_counter()
        await fn(i)
        out.append(time.perf_counter() - began)
    return out


async def run(root: Path, claims: int, queries: int) -> None:
    began = time.perf_counter()
    store = CogneeStore(root)
    await store.start()
    print(f"start (import, setup, warm-up): {time.perf_counter() - began:.1f} s {store.timings}")

    adds = []
    for i in range(claims):
        t = time.perf_counter()
        await store.add_verified(claim(i), source=f"agent-{i % 3}", low_confidence=i % 10 == 0)
        adds.append(time.perf_counter() - t)
    print(
        f"add_verified x{claims}: first {adds[0]:.2f} s, p50 {statistics.median(adds[1:]):.2f} s,"
        f" p90 {pct(adds[1:], 0.9):.2f} s"
    )
    t = time.perf_counter()
    await store.add_verified(claim(3), source="agent-0", low_confidence=False)
    print(f"re-add of a stored claim (no-op): {time.perf_counter() - t:.2f} s")

    def question(i: int) -> str:
        return f"which port does the {SERVICES[i % len(SERVICES)]} service listen on ({i})"

    fast = await timed(lambda i: store.search_verified(question(i), 5), queries)
    from mithril.services.embedding.encoder import Encoder

    encoder = Encoder.load()
    vectors = [encoder.encode([question(i)])[0].tolist() for i in range(queries)]
    given = await timed(lambda i: store.search_verified(question(i), 5, vector=vectors[i]), queries)
    slow = await timed(lambda i: store.recall_verified(question(i), 5), queries)
    print(
        f"search_verified (direct LanceDB): p50 {ms(statistics.median(fast))}, "
        f"p90 {ms(pct(fast, 0.9))}"
    )
    print(
        f"search_verified with the embedding service's vector: p50 {ms(statistics.median(given))}"
        f", p90 {ms(pct(given, 0.9))}"
    )
    print(
        f"recall_verified (cognee.recall CHUNKS): p50 {ms(statistics.median(slow))}, "
        f"p90 {ms(pct(slow, 0.9))}"
    )

    # Searches while writes run, and the caller's loop responsiveness during writes.
    during: list[float] = []
    gaps: list[float] = []

    async def writer() -> None:
        for i in range(5):
            await store.add_verified(
                f"Concurrent claim {i}: the cache tier {i} holds {i * 64} MB.",
                source="agent-w",
                low_confidence=False,
            )

    async def reader(task: asyncio.Task[None]) -> None:
        i = 0
        while not task.done():
            t = time.perf_counter()
            await store.search_verified(question(i), 5)
            during.append(time.perf_counter() - t)
            i += 1
            await asyncio.sleep(0.02)

    async def ticker(task: asyncio.Task[None]) -> None:
        last = time.perf_counter()
        while not task.done():
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            gaps.append(now - last - 0.005)
            last = now

    task = asyncio.create_task(writer())
    await asyncio.gather(task, reader(task), ticker(task))
    print(
        f"search_verified during 5 writes: n={len(during)}, p50 {ms(statistics.median(during))}, "
        f"p90 {ms(pct(during, 0.9))}, max {ms(max(during))}"
    )
    print(f"caller loop lag during writes: max {ms(max(gaps))}, p99 {ms(pct(gaps, 0.99))}")
    print(f"improve: {await store.improve()}")
    await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=50)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--root", type=Path, default=None)
    args = parser.parse_args()
    if args.root is not None:
        asyncio.run(run(args.root, args.claims, args.queries))
        return
    with tempfile.TemporaryDirectory(prefix="mithril-cognee-") as tmp:
        asyncio.run(run(Path(tmp), args.claims, args.queries))


if __name__ == "__main__":
    main()
