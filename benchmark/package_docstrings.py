"""An API reference as retrieved content: the docstrings of the Python distributions
installed beside Mithril.

A coding assistant's retrieval index holds its dependencies' API reference as often as their
READMEs, and a third party's docstrings are written as PEP 257 asks: they open with a
command ("Generate a swiss roll dataset.", "Write a DataFrame to the binary parquet
format."), then the numpydoc, Google or Sphinx sections, doctest sessions and cross-references
of their style. The standard library's docstrings (`python_docs`) seldom open with a verb a
planted request uses ("Return ...", "Create ..."); these often do. Every docstring of at least
`python_docs.MIN_CHARS` characters in a distribution's own Python files (as its RECORD lists
them, tests left out; at most `MAX_FILES` of them, evenly through them in path order), cut to
its first `python_docs.MAX_CHARS`, is a candidate; at most `MAX_PER_DISTRIBUTION` a
distribution are kept, evenly through them (a few large libraries would otherwise outweigh
the rest), a text seen before skipped. Each is a benign row, scanned as `Origin.RETRIEVAL`,
held out by distribution with the same key as its README (`package_docs`): a
distribution's docstrings and README are on one side.

The texts are read in place (each under its distribution's licence), never copied into this
repository, so the rows follow what is installed: the same pinned install gives the same
rows. Mithril's own distribution is left out, as its README is.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TypeVar

from mithril.benchmark import package_docs, python_docs

T = TypeVar("T")

SOURCE = "benign/package-docstrings"
MAX_PER_DISTRIBUTION = 10
MAX_FILES = 20
"""Files read a distribution, evenly through them: parsing every file of the largest ones
(torch's thousands) would cost minutes for ten docstrings."""
SKIPPED_DIRECTORIES = frozenset({"test", "tests", "testing", "_vendor", "vendored"})
"""Tests (strings written to provoke parsers) and other projects' code carried inside one."""


def documents(paths: Iterable[Path] | None = None) -> Iterator[package_docs.Chunk]:
    """The kept docstrings of every distribution found on `paths` (default: this
    interpreter's `sys.path`), distributions by normalised name in order, each once."""
    return from_own_files(
        lambda path: (text for _, text in python_docs.file_docstrings(path)),
        "docstring",
        MAX_PER_DISTRIBUTION,
        paths,
    )


def from_own_files(
    texts_of: Callable[[Path], Iterable[str]],
    kind: str,
    limit: int,
    paths: Iterable[Path] | None = None,
) -> Iterator[package_docs.Chunk]:
    """For every distribution found on `paths`, by normalised name in order: the texts
    `texts_of` gives of its own Python files (at most MAX_FILES of them, evenly through
    them), at most `limit` kept evenly through them, a text seen before skipped."""
    by_name = package_docs.installed(paths)
    seen: set[str] = set()
    for name in sorted(by_name):
        texts = [
            text
            for path in evenly(python_files(by_name[name]), MAX_FILES)
            for text in texts_of(path)
            if text not in seen
        ]
        for text in dict.fromkeys(evenly(texts, limit)):
            seen.add(text)
            yield package_docs.Chunk(name, kind, text)


def evenly(items: list[T], limit: int) -> list[T]:
    """At most `limit` of the items, spread evenly through them, in order."""
    if len(items) <= limit:
        return items
    return [items[i * len(items) // limit] for i in range(limit)]


def python_files(distribution: importlib.metadata.Distribution) -> list[Path]:
    """The distribution's own .py files, by path, outside tests and vendored copies."""
    files = [
        entry
        for entry in distribution.files or ()
        if entry.suffix == ".py" and not SKIPPED_DIRECTORIES & set(entry.parts[:-1])
    ]
    return sorted(Path(str(distribution.locate_file(entry))) for entry in files)
