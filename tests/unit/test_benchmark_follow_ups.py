"""The follow-up turns: well formed, benign, split as documented, read by the benchmark."""

from __future__ import annotations

from collections import Counter

from mithril.benchmark import detection, follow_ups
from mithril.benchmark.follow_ups import DEV, HELD_OUT, SOURCE, load, part_of
from tests.conftest import DATASETS

CATEGORIES = {
    "continuation",
    "retry",
    "format",
    "correction",
    "ack",
    "clarify",
    "language",
    "style",
    "code",
    "agent",
    "other",
}


def test_every_row_is_split_by_the_documented_rule() -> None:
    rows = load()
    assert len(rows) >= 200
    for row in rows:
        assert row.part == part_of(row.text, row.probed), row.text
        assert row.text == row.text.strip() and row.text
        assert row.category in CATEGORIES
    parts = Counter(row.part for row in rows)
    # Half by hash, give or take the sample, and the probed rows on the DEV side.
    assert abs(parts[HELD_OUT] - parts[DEV]) < 0.2 * len(rows)
    assert all(row.part == DEV for row in rows if row.probed)


def test_no_turn_is_there_twice() -> None:
    keys = [" ".join(row.text.lower().split()) for row in load()]
    assert len(keys) == len(set(keys))


def test_the_split_is_stable_and_by_hash() -> None:
    assert part_of("continue", probed=True) == DEV
    assert {part_of(f"turn {i}") for i in range(40)} == {DEV, HELD_OUT}
    assert part_of("keep going") == part_of("keep going")
    assert (follow_ups.DEV, follow_ups.HELD_OUT) == (detection.DEV, detection.HELD_OUT)


def test_the_benchmark_reads_them_as_a_benign_user_source() -> None:
    assert SOURCE not in detection.load_sources(DATASETS)
    rows = detection.load_sources(DATASETS, follow_ups=True)[SOURCE]
    assert len(rows) == len(load())
    assert {row.label for row in rows} == {0}
    assert {row.split for row in rows} == {DEV, HELD_OUT}
    assert {row.origin.name for row in rows} == {"USER"}
