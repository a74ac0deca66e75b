"""Fixtures of the reputation unit tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def reputation_db_url(event_store_url: str) -> str:
    """An empty database, SQLite or PostgreSQL (a throwaway schema); see tests/conftest.py."""
    return event_store_url
