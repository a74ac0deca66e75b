"""ReputationSettings: defaults, the MITHRIL_REPUTATION_ prefix, and bounds."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mithril.services.reputation.config import ReputationSettings
from mithril.services.reputation.ewma import EwmaParams


def test_defaults() -> None:
    settings = ReputationSettings()
    assert settings.port == 50055
    assert settings.database_url == ""
    assert settings.priors_file is None
    assert settings.default_prior == 0.30
    assert settings.ewma == EwmaParams(good_rate=0.10, bad_rate=0.22, floor=0.05, ceiling=0.99)


def test_every_field_is_described() -> None:
    for name, field in ReputationSettings.model_fields.items():
        assert field.description, name


def test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MITHRIL_REPUTATION_PORT", "6000")
    monkeypatch.setenv("MITHRIL_REPUTATION_DATABASE_URL", "postgresql+psycopg://db/rep")
    monkeypatch.setenv("MITHRIL_REPUTATION_PRIORS_FILE", "/etc/mithril/priors.yaml")
    monkeypatch.setenv("MITHRIL_REPUTATION_DEFAULT_PRIOR", "0.4")
    monkeypatch.setenv("MITHRIL_REPUTATION_GOOD_RATE", "0.05")
    monkeypatch.setenv("MITHRIL_REPUTATION_BAD_RATE", "0.5")
    monkeypatch.setenv("MITHRIL_REPUTATION_FLOOR", "0.1")
    monkeypatch.setenv("MITHRIL_REPUTATION_CEILING", "0.9")
    settings = ReputationSettings()
    assert settings.port == 6000
    assert settings.database_url == "postgresql+psycopg://db/rep"
    assert str(settings.priors_file) == "/etc/mithril/priors.yaml"
    assert settings.default_prior == 0.4
    assert settings.ewma == EwmaParams(good_rate=0.05, bad_rate=0.5, floor=0.1, ceiling=0.9)


@pytest.mark.parametrize(
    "fields",
    [
        {"default_prior": 1.1},
        {"default_prior": -0.01},
        {"good_rate": 0},
        {"bad_rate": 1.01},
        {"floor": 0.5, "ceiling": 0.4},
        {"floor": 0.5, "ceiling": 0.5},
    ],
)
def test_bounds(fields: dict[str, float]) -> None:
    with pytest.raises(ValidationError):
        ReputationSettings(**fields)  # type: ignore[arg-type]
