"""Installed distributions' source files as a benign source of retrieved code."""

from __future__ import annotations

from pathlib import Path

import pytest

from mithril.benchmark import package_docs, package_sources
from mithril.benchmark.detection import DEV, HELD_OUT, held_out, load_sources
from mithril.domain import Origin
from mithril.services.embedding.training import train
from tests.unit.test_benchmark_package_docstrings import _distribution


def _function(i: int) -> str:
    """A function of a few hundred characters, its own paragraph."""
    body = "".join(f"    total_{k} = compute_step({i}, {k})\n" for k in range(12))
    return f"def step_{i}(config=None):\n{body}    return total_11\n"


def _module(first: int, count: int) -> str:
    return "\n\n".join(_function(i) for i in range(first, first + count))


def test_a_distributions_own_files_give_its_pieces_once_each(tmp_path: Path) -> None:
    _distribution(
        tmp_path,
        "alpha-lib",
        {
            "alpha/core.py": _module(0, 3),
            "alpha/tests/test_core.py": _module(100, 3),
            "alpha/_vendor/other.py": _module(200, 3),
            "alpha/short.py": "x = 1\n",
            "alpha/latin1.py": "# caf\xe9\n".encode("latin-1").decode("latin-1"),
            "alpha/data.txt": _module(300, 3),
        },
    )
    (tmp_path / "alpha/latin1.py").write_bytes(b"# caf\xe9 " + _module(400, 3).encode())
    _distribution(tmp_path, "mithril-firewall", {"mithril/x.py": _module(500, 3)})
    _distribution(tmp_path, "copycat", {"copycat/x.py": _module(0, 3)})
    found = list(package_sources.documents([tmp_path]))
    # alpha's own module, cut as a splitter cuts it; not its tests, the vendored copy, a
    # piece too short, a file that is not UTF-8 or not Python, Mithril, or another's copy.
    assert [c.text for c in found] == package_docs.chunks(_module(0, 3))
    assert {(c.distribution, c.kind) for c in found} == {("alpha-lib", "source")}
    assert all(package_docs.MIN_CHARS <= len(c.text) <= package_docs.MAX_CHARS for c in found)


def test_a_large_distribution_gives_at_most_its_share_evenly_through_it(tmp_path: Path) -> None:
    files = {f"big/m{i:03}.py": _module(i * 10, 4) for i in range(12)}
    _distribution(tmp_path, "big-lib", files)
    pieces = [p for path in sorted(files) for p in package_docs.chunks(files[path])]
    assert len(pieces) > package_sources.MAX_PER_DISTRIBUTION
    found = [c.text for c in package_sources.documents([tmp_path])]
    # The share is spread through the files, not taken from the first few.
    assert found == package_sources.package_docstrings.evenly(
        pieces, package_sources.MAX_PER_DISTRIBUTION
    )
    last_files = [package_docs.chunks(files[f"big/m{i:03}.py"]) for i in (10, 11)]
    assert any(found[-1] in pieces for pieces in last_files)


def test_load_sources_holds_them_out_with_their_distributions_readme(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("alpha-lib", "beta-lib", "gamma-lib", "delta-lib", "omega-lib"):
        _distribution(tmp_path, name, {f"{name}/x.py": f"# {name}\n" + _module(len(name), 3)})
    site = list(package_sources.documents([tmp_path]))
    monkeypatch.setattr(package_sources, "documents", lambda: iter(site))
    rows = load_sources(tmp_path, documentation=True, manual=False)[package_sources.SOURCE]
    assert [r.text for r in rows] == [c.text for c in site]
    assert {r.group for r in rows} == {f"package-docs:{c.distribution}" for c in site}
    assert {r.label for r in rows} == {0} and {r.origin for r in rows} == {Origin.RETRIEVAL}
    assert all(r.split == (HELD_OUT if held_out(r.group) else DEV) for r in rows)
    assert package_sources.SOURCE not in load_sources(tmp_path)


def test_no_training_script_reads_them() -> None:
    assert package_sources.SOURCE not in train.TRAINING_SOURCES


def test_the_installed_distributions_give_a_stable_source() -> None:
    found = list(package_sources.documents())
    assert len(found) > 1000  # about 2,150 on the pinned install
    assert [c.text for c in found] == [c.text for c in package_sources.documents()]
    assert "mithril-firewall" not in {c.distribution for c in found}
