"""ReputationStore on SQLite and PostgreSQL: the same tests against both."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mithril.services.reputation import paging
from mithril.services.reputation.ewma import EwmaParams, Outcome, replay
from mithril.services.reputation.model import (
    MAX_DECISION_ID_CHARS,
    MAX_REASON_CHARS,
    ReputationArgumentError,
    ReputationChange,
)
from mithril.services.reputation.priors import Priors, load_priors
from mithril.services.reputation.store import ReputationStore, default_database_url

PARAMS = EwmaParams()


@pytest.fixture
def store(reputation_db_url: str) -> Iterator[ReputationStore]:
    store = ReputationStore(reputation_db_url, load_priors(), PARAMS)
    yield store
    store.close()


def all_history(store: ReputationStore, source: str, page_size: int = 0) -> list[ReputationChange]:
    changes: list[ReputationChange] = []
    token = ""
    while True:
        page = store.history(source, page_size, token)
        changes += page.items
        token = page.next_page_token
        if not token:
            return changes


def test_unknown_source_reads_its_prior_without_being_stored(store: ReputationStore) -> None:
    slack = store.get(" slack ")
    assert (slack.source, slack.score, slack.prior) == ("Slack", 0.60, 0.60)
    assert slack.update_time is None and slack.good_count == slack.bad_count == 0
    stranger = store.get("Some Agent")
    assert (stranger.source, stranger.score, stranger.prior) == ("Some Agent", 0.30, 0.30)
    assert float(stranger) == 0.30
    assert list(store.list().items) == []
    assert list(store.history("Some Agent").items) == []


def test_record_applies_the_ewma(store: ReputationStore) -> None:
    before = datetime.now(UTC)
    good = store.record("Slack", Outcome.GOOD, "accepted", "d-1")
    assert good.score == pytest.approx(0.64)
    assert (good.good_count, good.bad_count, good.prior) == (1, 0, 0.60)
    assert good.update_time is not None and good.update_time >= before - timedelta(seconds=1)
    bad = store.record("Slack", "bad", "contradiction", "d-2")
    assert bad.score == pytest.approx(0.64 * 0.78)
    assert (bad.good_count, bad.bad_count) == (1, 1)
    assert store.get("slack") == bad


def test_neutral_leaves_the_score_but_is_recorded(store: ReputationStore) -> None:
    first = store.record("Slack", Outcome.GOOD)
    review = store.record("Slack", Outcome.NEUTRAL, "sent to review", "d-3")
    assert review.score == first.score
    assert (review.good_count, review.bad_count) == (1, 0)
    assert review.update_time == first.update_time  # the score did not change
    latest = store.history("Slack").items[0]
    assert latest.outcome is Outcome.NEUTRAL
    assert latest.old_score == latest.new_score == first.score
    assert (latest.reason, latest.decision_id) == ("sent to review", "d-3")


def test_spellings_are_one_source_with_a_stable_display_name(store: ReputationStore) -> None:
    store.record("  ci   BOT ", Outcome.GOOD)
    store.record("CI Bot", Outcome.BAD)
    store.record("ci bot", Outcome.GOOD)
    (only,) = store.list().items
    assert only.source == "ci BOT"  # as first seen, whitespace tidied
    assert (only.good_count, only.bad_count) == (2, 1)
    assert len(store.history("CI BOT").items) == 3
    store.record("SECURITY policy", Outcome.GOOD)
    assert store.get("security policy").source == "Security Policy"  # as in the priors


def test_floor_and_ceiling(store: ReputationStore) -> None:
    for _ in range(40):
        low = store.record("Pastebin", Outcome.BAD)
    assert low.score == PARAMS.floor
    for _ in range(10):
        high = store.record("Security Policy", Outcome.GOOD)
    assert high.score == PARAMS.ceiling


def test_history_is_newest_first_and_complete(store: ReputationStore) -> None:
    outcomes = [Outcome.GOOD, Outcome.BAD, Outcome.NEUTRAL, Outcome.GOOD, Outcome.GOOD]
    for number, outcome in enumerate(outcomes):
        store.record("Slack", outcome, f"reason {number}", f"d-{number}")
    store.record("Other", Outcome.BAD)  # not in Slack's history
    changes = all_history(store, "SLACK", page_size=2)
    assert [c.decision_id for c in changes] == [f"d-{n}" for n in reversed(range(5))]
    assert [c.outcome for c in changes] == list(reversed(outcomes))
    assert all(c.source == "Slack" for c in changes)
    chronological = list(reversed(changes))
    assert chronological[0].old_score == 0.60
    for earlier, later in itertools.pairwise(chronological):
        assert later.old_score == earlier.new_score
        assert later.create_time >= earlier.create_time
    assert chronological[-1].new_score == store.get("Slack").score == replay(0.6, outcomes, PARAMS)


def test_history_pages_have_no_gaps_or_repeats(store: ReputationStore) -> None:
    for number in range(23):
        store.record("Slack", Outcome.GOOD, decision_id=str(number))
    first = store.history("Slack", page_size=10)
    assert len(first.items) == 10 and first.next_page_token
    ids = [c.decision_id for c in all_history(store, "Slack", page_size=10)]
    assert ids == [str(n) for n in reversed(range(23))]
    exact = store.history("Slack", page_size=23)
    assert len(exact.items) == 23 and exact.next_page_token == ""


def test_list_pages_through_every_source_by_name(store: ReputationStore) -> None:
    names = [f"Agent {letter}" for letter in "gbfaecd"]
    for name in names:
        store.record(name, Outcome.GOOD)
    seen: list[str] = []
    token = ""
    pages = 0
    while True:
        page = store.list(page_size=3, page_token=token)
        pages += 1
        seen += [item.source for item in page.items]
        token = page.next_page_token
        if not token:
            break
    assert seen == sorted(names)
    assert pages == 3


def test_page_size_is_capped(store: ReputationStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paging, "MAX_PAGE_SIZE", 2)
    for name in "abc":
        store.record(name, Outcome.GOOD)
    page = store.list(page_size=100)
    assert len(page.items) == 2 and page.next_page_token


@pytest.mark.parametrize("token", ["garbage", paging.encode(paging.HISTORY, "slack", 3)])
def test_list_refuses_foreign_tokens(store: ReputationStore, token: str) -> None:
    with pytest.raises(ReputationArgumentError) as error:
        store.list(page_token=token)
    assert error.value.field == "page_token"


def test_history_refuses_another_sources_token(store: ReputationStore) -> None:
    for _ in range(3):
        store.record("Slack", Outcome.GOOD)
    token = store.history("Slack", page_size=1).next_page_token
    assert store.history(" SLACK", page_size=1, page_token=token).items  # same source
    with pytest.raises(ReputationArgumentError, match="another listing"):
        store.history("Pastebin", page_token=token)


def test_reset_one_source(store: ReputationStore) -> None:
    store.record("Slack", Outcome.BAD)
    store.record("Slack", Outcome.GOOD)
    store.record("Pastebin", Outcome.BAD)
    lowered = store.get("Slack").score
    assert store.reset(" slack ") == 1
    slack = store.get("Slack")
    assert (slack.score, slack.good_count, slack.bad_count) == (0.60, 0, 0)
    latest = store.history("Slack").items[0]
    assert latest.outcome is None and latest.reason == "reset"
    assert (latest.old_score, latest.new_score) == (lowered, 0.60)
    assert store.get("Pastebin").score == pytest.approx(0.30 * 0.78)  # untouched
    assert store.reset("never seen") == 0


def test_reset_all_uses_the_current_priors(reputation_db_url: str) -> None:
    first = ReputationStore(reputation_db_url, load_priors(), PARAMS)
    for name in ("Slack", "Pastebin", "Security Policy"):
        first.record(name, Outcome.BAD)
    first.close()
    # Restarted with new priors: stored rows keep theirs until reset.
    store = ReputationStore(reputation_db_url, Priors.from_mapping({"Pastebin": 0.1}), PARAMS)
    try:
        assert store.get("Pastebin").prior == 0.30
        assert store.reset() == 3
        got = {item.source: (item.score, item.prior) for item in store.list().items}
        assert got == {"Pastebin": (0.1, 0.1), "Security Policy": (0.3, 0.3), "Slack": (0.3, 0.3)}
        for name in got:
            assert [c.reason for c in store.history(name).items] == ["reset", ""]
    finally:
        store.close()


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.record("   ", Outcome.GOOD), "source"),
        (lambda s: s.record("Slack", "great"), "outcome"),
        (
            lambda s: s.record("Slack", Outcome.GOOD, "", "x" * (MAX_DECISION_ID_CHARS + 1)),
            "decision_id",
        ),
        (lambda s: s.get(""), "source"),
        (lambda s: s.history(" "), "source"),
        (lambda s: s.history("Slack", page_size=-1), "page_size"),
        (lambda s: s.reset("  "), "source"),
    ],
)
def test_bad_arguments_name_their_field(store: ReputationStore, call, field: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ReputationArgumentError) as error:
        call(store)
    assert error.value.field == field
    assert store.list().items == []  # nothing was written


def test_long_reasons_are_cut(store: ReputationStore) -> None:
    store.record("Slack", Outcome.BAD, "r" * (MAX_REASON_CHARS + 50))
    assert store.history("Slack").items[0].reason == "r" * MAX_REASON_CHARS


def test_threads_in_one_process_do_not_lose_updates(store: ReputationStore) -> None:
    start = threading.Barrier(8)

    def work(index: int) -> None:
        start.wait()
        for step in range(15):
            outcome = Outcome.BAD if (index + step) % 4 == 0 else Outcome.GOOD
            store.record("Shared", outcome, decision_id=f"{index}-{step}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    chronological = list(reversed(all_history(store, "Shared", page_size=500)))
    assert len(chronological) == 120
    for earlier, later in itertools.pairwise(chronological):
        assert later.old_score == earlier.new_score
    final = store.get("Shared")
    assert final.score == replay(0.30, [c.outcome for c in chronological], PARAMS)  # type: ignore[misc]
    assert final.good_count + final.bad_count == 120


def test_two_stores_share_one_database(reputation_db_url: str) -> None:
    a = ReputationStore(reputation_db_url, load_priors(), PARAMS)
    b = ReputationStore(reputation_db_url, load_priors(), PARAMS)  # tables exist: no error
    try:
        a.record("Slack", Outcome.GOOD)
        assert b.record("Slack", Outcome.GOOD).score == pytest.approx(1 - 0.4 * 0.9 * 0.9)
    finally:
        a.close()
        b.close()


def test_default_database_is_a_file_under_mithril_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MITHRIL_HOME", str(tmp_path / "home"))
    assert default_database_url() == f"sqlite:///{tmp_path / 'home' / 'reputation.db'}"
    store = ReputationStore("")
    try:
        store.record("Slack", Outcome.GOOD)
    finally:
        store.close()
    assert (tmp_path / "home" / "reputation.db").exists()


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:", "mysql://db/rep"])
def test_unusable_urls_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        ReputationStore(url)
