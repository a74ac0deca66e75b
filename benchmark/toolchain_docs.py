"""Developer tools' documentation as retrieved content: npm's manual and READMEs, and the
books the Rust toolchain ships.

The distributions' READMEs (`package_docs.py`) are one register of documentation. A coding
assistant's index also holds a tool's manual and a language's books, written to a reader
and full of instructions addressed to them ("Run `npm install`", "Now change the
`main` function to ignore the error"). These are two more sources of benign retrieved
content, each cut as `package_docs.kept_chunks` cuts a README (paragraphs packed into
chunks of at most 1500 characters, shorter than 300 dropped, a text seen before skipped,
at most MAX_CHUNKS a document):

- NPM_SOURCE: the Markdown manual npm ships (docs/content/**/*.md) and the README.md of
  npm and of each package npm bundles, one document each.
- RUST_SOURCE: the chapters of the mdBook books in the Rust toolchain's documentation
  (the book, cargo, rustc, rustdoc, the reference, the nomicon, the edition and style
  guides, clippy's and the embedded book): each chapter's <main> turned into Markdown by
  markdownify, as a RAG loader turns a web page into text. Pages that only redirect have no
  <main> and are skipped.

Each document is a group (held out by sha256 of its name, like the READMEs). The texts are
read in place from what is installed (npm under the Artistic License 2.0 and its packages'
licences; the Rust books under MIT or Apache-2.0), never copied into this repository, so
the rows follow the machine: where npm or a Rust toolchain is missing the source is absent.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from mithril.benchmark.package_docs import Chunk, kept_chunks

NPM_SOURCE = "benign/npm-docs"
RUST_SOURCE = "benign/rust-books"
NPM_ROOT = Path("/usr/lib/node_modules/npm")
RUSTUP_TOOLCHAINS = Path.home() / ".rustup" / "toolchains"
RUST_BOOKS = (
    "book",
    "cargo",
    "clippy",
    "edition-guide",
    "embedded-book",
    "nomicon",
    "reference",
    "rustc",
    "rustdoc",
    "style-guide",
)
"""The toolchain's mdBook books read. Rust by Example, the unstable book and the error
index are left out: hundreds of pages each of mostly code or one-paragraph stubs, they
would outweigh the prose of the rest."""
MAX_CHUNKS = 4
"""A chapter or a manual page is shorter than a README's whole story: its first chunks
say what it is about, and a few long chapters would otherwise outweigh the rest."""
MAX_BYTES = 512 * 1024
_NOT_CHAPTERS = frozenset({"print.html", "toc.html", "404.html", "index.html"})
_MAIN = re.compile(r"<main>(.*?)</main>", re.DOTALL)
_Reading = Callable[[str], "str | None"]


def npm_documents(root: Path | None = None) -> Iterator[Chunk]:
    """The kept chunks of npm's manual pages and its packages' READMEs, in path order,
    each named by its path under `root` (default NPM_ROOT)."""
    root = root or NPM_ROOT
    if root.is_dir():
        yield from _npm_chunks(root)


def rust_documents(toolchains: Path | None = None) -> Iterator[Chunk]:
    """The kept chunks of the Rust books' chapters of one installed toolchain (stable when
    there is one) under `toolchains` (default RUSTUP_TOOLCHAINS), in path order, each named
    by its path under the books' folder."""
    html = rust_book_root(toolchains or RUSTUP_TOOLCHAINS)
    if html is not None:
        yield from _rust_chunks(html)


@functools.cache
def _npm_chunks(root: Path) -> tuple[Chunk, ...]:
    manual = sorted((root / "docs" / "content").rglob("*.md"))
    readmes = sorted(p for p in root.rglob("*") if p.name.lower() == "readme.md" and p.is_file())
    return tuple(kept_chunks(_named(root, manual + readmes, _as_is), MAX_CHUNKS))


@functools.cache
def _rust_chunks(html: Path) -> tuple[Chunk, ...]:
    # Cached: turning some 1,300 pages into Markdown takes seconds, and a run reads them
    # once for each report that loads the sources.
    chapters = sorted(
        page
        for book in RUST_BOOKS
        if (html / book).is_dir()
        for page in (html / book).rglob("*.html")
        if page.name not in _NOT_CHAPTERS
    )
    return tuple(kept_chunks(_named(html, chapters, chapter_text), MAX_CHUNKS))


def rust_book_root(toolchains: Path) -> Path | None:
    """The html folder of the stable toolchain's documentation, else of the first
    toolchain (in name order) that has one; None without any."""
    if not toolchains.is_dir():
        return None
    stable_first = sorted(
        toolchains.iterdir(), key=lambda t: (not t.name.startswith("stable"), t.name)
    )
    for toolchain in stable_first:
        html = toolchain / "share" / "doc" / "rust" / "html"
        if html.is_dir():
            return html
    return None


def chapter_text(page: str) -> str | None:
    """An mdBook page's chapter as Markdown, or None for a page without one (a redirect)."""
    from markdownify import markdownify

    found = _MAIN.search(page)
    if found is None:
        return None
    text = markdownify(found.group(1), heading_style="ATX", strip=["a", "img"])
    return re.sub(r"\n{3,}", "\n\n", text).strip() or None


def _as_is(text: str) -> str | None:
    return text


def _named(root: Path, paths: Iterable[Path], reading: _Reading) -> Iterator[tuple[str, list[str]]]:
    for path in paths:
        if path.stat().st_size > MAX_BYTES:
            continue
        if text := reading(path.read_text(encoding="utf-8", errors="replace")):
            yield str(path.relative_to(root)), [text]
