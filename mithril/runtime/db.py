"""The SQLAlchemy plumbing every Mithril store shares: SQLite (a file under MITHRIL_HOME,
WAL mode) by default, PostgreSQL (psycopg 3) by URL, aware UTC timestamps, and table
creation that several processes starting together cannot race."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import orjson
import sqlalchemy as sa
from sqlalchemy.engine import Dialect, Engine, make_url


def utc(value: datetime) -> datetime:
    """An aware UTC datetime; naive values are taken to be UTC already."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def normalise_url(url: str) -> str:
    """postgres:// and postgresql:// mean psycopg 3, the driver Mithril ships with."""
    for prefix in ("postgres://", "postgresql://"):
        if url.startswith(prefix):
            return "postgresql+psycopg://" + url[len(prefix) :]
    return url


class UTCDateTime(sa.TypeDecorator[datetime]):
    """Aware UTC datetimes in and out: timestamptz on PostgreSQL, naive-UTC text on SQLite
    (its ISO text sorts and compares correctly as long as every value is UTC)."""

    impl = sa.DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = utc(value)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        return None if value is None else utc(value)


def create_engine(url: str, *, purpose: str) -> Engine:
    """An engine for a SQLite file (its folder created, WAL, a 30 s busy timeout) or a
    PostgreSQL URL; anything else is a ValueError naming `purpose`."""
    url = normalise_url(url)
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    kwargs: dict[str, Any] = {}
    if backend == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        kwargs["connect_args"] = {"check_same_thread": False, "timeout": 30}
    elif backend == "postgresql":
        # A pooled server connection can go stale (a restart, an idle timeout); a local
        # SQLite file cannot, and pinging it would cost a statement on every checkout.
        kwargs["pool_pre_ping"] = True
    else:
        raise ValueError(f"unsupported {purpose} URL {parsed.render_as_string()!r}")
    engine = sa.create_engine(url, json_serializer=json_dumps, **kwargs)
    if backend == "sqlite":
        sa.event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def json_dumps(value: Any) -> str:
    """JSON columns written through orjson (several times faster than `json` per row: the
    event log writes four per decision); what orjson refuses (integers beyond 64 bits,
    non-string keys) falls back to `json`. Reads stay with `json`, which keeps big integers
    exact where orjson would turn them into floats."""
    try:
        return orjson.dumps(value).decode()
    except TypeError:
        return json.dumps(value)


def create_tables(engine: Engine, metadata: sa.MetaData, lock_key: int) -> None:
    """CREATE TABLE IF NOT EXISTS, serialised on PostgreSQL by an advisory lock so that
    replicas starting together do not both try."""
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(sa.select(sa.func.pg_advisory_xact_lock(lock_key)))
        metadata.create_all(connection, checkfirst=True)


def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
    finally:
        cursor.close()
