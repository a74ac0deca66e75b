"""Where events are kept: one table, `gateway_events`, through SQLAlchemy 2 (sync).

SQLite (the default, a file under MITHRIL_HOME, WAL mode) or PostgreSQL by URL. Writes are
idempotent on `decision_id` (a unique key and INSERT ... ON CONFLICT DO NOTHING), so
several gateway processes sharing one PostgreSQL, or a retried batch, record each decision
exactly once. Excerpts are redacted again and capped here, whatever the caller did.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Dialect, Engine

from mithril.gateway.events.record import (
    EXCERPT_MAX_CHARS,
    FINDING_KEYS,
    SEVERITIES,
    EventRecord,
    utc,
)
from mithril.runtime import db
from mithril.runtime.db import UTCDateTime
from mithril.runtime.settings import mithril_home

_log = logging.getLogger(__name__)

DATABASE_FILE = "gateway-events.db"
MAX_QUERY_LIMIT = 1000
TOP_TENANTS = 50
NO_SEVERITY = "none"
"""The `severity` filter value that selects events without findings."""
_PG_LOCK_KEY = 0x6D697468  # an advisory lock that serialises table creation across processes


def default_database_url() -> str:
    """A SQLite file under MITHRIL_HOME."""
    return f"sqlite:///{mithril_home() / DATABASE_FILE}"


_metadata = sa.MetaData()
_id_type = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # INTEGER PRIMARY KEY = rowid

events = sa.Table(
    "gateway_events",
    _metadata,
    sa.Column("id", _id_type, primary_key=True, autoincrement=True),
    sa.Column("decision_id", sa.String(64), nullable=False, unique=True),
    sa.Column("time", UTCDateTime(), nullable=False),
    sa.Column("tenant", sa.String(200), nullable=False),
    sa.Column("route", sa.String(200), nullable=False),
    sa.Column("direction", sa.String(16), nullable=False),
    sa.Column("action", sa.String(16), nullable=False),
    sa.Column("mode", sa.String(16), nullable=False),
    sa.Column("flagged", sa.Boolean(), nullable=False),
    sa.Column("score", sa.Float(), nullable=False),
    sa.Column("severity", sa.String(16), nullable=True),
    sa.Column("rule_ids", sa.JSON(), nullable=False),
    sa.Column("detectors", sa.JSON(), nullable=False),
    sa.Column("detector_key", sa.String(500), nullable=False),
    sa.Column("latency_ms", sa.Float(), nullable=False),
    sa.Column("excerpt", sa.String(EXCERPT_MAX_CHARS), nullable=False),
    sa.Column("findings", sa.JSON(), nullable=False),
    sa.Column("request_id", sa.String(200), nullable=False),
    sa.Column("model", sa.String(200), nullable=False),
    sa.Column("unavailable_services", sa.JSON(), nullable=False),
    sa.Index("ix_gateway_events_time", "time", "id"),
    sa.Index("ix_gateway_events_action_time", "action", "time"),
    sa.Index("ix_gateway_events_tenant_time", "tenant", "time"),
    sa.Index("ix_gateway_events_severity_time", "severity", "time"),
)


def _detector_key(detectors: Sequence[str]) -> str:
    """ ",scanner,secrets,": a detector filter is then one LIKE '%,name,%'."""
    return "," + ",".join(detectors) + "," if detectors else ""


def _like_literal(value: str) -> str:
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


class EventStore:
    """Thread-safe: the writer thread and the admin API share one instance."""

    def __init__(self, url: str) -> None:
        self.engine: Engine = db.create_engine(url, purpose="event store")
        db.create_tables(self.engine, _metadata, _PG_LOCK_KEY)
        self._insert = _BatchInsert(self.engine.dialect)

    # -- writes -----------------------------------------------------------------------

    def write_batch(self, records: Sequence[EventRecord]) -> int:
        """Insert `records` in one transaction; decision ids already stored (or repeated
        in the batch) are skipped. Returns how many rows were inserted."""
        unique: dict[str, EventRecord] = {}
        for record in records:
            unique.setdefault(record.decision_id, record)
        # In key order, two writers whose batches overlap lock the shared ids in the same
        # order, so PostgreSQL cannot deadlock them.
        ordered = sorted(unique.values(), key=lambda record: record.decision_id)
        excerpts = redact_excerpts([record.excerpt for record in ordered])
        rows = [
            self._insert.row(record, excerpt)
            for record, excerpt in zip(ordered, excerpts, strict=True)
        ]
        inserted = 0
        with self.engine.begin() as connection:
            for sql, parameters in self._insert.statements(rows):
                # An INSERT's row count leaves out the rows its conflict clause skipped.
                inserted += max(connection.exec_driver_sql(sql, parameters).rowcount, 0)
        return inserted

    # -- reads ------------------------------------------------------------------------

    def query(
        self,
        *,
        action: str | None = None,
        severity: str | None = None,
        detector: str | None = None,
        tenant: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 100,
        before: str | None = None,
    ) -> list[EventRecord]:
        """Newest first. `severity="none"` selects events without findings; `since` is
        inclusive, `until` exclusive; `before` is the decision id of the last event of the
        previous page (KeyError if no such event)."""
        if not 1 <= limit <= MAX_QUERY_LIMIT:
            raise ValueError(f"limit must be between 1 and {MAX_QUERY_LIMIT}")
        statement = sa.select(events)
        for condition in self._filters(action, severity, detector, tenant, since, until):
            statement = statement.where(condition)
        with self.engine.connect() as connection:
            if before is not None:
                cursor = connection.execute(
                    sa.select(events.c.time, events.c.id).where(events.c.decision_id == before)
                ).first()
                if cursor is None:
                    raise KeyError(before)
                statement = statement.where(
                    sa.or_(
                        events.c.time < cursor.time,
                        sa.and_(events.c.time == cursor.time, events.c.id < cursor.id),
                    )
                )
            statement = statement.order_by(events.c.time.desc(), events.c.id.desc()).limit(limit)
            return [_record(row) for row in connection.execute(statement).mappings()]

    def get(self, decision_id: str) -> EventRecord | None:
        with self.engine.connect() as connection:
            row = (
                connection.execute(sa.select(events).where(events.c.decision_id == decision_id))
                .mappings()
                .first()
            )
        return None if row is None else _record(row)

    def totals(self, since: datetime | None = None) -> dict[str, object]:
        """{"total", "flagged", "by_action", "by_severity", "by_direction", "by_tenant"}:
        counts of events at or after `since` (all when None). Events without findings
        count under severity "none"; only the TOP_TENANTS busiest tenants are listed."""
        where = [events.c.time >= utc(since)] if since is not None else []

        def grouped(column: sa.ColumnElement[Any], limit: int | None = None) -> dict[str, int]:
            count = sa.func.count().label("n")
            statement = sa.select(column, count).where(*where).group_by(column)
            if limit is not None:
                statement = statement.order_by(count.desc(), column).limit(limit)
            result = connection.execute(statement).all()
            return {(key if key is not None else NO_SEVERITY): int(n) for key, n in result}

        with self.engine.connect() as connection:
            total, flagged = connection.execute(
                sa.select(
                    sa.func.count(),
                    sa.func.coalesce(sa.func.sum(sa.case((events.c.flagged, 1), else_=0)), 0),
                ).where(*where)
            ).one()
            return {
                "total": int(total),
                "flagged": int(flagged),
                "by_action": grouped(events.c.action),
                "by_severity": grouped(events.c.severity),
                "by_direction": grouped(events.c.direction),
                "by_tenant": grouped(events.c.tenant, TOP_TENANTS),
            }

    def prune(self, before: datetime) -> int:
        """Delete events older than `before`; returns how many were deleted (retention)."""
        with self.engine.begin() as connection:
            result = connection.execute(sa.delete(events).where(events.c.time < utc(before)))
        return int(result.rowcount or 0)

    def close(self) -> None:
        self.engine.dispose()

    # -- helpers ----------------------------------------------------------------------

    @staticmethod
    def _filters(
        action: str | None,
        severity: str | None,
        detector: str | None,
        tenant: str | None,
        since: datetime | None,
        until: datetime | None,
    ) -> list[sa.ColumnElement[bool]]:
        conditions: list[sa.ColumnElement[bool]] = []
        if action is not None:
            conditions.append(events.c.action == action)
        if severity is not None:
            if severity == NO_SEVERITY:
                conditions.append(events.c.severity.is_(None))
            else:
                conditions.append(events.c.severity == severity)
        if detector is not None:
            pattern = f"%,{_like_literal(detector)},%"
            conditions.append(events.c.detector_key.like(pattern, escape="\\"))
        if tenant is not None:
            conditions.append(events.c.tenant == tenant)
        if since is not None:
            conditions.append(events.c.time >= utc(since))
        if until is not None:
            conditions.append(events.c.time < utc(until))
        return conditions


def redact_excerpt(text: str) -> str:
    """Secrets and PII replaced by [REDACTED:<kind>], then capped: redacting the whole
    text first means a secret cut by the cap can never survive as a fragment."""
    from mithril.services.secrets.detector import SecretsDetector

    return SecretsDetector.default().redact(text).text[:EXCERPT_MAX_CHARS]


def redact_excerpts(texts: Sequence[str]) -> list[str]:
    """`redact_excerpt` of each text, screening them all with one prefilter pass first:
    one call instead of one per text, which matters because the RE2 binding lets go of the
    GIL on every call (see `_BatchInsert`). A prefilter that occurs nowhere in the joined
    texts occurs in none of them."""
    from mithril.services.secrets.detector import SecretsDetector

    if texts and not SecretsDetector.default().may_find("\n".join(texts).encode("utf-8")):
        return [text[:EXCERPT_MAX_CHARS] for text in texts]
    return [redact_excerpt(text) for text in texts]


def _clean_finding(finding: dict[str, object]) -> dict[str, object]:
    """Only the known keys; free text (the message) redacted too, in case a detector ever
    quotes what it matched."""
    clean = {key: finding.get(key) for key in FINDING_KEYS if key in finding}
    if isinstance(clean.get("message"), str):
        clean["message"] = redact_excerpt(str(clean["message"]))
    return clean


def _clip(value: str, length: int = 200) -> str:
    return value[:length]


_COLUMNS = tuple(column.name for column in events.columns if column.name != "id")
"""Every column but the surrogate key, in table order: the order of a row's values."""


