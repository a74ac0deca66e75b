"""Fit the planted-line head (`planted.py`) and choose its two thresholds.

    .venv/bin/python -m mithril.services.embedding.training.planted_lines [--datasets DIR]

Rows: DEV only, as `train.py` cuts them; nothing held out is read.

- Fitted on FIT rows. Said to an assistant (1): every prompt of s-labs, neuralchemy,
  mt-vicuna-bench and the jailbreak sources, attacks and benign requests alike, and BIPIA's
  attack strings. Part of a document (0): each run of lines (`runs.py`) of every clean BIPIA
  context, standard-library docstring and chunk of an installed distribution's README
  (`benchmark/package_docs.py`), and presidio's sentences. One logistic regression
  over the int8 sentence embedding (sklearn, lbfgs, C = `C`, classes weighted to balance).
- Thresholds chosen against clean documents: every VALIDATION clean document (BIPIA
  contexts, docstrings and README chunks), read by the head, and every FIT clean document of
  several runs of lines, read out of fold (`FOLDS` heads, each fitted without the fold that
  holds the document: folds by document, so none of its lines was fitted on). The first
  choice saw only the 346 VALIDATION documents and asked that none be flagged; at that size
  no false positive is still consistent with a rate above 1 %. Planted: every VALIDATION
  prompt (up to `PLANTED`, by text hash) planted on its own line of a VALIDATION clean BIPIA
  context (`insert_into`, as the detection benchmark plants). The pair that finds the most
  planted prompts while at most `MAX_CLEAN_RATE` of the clean documents have a line that
  counts, at that pair and at the next looser relatedness bound; on a tie, the stricter
  pair. A piece of a wrapped sentence (`planted.wrapped`) is fitted on as a document line
  but never counts, as in the gateway.

Writes `data/planted_lines.npz`, `data/planted_lines.meta.json` and
`data/planted_lines_report.md`. About five minutes (the embeddings of ~30,000 lines).
"""

from __future__ import annotations

import hashlib
import itertools
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mithril.benchmark.detection import BIPIA, insert_into
from mithril.services.embedding.encoder import Encoder
from mithril.services.embedding.planted import (
    Line,
    PlantedLines,
    document_lines,
    relatedness,
    request_logits,
    sigmoid,
)
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.embedding.training.train import (
    DOCUMENT_SOURCES,
    FIT,
    SEED,
    VALIDATION,
    Sample,
    samples,
)

VERSION = "planted-lines-lr-2026.12.3"
C = 1.0
PLANTED = 600
FOLDS = 5
MAX_CLEAN_RATE = 0.001
"""Of the clean documents, the most a chosen pair may flag: the head adds to the cascade's
false positives, and the target bounds them at 1 % in all, most of it already spent by the
other tiers on documents (BIPIA's code contexts). At 0.25 % (1,716 documents: 4) the pair
chosen once wrapped pieces stopped counting, (0.8, 0.15), found 2 more of 211 planted
VALIDATION prompts through the cascade and flagged 1 more of 211 clean VALIDATION contexts."""
REQUEST_THRESHOLDS = (0.8, 0.9, 0.95, 0.98, 0.99)
MAX_RELATEDNESS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)
"""0.05 joined when the README chunks did (2,528 clean documents): every pair from 0.1 up
flagged more than 2 of them at itself or at its looser neighbour."""
PROMPT_SOURCES = (
    "injection/s-labs",
    "injection/neuralchemy",
    "benign/mt-vicuna-bench",
    "jailbreak/jbb-artifacts",
    "jailbreak/gptfuzz-templates",
    "jailbreak/giskard",
)
SENTENCE_SOURCES = ("benign/presidio-synth",)
MAX_PROMPT_CHARS = 2000
"""Longer prompts (whole jailbreak templates) are no line of a document."""


def encode_cached(encoder: Encoder, texts: list[str], cache: Path) -> np.ndarray:
    """`encoder.encode(texts)`, kept under `cache` by the network and the texts."""
    key = hashlib.sha256(encoder.model_id.encode())
    for text in texts:
        key.update(hashlib.sha256(text.encode("utf-8")).digest())
    path = cache / f"lines-{key.hexdigest()[:24]}.npy"
    if path.exists():
        return np.asarray(np.load(path))
    vectors = encoder.encode(texts)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


