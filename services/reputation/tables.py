"""The reputation tables: one row per source, one row per change (never deleted).

Scores are DOUBLE on both backends, so a score read back is bit-for-bit the one written
and replaying the history reproduces it exactly.
"""

from __future__ import annotations

import sqlalchemy as sa

from mithril.runtime.db import UTCDateTime
from mithril.services.reputation.model import (
    MAX_DECISION_ID_CHARS,
    MAX_REASON_CHARS,
    MAX_SOURCE_CHARS,
)

metadata = sa.MetaData()
_id_type = sa.BigInteger().with_variant(sa.Integer(), "sqlite")  # INTEGER PRIMARY KEY = rowid

sources = sa.Table(
    "reputation_sources",
    metadata,
    sa.Column("source", sa.String(MAX_SOURCE_CHARS), primary_key=True),  # canonical name
    sa.Column("display_name", sa.String(MAX_SOURCE_CHARS), nullable=False),
    sa.Column("score", sa.Double(), nullable=False),
    sa.Column("prior", sa.Double(), nullable=False),
    sa.Column("good_count", sa.BigInteger(), nullable=False),
    sa.Column("bad_count", sa.BigInteger(), nullable=False),
    sa.Column("update_time", UTCDateTime(), nullable=True),
)

changes = sa.Table(
    "reputation_changes",
    metadata,
    # Assigned while the source's row is locked, so per source the id order is the order
    # in which the changes were applied.
    sa.Column("id", _id_type, primary_key=True, autoincrement=True),
    sa.Column(
        "source",
        sa.String(MAX_SOURCE_CHARS),
        sa.ForeignKey(sources.c.source, ondelete="CASCADE"),
        nullable=False,
    ),
    sa.Column("old_score", sa.Double(), nullable=False),
    sa.Column("new_score", sa.Double(), nullable=False),
    sa.Column("outcome", sa.String(16), nullable=True),  # NULL for a reset
    sa.Column("reason", sa.String(MAX_REASON_CHARS), nullable=False),
    sa.Column("decision_id", sa.String(MAX_DECISION_ID_CHARS), nullable=False),
    sa.Column("create_time", UTCDateTime(), nullable=False),
    sa.Index("ix_reputation_changes_source_id", "source", "id"),
)