class _BatchInsert:
    """A batch of rows as a few multi-row INSERT ... ON CONFLICT (decision_id) DO NOTHING
    statements, compiled once per chunk size for the engine's dialect and given values
    already in the driver's terms (JSON serialised, the time through its column type's own
    bind processor), which skips SQLAlchemy's per-row parameter processing.

    Not an executemany: sqlite3 lets go of the GIL three times for every row it executes
    (counting parameters, stepping, resetting), and while the event loop is busy the writer
    thread then waits for the GIL back each time. Under load those hand-overs, context
    switches on both threads, cost more of the loop's CPU than the inserts themselves. A
    chunk is one statement and three hand-overs. Chunk sizes are powers of two up to 256,
    the writer's batch (4,864 parameters, within every backend's limit), so a batch of any
    size takes at most nine statements of nine compiled shapes."""

    MAX_CHUNK = 256

    def __init__(self, dialect: Dialect) -> None:
        self._dialect = dialect
        self._time = events.c.time.type.bind_processor(dialect) or (lambda value: value)
        self._shapes: dict[int, tuple[str, Callable[[list[Any]], Any]]] = {}

    def statements(self, rows: Sequence[tuple[Any, ...]]) -> Iterator[tuple[str, Any]]:
        """(SQL, parameters) for each chunk of `rows` (tuples in `_COLUMNS` order)."""
        start = 0
        while start < len(rows):
            size = min(self.MAX_CHUNK, 1 << ((len(rows) - start).bit_length() - 1))
            sql, parameters = self._shape(size)
            yield sql, parameters([value for row in rows[start : start + size] for value in row])
            start += size

    def _shape(self, size: int) -> tuple[str, Callable[[list[Any]], Any]]:
        """The statement for `size` rows, and how to turn the rows' values, flattened in
        order, into its parameters."""
        if size not in self._shapes:
            names = [f"{column}_{i}" for i in range(size) for column in _COLUMNS]
            insert: Any = postgresql.insert if self._dialect.name == "postgresql" else sqlite.insert
            values = [
                {
                    column: sa.bindparam(f"{column}_{i}", type_=events.c[column].type)
                    for column in _COLUMNS
                }
                for i in range(size)
            ]
            statement = (
                insert(events).values(values).on_conflict_do_nothing(index_elements=["decision_id"])
            )
            compiled = statement.compile(dialect=self._dialect)
            convert: Callable[[list[Any]], Any]
            if compiled.positional:  # sqlite3's qmark style: one tuple, in the rows' order
                if list(compiled.positiontup or ()) != names:
                    raise RuntimeError("the compiled INSERT orders its parameters unexpectedly")
                convert = tuple
            else:  # psycopg's named style
                convert = functools.partial(_named_parameters, names)
            self._shapes[size] = (compiled.string, convert)
        return self._shapes[size]

    def row(self, record: EventRecord, excerpt: str) -> tuple[Any, ...]:
        """`record` as the driver's values, in `_COLUMNS` order, with `excerpt` (redacted
        already) in place of its own."""
        time = record.time if record.time.tzinfo else record.time.replace(tzinfo=UTC)
        findings = [_clean_finding(dict(f)) for f in record.findings]
        return (
            record.decision_id[:64],
            self._time(time),
            _clip(record.tenant),
            _clip(record.route),
            _clip(record.direction, 16),
            _clip(record.action, 16),
            _clip(record.mode, 16),
            bool(record.flagged),
            float(record.score),
            record.severity if record.severity in SEVERITIES else None,
            _json_list(record.rule_ids),
            _json_list(record.detectors),
            _clip(_detector_key(record.detectors), 500),
            float(record.latency_ms),
            excerpt,
            _json_list(findings),
            _clip(record.request_id),
            _clip(record.model),
            _json_list(record.unavailable_services),
        )


def _named_parameters(names: list[str], values: list[Any]) -> dict[str, Any]:
    return dict(zip(names, values, strict=True))


def _json_list(values: Sequence[object]) -> str:
    return db.json_dumps(list(values)) if values else "[]"


def _record(row: Any) -> EventRecord:
    return EventRecord(
        decision_id=row["decision_id"],
        time=row["time"],
        tenant=row["tenant"],
        route=row["route"],
        direction=row["direction"],
        action=row["action"],
        mode=row["mode"],
        flagged=bool(row["flagged"]),
        score=float(row["score"]),
        severity=row["severity"],
        rule_ids=tuple(row["rule_ids"] or ()),
        detectors=tuple(row["detectors"] or ()),
        latency_ms=float(row["latency_ms"]),
        excerpt=row["excerpt"],
        findings=tuple(row["findings"] or ()),
        request_id=row["request_id"],
        model=row["model"],
        unavailable_services=tuple(row["unavailable_services"] or ()),
    )
