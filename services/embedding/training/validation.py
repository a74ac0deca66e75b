"""The whole cascade on the VALIDATION rows: what a change to the tiers is decided on.

    .venv/bin/python -m mithril.services.embedding.training.validation [--out FILE]

Every VALIDATION row of `train.samples` (DEV rows no part was fitted on; HELD_OUT rows are
never read here) goes through the in-process cascade as `mithril scan` runs it: rules,
secrets, similarity, the classifier with its parts, the multilingual tier; no judge. The
attack corpus is the shipped one without the VALIDATION rows' own texts, or the similarity
tier would find each VALIDATION attack in it. Everything else comes from the environment
as in the gateway, so a candidate is measured by pointing a setting at it, e.g.
`MITHRIL_EMBEDDING_ATTACK_ENCODER_FILE=/tmp/candidate/attack_encoder.npz`.

The rows include `train.planted_samples`: VALIDATION prompt attacks planted in clean
VALIDATION BIPIA contexts (source indirect/planted-prompts), attacks in documents that no
part was fitted on. The corpus also leaves out the attack strings planted in BIPIA's
VALIDATION contexts. Those
strings are planted in its FIT contexts too, so the parts fitted there have seen them, and
its TPR here still reads high; its FPR, over clean contexts no part was fitted on, is the
figure to watch.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from mithril.benchmark.near_duplicates import NEAR, DevIndex
from mithril.services.embedding.config import BUNDLED_CORPUS
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.embedding.training.train import (
    FIT,
    VALIDATION,
    Sample,
    folded,
    rates,
    samples,
)

CORPUS_FILES = "MITHRIL_EMBEDDING_CORPUS_FILES"
"""The setting the corpus is read from (`EmbeddingSettings.corpus_files`)."""


def corpus_without(corpus: Path, rows: list[Sample]) -> tuple[list[str], int]:
    """The corpus file's lines, less those whose text is one of `rows`' texts or is planted
    in one of them (BIPIA's attack strings; folded as the corpus builder dedupes); and how
    many were left out."""
    texts = {folded(row.text) for row in rows}
    # One string to search: the planted rows' texts apart, so no entry spans two.
    planted = "\0".join(folded(row.text) for row in rows if row.attack_span is not None)
    kept: list[str] = []
    dropped = 0
    for line in corpus.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        text = folded(json.loads(line)["text"])
        if text in texts or (planted and text in planted):
            dropped += 1
        else:
            kept.append(line)
    return kept, dropped


@contextmanager
def corpus_left_out(rows: list[Sample]) -> Iterator[tuple[int, int]]:
    """The embedding settings read the shipped corpus less `rows`' texts (`corpus_without`)
    while inside; yields how many entries it keeps and how many it left out."""
    kept, dropped = corpus_without(BUNDLED_CORPUS, rows)
    previous = os.environ.get(CORPUS_FILES)
    with tempfile.TemporaryDirectory() as scratch:
        corpus = Path(scratch, "corpus.jsonl")
        corpus.write_text("\n".join(kept) + "\n", encoding="utf-8")
        os.environ[CORPUS_FILES] = json.dumps([str(corpus)])
        try:
            yield len(kept), dropped
        finally:
            if previous is None:
                os.environ.pop(CORPUS_FILES, None)
            else:
                os.environ[CORPUS_FILES] = previous


def own_text(row: Sample) -> str:
    """What makes a row this row: an attack planted in a document, else its text."""
    if row.attack_span is None:
        return row.text
    start, end = row.attack_span
    return row.view[start:end]


def novel(rows: list[Sample], fitted: list[Sample]) -> np.ndarray:
    """Which rows no FIT row comes near (`near_duplicates.NEAR` of their 5-grams shared):
    the rows on which no copy of what the parts were fitted on decides."""
    index = DevIndex(own_text(row) for row in fitted)
    return np.array(
        [similarity < NEAR for similarity in index.similarities([own_text(row) for row in rows])]
    )


def _cells(flagged: np.ndarray, labels: np.ndarray) -> tuple[str, str]:
    counted = rates(flagged, labels)
    counts = f"{counted['attacks']} / {counted['benign']}"
    shown = [
        f"{rate:.1%}" if rate is not None else "-" for rate in (counted["tpr"], counted["fpr"])
    ]
    return counts, " / ".join(shown)


def table(rows: list[Sample], flagged: np.ndarray, unseen: np.ndarray) -> list[str]:
    """TPR / FPR of each source, with its attack and benign counts; then the same over
    the rows no FIT row comes near (`novel`)."""
    by_source: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        by_source[row.source].append(index)
    lines = [
        "| VALIDATION source | attacks / benign | TPR / FPR | novel attacks / benign"
        " | novel TPR / FPR |",
        "|---|---|---|---|---|",
    ]
    labels = np.array([row.label for row in rows])
    for source in sorted(by_source):
        chosen = np.array(by_source[source])
        counts, cells = _cells(flagged[chosen], labels[chosen])
        fresh = chosen[unseen[chosen]]
        novel_counts, novel_cells = _cells(flagged[fresh], labels[fresh])
        lines.append(f"| {source} | {counts} | {cells} | {novel_counts} | {novel_cells} |")
    return lines


def flag_all(rows: list[Sample]) -> tuple[np.ndarray, list[dict[str, float]]]:
    """Each row's verdict from the in-process cascade (built from the environment): whether
    block mode refuses it, as the detection benchmark counts it (credentials and personal
    data alone are redacted, not refused). Also each row's attack evidence: rule id ->
    confidence."""
    from mithril.cli.pipeline import LocalPipeline
    from mithril.gateway.decision import FACT_CATEGORIES, Action, Mode

    firewall = LocalPipeline().firewall
    loop = asyncio.new_event_loop()
    flagged = []
    evidence = []
    try:
        for row in rows:
            scan = firewall.scan(row.text, row.origin, mode=Mode.BLOCK)
            decision = loop.run_until_complete(scan)
            flagged.append(decision.action is Action.BLOCK)
            found: dict[str, float] = {}
            for finding in decision.findings:
                if finding.category not in FACT_CATEGORIES:
                    found[finding.rule_id] = max(
                        found.get(finding.rule_id, 0.0), finding.confidence
                    )
            evidence.append(found)
    finally:
        loop.close()
    return np.array(flagged), evidence


def misses(rows: list[Sample], flagged: np.ndarray, evidence: list[dict[str, float]]) -> list[str]:
    """One JSON line for each row decided wrongly: its source, label, text and evidence."""
    return [
        json.dumps(
            {
                "source": row.source,
                "label": row.label,
                "category": row.category,
                "evidence": {rule: round(score, 3) for rule, score in found.items()},
                "text": row.text,
            },
            ensure_ascii=False,
        )
        for row, flag, found in zip(rows, flagged, evidence, strict=True)
        if bool(flag) != bool(row.label)
    ]


def main() -> None:
    parser = training_parser(__doc__, out=False)
    parser.add_argument("--out", type=Path, help="also write the table to this file")
    parser.add_argument(
        "--misses", type=Path, help="write each wrongly decided row to this file (JSON lines)"
    )
    args = parse_training_args(parser)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    every = samples(args.datasets, planted=True, manual=True, follow_ups=True)
    rows = [row for row in every if row.part == VALIDATION]
    started = time.monotonic()
    with corpus_left_out(rows) as (kept, dropped):
        flagged, evidence = flag_all(rows)
    unseen = novel(rows, [row for row in every if row.part == FIT])
    lines = [
        f"{len(rows)} VALIDATION rows, corpus {kept} entries ({dropped} VALIDATION texts"
        f" left out), {time.monotonic() - started:.0f} s; novel = {int(unseen.sum())} rows"
        f" sharing less than {NEAR:.0%} of their character 5-grams with every FIT row (an"
        " attack planted in a document judged by the attack)",
        "",
        *table(rows, flagged, unseen),
    ]
    print("\n".join(lines))
    if args.out:
        args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    if args.misses:
        wrong = misses(rows, flagged, evidence)
        args.misses.write_text("".join(line + "\n" for line in wrong), encoding="utf-8")


if __name__ == "__main__":
    main()
