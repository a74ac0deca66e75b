"""Debian's package documentation as retrieved content: the READMEs under /usr/share/doc.

The installed distributions' READMEs (`package_docs.py`) are held out by distribution, but
their held-out false positives were read in the twenty-third session, before it chose the
classifier's threshold on documents (on DEV rows only). This source is documentation no
choice has been made on, or ever will be: every row is HELD_OUT, and neither training nor
any threshold reads it. A Debian package's README, README.md or README.Debian (plain or
gzipped, at most MAX_BYTES) is a maintainer's or upstream's notes on building, configuring
and running the software: prose, shell sessions, configuration files, change notes. Each
file is cut as `package_docs.chunks` cuts a README (paragraphs packed into chunks of at most
1500 characters, shorter than 300 dropped, a text seen before skipped), at most MAX_CHUNKS a
package, all of a package's chunks in one group.

The texts are read in place (each under its package's licence, in the copyright file
beside it), never copied into this repository, so the rows follow what the machine has
installed.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from pathlib import Path

from mithril.benchmark.package_docs import Chunk, kept_chunks

SOURCE = "benign/debian-docs"
DOC_ROOT = Path("/usr/share/doc")
MAX_BYTES = 256 * 1024
"""Larger files are skipped (none of a README's first chunks needs more)."""
_README = re.compile(r"README(?:\.md|\.Debian|\.txt|\.rst)?(?:\.gz)?", re.IGNORECASE)


def readme_files(package: Path) -> list[Path]:
    """The package folder's README files, in name order."""
    return sorted(p for p in package.iterdir() if p.is_file() and _README.fullmatch(p.name))


def read_text(path: Path, max_bytes: int = MAX_BYTES) -> str | None:
    """The file as text (gunzipped), or None when it is larger than `max_bytes`, either
    way, unreadable or not text."""
    try:
        if path.stat().st_size > max_bytes:
            return None
        with gzip.open(path) if path.suffix == ".gz" else path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except (OSError, EOFError):
        return None
    if len(data) > max_bytes or b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def documents(root: Path | None = None) -> Iterator[Chunk]:
    """Every kept chunk of every package's READMEs under `root` (default DOC_ROOT), packages
    in name order."""
    root = root or DOC_ROOT
    if not root.is_dir():
        return
    packages = sorted(p for p in root.iterdir() if p.is_dir())
    yield from kept_chunks((package.name, _texts(package)) for package in packages)


def _texts(package: Path) -> Iterator[str]:
    for path in readme_files(package):
        if text := read_text(path):
            yield text
