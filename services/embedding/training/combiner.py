"""Fit the combiner (`services/embedding/combiner.py`) on VALIDATION rows, reproducibly.

    .venv/bin/python -m mithril.services.embedding.training.combiner [--out DIR]

Run after every part it reads is final (train.py, then attack_encoder.py): it reads their
raw scores as the service computes them.

- Rows: `train.samples`' VALIDATION rows (no part was fitted on them; HELD_OUT rows are
  never read). The corpus is the shipped one without those rows' texts, as in
  `validation.py`, or each VALIDATION attack would find itself.
- Features: each row's highest cosine to the corpus and the network's, the n-gram model's
  and the attack encoder's raw logits (`combiner.FEATURES`), from the shipped parts.
- Fitted on the rows the rules leave below the threshold (the gateway asks the learned
  tiers about those only), weighted as train.py weighs rows: 1/sqrt of its source's count,
  then each class to half the weight. A logistic regression, L2 with C = C.
- Its threshold is chosen out of fold: FOLDS-fold cross-fitting, REPEATS times (stratified
  by source and label, seed SEED), gives each row a score from a model that did not see
  it; the threshold is the lowest at which those scores flag at most 1 % of each benign
  source's rows (`train.pick_threshold`), the slope a Platt fit on them. The shipped
  weights are then fitted on all those rows.
- The similarity tier alone flags only what no benign VALIDATION row comes as close to
  (threshold just above their highest cosine): a near-copy of a corpus entry.
- The attack encoder also flags alone, at its own operating point (`combiner.py` says
  why); its calibration is attack_encoder.py's.
- Both slopes are sharpened as train.py sharpens its parts (`train.sharpen`): until the
  noisy-OR with the rules flags no more benign rows of a source than either alone does.

Writes `data/combiner.json` and `data/combiner_report.md` (the VALIDATION figures, out of
fold, against the parts flagging each on its own). About four minutes.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

import numpy as np

from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.combiner import FEATURES, Combiner
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.embedding.training.train import (
    SEED,
    VALIDATION,
    Sample,
    balanced,
    fit_calibration,
    pick_threshold,
    rates,
    samples,
    sharpen,
    with_rules,
)
from mithril.services.embedding.training.validation import corpus_left_out

VERSION = "lr4-2026.12"
C = 1.0
FOLDS = 5
REPEATS = 3
RULES_THRESHOLD = 0.5
"""The policy's default threshold: the learned tiers run below it."""


