"""The attack corpus: JSON-lines files users can extend, and its cached embedding index.

Each line is `{"text": ..., "category": ..., "source": ..., "id": ...}` (`id` optional:
`<file stem>:<line>` when absent; blank lines and lines starting with `//` are skipped).
The bundled `data/attack_corpus.jsonl` is built by `services/embedding/training/train.py`
from training rows only; its provenance and licences are in `attack_corpus.meta.json`.

The index (one L2-normalised vector per entry, float32 `.npy`) holds each entry as the learned
tiers read every text (`as_read`: obfuscation undone, see `services/scanner/readable.py`). It
is cached under `cache_dir` in a file named by sha256 of `TEXT_VIEW`, the model id and every
entry; a change to any builds a fresh index, and a stale file is never read.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mithril.services.scanner.readable import as_read

TEXT_VIEW = "as_read:3"
"""What the index embeds of each entry; in the cache key, so a change rebuilds the index
(2: short rot13 texts told by the language identifier, leetspeak never rotated; 3: words in
Cyrillic or Greek kept beside a word mixing lookalikes with Latin letters)."""

_log = logging.getLogger(__name__)


class CorpusError(ValueError):
    """A corpus file is malformed."""


@dataclass(frozen=True, slots=True)
class CorpusEntry:
    id: str
    text: str
    category: str
    source: str


@dataclass(frozen=True, slots=True)
class Corpus:
    entries: tuple[CorpusEntry, ...]

    def __len__(self) -> int:
        return len(self.entries)

    @classmethod
    def from_files(cls, paths: Iterable[Path]) -> Corpus:
        entries: list[CorpusEntry] = []
        seen: set[str] = set()
        for path in paths:
            for entry in _read(Path(path)):
                if entry.id in seen:
                    raise CorpusError(f"{path}: duplicate corpus id {entry.id!r}")
                seen.add(entry.id)
                entries.append(entry)
        return cls(tuple(entries))

    def digest(self, model_id: str) -> str:
        """sha256 over `TEXT_VIEW`, the model id and every entry (order matters: it is the
        index order)."""
        h = hashlib.sha256(f"{TEXT_VIEW}\x1f{model_id}".encode())
        for entry in self.entries:
            for part in (entry.id, entry.text, entry.category, entry.source):
                h.update(b"\x1f" + part.encode("utf-8"))
            h.update(b"\x1e")
        return h.hexdigest()


def _read(path: Path) -> list[CorpusEntry]:
    entries: list[CorpusEntry] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            stripped = line.strip()
            if not stripped or stripped.startswith("//"):
                continue
            try:
                item = json.loads(stripped)
            except json.JSONDecodeError as error:
                raise CorpusError(f"{path}:{number}: not JSON ({error.msg})") from None
            if not isinstance(item, dict) or not str(item.get("text") or "").strip():
                raise CorpusError(f"{path}:{number}: needs a non-empty `text`")
            entries.append(
                CorpusEntry(
                    id=str(item.get("id") or f"{path.stem}:{number}"),
                    text=str(item["text"]),
                    category=str(item.get("category") or ""),
                    source=str(item.get("source") or path.name),
                )
            )
    return entries


def load_index(
    corpus: Corpus,
    model_id: str,
    encode: Callable[[list[str]], np.ndarray],
    cache_dir: Path | None,
    *,
    chunk: int = 256,
) -> tuple[np.ndarray, bool]:
    """The corpus matrix (len(corpus), dims) and whether it came from the cache."""
    digest = corpus.digest(model_id)
    path = Path(cache_dir) / f"corpus-{digest[:32]}.npy" if cache_dir else None
    if path is not None and path.exists():
        try:
            matrix = np.load(path, allow_pickle=False)
            if matrix.shape[0] == len(corpus):
                return matrix, True
        except (OSError, ValueError) as error:
            _log.warning("ignoring unreadable corpus cache %s: %s", path, error)
    texts = [as_read(entry.text) for entry in corpus.entries]
    parts = [encode(texts[i : i + chunk]) for i in range(0, len(texts), chunk)]
    matrix = np.vstack(parts).astype(np.float32) if parts else np.zeros((0, 0), np.float32)
    if path is not None:
        _atomic_save(path, matrix)
    return matrix, False


def _atomic_save(path: Path, matrix: np.ndarray) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".npy.tmp")
        with os.fdopen(fd, "wb") as handle:
            np.save(handle, matrix, allow_pickle=False)
        os.replace(tmp, path)
    except OSError as error:  # a read-only home must not stop the service
        _log.warning("could not cache the corpus index at %s: %s", path, error)
