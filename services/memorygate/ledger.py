"""The memory gate's own records, in one SQLAlchemy database (SQLite or PostgreSQL):

- `memory_audit`: every decision and every review, with its full provenance;
- `memory_quarantine`: claims held for review, quarantined or rejected;
- `memory_verified`: what was written to verified memory, by whom (recall uses it to name
  a memory's source and confidence).

Writes to Cognee and to these tables cannot share a transaction, so a write to verified
memory is two-phase: the audit row and the ledger row are inserted `pending` in one
transaction, Cognee is written, then both become `committed` in another. A failed write
marks the audit row `failed` and drops the ledger row; a crash in between leaves `pending`
rows that the gate finishes at its next start (Cognee dedupes by content, so writing again
is harmless). So there is never an accepted audit row without its memory, nor a memory
without its audit row. Everything here is blocking: callers run it off the event loop.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from mithril.runtime import db
from mithril.runtime.db import UTCDateTime

_PG_LOCK_KEY = 0x6D656D67  # serialises table creation across replicas
PENDING, COMMITTED, FAILED = "pending", "committed", "failed"
APPROVE, REJECT = "approve", "reject"
DECISION, REVIEW = "decision", "review"
APPROVING, DONE = "approving", "done"  # a held claim's review_state; NULL while pending

_metadata = sa.MetaData()
_id_type = sa.BigInteger().with_variant(sa.Integer(), "sqlite")

audit = sa.Table(
    "memory_audit",
    _metadata,
    sa.Column("seq", _id_type, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(64), nullable=False, unique=True),
    sa.Column("event_type", sa.String(16), nullable=False),
    sa.Column("decision_id", sa.String(64), nullable=False, index=True),
    sa.Column("source", sa.String(200), nullable=False, index=True),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("reviewer", sa.String(200), nullable=False, default=""),
    sa.Column("note", sa.Text(), nullable=False, default=""),
    sa.Column("provenance", sa.JSON(), nullable=False),
    sa.Column("create_time", UTCDateTime(), nullable=False),
)

quarantine = sa.Table(
    "memory_quarantine",
    _metadata,
    sa.Column("seq", _id_type, primary_key=True, autoincrement=True),
    sa.Column("id", sa.String(64), nullable=False, unique=True),
    sa.Column("decision_id", sa.String(64), nullable=False, unique=True),
    sa.Column("claim", sa.Text(), nullable=False),
    sa.Column("source", sa.String(200), nullable=False),
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("provenance", sa.JSON(), nullable=False),
    sa.Column("create_time", UTCDateTime(), nullable=False),
    sa.Column("review_state", sa.String(16), nullable=True),
    sa.Column("review_verdict", sa.String(16), nullable=True),
    sa.Column("reviewer", sa.String(200), nullable=False, default=""),
    sa.Column("note", sa.Text(), nullable=False, default=""),
    sa.Column("review_time", UTCDateTime(), nullable=True),
)

verified = sa.Table(
    "memory_verified",
    _metadata,
    sa.Column("seq", _id_type, primary_key=True, autoincrement=True),
    # The audit row of the decision or approval that wrote it.
    sa.Column("write_id", sa.String(64), nullable=False, unique=True),
    sa.Column("decision_id", sa.String(64), nullable=False),
    sa.Column("text_sha256", sa.String(64), nullable=False, index=True),
    sa.Column("text", sa.Text(), nullable=False),
    sa.Column("source", sa.String(200), nullable=False),
    sa.Column("low_confidence", sa.Boolean(), nullable=False),
    sa.Column("state", sa.String(16), nullable=False),
    sa.Column("create_time", UTCDateTime(), nullable=False),
)


def text_digest(text: str) -> str:
    return hashlib.sha256(text.strip().encode()).hexdigest()


def new_id() -> str:
    return uuid.uuid4().hex


@dataclass(frozen=True, slots=True)
class AuditEntry:
    id: str
    event_type: str
    decision_id: str
    source: str
    status: str
    state: str
    provenance: dict[str, Any]
    create_time: datetime
    reviewer: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class HeldClaim:
    id: str
    decision_id: str
    claim: str
    source: str
    status: str
    provenance: dict[str, Any]
    create_time: datetime
    review_verdict: str | None = None
    reviewer: str = ""
    note: str = ""
    review_time: datetime | None = None


@dataclass(frozen=True, slots=True)
class PendingWrite:
    write_id: str
    text: str
    source: str
    low_confidence: bool


@dataclass(frozen=True, slots=True)
class VerifiedRecord:
    source: str
    low_confidence: bool


@dataclass
class Page:
    items: list[Any] = field(default_factory=list)
    next_cursor: int | None = None


class AlreadyReviewed(Exception):
    """The held claim was reviewed already, or another review of it is in flight."""


class Ledger:
    """Thread-safe; one instance per process."""

    def __init__(self, url: str) -> None:
        self.engine: Engine = db.create_engine(url, purpose="memory gate database")
        db.create_tables(self.engine, _metadata, _PG_LOCK_KEY)

    def close(self) -> None:
        self.engine.dispose()

    # -- writes to verified memory (two-phase) ------------------------------------------

    def begin_write(self, entry: AuditEntry, text: str, *, low_confidence: bool) -> None:
        """Phase one: the audit row (a decision, or a review approving a held claim) and
        the ledger row, both pending, in one transaction."""
        with self.engine.begin() as connection:
            self._insert_audit(connection, entry, state=PENDING)
            connection.execute(
                verified.insert().values(
                    write_id=entry.id,
                    decision_id=entry.decision_id,
                    text_sha256=text_digest(text),
                    text=text,
                    source=entry.source,
                    low_confidence=low_confidence,
                    state=PENDING,
                    create_time=entry.create_time,
                )
            )

    def commit_write(self, write_id: str) -> None:
        """Phase two, once memory holds the text: both rows committed and, for an
        approval, the held claim marked approved, in one transaction."""
        with self.engine.begin() as connection:
            row = connection.execute(sa.select(audit).where(audit.c.id == write_id)).one()
            connection.execute(audit.update().where(audit.c.id == write_id).values(state=COMMITTED))
            connection.execute(
                verified.update().where(verified.c.write_id == write_id).values(state=COMMITTED)
            )
            if row.event_type == REVIEW:
                connection.execute(
                    quarantine.update()
                    .where(
                        quarantine.c.decision_id == row.decision_id,
                        quarantine.c.review_state == APPROVING,
                    )
                    .values(
                        review_state=DONE,
                        review_verdict=APPROVE,
                        reviewer=row.reviewer,
                        note=row.note,
                        review_time=row.create_time,
                    )
                )

    def fail_write(self, write_id: str, reason: str) -> None:
        """Memory refused the text: the audit row says so, the ledger row goes and, for an
        approval, the held claim is pending again."""
        with self.engine.begin() as connection:
            row = connection.execute(sa.select(audit).where(audit.c.id == write_id)).one()
            provenance = dict(row.provenance)
            provenance["stored"] = False
            provenance["write_error"] = reason
            connection.execute(
                audit.update()
                .where(audit.c.id == write_id)
                .values(state=FAILED, provenance=provenance)
            )
            connection.execute(verified.delete().where(verified.c.write_id == write_id))
            if row.event_type == REVIEW:
                connection.execute(
                    quarantine.update()
                    .where(
                        quarantine.c.decision_id == row.decision_id,
                        quarantine.c.review_state == APPROVING,
                    )
                    .values(review_state=None)
                )

    def pending_writes(self, begun_before: datetime | None = None) -> list[PendingWrite]:
        """Writes still pending (begun before `begun_before`, if given), oldest first."""
        statement = sa.select(verified).where(verified.c.state == PENDING)
        if begun_before is not None:
            statement = statement.where(verified.c.create_time < begun_before)
        statement = statement.order_by(verified.c.seq)
        with self.engine.connect() as connection:
            return [
                PendingWrite(row.write_id, row.text, row.source, row.low_confidence)
                for row in connection.execute(statement)
            ]

    # -- held claims ---------------------------------------------------------------------

    def hold(self, entry: AuditEntry, held: HeldClaim) -> None:
        """The audit row and the held claim in one transaction."""
        with self.engine.begin() as connection:
            self._insert_audit(connection, entry, state=COMMITTED)
            connection.execute(
                quarantine.insert().values(
                    id=held.id,
                    decision_id=held.decision_id,
                    claim=held.claim,
                    source=held.source,
                    status=held.status,
                    provenance=held.provenance,
                    create_time=held.create_time,
                    reviewer="",
                    note="",
                )
            )

    def claim_for_approval(self, held_id: str) -> HeldClaim:
        """Mark a pending held claim as being approved; AlreadyReviewed if it is not
        pending (so two reviewers can never both approve it), KeyError if unknown."""
        with self.engine.begin() as connection:
            claimed = connection.execute(
                quarantine.update()
                .where(
                    quarantine.c.id == held_id,
                    quarantine.c.review_state.is_(None),
                )
                .values(review_state=APPROVING)
            ).rowcount
            row = connection.execute(
                sa.select(quarantine).where(quarantine.c.id == held_id)
            ).first()
        if row is None:
            raise KeyError(held_id)
        if claimed != 1:
            raise AlreadyReviewed(held_id)
        return _held(row)

    def finish_review(
        self,
        held_id: str,
        verdict: str,
        entry: AuditEntry,
    ) -> HeldClaim:
        """Record a verdict on a pending held claim and its audit row in one transaction;
        AlreadyReviewed if it is not pending, KeyError if unknown."""
        now = entry.create_time
        with self.engine.begin() as connection:
            updated = connection.execute(
                quarantine.update()
                .where(quarantine.c.id == held_id, quarantine.c.review_state.is_(None))
                .values(
                    review_state=DONE,
                    review_verdict=verdict,
                    reviewer=entry.reviewer,
                    note=entry.note,
                    review_time=now,
                )
            ).rowcount
            if updated != 1:
                exists = connection.execute(
                    sa.select(quarantine.c.id).where(quarantine.c.id == held_id)
                ).first()
                if exists is None:
                    raise KeyError(held_id)
                raise AlreadyReviewed(held_id)
            self._insert_audit(connection, entry, state=COMMITTED)
            row = connection.execute(sa.select(quarantine).where(quarantine.c.id == held_id)).one()
        return _held(row)

    # -- reads -------------------------------------------------------------------------

    def get_held(self, held_id: str) -> HeldClaim | None:
        with self.engine.connect() as connection:
            row = connection.execute(
                sa.select(quarantine).where(quarantine.c.id == held_id)
            ).first()
        return None if row is None else _held(row)

    def list_held(
        self,
        *,
        status: str | None,
        include_reviewed: bool,
        limit: int,
        before: int | None,
    ) -> Page:
        statement = sa.select(quarantine)
        if status:
            statement = statement.where(quarantine.c.status == status)
        if not include_reviewed:
            statement = statement.where(quarantine.c.review_verdict.is_(None))
        if before is not None:
            statement = statement.where(quarantine.c.seq < before)
        statement = statement.order_by(quarantine.c.seq.desc()).limit(limit + 1)
        with self.engine.connect() as connection:
            rows = connection.execute(statement).all()
        page = Page([_held(row) for row in rows[:limit]])
        if len(rows) > limit:
            page.next_cursor = rows[limit - 1].seq
        return page

    def list_audit(self, *, source: str | None, limit: int, before: int | None) -> Page:
        statement = sa.select(audit)
        if source:
            statement = statement.where(audit.c.source == source)
        if before is not None:
            statement = statement.where(audit.c.seq < before)
        statement = statement.order_by(audit.c.seq.desc()).limit(limit + 1)
        with self.engine.connect() as connection:
            rows = connection.execute(statement).all()
        page = Page([_audit(row) for row in rows[:limit]])
        if len(rows) > limit:
            page.next_cursor = rows[limit - 1].seq
        return page

    def verified_records(self, texts: Sequence[str]) -> dict[str, VerifiedRecord]:
        """Text digest -> who wrote it, for committed memories among `texts`."""
        digests = {text_digest(text) for text in texts}
        if not digests:
            return {}
        statement = (
            sa.select(verified.c.text_sha256, verified.c.source, verified.c.low_confidence)
            .where(verified.c.text_sha256.in_(digests), verified.c.state == COMMITTED)
            .order_by(verified.c.seq)
        )
        with self.engine.connect() as connection:
            records: dict[str, VerifiedRecord] = {}
            for row in connection.execute(statement):
                records.setdefault(row.text_sha256, VerifiedRecord(row.source, row.low_confidence))
        return records

    def counts(self) -> dict[str, int]:
        """Rows per audit state and held claims pending review (for health and metrics)."""
        with self.engine.connect() as connection:
            states: dict[str, int] = {
                row[0]: int(row[1])
                for row in connection.execute(
                    sa.select(audit.c.state, sa.func.count()).group_by(audit.c.state)
                )
            }
            pending = connection.execute(
                sa.select(sa.func.count())
                .select_from(quarantine)
                .where(quarantine.c.review_verdict.is_(None))
            ).scalar_one()
        return {**{f"audit_{k}": int(v) for k, v in states.items()}, "held_pending": int(pending)}

    # -- helpers -----------------------------------------------------------------------

    @staticmethod
    def _insert_audit(connection: Connection, entry: AuditEntry, *, state: str) -> None:
        connection.execute(
            audit.insert().values(
                id=entry.id,
                event_type=entry.event_type,
                decision_id=entry.decision_id,
                source=entry.source,
                status=entry.status,
                state=state,
                reviewer=entry.reviewer,
                note=entry.note,
                provenance=entry.provenance,
                create_time=entry.create_time,
            )
        )


def now() -> datetime:
    return datetime.now(UTC)


def _held(row: Any) -> HeldClaim:
    return HeldClaim(
        id=row.id,
        decision_id=row.decision_id,
        claim=row.claim,
        source=row.source,
        status=row.status,
        provenance=dict(row.provenance),
        create_time=row.create_time,
        review_verdict=row.review_verdict,
        reviewer=row.reviewer,
        note=row.note,
        review_time=row.review_time,
    )


def _audit(row: Any) -> AuditEntry:
    return AuditEntry(
        id=row.id,
        event_type=row.event_type,
        decision_id=row.decision_id,
        source=row.source,
        status=row.status,
        state=row.state,
        provenance=dict(row.provenance),
        create_time=row.create_time,
        reviewer=row.reviewer,
        note=row.note,
    )
