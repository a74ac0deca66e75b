"""Source names and the trust each source starts from.

Names are canonicalised (NFKC, whitespace stripped and collapsed, casefolded) for storage
and lookup, so "Slack", " slack " and "SLACK" are one source; the display name keeps the
spelling people wrote. Priors come from a YAML file, `priors: {name: value}`; the packaged
`priors.yaml` is the default.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from mithril.services.reputation.model import MAX_SOURCE_CHARS, ReputationArgumentError

DEFAULT_PRIORS_FILE = "priors.yaml"
"""Packaged next to this module."""
_PACKAGE = __name__.rpartition(".")[0]


class PriorsError(ValueError):
    """The priors file cannot be used; the message names the file and the entry."""


def display_name(source: str) -> str:
    """The name as written, with its whitespace tidied."""
    return " ".join(unicodedata.normalize("NFKC", source).split())


def canonical_source(source: str, field_name: str = "source") -> str:
    """The storage and lookup key of a source name; raises ReputationArgumentError for a
    name that is blank or too long."""
    key = display_name(source).casefold()
    if not key:
        raise ReputationArgumentError(field_name, "must not be empty or blank")
    if len(key) > MAX_SOURCE_CHARS:
        raise ReputationArgumentError(
            field_name, f"{len(key)} characters exceed the limit of {MAX_SOURCE_CHARS}"
        )
    return key


def _check_prior(value: float, what: str) -> float:
    if not 0.0 <= value <= 1.0 or math.isnan(value):
        raise PriorsError(f"{what} must be between 0 and 1, not {value}")
    return float(value)


@dataclass(frozen=True, slots=True)
class Prior:
    display: str
    value: float


@dataclass(frozen=True)
class Priors:
    """Prior per canonical source name, and the default for every other source."""

    default: float = 0.30
    by_key: Mapping[str, Prior] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _check_prior(self.default, "the default prior")

    @classmethod
    def from_mapping(
        cls, values: Mapping[str, float], default: float = 0.30, origin: str = "priors"
    ) -> Priors:
        by_key: dict[str, Prior] = {}
        for name, value in values.items():
            if not isinstance(name, str):
                raise PriorsError(f"{origin}: source name {name!r} is not a string")
            try:
                key = canonical_source(name)
            except ReputationArgumentError as exc:
                raise PriorsError(f"{origin}: source name {name!r}: {exc.description}") from None
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise PriorsError(f"{origin}: the prior of {name!r} is not a number: {value!r}")
            number = _check_prior(value, f"{origin}: the prior of {name!r}")
            if key in by_key:
                raise PriorsError(
                    f"{origin}: {by_key[key].display!r} and {name!r} name the same source"
                    " (names ignore case and spacing)"
                )
            by_key[key] = Prior(display_name(name), number)
        return cls(default=default, by_key=by_key)

    def lookup(self, key: str) -> Prior | None:
        """The configured prior of a canonical name, if it has one."""
        return self.by_key.get(key)

    def prior_of(self, key: str) -> float:
        found = self.by_key.get(key)
        return found.value if found is not None else self.default


def load_priors(path: Path | None = None, default: float = 0.30) -> Priors:
    """Priors from a YAML file (`None`: the packaged default); raises PriorsError."""
    if path is None:
        origin = f"the packaged {DEFAULT_PRIORS_FILE}"
        text = (
            resources.files(__name__.rpartition(".")[0])
            .joinpath(DEFAULT_PRIORS_FILE)
            .read_text("utf-8")
        )
    else:
        origin = str(path)
        try:
            text = Path(path).expanduser().read_text("utf-8")
        except OSError as exc:
            raise PriorsError(f"cannot read the priors file {origin}: {exc.strerror}") from None
    try:
        document: Any = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise PriorsError(f"{origin} is not valid YAML: {exc}") from None
    if document is None:
        document = {}
    if not isinstance(document, dict) or set(document) - {"priors"}:
        raise PriorsError(f"{origin}: expected a mapping with one key, `priors`")
    values = document.get("priors") or {}
    if not isinstance(values, dict):
        raise PriorsError(f"{origin}: `priors` must map source names to numbers")
    return Priors.from_mapping(values, default=default, origin=origin)