def _task(sample: Sample) -> str:
    return f"{sample.source}:{(sample.category or '-').split(':')[0]}"


@dataclass(frozen=True)
class Fitting:
    texts: list[str]
    labels: np.ndarray
    """1: said to an assistant; 0: part of a document."""
    groups: np.ndarray
    """A document's lines share one group, so that folds never split a document."""
    documents: list[tuple[str, slice]]
    """(task, its lines in `texts`) for every clean document of several runs of lines."""
    whole: np.ndarray
    """Per text, False for a piece of a wrapped sentence (`planted.wrapped`)."""


def fitting_rows(rows: Sequence[Sample]) -> Fitting:
    """FIT lines, their labels and groups, and where each clean document's lines are."""
    said = sorted(
        {
            s.view if s.source in PROMPT_SOURCES else s.view[s.attack_span[0] : s.attack_span[1]]  # type: ignore[index]
            for s in rows
            if s.part == FIT
            and (
                (s.source in PROMPT_SOURCES and len(s.view) <= MAX_PROMPT_CHARS)
                or (s.source == BIPIA and s.label == 1 and s.attack_span is not None)
            )
        }
    )
    texts, groups = list(said), list(range(len(said)))
    whole = [True] * len(said)
    documents: list[tuple[str, slice]] = []
    for s in rows:
        if s.part != FIT or s.label != 0:
            continue
        if s.source in DOCUMENT_SOURCES:
            lines = document_lines(s.view)
            if lines:
                documents.append((_task(s), slice(len(texts), len(texts) + len(lines))))
            else:
                lines = [Line(s.view, True)]
        elif s.source in SENTENCE_SOURCES:
            lines = [Line(s.view, True)]
        else:
            continue
        groups.extend([len(groups)] * len(lines))
        texts.extend(line.text for line in lines)
        whole.extend(line.whole for line in lines)
    labels = np.r_[np.ones(len(said)), np.zeros(len(texts) - len(said))]
    return Fitting(texts, labels, np.asarray(groups), documents, np.asarray(whole, dtype=bool))


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
class Lines:
    """A document's lines as a head reads them: each one's request and relatedness."""

    requests: np.ndarray
    related: np.ndarray
    whole: np.ndarray

    def flags(self, request_threshold: float, max_relatedness: float) -> bool:
        """What `PlantedLines.read` decides at this pair (probability >= 0.5)."""
        counts = (self.requests >= request_threshold) & (self.related <= max_relatedness)
        return len(self.requests) > 1 and bool((counts & self.whole).any())


def lines_of(
    weights: np.ndarray, bias: float, vectors: np.ndarray, whole: np.ndarray | None = None
) -> Lines:
    """A document's lines as the head reads them; `whole` as `PlantedLines.read` takes it."""
    counted = np.ones(len(vectors), dtype=bool) if whole is None else np.asarray(whole, bool)
    return Lines(sigmoid(request_logits(weights, bias, vectors)), relatedness(vectors), counted)


def out_of_fold(vectors: np.ndarray, fitting: Fitting, folds: int = FOLDS) -> list[Lines]:
    """Each clean FIT document read by a head fitted without its fold (folds by group)."""
    from sklearn.model_selection import GroupKFold

    read: dict[int, Lines] = {}
    starts = {part.start: index for index, (_, part) in enumerate(fitting.documents)}
    for train, test in GroupKFold(n_splits=folds).split(vectors, fitting.labels, fitting.groups):
        weights, bias = fit(vectors[train], fitting.labels[train])
        tested = set(test.tolist())
        for start, index in starts.items():
            if start in tested:
                part = fitting.documents[index][1]
                read[index] = lines_of(weights, bias, vectors[part], fitting.whole[part])
    return [read[index] for index in range(len(fitting.documents))]


@dataclass(frozen=True)
class Choice:
    request_threshold: float
    max_relatedness: float
    planted_found: int
    clean_flagged: int


def grid(clean: list[Lines], planted: list[Lines]) -> list[Choice]:
    return [
        Choice(
            request,
            related,
            sum(doc.flags(request, related) for doc in planted),
            sum(doc.flags(request, related) for doc in clean),
        )
        for request in REQUEST_THRESHOLDS
        for related in MAX_RELATEDNESS
    ]


