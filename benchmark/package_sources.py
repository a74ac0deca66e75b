"""Source code as retrieved content: the Python files of the distributions installed beside
Mithril, cut as a RAG splitter cuts them.

A coding assistant's retrieval index holds its dependencies' source files as well as their
READMEs and API reference, and code reads nothing like prose: identifiers name the very
things a leak asks for (`get_config`, a `system_prompt` parameter), type annotations and
keyword arguments sit where a sentence's words would (`filters=None`), and generated files
carry serialised descriptors and long regular expressions. The files are those
`package_docstrings` reads (a distribution's own `.py` files as its RECORD lists them, tests
and vendored copies left out, at most `package_docstrings.MAX_FILES` evenly through them),
each cut by `package_docs.chunks`; pieces shorter than `package_docs.MIN_CHARS` are dropped,
and at most `MAX_PER_DISTRIBUTION` a distribution are kept, evenly through its pieces (a
file's first piece is mostly its licence header and imports), a text seen before skipped.
Each is a benign row, scanned as `Origin.RETRIEVAL`, held out with the same key as its
distribution's README (`package_docs`): a distribution's README, docstrings and code are on
one side.

The files are read in place (each under its distribution's licence), never copied into this
repository, so the rows follow what is installed. Mithril's own distribution is left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from mithril.benchmark import package_docs, package_docstrings

SOURCE = "benign/package-sources"
MAX_PER_DISTRIBUTION = 10


def documents(paths: Iterable[Path] | None = None) -> Iterator[package_docs.Chunk]:
    """The kept pieces of every distribution found on `paths` (default: this interpreter's
    `sys.path`), distributions by normalised name in order."""
    return package_docstrings.from_own_files(_pieces, "source", MAX_PER_DISTRIBUTION, paths)


def _pieces(path: Path) -> list[str]:
    """The file cut as a splitter cuts it, pieces too short to retrieve left out."""
    return [p for p in package_docs.chunks(_read(path)) if len(p) >= package_docs.MIN_CHARS]


def _read(path: Path) -> str:
    """The file's text, or nothing when it cannot be read as UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""
