"""constraints.txt, the versions `make venv` installs, stays in step with pyproject.toml and
with the venv the tests run in."""

from __future__ import annotations

import importlib.util
import tomllib
from importlib import metadata
from types import ModuleType

import pytest
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


def lock_script() -> ModuleType:
    """scripts/lock.py, which `make lock` runs (scripts/ is no package)."""
    spec = importlib.util.spec_from_file_location("lock", REPO / "scripts" / "lock.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_lock_pins_releases_without_pip_or_local_labels() -> None:
    frozen = ["zipp==4.1.2", "# Editable install", "pip==26.3", "torch==2.13.0+cpu", "Mako==1.4.3"]
    assert lock_script().pins(frozen) == ["Mako==1.4.3", "torch==2.13.0", "zipp==4.1.2"]


def test_the_lock_refuses_what_is_not_a_release() -> None:
    with pytest.raises(SystemExit, match="not a pinned release"):
        lock_script().pins(["somepkg @ file:///tmp/somepkg-1.0.tar.gz"])
