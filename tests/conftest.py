"""Fixtures shared by every test tier."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DATASETS = REPO.parent / "shared" / "datasets"


def free_port() -> int:
    """A port nothing listens on right now (tests never hard-code ports)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def artifacts_dir() -> Path:
    path = REPO / "tests" / "artifacts"
    path.mkdir(parents=True, exist_ok=True)
    return path
