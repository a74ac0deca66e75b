"""Installed distributions' docstrings as a benign source of retrieved documentation."""

from __future__ import annotations

from pathlib import Path

import pytest

from mithril.benchmark import package_docstrings, python_docs
from mithril.benchmark.detection import DEV, HELD_OUT, held_out, load_sources
from mithril.domain import Origin

SUMMARY = "Generate a swiss roll dataset.\n\n"


def _docstring(i: int) -> str:
    return f"{SUMMARY}Point {i} of the roll. " + "It lies on a rolled sheet. " * 16


def _distribution(site: Path, name: str, files: dict[str, str]) -> None:
    """A distribution installed in `site`: its METADATA, its files, and a RECORD naming them."""
    info = site / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    for path, text in files.items():
        (site / path).parent.mkdir(parents=True, exist_ok=True)
        (site / path).write_text(text, encoding="utf-8")
    (info / "RECORD").write_text("".join(f"{path},,\n" for path in files), encoding="utf-8")


def test_a_distributions_own_files_give_its_long_docstrings_once_each(tmp_path: Path) -> None:
    first, second = _docstring(1), _docstring(2)
    _distribution(
        tmp_path,
        "alpha-lib",
        {
            "alpha/__init__.py": f'"""{first}"""\n\ndef short():\n    """Too short."""\n',
            "alpha/core.py": (
                f'class Roll:\n    """{second}"""\n\ndef again():\n    """{first}"""\n'
            ),
            "alpha/tests/test_core.py": f'"""{_docstring(3)}"""\n',
            "alpha/_vendor/other.py": f'"""{_docstring(4)}"""\n',
            "alpha/broken.py": "def (:\n",
            "alpha/data.txt": _docstring(5),
        },
    )
    _distribution(tmp_path, "mithril-firewall", {"mithril/x.py": f'"""{_docstring(6)}"""\n'})
    _distribution(tmp_path, "copycat", {"copycat/x.py": f'"""{first}"""\n'})
    found = list(package_docstrings.documents([tmp_path]))
    # The module's, then the class's; not the short one, the copy, the tests, the vendored
    # copy, the broken file, a file that is not Python, Mithril, or another's copy.
    assert [c.text for c in found] == [first, second]
    assert {c.distribution for c in found} == {"alpha-lib"}
    assert {c.kind for c in found} == {"docstring"}
    assert all(len(c.text) <= python_docs.MAX_CHARS for c in found)


def test_a_large_distribution_gives_at_most_its_share_evenly_through_it(tmp_path: Path) -> None:
    count = package_docstrings.MAX_PER_DISTRIBUTION * 3
    files = {f"big/m{i:03}.py": f'"""{_docstring(i)}"""\n' for i in range(count)}
    _distribution(tmp_path, "big", files)
    found = list(package_docstrings.documents([tmp_path]))
    assert len(found) == package_docstrings.MAX_PER_DISTRIBUTION
    # Every third file, from the first: not the first ten.
    assert [c.text for c in found] == [_docstring(i) for i in range(0, count, 3)]


def test_evenly_keeps_short_lists_and_spreads_long_ones() -> None:
    assert package_docstrings.evenly([1, 2], 5) == [1, 2]
    assert package_docstrings.evenly(list(range(10)), 4) == [0, 2, 5, 7]


def test_load_sources_holds_them_out_with_their_distributions_readme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("alpha-lib", "beta-lib", "gamma-lib", "delta-lib", "omega-lib"):
        _distribution(tmp_path, name, {f"{name}/x.py": f'"""{_docstring(len(name))}{name}"""\n'})
    site = list(package_docstrings.documents([tmp_path]))
    monkeypatch.setattr(package_docstrings, "documents", lambda: iter(site))
    rows = load_sources(tmp_path, documentation=True, manual=False)[package_docstrings.SOURCE]
    assert [r.text for r in rows] == [c.text for c in site]
    assert {r.group for r in rows} == {f"package-docs:{c.distribution}" for c in site}
    assert {r.label for r in rows} == {0} and {r.origin for r in rows} == {Origin.RETRIEVAL}
    assert all(r.split == (HELD_OUT if held_out(r.group) else DEV) for r in rows)
    assert package_docstrings.SOURCE not in load_sources(tmp_path)


def test_the_installed_distributions_give_a_stable_source() -> None:
    found = list(package_docstrings.documents())
    assert len(found) > 300  # about 1,500 on the pinned install
    assert [c.text for c in found] == [c.text for c in package_docstrings.documents()]
    assert "mithril-firewall" not in {c.distribution for c in found}
