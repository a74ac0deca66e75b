"""Several processes recording outcomes for the same sources at once, straight against one
database (a SQLite file, or one PostgreSQL database), give exactly the sequential result.

Each of WORKERS processes records PER_WORKER outcomes for MIXED (good and bad interleaved)
and PER_WORKER good outcomes for SAME. Rates are small so SAME does not reach the ceiling:
a lost update would change its final score.
"""

from __future__ import annotations

import itertools
import multiprocessing
from multiprocessing.synchronize import Barrier

from mithril.services.reputation.ewma import EwmaParams, Outcome, initial, repeated, replay
from mithril.services.reputation.model import ReputationChange
from mithril.services.reputation.priors import Priors
from mithril.services.reputation.store import ReputationStore

WORKERS = 4
PER_WORKER = 25
MIXED = "Mixed Agent"
SAME = "Steady Agent"
PRIORS = {MIXED: 0.5, SAME: 0.3}
PARAMS = EwmaParams(good_rate=0.02, bad_rate=0.03, floor=0.05, ceiling=0.99)


def mixed_outcome(worker: int, step: int) -> Outcome:
    return Outcome.BAD if (worker + step) % 3 == 0 else Outcome.GOOD


def _worker(url: str, worker: int, start: Barrier) -> None:
    store = ReputationStore(url, Priors.from_mapping(PRIORS), PARAMS, pool_size=1)
    start.wait(timeout=60)
    for step in range(PER_WORKER):
        store.record(MIXED, mixed_outcome(worker, step), "mixed", f"{worker}-{step}")
        store.record(SAME, Outcome.GOOD, "same", f"{worker}-{step}")
    store.close()


def run_workers(url: str) -> None:
    # Not a plain fork of this process (it runs threads); a fork server with the modules
    # preloaded starts each worker in milliseconds instead of a second of imports.
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["mithril.services.reputation"])
    start = context.Barrier(WORKERS)
    processes = [
        context.Process(target=_worker, args=(url, worker, start)) for worker in range(WORKERS)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [process.exitcode for process in processes] == [0] * WORKERS


def chronological_history(store: ReputationStore, source: str) -> list[ReputationChange]:
    changes: list[ReputationChange] = []
    token = ""
    while True:
        page = store.history(source, page_size=30, page_token=token)
        changes += page.items
        token = page.next_page_token
        if not token:
            return changes[::-1]


def assert_sequential(store: ReputationStore, source: str) -> list[ReputationChange]:
    """(a) one history row per call, (b) an unbroken chain, (c) replay reproduces the score."""
    changes = chronological_history(store, source)
    total = WORKERS * PER_WORKER
    assert len(changes) == total
    assert {c.decision_id for c in changes} == {
        f"{w}-{s}" for w in range(WORKERS) for s in range(PER_WORKER)
    }
    start = initial(PRIORS[source], PARAMS)
    assert changes[0].old_score == start
    for earlier, later in itertools.pairwise(changes):
        assert later.old_score == earlier.new_score  # no two writers read the same score
    outcomes = [c.outcome for c in changes]
    final = store.get(source)
    assert final.score == changes[-1].new_score
    assert final.score == replay(start, outcomes, PARAMS)  # type: ignore[arg-type]
    assert final.good_count == outcomes.count(Outcome.GOOD)
    assert final.bad_count == outcomes.count(Outcome.BAD)
    return changes


def test_processes_recording_at_once_equal_one_at_a_time(reputation_db_url: str) -> None:
    store = ReputationStore(reputation_db_url, Priors.from_mapping(PRIORS), PARAMS)
    try:
        run_workers(reputation_db_url)
        mixed = assert_sequential(store, MIXED)
        assert {c.outcome for c in mixed} == {Outcome.GOOD, Outcome.BAD}
        assert_sequential(store, SAME)
        # (d) same outcome only: the closed form of 100 good outcomes, far from the ceiling.
        total = WORKERS * PER_WORKER
        expected = repeated(PRIORS[SAME], Outcome.GOOD, total, PARAMS)
        assert expected < PARAMS.ceiling
        assert abs(store.get(SAME).score - expected) < 1e-12
        # Without atomicity, fewer updates would land: even one lost is far outside that.
        assert expected - repeated(PRIORS[SAME], Outcome.GOOD, total - 1, PARAMS) > 1e-3
    finally:
        store.close()
