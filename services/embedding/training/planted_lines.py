"""Fit the planted-line head (`planted.py`) and choose its relatedness weight and threshold.

    .venv/bin/python -m mithril.services.embedding.training.planted_lines [--datasets DIR]

Rows: DEV only, as `train.py` cuts them; nothing held out is read.

- Fitted on FIT rows. Said to an assistant (1): every prompt of s-labs, neuralchemy,
  mt-vicuna-bench and the jailbreak sources, attacks and benign requests alike, and BIPIA's
  attack strings. Part of a document (0): each run of lines (`planted.document_lines`) of
  every clean document of `HEAD_DOCUMENT_SOURCES` (BIPIA's contexts, standard-library
  docstrings, chunks of installed distributions' READMEs, of npm's manual, of the Rust
  books and of the machine's manual pages), and presidio's sentences. A perceptron of one
  hidden layer over the int8 sentence embedding (`fit`). On the same runs (short ones
  never counting) and the same clean budget a logistic regression (until
  planted-lines-lr-2026.12.5) found 679 of the 1,200 planted prompts below, the perceptron
  932: documentation's imperatives and an assistant's requests are not one plane apart.
- Chosen against clean documents: every VALIDATION clean document, read by the head, and
  every FIT clean document of several runs of lines, read out of fold (`FOLDS` heads, each
  fitted without the fold that holds the document). The folds are by the group the
  held-out split keeps whole, a README's distribution or a manual's package, so neither a
  document's lines nor its siblings' were fitted on (by document until
  planted-lines-mlp-2026.12.7: a chunk was read by a head fitted on the rest of its
  README). Planted: the VALIDATION prompts (up to `PLANTED`, by text hash) each on its own
  line of a VALIDATION clean BIPIA context, and the same prompts each in a FIT
  documentation chunk, read out of fold like the chunk (`insert_into`, as the detection
  benchmark plants). At every weight of `RELATEDNESS_WEIGHTS`, the lowest threshold at
  which at most `MAX_CLEAN_RATE` of the clean documents have a line that counts, at that
  threshold and one step lower; of those, the one finding the most planted prompts, on a
  tie the lower weight. A piece of a wrapped sentence (`planted.wrapped`) is fitted on as a
  document line but never counts, as in the gateway.
- Each line is compared with the document's prose (`prose.marked_runs`, `planted.prose_basis`)
  since planted-lines-mlp-2026.12.9, when it has `planted.PROSE_LINES_AT_LEAST` lines of
  prose (5 since planted-lines-mlp-2026.12.10, 2 before); until then with every run, code
  blocks included.
- Measured before any choice: the typical relatedness a short document's median is shrunk
  toward (`typical_relatedness`, the median over the clean FIT documents of their median
  line's; `planted.reference_relatedness`). Until planted-lines-mlp-2026.12.8 a document's
  own median alone was the reference, and a prompt planted in a two-line email stood no
  further out than the email did.

Writes `data/planted_lines.npz`, `data/planted_lines.meta.json` and
`data/planted_lines_report.md`. About ten minutes uncached (the embeddings of ~65,000
lines), three with the embeddings cached.
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

from mithril.benchmark import man_pages
from mithril.benchmark.detection import BIPIA, insert_into
from mithril.services.embedding.encoder import Encoder
from mithril.services.embedding.planted import (
    PRIOR_LINES,
    PROSE_LINES_AT_LEAST,
    Line,
    PlantedLines,
    RequestReader,
    document_lines,
    line_scores,
    prose_basis,
    relatedness,
)
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.embedding.training.train import (
    DOCUMENT_SOURCES,
    DOCUMENTATION_SOURCES,
    FIT,
    SEED,
    TOOLCHAIN_SOURCES,
    VALIDATION,
    Sample,
    samples,
)

VERSION = "planted-lines-mlp-2026.12.10"
HIDDEN = 256
ALPHA = 1e-3
BATCH = 256
MAX_EPOCHS = 60
HELD_BACK = 0.1
"""Of the fitted rows, the share the perceptron stops early on (its loss stalling there)."""
PLANTED = 600
FOLDS = 5
MAX_CLEAN_RATE = 0.0025
"""Of the clean documents, the most a choice may flag: the head adds to the cascade's false
positives, and the target bounds them at 1 % in all, most of it already spent by the other
tiers on documents (BIPIA's code contexts, READMEs). At 0.1 % (4,298 documents: 4) the choice,
weight 12.5 and threshold 9.25, found 582 instead of 614 of the 1,200 planted prompts, and
through the whole cascade on VALIDATION 76.1 instead of 78.2 % of the attacks planted in
documentation (78.5 % once `planted.WIDER_BY` replaced a slack of 8 on the fill test too);
neither flagged a clean VALIDATION document or context the other did not."""
RELATEDNESS_WEIGHTS = (0.0, 2.5, 5.0, 7.5, 10.0, 12.5, 15.0, 17.5, 20.0, 25.0, 30.0, 35.0, 40.0)
"""Candidate weights of a line's relatedness against its request (`planted.line_scores`)."""
THRESHOLD_STEP = 0.25
THRESHOLDS = tuple(round(THRESHOLD_STEP * step, 2) for step in range(121))
"""Candidate thresholds on the line score, 0 to 30 in logit units."""
PROMPT_SOURCES = (
    "injection/s-labs",
    "injection/neuralchemy",
    "benign/mt-vicuna-bench",
    "jailbreak/jbb-artifacts",
    "jailbreak/gptfuzz-templates",
    "jailbreak/giskard",
)
SENTENCE_SOURCES = ("benign/presidio-synth",)
HEAD_DOCUMENT_SOURCES = (*DOCUMENT_SOURCES, *TOOLCHAIN_SOURCES, man_pages.SOURCE)
"""Clean documents the head is fitted and chosen on: BIPIA's contexts and every kind of
documentation a coding assistant retrieves (docstrings, READMEs, npm's manual, the Rust
books, the machine's manual pages since planted-lines-mlp-2026.12.7)."""
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
class Document:
    task: str
    lines: slice
    """Its lines in `Fitting.texts`."""
    text: str
    source: str


@dataclass(frozen=True)
class Fitting:
    texts: list[str]
    labels: np.ndarray
    """1: said to an assistant; 0: part of a document."""
    groups: np.ndarray
    """The lines of the documents split together (a README's distribution, a manual's
    package: `Sample.group`) share one group, so that folds never split what the held-out
    split keeps whole."""
    documents: list[Document]
    """Every clean document of several runs of lines."""
    whole: np.ndarray
    """Per text, False for a piece of a wrapped sentence (`planted.wrapped`)."""
    prose: np.ndarray
    """Per text, False for a run of code (`prose.marked_runs`)."""


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
    prose = [True] * len(said)
    documents: list[Document] = []
    split_groups: dict[tuple[str, str], int] = {}
    for s in rows:
        if s.part != FIT or s.label != 0:
            continue
        if s.source in HEAD_DOCUMENT_SOURCES:
            lines = document_lines(s.view)
            if lines:
                part = slice(len(texts), len(texts) + len(lines))
                documents.append(Document(_task(s), part, s.view, s.source))
            else:
                lines = [Line(s.view, True)]
        elif s.source in SENTENCE_SOURCES:
            lines = [Line(s.view, True)]
        else:
            continue
        key = (s.source, s.group or s.view)
        group = split_groups.setdefault(key, len(said) + len(split_groups))
        groups.extend([group] * len(lines))
        texts.extend(line.text for line in lines)
        whole.extend(line.whole for line in lines)
        prose.extend(line.prose for line in lines)
    labels = np.r_[np.ones(len(said)), np.zeros(len(texts) - len(said))]
    return Fitting(
        texts,
        labels,
        np.asarray(groups),
        documents,
        np.asarray(whole, dtype=bool),
        np.asarray(prose, dtype=bool),
    )


def _planted_prompts(rows: Sequence[Sample]) -> list[tuple[str, str, str]]:
    """(key, task, prompt): the first `PLANTED` VALIDATION prompts by text hash."""
    return sorted(
        (hashlib.sha256(s.view.encode("utf-8")).hexdigest(), f"{s.source}:{s.label}", s.view)
        for s in rows
        if s.source in PROMPT_SOURCES and s.part == VALIDATION and len(s.view) <= MAX_PROMPT_CHARS
    )[:PLANTED]


def planted_documents(rows: Sequence[Sample]) -> list[tuple[str, str]]:
    """(task, text): VALIDATION prompts, each on its own line of a VALIDATION clean
    context, the task naming the context's kind (an email, a table, code): an email is
    short, and what a planted line is read against differs with the kind."""
    contexts = [
        (s.category.split(":")[0], s.view)
        for s in rows
        if s.source == BIPIA and s.label == 0 and s.part == VALIDATION
    ]
    planted = []
    for i, (key, task, prompt) in enumerate(_planted_prompts(rows)):
        kind, context = contexts[i % len(contexts)]
        planted.append((f"{kind}:{task}", insert_into(context, prompt, key)))
    return planted


def planted_in_fit_documentation(
    rows: Sequence[Sample], fitting: Fitting
) -> list[tuple[int, str, str]]:
    """(document, task, text): the same VALIDATION prompts, each on its own line of a clean
    FIT documentation chunk (taken by text hash; `document` indexes `fitting.documents`).
    Read out of fold, by a head fitted without the chunk's own lines: documentation wraps
    its prose and keeps its lines on one topic, which BIPIA's contexts do not show."""
    pages = sorted(
        (hashlib.sha256(doc.text.encode("utf-8")).hexdigest(), index)
        for index, doc in enumerate(fitting.documents)
        if doc.source in DOCUMENTATION_SOURCES
    )
    planted = []
    for (_, index), (key, task, prompt) in zip(pages, _planted_prompts(rows), strict=False):
        page = fitting.documents[index]
        planted.append((index, f"{page.task}:{task}", insert_into(page.text, prompt, key)))
    return planted


def fit(vectors: np.ndarray, labels: np.ndarray) -> RequestReader:
    """A perceptron of one hidden layer of `HIDDEN` units (sklearn, adam, L2 `ALPHA`,
    stopping early on `HELD_BACK` of the rows), classes weighted to balance."""
    from sklearn.neural_network import MLPClassifier

    weights = np.where(labels == 1, 0.5 / labels.mean(), 0.5 / (1 - labels.mean()))
    model = MLPClassifier(
        hidden_layer_sizes=(HIDDEN,),
        alpha=ALPHA,
        batch_size=min(BATCH, int(len(labels) * (1 - HELD_BACK))),
        max_iter=MAX_EPOCHS,
        early_stopping=True,
        validation_fraction=HELD_BACK,
        random_state=SEED,
    )
    model.fit(np.asarray(vectors, dtype=np.float32), labels, sample_weight=weights)
    return RequestReader(
        tuple(np.asarray(w, np.float64) for w in model.coefs_),
        tuple(np.asarray(b, np.float64) for b in model.intercepts_),
    )


@dataclass(frozen=True)
class Lines:
    """A document's lines as a head reads them: each one's request logit and relatedness."""

    logits: np.ndarray
    related: np.ndarray
    whole: np.ndarray
    typical: float | None = None
    """`PlantedLines.typical_relatedness`."""
    basis: np.ndarray | None = None
    """The lines each is compared with (`planted.prose_basis`); every line when None."""

    def best(self, relatedness_weight: float) -> float:
        """The highest score of a whole line (`planted.line_scores`); -inf when none may
        count, as `PlantedLines.read` reads a text of one run or of no whole run."""
        if len(self.logits) < 2 or not self.whole.any():
            return -np.inf
        scores = line_scores(
            self.logits, self.related, relatedness_weight, self.typical, self.basis
        )
        return float(scores[self.whole].max())

    def flags(self, relatedness_weight: float, threshold: float) -> bool:
        """What `PlantedLines.read` decides (probability >= 0.5)."""
        return self.best(relatedness_weight) >= threshold


def lines_of(
    request: RequestReader,
    vectors: np.ndarray,
    whole: np.ndarray | None = None,
    typical: float | None = None,
    prose: np.ndarray | None = None,
) -> Lines:
    """A document's lines as the head reads them; `whole`, `typical` and `prose` as
    `PlantedLines` takes them (compared with the prose lines, given `prose`)."""
    counted = np.ones(len(vectors), dtype=bool) if whole is None else np.asarray(whole, bool)
    basis = prose_basis(prose)
    return Lines(request.logits(vectors), relatedness(vectors, basis), counted, typical, basis)


def typical_relatedness(vectors: np.ndarray, fitting: Fitting) -> float:
    """The median, over the clean FIT documents, of each one's median line relatedness
    (among the lines each is compared with: its prose, `planted.prose_basis`): how close a
    line of a clean document typically stands to the rest of it (a property of the
    embedding and the documents, not of any head)."""
    medians = []
    for doc in fitting.documents:
        basis = prose_basis(fitting.prose[doc.lines])
        related = relatedness(vectors[doc.lines], basis)
        medians.append(float(np.median(related if basis is None else related[basis])))
    return float(np.median(medians))


@dataclass(frozen=True)
class Encoded:
    """A document's lines, embedded: what a head reads of it."""

    vectors: np.ndarray
    whole: np.ndarray
    prose: np.ndarray


def out_of_fold(
    vectors: np.ndarray,
    fitting: Fitting,
    planted: Sequence[tuple[int, Encoded]] = (),
    folds: int = FOLDS,
    typical: float | None = None,
) -> tuple[list[Lines], list[Lines]]:
    """Each clean FIT document, and each of `planted` ((its clean document's index, the
    planted text's lines)), read by a head fitted without the clean document's fold (folds
    by group)."""
    from sklearn.model_selection import GroupKFold

    read: dict[int, Lines] = {}
    planted_read: dict[int, Lines] = {}
    for train, test in GroupKFold(n_splits=folds).split(vectors, fitting.labels, fitting.groups):
        request = fit(vectors[train], fitting.labels[train])
        tested = set(test.tolist())
        for index, doc in enumerate(fitting.documents):
            if doc.lines.start in tested:
                part = doc.lines
                read[index] = lines_of(
                    request, vectors[part], fitting.whole[part], typical, fitting.prose[part]
                )
        for number, (index, encoded) in enumerate(planted):
            if fitting.documents[index].lines.start in tested:
                planted_read[number] = lines_of(
                    request, encoded.vectors, encoded.whole, typical, encoded.prose
                )
    return (
        [read[index] for index in range(len(fitting.documents))],
        [planted_read[number] for number in range(len(planted))],
    )


@dataclass(frozen=True)
class Choice:
    relatedness_weight: float
    threshold: float
    planted_found: int
    clean_flagged: int


def candidates_at(
    relatedness_weight: float, clean: list[Lines], planted: list[Lines], allowed: int
) -> Choice | None:
    """At this weight, the lowest threshold flagging at most `allowed` clean documents at
    itself and one step lower (a step back from the edge); None if none does."""
    clean_best = np.array([doc.best(relatedness_weight) for doc in clean])
    planted_best = np.array([doc.best(relatedness_weight) for doc in planted])
    for lower, threshold in itertools.pairwise(THRESHOLDS):
        if (clean_best >= lower).sum() <= allowed:
            return Choice(
                relatedness_weight,
                threshold,
                int((planted_best >= threshold).sum()),
                int((clean_best >= threshold).sum()),
            )
    return None


def choose(clean: list[Lines], planted: list[Lines]) -> tuple[Choice, list[Choice]]:
    """The candidate at every weight, and the one chosen: most planted found with at most
    `MAX_CLEAN_RATE` of the clean documents flagged, at its threshold and one step lower;
    on a tie the lower weight."""
    allowed = int(MAX_CLEAN_RATE * len(clean))
    candidates = [
        choice
        for weight in RELATEDNESS_WEIGHTS
        if (choice := candidates_at(weight, clean, planted, allowed)) is not None
    ]
    if not candidates:
        raise ValueError(f"every candidate flags more than {allowed} clean documents")
    best = max(candidates, key=lambda c: (c.planted_found, -c.relatedness_weight))
    return best, candidates


def report(
    chosen: Choice,
    typical: float,
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
        f" fold ({FOLDS} folds by the split's group: a distribution, a package), every clean"
        " FIT one, a step back from the edge"
        ": the head alone, a document flagged when a whole line's score (its request logit"
        " less the weight times how much closer to the document's prose it stands than the"
        f" median line of prose (with {PROSE_LINES_AT_LEAST} lines of prose or more and some"
        " code; every line is compared with every other otherwise), shrunk toward the"
        " typical clean document's median line as if"
        f" {PRIOR_LINES} more lines stood there: {typical:.3f}) reaches the threshold; at"
        f" most {MAX_CLEAN_RATE:.2%} of the clean documents"
        f" may be flagged, at the threshold and {THRESHOLD_STEP} below it. Planted: VALIDATION"
        " prompts in VALIDATION BIPIA contexts, and the same prompts in FIT documentation"
        " chunks read out of fold.",
        "",
        f"Chosen: relatedness weight {chosen.relatedness_weight}, threshold"
        f" {chosen.threshold}: {chosen.planted_found} of {len(planted)} planted prompts,"
        f" {chosen.clean_flagged} of {len(clean)} clean documents.",
        "",
        "## Candidates",
        "",
        "| relatedness weight | threshold | planted found | clean flagged |",
        "|---:|---:|---:|---:|",
    ]
    for c in candidates:
        mark = " (chosen)" if c == chosen else ""
        lines.append(
            f"| {c.relatedness_weight}{mark} | {c.threshold} | {c.planted_found} |"
            f" {c.clean_flagged} |"
        )
    lines += ["", "## At the chosen weight and threshold, by row kind", ""]
    lines.append("| rows | count | flagged |")
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
    rows = samples(args.datasets, manual=True)
    encoder = Encoder.load()
    fitting = fitting_rows(rows)
    labels = fitting.labels
    print(f"fitting on {len(labels)} lines ({int(labels.sum())} said to an assistant)")
    vectors = encode_cached(encoder, fitting.texts, args.cache)
    request = fit(vectors, labels)
    typical = typical_relatedness(vectors, fitting)
    meta = {
        "version": VERSION,
        "seed": SEED,
        "hidden": HIDDEN,
        "alpha": ALPHA,
        "encoder": encoder.model_id,
        "fitted_on": {
            "said_to_assistant": int(labels.sum()),
            "document": int(len(labels) - labels.sum()),
        },
        "sources": {
            "said": [*PROMPT_SOURCES, f"{BIPIA} attack strings"],
            "document": list(HEAD_DOCUMENT_SOURCES + SENTENCE_SOURCES),
        },
        "script": "services/embedding/training/planted_lines.py",
    }
    validation_docs = [
        (_task(s), s.view)
        for s in rows
        if s.part == VALIDATION and s.label == 0 and s.source in HEAD_DOCUMENT_SOURCES
    ]
    planted_docs = planted_documents(rows)
    planted_fit = planted_in_fit_documentation(rows, fitting)

    def encoded(texts: list[str]) -> list[Encoded]:
        lines = [document_lines(text) or [Line(text, True)] for text in texts]
        every = encode_cached(encoder, [line.text for each in lines for line in each], args.cache)
        cuts = np.cumsum([0] + [len(each) for each in lines])
        return [
            Encoded(
                every[a:b],
                np.array([line.whole for line in each]),
                np.array([line.prose for line in each]),
            )
            for each, (a, b) in zip(lines, itertools.pairwise(cuts), strict=True)
        ]

    def read(texts: list[str]) -> list[Lines]:
        return [lines_of(request, e.vectors, e.whole, typical, e.prose) for e in encoded(texts)]

    clean_tasks = [f"FIT out of fold {doc.task}" for doc in fitting.documents] + [
        f"VALIDATION {task}" for task, _ in validation_docs
    ]
    planted_fit_lines = encoded([text for _, _, text in planted_fit])
    fit_clean, fit_planted = out_of_fold(
        vectors,
        fitting,
        [(at, lines) for (at, _, _), lines in zip(planted_fit, planted_fit_lines, strict=True)],
        typical=typical,
    )
    clean = fit_clean + read([text for _, text in validation_docs])
    planted = read([text for _, text in planted_docs]) + fit_planted
    chosen, candidates = choose(clean, planted)
    head = PlantedLines(
        request, chosen.threshold, chosen.relatedness_weight, meta, typical, against_prose=True
    )
    args.out.mkdir(parents=True, exist_ok=True)
    head.to_file(args.out / "planted_lines.npz")
    pair = (chosen.relatedness_weight, chosen.threshold)
    text = report(
        chosen,
        typical,
        candidates,
        clean_tasks,
        [f"in a VALIDATION context {t}" for t, _ in planted_docs]
        + [f"in FIT documentation out of fold {t}" for _, t, _ in planted_fit],
        [doc.flags(*pair) for doc in clean],
        [doc.flags(*pair) for doc in planted],
        Counter(int(x) for x in labels),
    )
    (args.out / "planted_lines_report.md").write_text(text, encoding="utf-8")
    print(text)
    print(f"{time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
