"""The multilingual head's operating point as a second opinion on English text.

e5 (the head's encoder) is larger than all-MiniLM-L6-v2 and misses other attacks. On the
English VALIDATION rows (scratch script, rules + English classifier as the gateway combines
them), asking the head about the short texts the English classifier was unsure of caught
s-labs 88.0 -> 89.7 %, neuralchemy 92.1 -> 92.5 % and jbb-artifacts 86.8 -> 89.1 % of the
attacks, for one more false positive of 1,271 benign s-labs rows, and none elsewhere. Asked
about long texts too, it flagged 2 more of BIPIA's 211 clean contexts: it reads only a long
text's start and end, where the English classifier reads all of it. So only texts that fit
one e5 window are asked.

- Unsure: the English classifier's probability in [DOUBT_FROM, 0.5). 2-3 % of the rows are,
  so e5 runs on few texts; from 0.002 or 0.01 the catches were within a row or two.
- The threshold: the lowest raw logit at which the second opinion adds, on every benign
  source, at most EXTRA_FPR of its rows to what rules and the English classifier flag.
  The slope is the head's own (sharpened) calibration's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.multilingual import EnglishOpinion, unsure_of
from mithril.services.embedding.training.train import Sample, rates, with_rules

DOUBT_FROM = 0.005
EXTRA_FPR = 0.005


def english_probabilities(rows: list[Sample], everything: list[Sample], cache: Path) -> np.ndarray:
    """The shipped English classifier's probability of each of `rows` (a subset of
    `everything`, the rows `train.py` embeds: its cached MiniLM windows are reused): its
    parts' highest, as before the combiner (which also reads the similarity to a corpus,
    not loaded here); the shipped threshold was chosen before the combiner, and
    `validation.py` measures the cascade with both."""
    from mithril.services.embedding.config import EmbeddingSettings
    from mithril.services.embedding.encoder import Encoder, Windows
    from mithril.services.embedding.tiers import load_classifier
    from mithril.services.embedding.training.train import _encode_cached

    settings = EmbeddingSettings()
    classifier = load_classifier(settings)
    windows = _encode_cached(
        Encoder.load(), [s.view for s in everything], cache, settings.max_windows
    )
    position = {id(sample): i for i, sample in enumerate(everything)}
    wanted = np.array([position[id(sample)] for sample in rows])
    new_index = np.full(len(everything), -1)
    new_index[wanted] = np.arange(len(rows))
    keep = new_index[windows.owner] >= 0
    chosen = Windows(windows.vectors[keep], new_index[windows.owner[keep]], windows.spans[keep])
    return np.array([r.probability for r in classifier.classify(chosen, [s.view for s in rows])])


@dataclass(frozen=True, slots=True)
class Rows:
    """What the choice reads of each row."""

    english: np.ndarray
    """The English classifier's probability."""
    head_raw: np.ndarray
    """The head's logit (-inf for a row it does not read)."""
    short: np.ndarray
    """The row fits one e5 window."""
    rules: np.ndarray
    labels: np.ndarray
    sources: np.ndarray

    def __getitem__(self, mask: np.ndarray) -> Rows:
        return Rows(*(getattr(self, f.name)[mask] for f in fields(self)))

    def unsure(self) -> np.ndarray:
        """The rows the head is asked about."""
        return self.short & unsure_of(self.english, DOUBT_FROM)

    def flagged_without(self) -> np.ndarray:
        return with_rules(self.rules, self.english) >= 0.5


def flagged(opinion: EnglishOpinion, rows: Rows) -> np.ndarray:
    """What the gateway flags with the second opinion: the noisy-OR of the rules' score and
    the higher of the English classifier's and (where asked) the head's probability."""
    asked = rows.unsure()
    learned = rows.english.copy()
    head = opinion.calibration.probability(np.where(asked, rows.head_raw, -np.inf))
    learned[asked] = np.maximum(learned[asked], head[asked])
    return with_rules(rows.rules, learned) >= 0.5


