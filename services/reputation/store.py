"""Per-source trust in SQLAlchemy 2 (sync): SQLite under MITHRIL_HOME, or PostgreSQL by URL.

Every change is one transaction that reads the score under a lock, applies the EWMA and
writes both the new score and a history row, so any number of threads and processes (and
service replicas sharing one PostgreSQL) recording outcomes at once give exactly the
result of applying them one after another:

- PostgreSQL: `INSERT ... ON CONFLICT DO NOTHING` of the source's prior row, then
  `SELECT ... FOR UPDATE` of it; concurrent writers to one source queue on the row lock.
- SQLite: `BEGIN IMMEDIATE` takes the database's write lock before the read; other
  writers wait for it (busy timeout) instead of failing or reading a stale score.

The methods block; `Reputation` (reputation.py) runs them off the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection, Engine, make_url

from mithril.runtime import db
from mithril.runtime.settings import mithril_home
from mithril.services.reputation import ewma, paging
from mithril.services.reputation.ewma import EwmaParams, Outcome
from mithril.services.reputation.model import (
    MAX_DECISION_ID_CHARS,
    MAX_REASON_CHARS,
    RESET_REASON,
    Page,
    ReputationArgumentError,
    ReputationChange,
    SourceReputation,
    parse_outcome,
)
from mithril.services.reputation.priors import Priors, canonical_source, display_name
from mithril.services.reputation.tables import changes, metadata, sources

_log = logging.getLogger(__name__)

DATABASE_FILE = "reputation.db"
BUSY_TIMEOUT_SECONDS = 30
_PG_LOCK_KEY = 0x72657075  # an advisory lock that serialises table creation across processes
_BEGIN_OPTION = "mithril_sqlite_begin"


def default_database_url() -> str:
    """A SQLite file under MITHRIL_HOME."""
    return f"sqlite:///{mithril_home() / DATABASE_FILE}"


def normalise_url(url: str) -> str:
    """Empty means the default file; postgres:// and postgresql:// mean psycopg 3."""
    return db.normalise_url(url) if url else default_database_url()


