"""Debian packages' READMEs as a benign source of retrieved documentation, all held out."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from mithril.benchmark import debian_docs, package_docs
from mithril.benchmark.detection import HELD_OUT, load_sources
from mithril.domain import Origin

PARAGRAPH = "Run the daemon once to create its configuration, then edit it and restart. " * 5


def _package(root: Path, name: str, files: dict[str, bytes]) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    for file_name, data in files.items():
        (folder / file_name).write_bytes(data)


@pytest.fixture
def doc_root(tmp_path: Path) -> Path:
    root = tmp_path / "doc"
    code = f"{PARAGRAPH}\n\n    $ sudo systemctl restart thing\n"
    _package(root, "alpha", {"README.md": code.encode(), "copyright": PARAGRAPH.encode()})
    _package(root, "beta", {"README.Debian.gz": gzip.compress(f"beta {PARAGRAPH}".encode())})
    _package(root, "gamma", {"README": b"\0\x01binary" + PARAGRAPH.encode()})
    _package(root, "delta", {"README": b"x" * (debian_docs.MAX_BYTES + 1)})
    _package(root, "epsilon", {"README.txt": code.encode()})  # alpha's text again
    return root


def test_readmes_are_read_plain_or_gzipped_and_other_files_are_not(doc_root: Path) -> None:
    found = list(debian_docs.documents(doc_root))
    assert [(c.distribution, c.kind) for c in found] == [("alpha", "code"), ("beta", "prose")]
    assert found[1].text.startswith("beta Run the daemon")


def test_binary_too_large_and_repeated_texts_are_skipped(doc_root: Path) -> None:
    names = {c.distribution for c in debian_docs.documents(doc_root)}
    assert not names & {"gamma", "delta", "epsilon"}


def test_a_package_gives_at_most_its_first_chunks(tmp_path: Path) -> None:
    many = "\n\n".join(f"Section {i}. {PARAGRAPH}" * 4 for i in range(30))
    _package(tmp_path, "big", {"README": many.encode()})
    found = list(debian_docs.documents(tmp_path))
    assert len(found) == package_docs.MAX_CHUNKS
    assert found[0].text.startswith("Section 0.")


def test_every_row_is_held_out_retrieved_content(
    doc_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(debian_docs, "DOC_ROOT", doc_root)
    rows = load_sources(tmp_path / "no-datasets", documentation=True)[debian_docs.SOURCE]
    assert [(r.split, r.origin, r.label, r.group) for r in rows] == [
        (HELD_OUT, Origin.RETRIEVAL, 0, "debian-docs:alpha"),
        (HELD_OUT, Origin.RETRIEVAL, 0, "debian-docs:beta"),
    ]


def test_no_documentation_folder_means_no_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(debian_docs, "DOC_ROOT", tmp_path / "absent")
    assert debian_docs.SOURCE not in load_sources(tmp_path, documentation=True)
    assert list(debian_docs.documents()) == []
