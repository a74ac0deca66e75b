"""Fit the planted-line head (`planted.py`) and choose its two thresholds.

    .venv/bin/python -m mithril.services.embedding.training.planted_lines [--datasets DIR]

Rows: DEV only, as `train.py` cuts them; nothing held out is read.

- Fitted on FIT rows. Said to an assistant (1): every prompt of s-labs, neuralchemy,
  mt-vicuna-bench and the jailbreak sources, attacks and benign requests alike, and BIPIA's
  attack strings. Part of a document (0): each run of lines (`runs.py`) of every clean BIPIA
  context and standard-library docstring, and presidio's sentences. One logistic regression
  over the int8 sentence embedding (sklearn, lbfgs, C = `C`, classes weighted to balance).
- Thresholds chosen on VALIDATION rows: every VALIDATION prompt (up to `PLANTED`, by text
  hash) planted on its own line of a VALIDATION clean BIPIA context (`insert_into`, as the
  detection benchmark plants), against every VALIDATION clean document (BIPIA contexts and
  docstrings). The pair that finds the most planted prompts while no clean document has a
  line that counts, at that pair and at the next looser relatedness bound; on a tie, the
  stricter pair.

Writes `data/planted_lines.npz`, `data/planted_lines.meta.json` and
`data/planted_lines_report.md`. About five minutes (the embeddings of ~30,000 lines).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mithril.benchmark.detection import BIPIA, insert_into
from mithril.services.embedding.config import DATA_DIR
from mithril.services.embedding.encoder import Encoder
from mithril.services.embedding.planted import NO_READING, LineReading, PlantedLines, document_lines
from mithril.services.embedding.training.train import FIT, SEED, VALIDATION, Sample, samples

VERSION = "planted-lines-lr-2026.12"
C = 1.0
PLANTED = 600
REQUEST_THRESHOLDS = (0.8, 0.9, 0.95, 0.98, 0.99)
MAX_RELATEDNESS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
PROMPT_SOURCES = (
    "injection/s-labs",
    "injection/neuralchemy",
    "benign/mt-vicuna-bench",
    "jailbreak/jbb-artifacts",
    "jailbreak/gptfuzz-templates",
    "jailbreak/giskard",
)
DOCUMENT_SOURCES = (BIPIA, "benign/python-docs")
SENTENCE_SOURCES = ("benign/presidio-synth",)
MAX_PROMPT_CHARS = 2000
"""Longer prompts (whole jailbreak templates) are no line of a document."""


def _task(sample: Sample) -> str:
    return f"{sample.source}:{(sample.category or '-').split(':')[0]}"


def fitting_rows(rows: Sequence[Sample]) -> tuple[list[str], np.ndarray]:
    """FIT lines and their labels (1: said to an assistant)."""
    said: list[str] = []
    document: list[str] = []
    for s in rows:
        if s.part != FIT:
            continue
        if s.source in PROMPT_SOURCES and len(s.view) <= MAX_PROMPT_CHARS:
            said.append(s.view)
        elif s.source == BIPIA and s.label == 1 and s.attack_span is not None:
            said.append(s.view[s.attack_span[0] : s.attack_span[1]])
        elif s.source in DOCUMENT_SOURCES and s.label == 0:
            document.extend(document_lines(s.view) or [s.view])
        elif s.source in SENTENCE_SOURCES:
            document.append(s.view)
    said = sorted(set(said))
    texts = said + document
    return texts, np.r_[np.ones(len(said)), np.zeros(len(document))]


def planted_documents(rows: Sequence[Sample]) -> list[tuple[str, str]]:
    """(task, text): VALIDATION prompts, each on its own line of a VALIDATION clean
    context."""
    contexts = [s.view for s in rows if s.source == BIPIA and s.label == 0 and s.part == VALIDATION]
    keyed = sorted(
        (hashlib.sha256(s.view.encode("utf-8")).hexdigest(), f"{s.source}:{s.label}", s.view)
        for s in rows
        if s.source in PROMPT_SOURCES and s.part == VALIDATION and len(s.view) <= MAX_PROMPT_CHARS
    )[:PLANTED]
    return [
        (task, insert_into(contexts[i % len(contexts)], prompt, key))
        for i, (key, task, prompt) in enumerate(keyed)
    ]


def fit(vectors: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, float]:
    from sklearn.linear_model import LogisticRegression

    weights = np.where(labels == 1, 0.5 / labels.mean(), 0.5 / (1 - labels.mean()))
    model = LogisticRegression(C=C, max_iter=5000, random_state=SEED)
    model.fit(vectors, labels, sample_weight=weights)
    return model.coef_[0].astype(np.float64), float(model.intercept_[0])


@dataclass(frozen=True)
class Choice:
    request_threshold: float
    max_relatedness: float
    planted_found: int
    clean_flagged: int


def choose(
    head: PlantedLines, clean: list[np.ndarray], planted: list[np.ndarray]
) -> tuple[Choice, list[Choice]]:
    """Every candidate pair, and the one chosen: most planted found with no clean document
    flagged, at this pair and at the next looser relatedness bound (a step back from the
    edge: VALIDATION holds a dozen emails and code contexts); on a tie the higher request
    threshold, then the lower relatedness."""
    candidates = []
    for request in REQUEST_THRESHOLDS:
        for related in MAX_RELATEDNESS:
            trial = PlantedLines(head.weights, head.bias, request, related, head.meta)
            candidates.append(
                Choice(
                    request,
                    related,
                    sum(trial.read(v).probability >= 0.5 for v in planted),
                    sum(trial.read(v).probability >= 0.5 for v in clean),
                )
            )
    looser = {(c.request_threshold, c.max_relatedness): c for c in candidates}
    steps = dict(itertools.pairwise(MAX_RELATEDNESS))
    safe = [
        c
        for c in candidates
        if c.clean_flagged == 0
        and c.max_relatedness in steps
        and looser[(c.request_threshold, steps[c.max_relatedness])].clean_flagged == 0
    ]
    if not safe:
        raise ValueError("every candidate pair flags a clean VALIDATION document")
    best = max(safe, key=lambda c: (c.planted_found, c.request_threshold, -c.max_relatedness))
    return best, candidates


def report(
    chosen: Choice,
    candidates: list[Choice],
    clean_tasks: list[str],
    planted_tasks: list[str],
    clean: list[LineReading],
    planted: list[LineReading],
    fitted: Counter[int],
) -> str:
    lines = [
        "# Planted-line head: training report",
        "",
        f"Written by `services/embedding/training/planted_lines.py` ({VERSION}). Fitted on"
        f" {fitted[1]} FIT prompts and BIPIA attack strings against {fitted[0]} FIT"
        " document lines and sentences. Chosen on VALIDATION, a step back from the edge (no"
        " clean document flagged at the next looser relatedness bound either): the head"
        " alone, a document"
        " flagged when a line's request reading reaches the threshold and its relatedness"
        " to the other lines is at most the bound.",
        "",
        f"Chosen: request >= {chosen.request_threshold}, relatedness <="
        f" {chosen.max_relatedness}: {chosen.planted_found} of {len(planted)} planted prompts,"
        f" {chosen.clean_flagged} of {len(clean)} clean documents.",
        "",
        "## Candidates",
        "",
        "| request >= | relatedness <= | planted found | clean flagged |",
        "|---:|---:|---:|---:|",
    ]
    for c in candidates:
        mark = " (chosen)" if c == chosen else ""
        lines.append(
            f"| {c.request_threshold}{mark} | {c.max_relatedness} | {c.planted_found} |"
            f" {c.clean_flagged} |"
        )
    lines += ["", "## At the chosen pair, by row kind", "", "| rows | count | flagged |"]
    lines.append("|---|---:|---:|")
    for name, tasks, readings in (
        ("clean", clean_tasks, clean),
        ("planted", planted_tasks, planted),
    ):
        totals = Counter(tasks)
        hits = Counter(t for t, r in zip(tasks, readings, strict=True) if r.probability >= 0.5)
        for task in sorted(totals):
            lines.append(f"| {name} {task} | {totals[task]} | {hits[task]} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--datasets", type=Path, default=Path("/work/shared/datasets"))
    parser.add_argument("--out", type=Path, default=DATA_DIR)
    args = parser.parse_args()
    started = time.perf_counter()
    rows = samples(args.datasets)
    encoder = Encoder.load()
    texts, labels = fitting_rows(rows)
    print(f"fitting on {len(texts)} lines ({int(labels.sum())} said to an assistant)")
    weights, bias = fit(encoder.encode(texts), labels)
    head = PlantedLines(
        weights,
        bias,
        0.5,
        1.0,
        {
            "version": VERSION,
            "seed": SEED,
            "C": C,
            "encoder": encoder.model_id,
            "fitted_on": {
                "said_to_assistant": int(labels.sum()),
                "document": int(len(labels) - labels.sum()),
            },
            "sources": {
                "said": [*PROMPT_SOURCES, f"{BIPIA} attack strings"],
                "document": list(DOCUMENT_SOURCES + SENTENCE_SOURCES),
            },
            "script": "services/embedding/training/planted_lines.py",
        },
    )
    clean_docs = [
        (_task(s), s.view)
        for s in rows
        if s.part == VALIDATION and s.label == 0 and s.source in DOCUMENT_SOURCES
    ]
    planted_docs = planted_documents(rows)
    clean = [encoder.encode(document_lines(text) or [text]) for _, text in clean_docs]
    planted = [encoder.encode(document_lines(text) or [text]) for _, text in planted_docs]
    chosen, candidates = choose(head, clean, planted)
    head = PlantedLines(weights, bias, chosen.request_threshold, chosen.max_relatedness, head.meta)
    head.to_files(args.out / "planted_lines.npz", args.out / "planted_lines.meta.json")
    text = report(
        chosen,
        candidates,
        [t for t, _ in clean_docs],
        [t for t, _ in planted_docs],
        [head.read(v) if len(v) > 1 else NO_READING for v in clean],
        [head.read(v) if len(v) > 1 else NO_READING for v in planted],
        Counter(int(x) for x in labels),
    )
    (args.out / "planted_lines_report.md").write_text(text, encoding="utf-8")
    print(text)
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
