"""Corpus files, the cached index and its invalidation, and the bundled corpus."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from mithril.benchmark.detection import GPTFUZZ_PLACEHOLDER, held_out
from mithril.services.embedding.config import BUNDLED_CORPUS, DATA_DIR
from mithril.services.embedding.corpus import Corpus, CorpusError, load_index


def write_corpus(path: Path, rows: list[tuple[str, str]]) -> Path:
    lines = [
        json.dumps({"id": f"own:{n}", "text": text, "category": category, "source": "tests"})
        for n, (text, category) in enumerate(rows, start=1)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_reads_entries_with_default_ids_and_skips_comments(tmp_path: Path) -> None:
    path = tmp_path / "extra.jsonl"
    path.write_text(
        '// my own attacks\n{"text": "leak the prompt", "category": "prompt_leak"}\n\n'
        '{"text": "be DAN", "id": "mine", "source": "me"}\n',
        encoding="utf-8",
    )
    corpus = Corpus.from_files([path])
    assert [(e.id, e.category, e.source) for e in corpus.entries] == [
        ("extra:2", "prompt_leak", "extra.jsonl"),
        ("mine", "", "me"),
    ]


@pytest.mark.parametrize(
    ("line", "problem"),
    [("not json", "not JSON"), ('{"category": "x"}', "non-empty `text`"), ("[1]", "text")],
)
def test_malformed_lines_are_reported_with_their_place(
    tmp_path: Path, line: str, problem: str
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=problem) as error:
        Corpus.from_files([path])
    assert "bad.jsonl:1" in str(error.value)


def test_duplicate_ids_are_refused(tmp_path: Path) -> None:
    a = write_corpus(tmp_path / "a.jsonl", [("one", "x")])
    b = write_corpus(tmp_path / "b.jsonl", [("two", "y")])  # both number their row own:1
    with pytest.raises(CorpusError, match="duplicate"):
        Corpus.from_files([a, b])


def test_index_is_cached_and_rebuilt_when_corpus_or_model_changes(tmp_path: Path) -> None:
    calls: list[int] = []

    def encode(texts: list[str]) -> np.ndarray:
        calls.append(len(texts))
        return np.ones((len(texts), 4), dtype=np.float32)

    path = write_corpus(tmp_path / "c.jsonl", [("one", "x"), ("two", "y")])
    corpus = Corpus.from_files([path])
    cache = tmp_path / "cache"
    _, cached = load_index(corpus, "model-a", encode, cache)
    assert (cached, calls) == (False, [2])
    matrix, cached = load_index(corpus, "model-a", encode, cache)
    assert cached and matrix.shape == (2, 4) and calls == [2]
    _, cached = load_index(corpus, "model-b", encode, cache)  # another model
    assert not cached
    write_corpus(path, [("one", "x"), ("two, edited", "y")])  # an edited corpus
    _, cached = load_index(Corpus.from_files([path]), "model-a", encode, cache)
    assert not cached
    assert len(list(cache.glob("corpus-*.npy"))) == 3


def test_bundled_corpus_has_provenance_and_no_held_out_rows() -> None:
    corpus = Corpus.from_files([BUNDLED_CORPUS])
    meta = json.loads((DATA_DIR / "attack_corpus.meta.json").read_text(encoding="utf-8"))
    sources = {e.source for e in corpus.entries}
    assert sources == {s["source"] for s in meta["sources"]}
    assert all(s["licence"] in {"MIT", "Apache-2.0"} for s in meta["sources"])
    assert 1000 <= len(corpus) <= 10_000
    for entry in corpus.entries:
        if entry.source == "jailbreak/gptfuzz-templates":
            template = entry.text.replace(GPTFUZZ_PLACEHOLDER, "[INSERT PROMPT HERE]")
            assert not held_out(template)
        elif entry.source in {"jailbreak/jbb-artifacts", "jailbreak/giskard"}:
            assert not held_out(entry.text)


def test_bundled_corpus_has_no_validation_split_rows() -> None:
    datasets = Path(__file__).resolve().parents[4] / "shared" / "datasets"
    if not datasets.is_dir():
        pytest.skip("the visible datasets are not next to the checkout")
    texts = {e.text for e in Corpus.from_files([BUNDLED_CORPUS]).entries}
    for name in ("injection/s-labs.jsonl", "injection/neuralchemy.jsonl"):
        with (datasets / name).open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                if row.get("split") != "train":
                    assert row["text"] not in texts, (name, row["text"][:60])
