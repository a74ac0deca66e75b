"""constraints.txt, the versions `make venv` installs, stays in step with pyproject.toml and
with the venv the tests run in."""

from __future__ import annotations

import tomllib
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from tests.conftest import REPO


def pinned() -> dict[str, Version]:
    pins: dict[str, Version] = {}
    for line in (REPO / "constraints.txt").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        name, separator, version = line.partition("==")
        assert separator, f"not an exact pin: {line}"
        assert canonicalize_name(name) not in pins, f"pinned twice: {name}"
        pins[canonicalize_name(name)] = Version(version)
    return pins


def requirements() -> list[Requirement]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    listed = project["dependencies"] + project["optional-dependencies"]["dev"]
    return [Requirement(text) for text in listed]


def test_every_requirement_is_pinned_within_its_range() -> None:
    pins = pinned()
    for requirement in requirements():
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in constraints.txt: run `make lock`"
        assert requirement.specifier.contains(pins[name], prereleases=True), (
            f"constraints.txt pins {requirement.name} {pins[name]}, outside {requirement}"
        )


def test_the_venv_holds_the_pinned_versions() -> None:
    """`make venv` reinstalls when constraints.txt changes; a venv that drifted from it would
    measure other rows (benchmark/package_docs.py reads the installed READMEs)."""
    drifted = {}
    for name, version in pinned().items():
        try:
            installed = Version(metadata.version(name))
        except metadata.PackageNotFoundError:
            continue  # a pin for another platform's dependency
        if Version(installed.public) != version:
            drifted[name] = f"{installed} installed, {version} pinned"
    assert not drifted, drifted
