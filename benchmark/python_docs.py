"""Clean technical documentation as retrieved content: this Python's standard library
docstrings.

No labelled source here is documentation, yet retrieval over docs (READMEs, API references,
how-tos) is what many RAG deployments do, and documentation is written in the imperative to
its reader ("Call close() when done", "Use the following"). Every docstring of at least
`MIN_CHARS` characters of a module, class or function in the standard library (outside its
test, demo and GUI packages), cut to its first `MAX_CHARS`, is a benign row, scanned as
`Origin.RETRIEVAL`. The texts come with the interpreter (PSF License), so nothing is
fetched and the rows are the same for every install of one Python version.
"""

from __future__ import annotations

import ast
import sysconfig
from collections import deque
from collections.abc import Iterator
from pathlib import Path

SOURCE = "benign/python-docs"
MIN_CHARS = 400
MAX_CHARS = 1500
SKIPPED_PACKAGES = frozenset(
    {"test", "tests", "idlelib", "lib2to3", "tkinter", "turtledemo", "site-packages"}
)
"""Tests (strings written to provoke parsers), GUI and demo code, and installed packages."""

_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
Documented = ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef
"""The nodes that can hold a docstring: `_DOCUMENTED`, as a type."""
_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)
"""What holds a definition: statements, and the clauses of `try` and `match`."""


def standard_library() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def docstrings(library: Path | None = None) -> Iterator[tuple[str, str]]:
    """(kind, text) of every long enough docstring, in a stable order: files by path, each
    file's nodes as `ast.walk` meets them; a text seen before is skipped."""
    library = library or standard_library()
    seen: set[str] = set()
    for path in sorted(library.rglob("*.py")):
        if SKIPPED_PACKAGES & set(path.relative_to(library).parts[:-1]):
            continue
        for kind, text in file_docstrings(path):
            if text not in seen:
                seen.add(text)
                yield kind, text


def file_docstrings(path: Path) -> Iterator[tuple[str, str]]:
    """(kind, text) of every docstring of at least MIN_CHARS in one file, cut to its first
    MAX_CHARS, as `ast.walk` meets them; none from a file of another Python's grammar or not
    in UTF-8."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return
    for node in _documented(tree):
        text = ast.get_docstring(node)
        if text is not None and len(text) >= MIN_CHARS:
            yield type(node).__name__.removesuffix("Def").lower(), text[:MAX_CHARS]


def _documented(tree: ast.Module) -> Iterator[Documented]:
    """The module, class and function nodes in the order `ast.walk` meets them, walking
    statements only: a definition is always one, so the expressions, most of a tree, can
    be skipped (a third party's files took 22 of 38 s to walk whole)."""
    queue: deque[ast.AST] = deque([tree])
    while queue:
        node = queue.popleft()
        if isinstance(node, _DOCUMENTED):
            yield node
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                queue.extend(child for child in value if isinstance(child, _STATEMENTS))