class ReputationStore:
    """Thread-safe and multi-process safe; one instance per process is enough."""

    def __init__(
        self,
        url: str = "",
        priors: Priors | None = None,
        params: EwmaParams | None = None,
        *,
        pool_size: int = 8,
    ) -> None:
        url = normalise_url(url)
        parsed = make_url(url)
        self.backend = parsed.get_backend_name()
        self.priors = priors or Priors()
        self.params = params or EwmaParams()
        kwargs: dict[str, Any] = {
            "pool_pre_ping": True,
            "pool_size": pool_size,
            "max_overflow": 2,
        }
        if self.backend == "sqlite":
            database = parsed.database or ""
            if not database or database == ":memory:" or "mode=memory" in url:
                # Each pooled connection would get a database of its own.
                raise ValueError("the reputation store needs a SQLite file, not :memory:")
            if not database.startswith("file:"):
                Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
            kwargs["connect_args"] = {"check_same_thread": False, "timeout": BUSY_TIMEOUT_SECONDS}
        elif self.backend != "postgresql":
            raise ValueError(f"unsupported reputation store URL {parsed.render_as_string()!r}")
        self.engine: Engine = sa.create_engine(url, **kwargs)
        if self.backend == "sqlite":
            sa.event.listen(self.engine, "connect", _sqlite_connect)
            sa.event.listen(self.engine, "begin", _sqlite_begin)
        self._create_tables()

    # -- transactions -----------------------------------------------------------------

    @contextmanager
    def _write(self) -> Iterator[Connection]:
        """One read-modify-write transaction, holding SQLite's write lock from its start."""
        with self.engine.connect() as connection:
            if self.backend == "sqlite":
                connection.execution_options(**{_BEGIN_OPTION: "IMMEDIATE"})
            with connection.begin():
                yield connection

    def _create_tables(self) -> None:
        with self._write() as connection:
            if self.backend == "postgresql":
                # Two replicas starting together must not both try CREATE TABLE.
                connection.execute(sa.select(sa.func.pg_advisory_xact_lock(_PG_LOCK_KEY)))
            metadata.create_all(connection, checkfirst=True)

    # -- reads ------------------------------------------------------------------------

    def get(self, source: str) -> SourceReputation:
        """The source's reputation; a source never seen gets its prior (nothing stored)."""
        key = canonical_source(source)
        with self.engine.connect() as connection:
            row = connection.execute(sa.select(sources).where(sources.c.source == key)).first()
        if row is None:
            display, prior = self._prior(key, source)
            return SourceReputation(display, ewma.initial(prior, self.params), prior, None)
        return _reputation(row)

    def list(self, page_size: int = 0, page_token: str = "") -> Page[SourceReputation]:
        """Every stored source (one that had an outcome recorded), by canonical name."""
        size = paging.page_size(page_size)
        statement = sa.select(sources).order_by(sources.c.source).limit(size + 1)
        if page_token:
            after = paging.decode_key(page_token, paging.SOURCES, "")
            statement = statement.where(sources.c.source > after)
        with self.engine.connect() as connection:
            rows = connection.execute(statement).all()
        token = ""
        if len(rows) > size:
            rows = rows[:size]
            token = paging.encode(paging.SOURCES, "", rows[-1].source)
        return Page([_reputation(row) for row in rows], token)

    def history(
        self, source: str, page_size: int = 0, page_token: str = ""
    ) -> Page[ReputationChange]:
        """The source's changes, newest first."""
        key = canonical_source(source)
        size = paging.page_size(page_size)
        statement = (
            sa.select(changes)
            .where(changes.c.source == key)
            .order_by(changes.c.id.desc())
            .limit(size + 1)
        )
        if page_token:
            before = paging.decode_id(page_token, paging.HISTORY, key)
            statement = statement.where(changes.c.id < before)
        with self.engine.connect() as connection:
            display = connection.execute(
                sa.select(sources.c.display_name).where(sources.c.source == key)
            ).scalar()
            rows = connection.execute(statement).all()
        token = ""
        if len(rows) > size:
            rows = rows[:size]
            token = paging.encode(paging.HISTORY, key, rows[-1].id)
        name = display or display_name(source)
        return Page([_change(name, row) for row in rows], token)

    # -- writes -----------------------------------------------------------------------

    def record(
        self, source: str, outcome: Outcome | str, reason: str = "", decision_id: str = ""
    ) -> SourceReputation:
        """Apply one outcome atomically; returns the reputation after it."""
        key = canonical_source(source)
        outcome = parse_outcome(outcome)
        if len(decision_id) > MAX_DECISION_ID_CHARS:
            raise ReputationArgumentError(
                "decision_id",
                f"{len(decision_id)} characters exceed the limit of {MAX_DECISION_ID_CHARS}",
            )
        now = datetime.now(UTC)
        with self._write() as connection:
            row = self._locked_row(connection, key, source)
            new_score = ewma.update(row.score, outcome, self.params)
            values: dict[str, Any] = {
                "score": new_score,
                "good_count": row.good_count + (outcome is Outcome.GOOD),
                "bad_count": row.bad_count + (outcome is Outcome.BAD),
            }
            if outcome is not Outcome.NEUTRAL:  # a review leaves the score as it was
                values["update_time"] = now
            connection.execute(sa.update(sources).where(sources.c.source == key).values(values))
            connection.execute(
                sa.insert(changes).values(
                    source=key,
                    old_score=row.score,
                    new_score=new_score,
                    outcome=outcome.value,
                    reason=reason[:MAX_REASON_CHARS],
                    decision_id=decision_id,
                    create_time=now,
                )
            )
        return SourceReputation(
            source=row.display_name,
            score=new_score,
            prior=row.prior,
            update_time=values.get("update_time", row.update_time),
            good_count=values["good_count"],
            bad_count=values["bad_count"],
        )

    def reset(self, source: str = "") -> int:
        """Put one source (or, with "", every stored source) back to its current prior,
        with zero counts; each reset is recorded in the history. Returns how many."""
        now = datetime.now(UTC)
        statement = sa.select(sources).order_by(sources.c.source).with_for_update()
        if source:
            statement = statement.where(sources.c.source == canonical_source(source))
        with self._write() as connection:
            rows = connection.execute(statement).all()  # locked in one order: no deadlocks
            if not rows:
                return 0
            resets = []
            for row in rows:
                prior = self.priors.prior_of(row.source)
                new = ewma.initial(prior, self.params)
                resets.append({"key": row.source, "old": row.score, "new": new, "to": prior})
            connection.execute(
                sa.update(sources)
                .where(sources.c.source == sa.bindparam("key"))
                .values(
                    score=sa.bindparam("new"),
                    prior=sa.bindparam("to"),
                    good_count=0,
                    bad_count=0,
                    update_time=now,
                ),
                resets,
            )
            connection.execute(
                sa.insert(changes),
                [
                    {
                        "source": item["key"],
                        "old_score": item["old"],
                        "new_score": item["new"],
                        "outcome": None,
                        "reason": RESET_REASON,
                        "decision_id": "",
                        "create_time": now,
                    }
                    for item in resets
                ],
            )
        return len(rows)

    def close(self) -> None:
        self.engine.dispose()

    # -- helpers ----------------------------------------------------------------------

    def _prior(self, key: str, source: str) -> tuple[str, float]:
        """The display name and prior of a source not stored yet."""
        configured = self.priors.lookup(key)
        if configured is not None:
            return configured.display, configured.value
        return display_name(source), self.priors.default

    def _locked_row(self, connection: Connection, key: str, source: str) -> Any:
        """The source's row, created from its prior if absent, locked until commit."""
        display, prior = self._prior(key, source)
        insert: Any = postgresql.insert if self.backend == "postgresql" else sqlite.insert
        connection.execute(
            insert(sources)
            .values(
                source=key,
                display_name=display,
                score=ewma.initial(prior, self.params),
                prior=prior,
                good_count=0,
                bad_count=0,
                update_time=None,
            )
            .on_conflict_do_nothing(index_elements=["source"])
        )
        # FOR UPDATE renders on PostgreSQL; SQLite's BEGIN IMMEDIATE already serialises.
        return connection.execute(
            sa.select(sources).where(sources.c.source == key).with_for_update()
        ).one()


def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
    # pysqlite's own transaction handling would BEGIN DEFERRED lazily; turn it off and let
    # `_sqlite_begin` say how each transaction begins.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_SECONDS * 1000}")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _sqlite_begin(connection: Connection) -> None:
    """BEGIN IMMEDIATE for writes (the write lock before the first read), BEGIN for reads."""
    mode = connection.get_execution_options().get(_BEGIN_OPTION, "DEFERRED")
    connection.exec_driver_sql(f"BEGIN {mode}")


def _reputation(row: Any) -> SourceReputation:
    return SourceReputation(
        source=row.display_name,
        score=row.score,
        prior=row.prior,
        update_time=row.update_time,
        good_count=int(row.good_count),
        bad_count=int(row.bad_count),
    )


def _change(display: str, row: Any) -> ReputationChange:
    return ReputationChange(
        source=display,
        old_score=row.old_score,
        new_score=row.new_score,
        outcome=Outcome(row.outcome) if row.outcome is not None else None,
        reason=row.reason,
        decision_id=row.decision_id,
        create_time=row.create_time,
    )
