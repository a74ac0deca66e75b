"""Where events are kept: one table, `gateway_events`, through SQLAlchemy 2 (sync).

SQLite (the default, a file under MITHRIL_HOME, WAL mode) or PostgreSQL by URL. Writes are
idempotent on `decision_id` (a unique key and INSERT ... ON CONFLICT DO NOTHING), so
several gateway processes sharing one PostgreSQL, or a retried batch, record each decision
exactly once. Excerpts are redacted again and capped here, whatever the caller did.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Engine

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
        self.backend = self.engine.dialect.name
        db.create_tables(self.engine, _metadata, _PG_LOCK_KEY)

    # -- writes -----------------------------------------------------------------------

    def write_batch(self, records: Sequence[EventRecord]) -> int:
        """Insert `records` in one transaction; decision ids already stored (or repeated
        in the batch) are skipped. Returns how many rows were inserted."""
        rows: dict[str, dict[str, Any]] = {}
        for record in records:
            rows.setdefault(record.decision_id, _row(record))
        if not rows:
            return 0
        insert: Any = (postgresql.insert if self.backend == "postgresql" else sqlite.insert)(events)
        statement = insert.on_conflict_do_nothing(index_elements=["decision_id"])
        with self.engine.begin() as connection:
            if self.backend == "sqlite":
                # sqlite3's executemany reports the rows the conflict clause let through;
                # skipping RETURNING makes each row markedly cheaper to write.
                return max(connection.execute(statement, list(rows.values())).rowcount, 0)
            returning = statement.returning(events.c.decision_id)
            return len(connection.execute(returning, list(rows.values())).all())

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


def _clean_finding(finding: dict[str, object]) -> dict[str, object]:
    """Only the known keys; free text (the message) redacted too, in case a detector ever
    quotes what it matched."""
    clean = {key: finding.get(key) for key in FINDING_KEYS if key in finding}
    if isinstance(clean.get("message"), str):
        clean["message"] = redact_excerpt(str(clean["message"]))
    return clean


def _clip(value: str, length: int = 200) -> str:
    return value[:length]


def _row(record: EventRecord) -> dict[str, Any]:
    severity = record.severity if record.severity in SEVERITIES else None
    return {
        "decision_id": record.decision_id[:64],
        "time": record.time if record.time.tzinfo else record.time.replace(tzinfo=UTC),
        "tenant": _clip(record.tenant),
        "route": _clip(record.route),
        "direction": _clip(record.direction, 16),
        "action": _clip(record.action, 16),
        "mode": _clip(record.mode, 16),
        "flagged": bool(record.flagged),
        "score": float(record.score),
        "severity": severity,
        "rule_ids": list(record.rule_ids),
        "detectors": list(record.detectors),
        "detector_key": _clip(_detector_key(record.detectors), 500),
        "latency_ms": float(record.latency_ms),
        "excerpt": redact_excerpt(record.excerpt),
        "findings": [_clean_finding(dict(f)) for f in record.findings],
        "request_id": _clip(record.request_id),
        "model": _clip(record.model),
        "unavailable_services": list(record.unavailable_services),
    }


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
