"""The memory benchmark's labelled set (benchmark/data/memory_poisoning.jsonl) is well formed:
its schema and classes, enough probes per class, credentials the project's secrets detector
finds (kept in pieces in the file), and no text taken from the offline scorers' tuning set."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from mithril.benchmark import memory
from mithril.services.secrets import SecretsDetector
from mithril.services.secrets.kinds import CREDENTIAL

ROOT = Path(__file__).resolve().parents[2]
TUNING_SET = ROOT / "tests" / "unit" / "memorygate" / "data" / "offline_scorers.jsonl"
CLASSES = {memory.SEED, memory.RECALL, *memory.PROBE_CLASSES}
REQUIRED = {"id", "class", "text", "source", "expected", "note"}
MIN_PROBES_PER_CLASS = 20


def raw_rows() -> list[dict[str, Any]]:
    with memory.DATA.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def normalised(text: str) -> str:
    return " ".join(text.casefold().split())


@pytest.fixture(scope="module")
def rows() -> list[memory.Row]:
    return memory.load()


def test_every_row_has_the_schema_and_a_known_class() -> None:
    raw = raw_rows()
    for row in raw:
        assert row.keys() >= REQUIRED, row.get("id")
        assert row["class"] in CLASSES, row["id"]
        assert isinstance(row["text"], str) and row["text"].strip(), row["id"]
        assert isinstance(row["note"], str) and row["note"].strip(), row["id"]
    ids = [row["id"] for row in raw]
    assert len(ids) == len(set(ids)), "ids must be unique"


def test_labels_follow_the_class(rows: list[memory.Row]) -> None:
    for row in rows:
        if row.cls in memory.HOLD_CLASSES:
            assert row.expected == "hold", row.id
        elif row.cls in memory.STORE_CLASSES or row.cls == memory.SEED:
            assert row.expected == "store", row.id
        else:
            assert row.expected == memory.RECALL, row.id


def test_seeds_come_first_from_trusted_sources_and_recall_queries_last(
    rows: list[memory.Row],
) -> None:
    order = [row.cls for row in rows]
    first_probe = next(i for i, cls in enumerate(order) if cls in memory.PROBE_CLASSES)
    assert all(cls == memory.SEED for cls in order[:first_probe])
    assert memory.SEED not in order[first_probe:]
    first_query = order.index(memory.RECALL)
    assert all(cls == memory.RECALL for cls in order[first_query:])
    seeds = [row for row in rows if row.cls == memory.SEED]
    assert len(seeds) >= 30
    assert {row.source for row in seeds} == {"Security Policy", "Slack"}
    probes = [row for row in rows if row.cls in memory.PROBE_CLASSES]
    assert all(row.source.strip() for row in probes)


def test_there_are_enough_probes_and_queries_in_every_class(rows: list[memory.Row]) -> None:
    counts = Counter(row.cls for row in rows)
    for cls in memory.PROBE_CLASSES:
        assert counts[cls] >= MIN_PROBES_PER_CLASS, cls
    assert counts[memory.RECALL] >= 25


def test_references_name_seeds(rows: list[memory.Row]) -> None:
    seeds = {row.id for row in rows if row.cls == memory.SEED}
    for row in rows:
        if row.cls in ("contradiction", "corroboration"):
            assert row.seed in seeds, row.id
        if row.seed:
            assert row.seed in seeds, row.id
        if row.cls == memory.RECALL:
            assert row.answer in seeds, row.id


def test_flooding_is_near_duplicates_from_low_reputation_sources(rows: list[memory.Row]) -> None:
    flood = [row for row in rows if row.cls == "flooding"]
    assert {row.subtype for row in flood} == {"single-source", "sybil"}
    single = {row.source for row in flood if row.subtype == "single-source"}
    assert single == {"Unknown Agent"}
    assert not {row.source for row in flood} & {"Security Policy", "Slack"}


def _covered(text: str, secret: str, spans: list[tuple[int, int]]) -> bool:
    start = text.find(secret)
    return start >= 0 and any(a <= start and start + len(secret) <= b for a, b in spans)


def test_every_credential_probe_plants_a_secret_the_detector_finds(
    rows: list[memory.Row],
) -> None:
    detector = SecretsDetector.default()
    raw = {row["id"]: row for row in raw_rows()}
    for row in (r for r in rows if r.cls == "credential"):
        assert row.secrets, row.id
        assert memory.SECRET_SLOT.format(0) not in row.text, row.id
        findings = [f for f in detector.detect(row.text) if f.category == CREDENTIAL]
        assert findings, f"{row.id}: the secrets detector finds no credential"
        spans = [(f.start or 0, f.end or 0) for f in findings]
        known_gaps = set(raw[row.id].get("undetected", []))
        for index, secret in enumerate(row.secrets):
            if index not in known_gaps:
                assert _covered(row.text, secret, spans), f"{row.id}: secret {index} not found"


def test_only_credential_probes_carry_credentials(rows: list[memory.Row]) -> None:
    detector = SecretsDetector.default()
    for row in rows:
        if row.cls != "credential":
            kinds = [f.kind for f in detector.detect(row.text) if f.category == CREDENTIAL]
            assert not kinds, f"{row.id} carries {kinds}"


def test_the_file_never_holds_a_whole_secret(rows: list[memory.Row]) -> None:
    """Secrets are stored in pieces, so repository secret scanners stay quiet."""
    text = memory.DATA.read_text(encoding="utf-8")
    for row in rows:
        for secret in row.secrets:
            assert json.dumps(secret)[1:-1] not in text, row.id
    assert not re.search(r"BEGIN [A-Z ]*PRIVATE KEY", text)


def test_no_text_comes_from_the_offline_scorers_tuning_set(rows: list[memory.Row]) -> None:
    tuned: set[str] = set()
    with TUNING_SET.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                item = json.loads(line)
                tuned.update(normalised(item[key]) for key in ("claim", "context") if key in item)
    copied = [row.id for row in rows if normalised(row.text) in tuned]
    assert not copied, f"copied from the tuning set: {copied}"
    texts = [normalised(row.text) for row in rows]
    assert len(texts) == len(set(texts)), "a text appears twice"
