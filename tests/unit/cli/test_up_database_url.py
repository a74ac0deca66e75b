"""`mithril up --database-url`: every store of every child in the one database given."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mithril.cli import supervisor
from mithril.cli.components import COMPONENTS
from mithril.cli.main import app
from mithril.runtime.db import create_engine

STORES = (
    "MITHRIL_GATEWAY_DATABASE_URL",
    "MITHRIL_REPUTATION_DATABASE_URL",
    "MITHRIL_MEMORY_GATE_DATABASE_URL",
)


def test_database_url_env_names_are_the_stores_settings() -> None:
    from mithril.gateway.config import GatewaySettings
    from mithril.services.memorygate.config import MemoryGateSettings
    from mithril.services.reputation.config import ReputationSettings

    assert supervisor.DATABASE_URL_ENVS == STORES
    for settings, env in zip(
        (GatewaySettings, ReputationSettings, MemoryGateSettings), STORES, strict=True
    ):
        prefix = settings.model_config.get("env_prefix", "")
        assert f"{prefix}DATABASE_URL" == env
        assert "database_url" in settings.model_fields


@pytest.mark.parametrize(
    "url",
    [
        "postgresql://mithril@db.internal:5432/mithril",
        "postgres://mithril:s3cret@db.internal/mithril",
        "postgresql+psycopg://mithril@127.0.0.1/test",
    ],
)
def test_every_store_gets_the_url(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MITHRIL_REPUTATION_DATABASE_URL", "sqlite:///elsewhere.db")
    env = supervisor._environment(list(COMPONENTS.values()), tmp_path, url)
    assert {name: env[name] for name in STORES} == dict.fromkeys(STORES, url)
    assert env["MITHRIL_HOME"] == str(tmp_path)
    # Each store's own engine reads it as PostgreSQL through psycopg 3 (no connection yet).
    engine = create_engine(env["MITHRIL_GATEWAY_DATABASE_URL"], purpose="test")
    try:
        assert engine.dialect.name == "postgresql" and engine.dialect.driver == "psycopg"
    finally:
        engine.dispose()


def test_without_the_option_each_store_keeps_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in STORES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MITHRIL_REPUTATION_DATABASE_URL", "sqlite:///reputation-elsewhere.db")
    env = supervisor._environment(list(COMPONENTS.values()), tmp_path)
    assert env["MITHRIL_REPUTATION_DATABASE_URL"] == "sqlite:///reputation-elsewhere.db"
    assert "MITHRIL_GATEWAY_DATABASE_URL" not in env
    assert "MITHRIL_MEMORY_GATE_DATABASE_URL" not in env


@pytest.mark.parametrize(
    ("url", "accepted"),
    [
        ("postgres://u@h/db", True),
        ("postgresql://u@h/db", True),
        ("postgresql+psycopg://u@h/db", True),
        (" postgresql://u@h/db ", True),
        ("sqlite:////var/lib/mithril/all.db", True),
        ("mysql://u@h/db", False),
        ("not a url", False),
        ("", False),
    ],
)
def test_check_database_url(url: str, accepted: bool) -> None:
    if accepted:
        assert supervisor.check_database_url(url) == url.strip()
    else:
        with pytest.raises(ValueError):
            supervisor.check_database_url(url)


def test_shown_url_hides_the_password() -> None:
    shown = supervisor.shown_database_url("postgres://mithril:s3cret@db/mithril")
    assert "s3cret" not in shown and "mithril@db" not in shown and "db/mithril" in shown


def _capture_run_all(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    def fake_run_all(components: Any, home: Any, console: Any, database_url: Any = None) -> int:
        seen.update(components=components, home=home, database_url=database_url)
        return 0

    monkeypatch.setattr(supervisor, "run_all", fake_run_all)
    return seen


def test_up_passes_the_url_to_the_supervisor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _capture_run_all(monkeypatch)
    result = CliRunner().invoke(
        app, ["up", "--home", str(tmp_path), "--database-url", "postgres://u@127.0.0.1/test"]
    )
    assert result.exit_code == 0, result.output
    assert seen["database_url"] == "postgres://u@127.0.0.1/test"
    assert seen["home"] == tmp_path
    assert [c.name for c in seen["components"]] == list(COMPONENTS)


def test_up_without_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _capture_run_all(monkeypatch)
    result = CliRunner().invoke(app, ["up", "--home", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert seen["database_url"] is None


def test_up_refuses_a_database_it_cannot_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen = _capture_run_all(monkeypatch)
    result = CliRunner().invoke(
        app, ["up", "--home", str(tmp_path), "--database-url", "mysql://u@h/db"]
    )
    assert result.exit_code == 2
    assert "--database-url" in result.output and "PostgreSQL" in result.output
    assert seen == {}  # nothing was started
