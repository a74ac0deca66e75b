"""`Reputation`, the async library: the database work runs off the event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from mithril.services.reputation.config import ReputationSettings
from mithril.services.reputation.ewma import Outcome, replay
from mithril.services.reputation.priors import PriorsError
from mithril.services.reputation.reputation import Reputation


@pytest_asyncio.fixture
async def reputation(reputation_db_url: str) -> AsyncIterator[Reputation]:
    built = Reputation.from_settings(ReputationSettings(database_url=reputation_db_url))
    yield built
    await built.aclose()


async def test_calls_run_on_the_database_threads(reputation: Reputation) -> None:
    seen: list[str] = []
    original = reputation.store.get

    def spy(source: str):  # type: ignore[no-untyped-def]
        seen.append(threading.current_thread().name)
        return original(source)

    reputation.store.get = spy  # type: ignore[method-assign]
    assert (await reputation.get("Slack")).score == 0.60
    assert seen and seen[0].startswith("reputation-db")
    assert seen[0] != threading.current_thread().name


async def test_concurrent_coroutines_are_serialised(reputation: Reputation) -> None:
    outcomes = [Outcome.BAD if n % 5 == 0 else Outcome.GOOD for n in range(40)]
    await asyncio.gather(
        *(reputation.record("Slack", o, decision_id=str(n)) for n, o in enumerate(outcomes))
    )
    page = await reputation.history("Slack", page_size=100)
    applied = [c.outcome for c in reversed(page.items)]
    assert len(applied) == 40
    final = await reputation.get("slack")
    assert final.score == replay(0.60, applied, reputation.store.params)  # type: ignore[arg-type]
    assert (final.good_count, final.bad_count) == (32, 8)
    assert (await reputation.list()).items == [final]
    assert await reputation.reset() == 1


def test_settings_reach_the_store(tmp_path: Path) -> None:
    priors = tmp_path / "priors.yaml"
    priors.write_text("priors:\n  Wiki: 0.7\n")
    settings = ReputationSettings(
        database_url=f"sqlite:///{tmp_path / 'r.db'}",
        priors_file=priors,
        default_prior=0.2,
        good_rate=0.5,
        floor=0.1,
        ceiling=0.9,
    )
    reputation = Reputation.from_settings(settings)
    try:
        store = reputation.store
        assert store.get("wiki").score == 0.7
        assert store.get("someone").score == 0.2
        assert store.record("wiki", Outcome.GOOD).score == 0.85
        assert store.record("wiki", Outcome.GOOD).score == 0.9
    finally:
        asyncio.run(reputation.aclose())


def test_bad_priors_stop_the_start(tmp_path: Path) -> None:
    priors = tmp_path / "priors.yaml"
    priors.write_text("priors:\n  Wiki: 7\n")
    with pytest.raises(PriorsError, match="between 0 and 1"):
        Reputation.from_settings(
            ReputationSettings(database_url=f"sqlite:///{tmp_path / 'r.db'}", priors_file=priors)
        )
