"""The standard library's docstrings as a benign source of retrieved documentation."""

from __future__ import annotations

from pathlib import Path

from mithril.benchmark import python_docs
from mithril.benchmark.detection import DEV, HELD_OUT, held_out, load_sources, run_detection
from mithril.domain import Origin


def _library(root: Path) -> Path:
    long = "Return the frame's bytes. " * 20  # 520 characters
    (root / "json").mkdir(parents=True)
    (root / "test").mkdir()
    (root / "json" / "__init__.py").write_text(f'"""{long}"""\n', encoding="utf-8")
    (root / "shutil.py").write_text(
        f'"""Short."""\n\ndef copy():\n    """{long}"""\n\nclass Copier:\n    """{long}x"""\n',
        encoding="utf-8",
    )
    (root / "test" / "test_x.py").write_text(f'"""{long}"""\n', encoding="utf-8")
    (root / "broken.py").write_text("def (:\n", encoding="utf-8")
    return root


def test_long_docstrings_outside_the_test_packages_once_each(tmp_path: Path) -> None:
    found = list(python_docs.docstrings(_library(tmp_path)))
    # json's module docstring; shutil's function (the same text as json's: once) and class;
    # not the short module docstring, not the test package, and the broken file is skipped.
    assert [kind for kind, _ in found] == ["module", "class"]
    assert all(python_docs.MIN_CHARS <= len(text) <= python_docs.MAX_CHARS for _, text in found)


def test_the_installed_library_gives_a_stable_benign_retrieved_source(tmp_path: Path) -> None:
    rows = load_sources(tmp_path, documentation=True)[python_docs.SOURCE]
    again = load_sources(tmp_path, documentation=True)[python_docs.SOURCE]
    assert [r.text for r in rows] == [r.text for r in again]
    assert len(rows) > 500
    assert {r.label for r in rows} == {0} and {r.origin for r in rows} == {Origin.RETRIEVAL}
    assert {r.split for r in rows} == {DEV, HELD_OUT}
    assert all((r.split == HELD_OUT) == held_out(r.text) for r in rows)
    assert python_docs.SOURCE not in load_sources(tmp_path)


def test_run_detection_measures_the_documentation_when_asked(tmp_path: Path) -> None:
    def decide(text: str, origin: Origin) -> tuple[bool, float, list]:
        flagged = origin == Origin.RETRIEVAL and "socket" in text.lower()
        return flagged, float(flagged), []

    report = run_detection(tmp_path, decide, documentation=True)
    held = report.get(python_docs.SOURCE, HELD_OUT)
    docs = load_sources(tmp_path, documentation=True, only={python_docs.SOURCE})[python_docs.SOURCE]
    rows = [r for r in docs if r.split == HELD_OUT]
    assert held is not None and held.benign == len(rows) and held.attacks == 0
    assert 0 < held.fp == sum("socket" in r.text.lower() for r in rows) < len(rows)
    assert run_detection(tmp_path, decide).get(python_docs.SOURCE, HELD_OUT) is None
