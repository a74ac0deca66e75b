"""The machine's manual pages as retrieved content: /usr/share/man, rendered as `man` shows
them.

An assistant that answers questions about a system retrieves its manual, and a manual
page is the clean text most like an attack's words: options that "ignore", "override",
"disable", "bypass" or "force", commands that delete, execute or print secrets, a reader
told what to do. Every English page (MAN_ROOT/man1 ... man8; a page that only sources
another, `.so`, is skipped) is rendered by groff with its tables, as plain text at 100
columns (left-aligned, unhyphenated), and cut as `package_docs.chunks` cuts a README. A
Debian package's pages are one group: at most MAX_CHUNKS_PER_PAGE chunks a page and
MAX_CHUNKS a package (its pages in sha256 order of their names, so a package of thousands
of pages, such as the Google Cloud CLI's, gives a spread of them rather than its first),
chunks shorter than MIN_CHARS dropped and a text seen before skipped.

The benchmark holds out a fifth of the packages by the hash of their names, and the rest
are rows a choice may be made on; of the training scripts, only the planted-line head's
(`services/embedding/training/planted_lines.py`) reads them, their DEV rows alone. The
pages are read in place (each under its package's licence), never copied into this
repository, so the rows follow what the machine has installed.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from mithril.benchmark.debian_docs import read_text
from mithril.benchmark.package_docs import MIN_CHARS, Chunk, chunks

SOURCE = "benign/man-pages"
MAN_ROOT = Path("/usr/share/man")
SECTIONS = tuple(f"man{n}" for n in range(1, 9))
MAX_CHUNKS = 10
MAX_CHUNKS_PER_PAGE = 3
MAX_BYTES = 512 * 1024
"""Larger page sources are skipped (none of a page's first chunks needs more)."""
RENDER_TIMEOUT_SECONDS = 20.0
UNOWNED = "(no package)"
_AS_WRITTEN = ".ad l\n.de ad\n..\n.nh\n.de hy\n..\n"
"""Left-aligned, unhyphenated lines, and the macros' own `.ad b` and `.hy` made no-ops (as
man-db's --nj and --nh do; the BSD macros ignore -rHY=0): justification would pad the words
with spaces, and hyphenation cut them in two."""


def page_files(root: Path) -> list[Path]:
    """The manual's English pages under `root`: regular files (links name pages already
    there) in the section folders, in path order."""
    return sorted(
        path
        for section in SECTIONS
        if (root / section).is_dir()
        for path in (root / section).iterdir()
        if path.is_file() and not path.is_symlink()
    )


def owners(pages: list[Path]) -> dict[Path, str]:
    """Each page's Debian package, from dpkg's database (UNOWNED where it names none, or
    where dpkg is not installed)."""
    owner = dict.fromkeys(pages, UNOWNED)
    if not pages or shutil.which("dpkg-query") is None:
        return owner
    folders = sorted({str(page.parent) for page in pages})
    listed = subprocess.run(
        ["dpkg-query", "-S", *(f"{folder}/*" for folder in folders)],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    for line in listed.splitlines():
        packages, _, path = line.partition(": ")
        if Path(path) in owner:
            # A file two packages share ("a, b: path") goes with the first.
            owner[Path(path)] = packages.split(",")[0].strip().split(":")[0]
    return owner


def source_of(page: Path) -> str | None:
    """The page's roff source (gunzipped), or None when it is too large, unreadable, not
    text, or only a `.so` link to another page."""
    text = read_text(page, MAX_BYTES)
    return None if text is None or text.lstrip().startswith(".so ") else text


def render(source: str) -> str | None:
    """The page as `man` prints it to a pipe: groff with tbl and preconv, the man macros,
    UTF-8, no bold, underline or overstrike, 100 columns, lines not justified or hyphenated.
    None when groff fails."""
    try:
        done = subprocess.run(
            [
                *("groff", "-k", "-t", "-man", "-Tutf8", "-P-cbou"),
                # 100 columns, unhyphenated: words as they were written.
                *("-rLL=100n", "-rLT=100n", "-rHY=0"),
            ],
            input=(_AS_WRITTEN + source).encode("utf-8"),
            capture_output=True,
            timeout=RENDER_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", errors="replace")


def documents(root: Path | None = None) -> Iterator[Chunk]:
    """The kept chunks of every package's pages under `root` (default MAN_ROOT), packages in
    name order; a chunk's `kind` is its page's section folder ("man1", ...). Nothing when
    groff is not installed."""
    root = root or MAN_ROOT
    if shutil.which("groff") is None or not root.is_dir():
        return
    pages = page_files(root)
    by_package: dict[str, list[Path]] = defaultdict(list)
    for page, package in owners(pages).items():
        by_package[package].append(page)
    seen: set[str] = set()
    for package in sorted(by_package):
        kept = 0
        for page in sorted(by_package[package], key=_name_hash):
            if kept == MAX_CHUNKS:
                break
            for piece in _page_chunks(page, seen, min(MAX_CHUNKS_PER_PAGE, MAX_CHUNKS - kept)):
                kept += 1
                yield Chunk(package, page.parent.name, piece)


def _page_chunks(page: Path, seen: set[str], limit: int) -> Iterator[str]:
    source = source_of(page)
    text = render(source) if source is not None else None
    if not text:
        return
    kept = 0
    for piece in chunks(text):
        if kept == limit:
            return
        if len(piece.strip()) < MIN_CHARS or piece in seen:
            continue
        seen.add(piece)
        kept += 1
        yield piece


def _name_hash(page: Path) -> str:
    return hashlib.sha256(page.name.encode("utf-8")).hexdigest()
