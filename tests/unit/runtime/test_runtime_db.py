"""`mithril.runtime.db.create_engine`: JSON columns round-trip whatever orjson refuses."""

from pathlib import Path

import pytest
import sqlalchemy as sa

from mithril.runtime import db

_metadata = sa.MetaData()
_table = sa.Table(
    "things",
    _metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("value", sa.JSON, nullable=False),
)


@pytest.mark.parametrize(
    "value",
    [
        {"rule_ids": ["a", "b"], "score": 0.5, "nested": {"ok": True}},
        {"huge": 2**70 + 1},  # beyond 64 bits: orjson refuses it, and would read a float
        {1: "integer key"},  # orjson refuses non-string keys; json turns them into strings
        [],
    ],
)
def test_json_columns_round_trip(tmp_path: Path, value: object) -> None:
    engine = db.create_engine(f"sqlite:///{tmp_path}/things.db", purpose="test")
    db.create_tables(engine, _metadata, lock_key=1)
    with engine.begin() as connection:
        connection.execute(_table.insert(), {"id": 1, "value": value})
    with engine.connect() as connection:
        stored = connection.execute(sa.select(_table.c.value)).scalar_one()
    expected = {"1": "integer key"} if value == {1: "integer key"} else value
    assert stored == expected


def test_unsupported_url_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unsupported test URL"):
        db.create_engine("mysql://localhost/x", purpose="test")
