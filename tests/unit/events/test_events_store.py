"""EventStore on SQLite and PostgreSQL: the same tests against both (see event_store_url)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
import sqlalchemy as sa

from mithril.gateway.events import EXCERPT_MAX_CHARS, EventStore, default_database_url
from mithril.runtime.db import normalise_url

AWS_KEY = "AKIAQ3EGRZLNW7T2X5PB"
PRIVATE_KEY = (
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/Iz\n"
    "W7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoL\n"
    "-----END RSA PRIVATE KEY-----"
)


@pytest.fixture
def store(event_store_url: str) -> Iterator[EventStore]:
    store = EventStore(event_store_url)
    yield store
    store.close()


def test_write_and_get_round_trip(store: EventStore, make_event) -> None:  # type: ignore[no-untyped-def]
    event = make_event(
        request_id="req-9",
        model="llama3",
        unavailable_services=("judge",),
        detectors=("scanner", "secrets"),
    )
    assert store.write_batch([event]) == 1
    got = store.get(event.decision_id)
    assert got is not None
    assert got == event  # every field survives, the time as aware UTC
    assert got.time.tzinfo is not None and got.time.utcoffset() == timedelta(0)
    assert store.get("no-such-id") is None


def test_writes_are_idempotent_on_decision_id(store: EventStore, make_event) -> None:  # type: ignore[no-untyped-def]
    a, b, c = make_event(), make_event(), make_event()
    assert store.write_batch([a, b, a]) == 2  # a repeat inside one batch
    assert store.write_batch([b, c]) == 1  # b is already stored
    assert store.write_batch([]) == 0
    assert store.totals()["total"] == 3


@pytest.mark.parametrize("size", [1, 5, 300])
def test_a_batch_of_any_size_is_written_whole(store: EventStore, make_event, size: int) -> None:  # type: ignore[no-untyped-def]
    """Batches go out as multi-row statements in chunks (300 = 256 + 32 + 8 + 4): every
    row lands once, every field intact, whichever chunk carried it."""
    batch = [make_event(seconds_ago=i, request_id=f"req-{i}") for i in range(size)]
    repeated = batch + batch[: size // 2]  # repeats, some in another chunk than the first
    assert store.write_batch(repeated) == size
    assert store.totals()["total"] == size
    for event in (batch[0], batch[-1], batch[size // 2]):
        assert store.get(event.decision_id) == event


def test_concurrent_writers_record_each_decision_once(event_store_url: str, make_event) -> None:  # type: ignore[no-untyped-def]
    """Two stores (as two gateway processes would) writing overlapping batches at once."""
    events = [make_event(seconds_ago=i) for i in range(200)]
    stores = [EventStore(event_store_url), EventStore(event_store_url)]
    inserted = [0, 0]
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def write(index: int) -> None:
        start.wait()
        ordered = events if index == 0 else events[::-1]
        try:
            for offset in range(0, len(ordered), 20):
                inserted[index] += stores[index].write_batch(ordered[offset : offset + 20])
        except Exception as exc:  # a deadlock would leave the other writer to do it all
            errors.append(exc)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert sum(inserted) == len(events)
    with stores[0].engine.connect() as connection:
        rows = connection.execute(
            sa.text("select count(*), count(distinct decision_id) from gateway_events")
        ).one()
    assert tuple(rows) == (200, 200)
    for s in stores:
        s.close()


def test_excerpt_is_redacted_again_and_capped(store: EventStore, make_event) -> None:  # type: ignore[no-untyped-def]
    leaky = make_event(excerpt=f"my key is {AWS_KEY} and my card is 4111 1111 1111 1111")
    long = make_event(excerpt="x" * 1000)
    # The cap comes after redaction, so a secret straddling it cannot leave a fragment.
    straddling = make_event(excerpt="y" * 230 + PRIVATE_KEY)
    store.write_batch([leaky, long, straddling])
    got = store.get(leaky.decision_id)
    assert got is not None
    assert AWS_KEY not in got.excerpt and "4111" not in got.excerpt
    assert "[REDACTED:" in got.excerpt
    capped = store.get(long.decision_id)
    assert capped is not None and capped.excerpt == "x" * EXCERPT_MAX_CHARS
    cut = store.get(straddling.decision_id)
    assert cut is not None and len(cut.excerpt) <= EXCERPT_MAX_CHARS
    assert "MIIE" not in cut.excerpt and "BEGIN RSA" not in cut.excerpt
    with store.engine.connect() as connection:
        stored = " ".join(
            connection.execute(sa.text("select excerpt from gateway_events")).scalars()
        )
    assert AWS_KEY not in stored


def test_a_batch_with_no_secret_keeps_its_excerpts_capped(store: EventStore, make_event) -> None:  # type: ignore[no-untyped-def]
    """The batch is screened in one pass; clean excerpts are only capped."""
    clean = [
        make_event(excerpt="a plain question about the weather"),
        make_event(excerpt="z" * 999),
    ]
    store.write_batch(clean)
    first, second = (store.get(e.decision_id) for e in clean)
    assert first is not None and first.excerpt == "a plain question about the weather"
    assert second is not None and second.excerpt == "z" * EXCERPT_MAX_CHARS


def test_findings_keep_only_known_keys_and_redacted_messages(store: EventStore, make_event) -> None:  # type: ignore[no-untyped-def]
    finding = {
        "rule_id": "secrets.aws_access_key",
        "detector": "secrets",
        "severity": "critical",
        "message": f"found {AWS_KEY}",
        "matched_text": AWS_KEY,
    }
    event = make_event(findings=(finding,))
    store.write_batch([event])
    got = store.get(event.decision_id)
    assert got is not None
    assert "matched_text" not in got.findings[0]
    assert AWS_KEY not in str(got.findings)


@pytest.fixture
def filled(store: EventStore, make_event):  # type: ignore[no-untyped-def]
    events = {
        "old_allow": make_event(seconds_ago=7200, severity=None, action="allow", tenant="acme"),
        "block_high": make_event(seconds_ago=300, severity="high", tenant="acme"),
        "redact_crit": make_event(
            seconds_ago=200,
            severity="critical",
            action="redact",
            tenant="globex",
            detectors=("secrets",),
            direction="output",
        ),
        "allow_low": make_event(
            seconds_ago=100, severity="low", action="allow", detectors=("scanner", "secrets")
        ),
        "block_crit": make_event(seconds_ago=10, severity="critical", tenant="globex"),
    }
    store.write_batch(list(events.values()))
    return {name: event.decision_id for name, event in events.items()}


def _names(found, filled) -> list[str]:  # type: ignore[no-untyped-def]
    by_id = {v: k for k, v in filled.items()}
    return [by_id[event.decision_id] for event in found]


def test_query_newest_first(store: EventStore, filled) -> None:  # type: ignore[no-untyped-def]
    assert _names(store.query(), filled) == [
        "block_crit",
        "allow_low",
        "redact_crit",
        "block_high",
        "old_allow",
    ]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"action": "block"}, ["block_crit", "block_high"]),
        ({"action": "redact"}, ["redact_crit"]),
        ({"severity": "critical"}, ["block_crit", "redact_crit"]),
        ({"severity": "none"}, ["old_allow"]),
        ({"detector": "secrets"}, ["allow_low", "redact_crit"]),
        ({"detector": "scan"}, []),  # whole names only
        ({"detector": "s_c%"}, []),  # LIKE wildcards are literal
        ({"tenant": "globex"}, ["block_crit", "redact_crit"]),
        ({"tenant": "globex", "action": "redact"}, ["redact_crit"]),
        ({"since_seconds": 3600}, ["block_crit", "allow_low", "redact_crit", "block_high"]),
        ({"until_seconds": 150}, ["redact_crit", "block_high", "old_allow"]),
        ({"since_seconds": 250, "until_seconds": 50}, ["allow_low", "redact_crit"]),
    ],
)
def test_query_filters(store: EventStore, filled, filters, expected) -> None:  # type: ignore[no-untyped-def]
    now = datetime.now(UTC)
    if "since_seconds" in filters:
        filters["since"] = now - timedelta(seconds=filters.pop("since_seconds"))
    if "until_seconds" in filters:
        filters["until"] = now - timedelta(seconds=filters.pop("until_seconds"))
    assert _names(store.query(**filters), filled) == expected


def test_query_accepts_naive_and_other_zone_times(store: EventStore, filled) -> None:  # type: ignore[no-untyped-def]
    since = datetime.now(UTC) - timedelta(seconds=150)
    naive = since.replace(tzinfo=None)
    other = since.astimezone(__import__("datetime").timezone(timedelta(hours=-5)))
    expected = ["block_crit", "allow_low"]
    assert _names(store.query(since=naive), filled) == expected
    assert _names(store.query(since=other), filled) == expected


def test_paging_with_before(store: EventStore, make_event) -> None:  # type: ignore[no-untyped-def]
    same_time = datetime.now(UTC)
    events = [make_event(time=same_time) for _ in range(5)] + [
        make_event(seconds_ago=i + 1) for i in range(6)
    ]
    store.write_batch(events)
    seen: list[str] = []
    before = None
    while True:
        page = store.query(limit=4, before=before)
        if not page:
            break
        seen.extend(event.decision_id for event in page)
        before = page[-1].decision_id
    assert len(seen) == len(set(seen)) == 11
    assert seen == [event.decision_id for event in store.query(limit=100)]
    filtered = store.query(action="block", limit=3)
    rest = store.query(action="block", limit=100, before=filtered[-1].decision_id)
    assert len(filtered) + len(rest) == 11


def test_query_rejects_bad_limit_and_unknown_cursor(store: EventStore) -> None:
    with pytest.raises(ValueError):
        store.query(limit=0)
    with pytest.raises(ValueError):
        store.query(limit=100_000)
    with pytest.raises(KeyError):
        store.query(before="missing")


def test_totals(store: EventStore, filled) -> None:  # type: ignore[no-untyped-def]
    totals = store.totals()
    assert totals["total"] == 5
    assert totals["flagged"] == 3  # make_event flags high and critical findings
    assert totals["by_action"] == {"allow": 2, "block": 2, "redact": 1}
    assert totals["by_severity"] == {"critical": 2, "high": 1, "low": 1, "none": 1}
    assert totals["by_direction"] == {"input": 4, "output": 1}
    assert totals["by_tenant"] == {"acme": 3, "globex": 2}
    recent = store.totals(since=datetime.now(UTC) - timedelta(seconds=3600))
    assert recent["total"] == 4 and recent["by_action"] == {"allow": 1, "block": 2, "redact": 1}


def test_empty_totals(store: EventStore) -> None:
    assert store.totals() == {
        "total": 0,
        "flagged": 0,
        "by_action": {},
        "by_severity": {},
        "by_direction": {},
        "by_tenant": {},
    }


def test_tables_are_created_once_by_many_stores(event_store_url: str) -> None:
    stores = [EventStore(event_store_url) for _ in range(3)]
    for s in stores:
        s.close()


def test_default_url_is_sqlite_under_mithril_home(tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("MITHRIL_HOME", str(tmp_path / "home"))
    url = default_database_url()
    assert url == f"sqlite:///{tmp_path / 'home' / 'gateway-events.db'}"
    store = EventStore(url)
    try:
        assert (tmp_path / "home" / "gateway-events.db").exists()
        with store.engine.connect() as connection:
            assert connection.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
            assert connection.exec_driver_sql("PRAGMA busy_timeout").scalar() >= 5000
    finally:
        store.close()


def test_url_normalisation_and_unsupported_backends() -> None:
    assert normalise_url("postgres://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalise_url("postgresql://u@h/db") == "postgresql+psycopg://u@h/db"
    assert normalise_url("sqlite:///x.db") == "sqlite:///x.db"
    with pytest.raises(ValueError):
        EventStore("mysql+pymysql://u@h/db")


def test_prune(store: EventStore, filled) -> None:  # type: ignore[no-untyped-def]
    assert store.prune(datetime.now(UTC) - timedelta(seconds=3600)) == 1
    assert store.get(filled["old_allow"]) is None
    assert store.totals()["total"] == 4