def over_share(opinion: EnglishOpinion, rows: Rows) -> dict[str, tuple[int, int]]:
    """Each benign source whose rows `opinion` adds to the false positives of rules and the
    English classifier beyond its EXTRA_FPR share: (rows added, rows its share allows). With
    under 200 rows a source allows none, so one of its rows decides."""
    benign = rows.labels == 0
    added = flagged(opinion, rows) & ~rows.flagged_without() & benign
    over: dict[str, tuple[int, int]] = {}
    for source in sorted(set(rows.sources[benign].tolist())):
        mask = rows.sources == source
        allowed = int(np.floor(EXTRA_FPR * np.sum(benign & mask)))
        if (count := int(np.sum(added & mask))) > allowed:
            over[source] = (count, allowed)
    return over


def choose(rows: Rows, slope: float) -> EnglishOpinion:
    """The lowest threshold at which the second opinion adds at most EXTRA_FPR of each
    benign source's rows to the false positives of rules and the English classifier."""
    candidates = np.unique(rows.head_raw[rows.unsure() & (rows.labels == 0)])
    for value in [*candidates.tolist(), np.inf]:
        opinion = EnglishOpinion(Calibration(float(np.nextafter(value, np.inf)), slope), DOUBT_FROM)
        if not over_share(opinion, rows):
            return opinion
    raise AssertionError("an infinite threshold adds nothing")  # pragma: no cover


def bound_by(opinion: EnglishOpinion, rows: Rows) -> dict[str, tuple[int, int]]:
    """What held the threshold where `choose` put it: the sources a threshold just under
    it (at the highest asked benign row below it) would take over their share."""
    asked_benign = rows.unsure() & (rows.labels == 0)
    below = rows.head_raw[asked_benign & (rows.head_raw < opinion.calibration.threshold)]
    if below.size == 0:
        return {}
    slope = opinion.calibration.slope
    return over_share(EnglishOpinion(Calibration(float(below.max()), slope), DOUBT_FROM), rows)


def table(opinion: EnglishOpinion, rows: Rows) -> dict[str, dict[str, Any]]:
    """Per source: rules + English classifier, and with the second opinion."""
    base, second, asked = rows.flagged_without(), flagged(opinion, rows), rows.unsure()
    result: dict[str, dict[str, Any]] = {}
    for source in sorted(set(rows.sources.tolist())):
        mask = rows.sources == source
        result[source] = {
            "without": rates(base[mask], rows.labels[mask]),
            "with": rates(second[mask], rows.labels[mask]),
            "asked": float(asked[mask].mean()),
        }
    return result


def report_lines(
    tables: dict[str, dict[str, dict[str, Any]]],
    percent: Callable[[float | None], str],
    opinion: EnglishOpinion,
    held: dict[str, tuple[int, int]],
) -> list[str]:
    lines = [
        "## Second opinion on English",
        "",
        "Rules + the English classifier (no similarity: its corpus holds the VALIDATION",
        "attacks), without and with the head asked about the short texts the classifier is",
        "unsure of (`training/second_opinion.py`); `asked` = share of the rows it reads.",
        "",
        f"Threshold {opinion.calibration.threshold:.3f} (the head's logit), held there by "
        + (
            "; ".join(
                f"{source} (a threshold just under it adds {count} of its benign VALIDATION"
                f" rows, its {EXTRA_FPR:.1%} share allows {allowed})"
                for source, (count, allowed) in held.items()
            )
            or "no benign row (the lowest candidate)"
        )
        + ".",
        "",
    ]
    for part, rows in tables.items():
        lines += [
            f"### {part}",
            "",
            "| source | without TPR | FPR | with TPR | FPR | asked |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for source, result in rows.items():
            without, with_ = result["without"], result["with"]
            lines.append(
                f"| {source} | {percent(without['tpr'])} | {percent(without['fpr'])}"
                f" | {percent(with_['tpr'])} | {percent(with_['fpr'])}"
                f" | {percent(result['asked'])} |"
            )
        lines.append("")
    return lines
