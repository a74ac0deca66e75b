"""Software documentation as retrieved content: the READMEs of the Python distributions
installed beside Mithril.

A retrieval index over a project's dependencies, its docs site or its issues is what a
coding assistant reads, and a README is not a docstring: Markdown and reStructuredText,
badges and raw HTML, tables, shell sessions, configuration with placeholder keys, code
blocks, and prose addressed to its reader ("Create a file `main.py` with:"). Every installed
distribution's long description (its PyPI page, in its METADATA) is cut the way a RAG
pipeline cuts a document: paragraphs packed into chunks of at most `MAX_CHARS` characters,
at most `MAX_CHUNKS` a distribution (the first ones: a few large READMEs would otherwise
outweigh the rest), chunks shorter than `MIN_CHARS` dropped, a text seen before skipped.
Each chunk is a benign row, scanned as `Origin.RETRIEVAL`, held out by distribution (all of
a README's chunks on one side).

The texts are read in place from the environment (each under its distribution's licence),
never copied into this repository, so the rows follow what is installed: the same pinned
install gives the same rows. Mithril's own distribution is left out (its README quotes
attacks).
"""

from __future__ import annotations

import email.message
import importlib.metadata
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

SOURCE = "benign/package-docs"
MIN_CHARS = 300
MAX_CHARS = 1500
MAX_CHUNKS = 10
SKIPPED = frozenset({"mithril-firewall"})
"""Distributions whose READMEs are not benign documentation (Mithril's quotes attacks)."""

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")
_CODE = re.compile(r"```|^\.\. code|^(?: {4}|\t|>>> |\$ )\S", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class Chunk:
    distribution: str
    """The distribution's normalised name (what the split is decided on)."""
    kind: str
    """"code" when the chunk holds a code block or a shell session, else "prose"."""
    text: str


def normalised(name: str) -> str:
    """A distribution name as PyPI compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _metadata(distribution: importlib.metadata.Distribution) -> email.message.Message:
    """The METADATA file as the email message it is (the protocol type hides `get`)."""
    return cast(email.message.Message, distribution.metadata)


def long_description(metadata: email.message.Message) -> str:
    """The README a distribution ships: the METADATA body, or an older Description field."""
    body = metadata.get_payload()
    if isinstance(body, str) and body.strip():
        return body
    return str(metadata.get("Description") or "")


def chunks(text: str) -> list[str]:
    """`text` cut as a RAG splitter cuts it: paragraphs (blank-line separated) packed in
    order into pieces of at most MAX_CHARS; a longer paragraph is cut at line ends, and a
    longer line at MAX_CHARS."""
    pieces: list[str] = []
    current = ""
    for paragraph in _PARAGRAPH_BREAK.split(text.replace("\r\n", "\n")):
        for part in _fitting(paragraph.strip("\n")):
            if current and len(current) + 2 + len(part) > MAX_CHARS:
                pieces.append(current)
                current = ""
            current = f"{current}\n\n{part}" if current else part
    if current:
        pieces.append(current)
    return [piece for piece in pieces if piece.strip()]


def _fitting(paragraph: str) -> Iterator[str]:
    """`paragraph` in pieces of at most MAX_CHARS, cut at line ends where it can be."""
    if len(paragraph) <= MAX_CHARS:
        yield paragraph
        return
    current = ""
    for line in paragraph.split("\n"):
        while len(line) > MAX_CHARS:
            if current:
                yield current
                current = ""
            yield line[:MAX_CHARS]
            line = line[MAX_CHARS:]
        if current and len(current) + 1 + len(line) > MAX_CHARS:
            yield current
            current = ""
        current = f"{current}\n{line}" if current else line
    if current:
        yield current


def documents(paths: Iterable[Path] | None = None) -> Iterator[Chunk]:
    """Every kept chunk of every distribution found on `paths` (default: this interpreter's
    `sys.path`), distributions by normalised name, each once."""
    by_name = installed(paths)
    readmes = ((name, [long_description(_metadata(by_name[name]))]) for name in sorted(by_name))
    yield from kept_chunks(readmes)


def installed(paths: Iterable[Path] | None = None) -> dict[str, importlib.metadata.Distribution]:
    """Every distribution found on `paths` (default: this interpreter's `sys.path`) by its
    normalised name, the first found of a name, SKIPPED ones left out."""
    found = (
        importlib.metadata.distributions()
        if paths is None
        else importlib.metadata.distributions(path=[str(p) for p in paths])
    )
    by_name: dict[str, importlib.metadata.Distribution] = {}
    for distribution in found:
        name = normalised(_metadata(distribution).get("Name") or "")
        if name and name not in SKIPPED:
            by_name.setdefault(name, distribution)
    return by_name


def kept_chunks(
    documents: Iterable[tuple[str, Iterable[str]]], limit: int = MAX_CHUNKS
) -> Iterator[Chunk]:
    """The chunks kept of each (name, its texts), in order: at most `limit` a name, none
    shorter than MIN_CHARS, a text seen before (under any name) skipped."""
    seen: set[str] = set()
    for name, texts in documents:
        kept = 0
        for piece in (piece for text in texts for piece in chunks(text)):
            if kept == limit:
                break
            if len(piece) < MIN_CHARS or piece in seen:
                continue
            seen.add(piece)
            kept += 1
            yield Chunk(name, kind_of(piece), piece)


def kind_of(piece: str) -> str:
    """What the piece is: "code" when it holds a code block or a shell session, else
    "prose"."""
    return "code" if _CODE.search(piece) else "prose"