def choose(clean: list[Lines], planted: list[Lines]) -> tuple[Choice, list[Choice]]:
    """Every candidate pair, and the one chosen: most planted found with at most
    `MAX_CLEAN_RATE` of the clean documents flagged, at this pair and at the next looser
    relatedness bound (a step back from the edge); on a tie the higher request threshold,
    then the lower relatedness."""
    allowed = int(MAX_CLEAN_RATE * len(clean))
    candidates = grid(clean, planted)
    looser = {(c.request_threshold, c.max_relatedness): c for c in candidates}
    steps = dict(itertools.pairwise(MAX_RELATEDNESS))
    safe = [
        c
        for c in candidates
        if c.clean_flagged <= allowed
        and c.max_relatedness in steps
        and looser[(c.request_threshold, steps[c.max_relatedness])].clean_flagged <= allowed
    ]
    if not safe:
        raise ValueError(f"every candidate pair flags more than {allowed} clean documents")
    best = max(safe, key=lambda c: (c.planted_found, c.request_threshold, -c.max_relatedness))
    return best, candidates


def report(
    chosen: Choice,
    candidates: list[Choice],
    clean_tasks: list[str],
    planted_tasks: list[str],
    clean: list[bool],
    planted: list[bool],
    fitted: Counter[int],
) -> str:
    lines = [
        "# Planted-line head: training report",
        "",
        f"Written by `services/embedding/training/planted_lines.py` ({VERSION}). Fitted on"
        f" {fitted[1]} FIT prompts and BIPIA attack strings against {fitted[0]} FIT"
        " document lines and sentences. Chosen on every clean VALIDATION document and, out of"
        f" fold ({FOLDS} folds by document), every clean FIT one, a step back from the edge"
        ": the head alone, a document flagged when a line's request reading reaches the"
        " threshold and its relatedness to the other lines is at most the bound; at most"
        f" {MAX_CLEAN_RATE:.2%} of the clean documents may be flagged, at the pair and at"
        " the next looser relatedness bound.",
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
        hits = Counter(t for t, hit in zip(tasks, readings, strict=True) if hit)
        for task in sorted(totals):
            lines.append(f"| {name} {task} | {totals[task]} | {hits[task]} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = training_parser(__doc__, cache=True)
    args = parse_training_args(parser)
    started = time.perf_counter()
    rows = samples(args.datasets)
    encoder = Encoder.load()
    fitting = fitting_rows(rows)
    labels = fitting.labels
    print(f"fitting on {len(labels)} lines ({int(labels.sum())} said to an assistant)")
    vectors = encode_cached(encoder, fitting.texts, args.cache)
    weights, bias = fit(vectors, labels)
    meta = {
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
    }
    validation_docs = [
        (_task(s), s.view)
        for s in rows
        if s.part == VALIDATION and s.label == 0 and s.source in DOCUMENT_SOURCES
    ]
    planted_docs = planted_documents(rows)

    def read(texts: list[str]) -> list[Lines]:
        lines = [document_lines(text) or [Line(text, True)] for text in texts]
        every = encode_cached(encoder, [line.text for each in lines for line in each], args.cache)
        cuts = np.cumsum([0] + [len(each) for each in lines])
        return [
            lines_of(weights, bias, every[a:b], np.array([line.whole for line in each]))
            for each, (a, b) in zip(lines, itertools.pairwise(cuts), strict=True)
        ]

    clean_tasks = [f"FIT out of fold {task}" for task, _ in fitting.documents] + [
        f"VALIDATION {task}" for task, _ in validation_docs
    ]
    clean = out_of_fold(vectors, fitting) + read([text for _, text in validation_docs])
    planted = read([text for _, text in planted_docs])
    chosen, candidates = choose(clean, planted)
    head = PlantedLines(weights, bias, chosen.request_threshold, chosen.max_relatedness, meta)
    head.to_file(args.out / "planted_lines.npz")
    pair = (chosen.request_threshold, chosen.max_relatedness)
    text = report(
        chosen,
        candidates,
        clean_tasks,
        [t for t, _ in planted_docs],
        [doc.flags(*pair) for doc in clean],
        [doc.flags(*pair) for doc in planted],
        Counter(int(x) for x in labels),
    )
    (args.out / "planted_lines_report.md").write_text(text, encoding="utf-8")
    print(text)
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
