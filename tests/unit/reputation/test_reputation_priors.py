"""Source names are canonicalised; priors come from a validated YAML file."""

from __future__ import annotations

from pathlib import Path

import pytest

from mithril.services.reputation.model import MAX_SOURCE_CHARS, ReputationArgumentError
from mithril.services.reputation.priors import (
    Priors,
    PriorsError,
    canonical_source,
    display_name,
    load_priors,
)


@pytest.mark.parametrize(
    "name",
    [
        "Slack",
        " slack ",
        "SLACK",
        "sLaCk\n",
        "\tSlack  ",
        "\uff33\uff4c\uff41\uff43\uff4b",  # fullwidth letters, folded by NFKC
    ],
)
def test_spellings_of_one_source_share_a_key(name: str) -> None:
    assert canonical_source(name) == "slack"


def test_inner_whitespace_is_collapsed_not_removed() -> None:
    assert canonical_source("  Security \t  Policy ") == "security policy"
    assert canonical_source("Security Policy") != canonical_source("SecurityPolicy")
    assert display_name("  Security \t  Policy ") == "Security Policy"


@pytest.mark.parametrize("name", ["", "   ", "\n\t"])
def test_blank_names_are_refused(name: str) -> None:
    with pytest.raises(ReputationArgumentError) as error:
        canonical_source(name)
    assert error.value.field == "source"


def test_overlong_names_are_refused() -> None:
    assert canonical_source("a" * MAX_SOURCE_CHARS) == "a" * MAX_SOURCE_CHARS
    with pytest.raises(ReputationArgumentError, match="exceed"):
        canonical_source("a" * (MAX_SOURCE_CHARS + 1))


def test_packaged_defaults() -> None:
    priors = load_priors()
    assert priors.prior_of(canonical_source("Security Policy")) == 0.98
    assert priors.prior_of(canonical_source(" slack")) == 0.60
    assert priors.prior_of(canonical_source("unknown agent")) == 0.30
    assert priors.prior_of(canonical_source("someone new")) == 0.30
    found = priors.lookup("slack")
    assert found is not None and found.display == "Slack"


def test_default_prior_is_configurable() -> None:
    assert load_priors(default=0.42).prior_of("someone new") == 0.42


def test_custom_file(tmp_path: Path) -> None:
    path = tmp_path / "priors.yaml"
    path.write_text("priors:\n  CI Bot: 0.9\n  Pastebin: 0\n  Oracle: 1\n")
    priors = load_priors(path)
    assert priors.prior_of("ci bot") == 0.9
    assert priors.prior_of("pastebin") == 0.0
    assert priors.prior_of("oracle") == 1.0
    assert priors.prior_of("slack") == 0.30  # the packaged file is not merged in


def test_empty_file_means_no_priors(tmp_path: Path) -> None:
    path = tmp_path / "priors.yaml"
    path.write_text("")
    assert load_priors(path).by_key == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("priors:\n  Slack: 1.5\n", r"the prior of 'Slack' must be between 0 and 1, not 1.5"),
        ("priors:\n  Slack: -0.1\n", "must be between 0 and 1"),
        ("priors:\n  Slack: .nan\n", "must be between 0 and 1"),
        ("priors:\n  Slack: high\n", "is not a number"),
        ("priors:\n  Slack: true\n", "is not a number"),
        ("priors:\n  Slack: 0.5\n  ' SLACK ': 0.6\n", "name the same source"),
        ("priors:\n  '  ': 0.5\n", "must not be empty"),
        ("priors:\n  12: 0.5\n", "is not a string"),
        ("- Slack\n", "expected a mapping"),
        ("sources:\n  Slack: 0.5\n", "expected a mapping with one key, `priors`"),
        ("priors: [Slack]\n", "must map source names to numbers"),
        ("priors: {Slack: 0.5\n", "not valid YAML"),
    ],
)
def test_bad_files_are_refused_clearly(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "priors.yaml"
    path.write_text(text)
    with pytest.raises(PriorsError, match=message) as error:
        load_priors(path)
    assert str(path) in str(error.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PriorsError, match="cannot read the priors file"):
        load_priors(tmp_path / "absent.yaml")


def test_default_prior_is_checked() -> None:
    with pytest.raises(PriorsError, match="default prior"):
        Priors(default=1.2)
