"""The training script's choices that the shipped calibrations depend on."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.training.train import (
    MAX_FPR,
    learned_probability,
    pick_threshold,
    sharpen,
)

CLASSIFIER = Calibration(threshold=0.0, slope=1.0)
SIMILARITY = Calibration(threshold=0.8, slope=10.0)


def _benign(count: int, source: str = "benign/x") -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(count, dtype=int), np.array([source] * count)


def test_the_learned_score_is_the_highest_of_the_tiers() -> None:
    network_raw, ngram_raw, sim_raw = (
        np.array([2.0, -2.0, -2.0]),
        np.array([-2.0, 2.0, -2.0]),
        np.array([0.0, 0.0, 0.9]),
    )
    parts = [(CLASSIFIER, network_raw), (Calibration(0.0, 1.0), ngram_raw)]
    learned = learned_probability(parts, SIMILARITY, sim_raw)
    expected = np.max(
        [
            CLASSIFIER.probability(network_raw),
            CLASSIFIER.probability(ngram_raw),
            SIMILARITY.probability(sim_raw),
        ],
        axis=0,
    )
    np.testing.assert_allclose(learned, expected)
    assert (learned >= 0.5).tolist() == [True, True, True]


def test_sharpen_takes_the_smallest_factor_that_keeps_combinations_below_the_threshold() -> None:
    labels, sources = _benign(100)
    # Half the rows: a rule at 0.3 and a classifier raw half a unit below its threshold.
    # At slope 1 the learned tier gives 0.38 and the noisy-OR 0.56: flagged. At slope 2 it
    # gives 0.27 and the noisy-OR 0.49: not.
    rules = np.where(np.arange(100) < 50, 0.3, 0.0)
    raw = np.full(100, -0.5)
    factor = sharpen([(CLASSIFIER, raw)], SIMILARITY, np.zeros(100), rules, labels, sources)
    assert factor == 2.0


def test_sharpen_leaves_the_slopes_alone_when_nothing_adds_up() -> None:
    labels, sources = _benign(100)
    rules = np.zeros(100)
    rules[:5] = 0.9  # 5 % of benign rows flagged by a rule on its own: not sharpening's to fix
    factor = sharpen(
        [(CLASSIFIER, np.full(100, -3.0))], SIMILARITY, np.zeros(100), rules, labels, sources
    )
    assert factor == 1.0


def test_pick_threshold_keeps_the_false_positive_bound_on_every_source() -> None:
    raw = np.concatenate([np.linspace(0, 1, 200), np.linspace(0, 2, 100)])
    labels = np.zeros(300, dtype=int)
    sources = np.array(["a"] * 200 + ["b"] * 100)
    threshold = pick_threshold(raw, labels, sources)
    for source in ("a", "b"):
        assert float((raw[sources == source] >= threshold).mean()) <= MAX_FPR
    # b allows one row of its 100 above: the threshold is just above its second highest
    assert threshold == pytest.approx(2 * 98 / 99)


def test_pick_threshold_with_no_false_positive_allowed_is_above_every_benign_row() -> None:
    raw = np.array([0.2, 0.9, 0.5, 0.95, 0.3])
    labels = np.array([0, 1, 0, 1, 0])
    sources = np.array(["a", "x", "b", "x", "b"])
    threshold = pick_threshold(raw, labels, sources, max_fpr=0.0)
    assert 0.5 < threshold < 0.5 + 1e-9  # just above the highest benign row, b's 0.5


def test_the_multilingual_head_never_reads_held_out_translations() -> None:
    """Translations of FIT rows are fitted on, of DEV rows choose the threshold, and the
    held-out translations (what `mithril bench detection` scores) are in neither."""
    from mithril.benchmark.translated import load
    from mithril.services.embedding.training.multilingual import translated_samples
    from mithril.services.embedding.training.train import FIT, VALIDATION

    chosen = translated_samples()
    rows = load()
    held_out = {r.text for r in rows if r.part == "held_out"}
    assert not held_out & {s.text for s in chosen}
    by_part = {FIT: "fit", VALIDATION: "dev"}
    for part, name in by_part.items():
        expected = [r for r in rows if r.part == name and r.language != "en"]
        got = [s for s in chosen if s.part == part]
        assert [s.text for s in got] == [r.text for r in expected]
        assert [s.label for s in got] == [r.label for r in expected]
    assert {s.source for s in chosen} == {"translated/s-labs", "translated/neuralchemy"}
    assert len(chosen) == 8 * (200 + 60)


def test_the_head_learns_what_it_reads_of_clean_documents() -> None:
    """A clean document's passage in another language is a benign sample; a document in
    English throughout, an attack, or a document of another part is not."""
    from mithril.domain import Origin
    from mithril.services.embedding.multilingual import LanguageGate
    from mithril.services.embedding.training.multilingual import DOCUMENTS, document_samples
    from mithril.services.embedding.training.train import FIT, VALIDATION, Sample

    passage = "Die Lieferung kommt am Donnerstag, bitte unterschreibe den Lieferschein dann."
    english = (
        "Hi Sam,\nThanks for sending the quarterly figures over so quickly, they look right.\n"
        "Could you also add the regional breakdown before the review meeting?\n"
    )
    with_passage = english + passage + "\nBest regards, Alex"

    def sample(text: str, label: int = 0, part: str = FIT) -> Sample:
        return Sample(DOCUMENTS, text, label, part, "email", Origin.RETRIEVAL, view=text)

    loaded = [
        sample(with_passage),
        sample(english),
        sample(with_passage, label=1),
        sample(with_passage, part=VALIDATION),
    ]
    (chosen,) = document_samples(loaded, LanguageGate(), FIT)
    assert chosen.label == 0 and chosen.part == FIT
    assert passage in chosen.view and "quarterly" not in chosen.view


def test_the_second_opinion_is_asked_only_about_short_texts_the_classifier_is_unsure_of() -> None:
    from mithril.services.embedding.multilingual import EnglishOpinion
    from mithril.services.embedding.training.second_opinion import DOUBT_FROM, Rows, flagged

    opinion = EnglishOpinion(Calibration(threshold=1.0, slope=20.0), DOUBT_FROM)
    rows = Rows(
        english=np.array([0.2, 0.2, 0.001, 0.2, 0.6]),
        head_raw=np.array([3.0, 3.0, 3.0, 0.0, -5.0]),
        short=np.array([True, False, True, True, True]),
        rules=np.zeros(5),
        labels=np.ones(5, dtype=int),
        sources=np.array(["a"] * 5),
    )
    result = flagged(opinion, rows)
    # asked and convinced | long | sure it is benign | asked, not convinced | already flagged
    assert result.tolist() == [True, False, False, False, True]


def test_the_second_opinion_threshold_adds_at_most_its_share_of_false_positives() -> None:
    from mithril.services.embedding.training.second_opinion import (
        EXTRA_FPR,
        Rows,
        bound_by,
        choose,
        flagged,
        report_lines,
    )

    # Source "a": 400 benign rows, 10 of them unsure with rising head logits; source "b":
    # 100 benign rows (EXTRA_FPR allows none more), one unsure at logit 2.5. Ten attacks,
    # unsure, at logits 0.5 .. 5.
    head_raw = np.concatenate([np.full(390, -9.0), np.linspace(0, 4.5, 10), np.full(99, -9.0)])
    head_raw = np.concatenate([head_raw, [2.5], np.linspace(0.5, 5, 10)])
    english = np.where(head_raw > -9.0, 0.1, 0.0)
    labels = np.array([0] * 500 + [1] * 10)
    sources = np.array(["a"] * 400 + ["b"] * 100 + ["a"] * 10)
    rows = Rows(english, head_raw, np.ones(510, dtype=bool), np.zeros(510), labels, sources)
    opinion = choose(rows, slope=50.0)
    added = flagged(opinion, rows) & (labels == 0)
    assert added[:400].sum() <= np.floor(EXTRA_FPR * 400) == 2
    assert added[400:500].sum() == 0
    # The lowest such threshold: just above b's 2.5 and a's third highest (3.5).
    assert opinion.calibration.threshold == pytest.approx(3.5, abs=1e-6)
    assert flagged(opinion, rows)[500:].sum() == 3
    # What held it there: a's row at 3.5 would be the third added where two are allowed.
    assert bound_by(opinion, rows) == {"a": (3, 2)}
    # Without source a's four highest rows (it still allows one), b's row holds it alone.
    without_a = np.ones(510, dtype=bool)
    without_a[396:400] = False
    held_by_b = choose(rows[without_a], slope=50.0)
    assert held_by_b.calibration.threshold == pytest.approx(2.5, abs=1e-6)
    assert bound_by(held_by_b, rows[without_a]) == {"b": (1, 0)}
    said = "\n".join(report_lines({}, str, held_by_b, {"b": (1, 0)}))
    assert "Threshold 2.500 (the head's logit), held there by b (a threshold just under" in said
    assert "adds 1 of its benign VALIDATION rows, its 0.5% share allows 0)." in said
    assert flagged(opinion, rows[labels == 1]).sum() == 3  # rows select like arrays


def test_no_training_script_reads_the_benchmarks_own_documentation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Debian's READMEs and the distributions' docstrings are measured, never fitted or
    # chosen on: were they among the rows, a run as is would no longer give the shipped parts.
    from mithril.benchmark import debian_docs, package_docs, package_docstrings
    from mithril.benchmark.detection import DEV, Row
    from mithril.domain import Origin
    from mithril.services.embedding.training import train

    page = "Configure the daemon in /etc/example.conf before you start it. " * 8
    loaded = {
        source: [Row(f"{source} {page}", 0, DEV, origin=Origin.RETRIEVAL, group=source)]
        for source in (package_docs.SOURCE, debian_docs.SOURCE, package_docstrings.SOURCE)
    }
    asked: list[set[str]] = []

    def load_sources(*args: object, only: set[str], **kwargs: object) -> dict[str, list[Row]]:
        asked.append(only)
        return {source: rows for source, rows in loaded.items() if source in only}

    monkeypatch.setattr(train, "load_sources", load_sources)
    assert {s.source for s in train.samples(Path("/nonexistent"))} == {package_docs.SOURCE}
    # Not even read: the allow-list is what `load_sources` is asked for.
    assert not asked[0] & {debian_docs.SOURCE, package_docstrings.SOURCE}
    assert not train.samples(Path("/nonexistent"), readmes=False)