def features(rows: list[Sample]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each row's four raw scores (FEATURES order), the parts' own probability (the higher
    of similarity's and the classifier's, as without the combiner), the attack encoder's
    own probability and the rules' score."""
    from mithril.services.embedding.config import EmbeddingSettings
    from mithril.services.embedding.tiers import EmbeddingTiers
    from mithril.services.scanner import Scanner

    settings = EmbeddingSettings(combiner=False)
    tiers = EmbeddingTiers.load(settings)
    scanner = Scanner.from_rule_files()
    columns: list[list[float]] = []
    alone: list[float] = []
    encoder = tiers.classifier.tuned
    assert encoder is not None  # the combiner reads every part
    try:
        for start in range(0, len(rows), 32):
            chunk = [row.view for row in rows[start : start + 32]]
            windows = tiers.encoder.encode_windows(chunk, settings.max_windows)
            similar = tiers.index.search(windows, len(chunk), settings.top_k)
            classified = tiers.classifier.classify(windows, chunk)
            for s, c in zip(similar, classified, strict=True):
                assert c.ngram_raw is not None and c.tuned_raw is not None
                columns.append([s.raw, c.raw, c.ngram_raw, c.tuned_raw])
                alone.append(max(s.score, c.probability))
    finally:
        tiers.close()
    rules = np.array([scanner.scan(row.text, row.origin).score for row in rows])
    x = np.array(columns)
    return x, np.array(alone), encoder.probabilities(x[:, 3]), rules


def _regression() -> Any:
    from sklearn.linear_model import LogisticRegression

    return LogisticRegression(C=C, max_iter=5000)


def out_of_fold(
    x: np.ndarray, labels: np.ndarray, strata: np.ndarray, keep: np.ndarray, weights: np.ndarray
) -> np.ndarray:
    """Each row's logit from models fitted without it (averaged over REPEATS cuts)."""
    from sklearn.model_selection import StratifiedKFold

    scores = np.zeros(len(labels))
    for repeat in range(REPEATS):
        folds = StratifiedKFold(FOLDS, shuffle=True, random_state=SEED + repeat)
        for fit, held in folds.split(x, strata):
            fit = fit[keep[fit]]
            model = _regression().fit(x[fit], labels[fit], sample_weight=weights[fit])
            scores[held] += model.decision_function(x[held]) / REPEATS
    return scores


def row_weights(sources: np.ndarray, labels: np.ndarray, keep: np.ndarray) -> np.ndarray:
    counts = Counter(sources[keep].tolist())
    weights = np.array(
        [1.0 / np.sqrt(counts[s]) if keep[i] else 0.0 for i, s in enumerate(sources)]
    )
    return balanced(weights, labels)


def report(rows: list[Sample], flagged: dict[str, np.ndarray]) -> str:
    labels = np.array([row.label for row in rows])
    sources = np.array([row.source for row in rows])
    names = list(flagged)
    lines = [
        "# Combiner: training report",
        "",
        "Written by `services/embedding/training/combiner.py`. VALIDATION rows only, each"
        " combined score out of fold (from a model that did not see the row). TPR / FPR;"
        " *parts alone* = the higher of similarity's and the classifier's probabilities (each"
        " part at its own operating point), *combined* = the combiner, similarity's"
        " near-copies and the attack encoder alone; *+ rules* = their noisy-OR with the"
        " rules, as the gateway scores (no multilingual model here; `validation.py` runs the"
        " whole cascade).",
        "",
        "| source | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for source in sorted(set(sources.tolist())):
        mask = sources == source
        cells = []
        for name in names:
            counted = rates(flagged[name][mask], labels[mask])
            cells.append(
                " / ".join(
                    f"{rate:.1%}" if rate is not None else "-"
                    for rate in (counted["tpr"], counted["fpr"])
                )
            )
        lines.append(f"| {source} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = training_parser(__doc__)
    args = parse_training_args(parser)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    # The rows the shipped parts were fitted on (train.py says why the toolchain's
    # documentation is not among them).
    rows = [row for row in samples(args.datasets, toolchain=False) if row.part == VALIDATION]
    with corpus_left_out(rows) as (_, dropped):
        x, parts_alone, encoder_alone, rules = features(rows)
    labels = np.array([row.label for row in rows])
    sources = np.array([row.source for row in rows])
    keep = rules < RULES_THRESHOLD
    weights = row_weights(sources, labels, keep)
    strata = np.array([f"{s}:{label}" for s, label in zip(sources, labels, strict=True)])
    scores = out_of_fold(x, labels, strata, keep, weights)
    threshold = pick_threshold(scores[keep], labels[keep], sources[keep])
    combined = fit_calibration(scores[keep], labels[keep], threshold)
    similarity = x[:, 0]
    near_copy = pick_threshold(similarity, labels, sources, max_fpr=0.0)
    similarity_alone = fit_calibration(similarity, labels, near_copy)
    factor = sharpen([(combined, scores)], similarity_alone, similarity, rules, labels, sources)
    combined = Calibration(combined.threshold, combined.slope * factor)
    similarity_alone = Calibration(similarity_alone.threshold, similarity_alone.slope * factor)

    model = _regression().fit(x[keep], labels[keep], sample_weight=weights[keep])
    meta: dict[str, Any] = {
        "version": VERSION,
        "script": "services/embedding/training/combiner.py",
        "seed": SEED,
        "estimator": f"sklearn LogisticRegression, C={C}, per-source and class weights",
        "fitted_on": f"VALIDATION rows the rules score below {RULES_THRESHOLD}",
        "threshold_chosen": f"out of fold ({FOLDS} folds x {REPEATS}): FPR <= 1 % per benign"
        " source",
        "similarity_alone_chosen": "just above the highest cosine of a benign VALIDATION row",
        "sharpened_by": factor,
        "rows": dict(Counter(row.source for row in rows)),
        "corpus_left_out": dropped,
    }
    shipped = Combiner(
        weights=tuple(float(w) for w in model.coef_[0]),
        intercept=float(model.intercept_[0]),
        calibration=combined,
        similarity_alone=similarity_alone,
        meta=meta,
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "combiner.json").write_text(
        json.dumps(shipped.to_dict(), indent=2) + "\n", encoding="utf-8"
    )
    # As the service reads them: the combiner, similarity's near-copies, the attack encoder.
    learned = np.maximum.reduce(
        [combined.probability(scores), similarity_alone.probability(similarity), encoder_alone]
    )
    flagged = {
        "parts alone": parts_alone >= 0.5,
        "combined": learned >= 0.5,
        "parts alone + rules": with_rules(rules, parts_alone) >= 0.5,
        "combined + rules": with_rules(rules, learned) >= 0.5,
    }
    text = report(rows, flagged)
    (args.out / "combiner_report.md").write_text(text, encoding="utf-8")
    print(
        dict(zip(FEATURES, model.coef_[0].round(3), strict=True)),
        "threshold",
        threshold,
        "near copy",
        near_copy,
        "sharpened by",
        factor,
    )
    print(text)


if __name__ == "__main__":
    main()
