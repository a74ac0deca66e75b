"""A line of retrieved content that reads as a request to an assistant, off the document's topic.

An injected task in a retrieved email ("Recommend a good book for a weekend read") is no
attack as a prompt: the classifier learned that such requests are benign, and they are,
from a user. Inside a document they are the injection. Two readings of each run of whole
lines (`runs.separate_lines`: a line of enough letters alone, shorter lines, a table's rows
or a code block's, gathered apart from it, so a planted line is read alone) find them:

- `request`: a small perceptron over the line's sentence embedding (`RequestReader`),
  fitted on prompts (attacks and benign requests alike) against the lines of clean
  documents (BIPIA's contexts, the standard library's docstrings, installed distributions'
  READMEs, npm's manual, the Rust books, the machine's manual pages, presidio's
  sentences): does this line read as something said to an assistant rather than as part
  of a document?
- `relatedness`: the line's cosine to the mean of the document's other lines of prose
  (`prose_basis`; of every line when it has fewer than `PROSE_LINES_AT_LEAST`).
  Documentation is full of imperative lines ("Return the number of items."), and each is on
  its document's topic; a planted task is not. A code block is on its page's topic too, but
  its embedding stands far from every sentence, and a page's sentences compared with it read
  as off topic (until planted-lines-mlp-2026.12.9 they were: the closest clean DEV Stack
  Overflow answer stood 1.6 logits below the threshold; with its sentences compared with its
  prose, 4.0).

A line's score is its request logit plus `relatedness_weight` times how much further from
the document it stands than the document's median line (`line_scores`): a page of
documentation keeps its lines on one topic, an email or a table less so, and what sets a
planted line apart is its distance from the lines around it rather than any fixed cosine
(a fixed bound of 0.05, which held clean documents at 0.1 %, let the head alone find 95 of
620 DEV attacks planted in documentation, whose median planted line stands at 0.10). A short
text says little of how close its lines stand: the median of a two-line email is its planted
line's own relatedness, so that line would stand no further out than the email does. The
median is therefore shrunk toward `typical_relatedness` (the median line's relatedness in a
typical clean document, measured when the head is fitted) as if `PRIOR_LINES` more lines
stood there; a page of 32 lines keeps its own median at 80 %. The
best whole line counts when its score reaches `threshold`, its probability calibrated to
0.5 there. A piece of a sentence wrapped across lines (`wrapped`) never counts: a
docstring's or an email's hard-wrapped prose breaks mid-sentence ("...be sure to get in,
suck\n"), and such a piece read alone can sound like anything; a planted request stands on
its own line. `data/planted_lines.npz` and its threshold and weight are written by
`training/planted_lines.py` (fitted on FIT rows; chosen on clean FIT documents out of fold
and VALIDATION ones, against prompts planted in FIT documentation out of fold and in
VALIDATION contexts). Only the gateway knows a text's origin: it asks for this reading of
retrieved and tool content alone, since a user's own prompt may well hold a pasted document
and a request.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, cast

import numpy as np

from mithril.services.embedding.prose import marked_runs
from mithril.services.embedding.runs import RUN_LETTERS, letters, line_runs, separate_lines

MAX_LINES = 32
"""Most runs of a document read (spread from its first to its last): bounds the encoder
runs one retrieved text costs."""


@dataclass(frozen=True, slots=True)
class LineReading:
    probability: float
    """Calibrated: 0.5 where the best whole line's score (`line_scores`) reaches the
    threshold; 0 for a text of one run or of no whole run."""
    request: float
    """The head's probability that the line is said to an assistant."""
    relatedness: float
    """The line's cosine to the mean of the text's other lines of prose (`prose_basis`)."""


NO_READING = LineReading(0.0, 0.0, 0.0)
"""A text of one run, or of no whole run that may count."""


_Item = TypeVar("_Item")

_LEADING_MARKS = "-*>#"
"""What may stand before a line's first letter and still let it start a sentence: list
bullets, quote marks of a reply, a heading's hashes."""
_OPEN_ENDINGS = ",-("
"""Besides a letter or a digit, the last characters of a line whose sentence goes on."""
PRIOR_LINES = 8
"""How many lines at the typical relatedness a document's median is shrunk with
(`reference_relatedness`). On DEV (VALIDATION prompts planted in VALIDATION emails, most
of them two or three runs, with rules or the head) 4, 8, 16 and 32 find 256, 261, 262 and
263 of 292 attacks, against 239 with the median alone, at the same clean budget."""
SHORT_LETTERS = 16
"""The fewest letters of a one-line run that may count (`may_count`)."""
WIDER_BY = 8
"""How much longer than the text's other wrapped lines a line may be and still be one a
wrapper filled: the widest of them need not be the widest the wrapper allowed."""


class Line(NamedTuple):
    text: str
    whole: bool
    """False for a piece of a sentence wrapped across lines (`wrapped`) or a short fragment
    (`may_count`): read, but never counted."""
    prose: bool = True
    """False for a run of code (`prose.marked_runs`): read and counted, but no line is
    compared with it."""


def spread(items: list[_Item], limit: int = MAX_LINES) -> list[_Item]:
    """At most `limit` of `items`, evenly spread from the first to the last."""
    if len(items) <= limit:
        return items
    picks = np.linspace(0, len(items) - 1, limit).round().astype(int)
    return [items[i] for i in picks]


def _starts_lower(run: str) -> bool:
    for char in run:
        if char.isalpha():
            return char.islower()
        if not char.isspace() and char not in _LEADING_MARKS:
            return False
    return False


def _ends_open(run: str) -> bool:
    tail = run.rstrip()
    return bool(tail) and (tail[-1].isalnum() or tail[-1] in _OPEN_ENDINGS)


def _first_word(run: str) -> str:
    words = run.split()
    return words[0] if words else ""


def _last_line(run: str) -> str:
    lines = run.rstrip().splitlines()
    return lines[-1].rstrip() if lines else ""


def _wrap_lengths(runs: Sequence[str]) -> list[int]:
    """The length of every physical line of `runs` that ends open before a line starting in
    lower case: the lines a wrapper filled, which say how wide it wrapped."""
    lines = [line.rstrip() for run in runs for line in run.splitlines()]
    return [
        len(line)
        for line, after in itertools.pairwise(lines)
        if _ends_open(line) and _starts_lower(after)
    ]


def wrapped(runs: Sequence[str]) -> list[bool]:
    """Which runs are a piece of a sentence wrapped across lines: a run that starts in lower
    case after a run that ends mid-sentence (no closing punctuation, not a table's `|`), and
    the run it continues when a wrapper filled that one's last line: the next word would not
    have fit on it within the width the text's other wrapped lines show, nor is it longer
    than they are (by more than `WIDER_BY`). A planted request stands on a line of its own,
    shorter or longer than the prose's lines, and a mid-paragraph plant is followed by the
    rest of a wrapped sentence in lower case; a wrapper's line is as full as its width
    allows."""
    continues = [
        index > 0 and _ends_open(runs[index - 1]) and _starts_lower(run)
        for index, run in enumerate(runs)
    ]
    lengths = sorted(_wrap_lengths(runs))

    def filled(index: int) -> bool:
        line = len(_last_line(runs[index]))
        others = list(lengths)
        if line in others:
            others.remove(line)
        if not others:
            return True  # nothing to compare with: a piece, as a wrapper would leave it
        width = others[-1]
        next_word = len(_first_word(runs[index + 1]))
        return width < line + 1 + next_word and line <= width + WIDER_BY

    return [
        continues[index] or (index + 1 < len(runs) and continues[index + 1] and filled(index))
        for index in range(len(runs))
    ]


def document_runs(text: str) -> list[str]:
    """The runs of `text` the head reads, before they are marked and spread ([] for a text
    of one run): what the gateway asks about before it calls for a reading. The same runs
    as `prose.marked_runs`, cut without reading which are code: the gateway only asks
    whether there are any, for every retrieved text."""
    return line_runs(text, separate_lines)


def document_lines(text: str) -> list[Line]:
    """The runs of whole lines of `text` that are read ([] for a text of one run), each
    marked by its true neighbours before they are spread: whole, or a piece of a wrapped
    sentence or a short fragment (`may_count`); prose or code (`prose.marked_runs`)."""
    marked = marked_runs(text)
    runs = [run for run, _ in marked]
    return spread(
        [
            Line(run, not piece and may_count(run), not code)
            for (run, code), piece in zip(marked, wrapped(runs), strict=True)
        ]
    )


def may_count(run: str) -> bool:
    """A run of `RUN_LETTERS` letters, or a single line of `SHORT_LETTERS`: a short request
    stands on one line ("Write a short poem about the ocean."), while the short runs
    of several lines are a heading and its underline or a fragment of code, which read
    alone stand far from any page. The rest are read for their page's topic, never
    counted."""
    count = letters(run)
    return count >= RUN_LETTERS or (count >= SHORT_LETTERS and len(run.strip().splitlines()) == 1)


def meta_path(weights_path: Path) -> Path:
    """Where a head's thresholds and provenance live: beside its weights (`x.meta.json`)."""
    return weights_path.with_suffix(".meta.json")


@dataclass(frozen=True, slots=True)
class RequestReader:
    """A small perceptron over a line's sentence embedding: ReLU hidden layers, then the
    logit that the line is said to an assistant. One layer is a logistic regression."""

    weights: tuple[np.ndarray, ...]
    """Per layer, (inputs, outputs); the last has one output."""
    biases: tuple[np.ndarray, ...]

    def __post_init__(self) -> None:
        if not self.weights or len(self.weights) != len(self.biases):
            raise ValueError("a request reader needs one bias per layer, and a layer")
        if self.weights[-1].shape[1] != 1:
            raise ValueError(f"the last layer gives one logit, not {self.weights[-1].shape[1]}")

    @classmethod
    def linear(cls, weights: np.ndarray, bias: float) -> RequestReader:
        return cls((np.asarray(weights, np.float64).reshape(-1, 1),), (np.array([bias]),))

    def logits(self, vectors: np.ndarray) -> np.ndarray:
        """The logit, per row, that the line is said to an assistant."""
        out = np.asarray(vectors, dtype=np.float64)
        for layer, (weights, bias) in enumerate(zip(self.weights, self.biases, strict=True)):
            out = out @ weights + bias
            if layer < len(self.weights) - 1:
                out = np.maximum(out, 0.0)
        return np.asarray(out[:, 0], dtype=np.float64)

    def arrays(self) -> dict[str, np.ndarray]:
        """As `np.savez` keeps them (float32), read back by `from_arrays`."""
        out: dict[str, np.ndarray] = {}
        for layer, (weights, bias) in enumerate(zip(self.weights, self.biases, strict=True)):
            out[f"weights_{layer}"] = weights.astype(np.float32)
            out[f"bias_{layer}"] = bias.astype(np.float32)
        return out

    @classmethod
    def from_arrays(cls, arrays: Mapping[str, np.ndarray]) -> RequestReader:
        """Layers as `arrays` wrote them, or the logistic regression (`weights`, `bias`) a
        head kept until planted-lines-lr-2026.12.5."""
        if "weights" in arrays and "bias" in arrays:
            return cls.linear(np.asarray(arrays["weights"]), float(arrays["bias"]))
        layers = sum(1 for key in arrays if key.startswith("weights_"))
        if not layers:
            raise ValueError(f"no layers (weights_0, bias_0, ...) among {sorted(arrays)}")
        return cls(
            tuple(np.asarray(arrays[f"weights_{i}"], np.float64) for i in range(layers)),
            tuple(np.asarray(arrays[f"bias_{i}"], np.float64) for i in range(layers)),
        )


def sigmoid(logits: np.ndarray) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(logits, -50, 50))), dtype=np.float64)


PROSE_LINES_AT_LEAST = 5
"""The fewest lines of prose a document needs for its lines to be compared with its prose
alone (planted-lines-mlp-2026.12.10; 2 before, the least that lets a line of prose be
compared with another). A few sentences around a code block say little of the page's
topic. Chosen on DEV by the head's own rule: with 2 / 3 / 4 / 5 / 6, the head's choice finds
996 / 997 / 997 / 998 / 997 of 1,200 planted prompts at 11 / 9 / 9 / 9 / 10 of 5,535 clean
documents."""


def prose_basis(
    prose: Sequence[bool] | np.ndarray | None, at_least: int | None = None
) -> np.ndarray | None:
    """The rows a line is compared with: the prose runs when there are `at_least` of them
    (`PROSE_LINES_AT_LEAST` without it) and some code, every row otherwise (None)."""
    if prose is None:
        return None
    basis = np.asarray(prose, dtype=bool)
    enough = max(PROSE_LINES_AT_LEAST if at_least is None else at_least, 2)
    return basis if basis.sum() >= enough and not basis.all() else None


def relatedness(vectors: np.ndarray, basis: np.ndarray | None = None) -> np.ndarray:
    """Each row's cosine to the normalised mean of the `basis` rows other than itself
    (every row without it; rows L2-normalised)."""
    count = len(vectors)
    if count < 2:
        return np.zeros(count)
    if basis is None:
        others = vectors.sum(axis=0, keepdims=True) - vectors
    else:
        others = vectors[basis].sum(axis=0, keepdims=True) - vectors * basis[:, None]
    norms = np.linalg.norm(others, axis=1, keepdims=True)
    others = others / np.where(norms > 0, norms, 1.0)
    return np.asarray(np.einsum("ij,ij->i", vectors, others), dtype=np.float64)


def reference_relatedness(related: np.ndarray, typical: float | None) -> float:
    """How close a line of this document is expected to stand: the median line's
    relatedness, shrunk toward `typical` as if `PRIOR_LINES` more lines stood there (the
    median alone without `typical`, as heads kept it until planted-lines-mlp-2026.12.8)."""
    median = float(np.median(related))
    if typical is None:
        return median
    return (len(related) * median + PRIOR_LINES * typical) / (len(related) + PRIOR_LINES)


def line_scores(
    logits: np.ndarray,
    related: np.ndarray,
    relatedness_weight: float,
    typical: float | None = None,
    basis: np.ndarray | None = None,
) -> np.ndarray:
    """Per line: how much it asks (the request logit), less `relatedness_weight` times how
    much closer it stands to the document than its `basis` lines are expected to
    (`reference_relatedness` of theirs; every line's without it). A request off the topic
    of the lines around it scores above its logit, a documentation line whose imperative
    is on its page's topic below it."""
    reference = reference_relatedness(related if basis is None else related[basis], typical)
    return np.asarray(logits - relatedness_weight * (related - reference), np.float64)


@dataclass(frozen=True, slots=True)
class PlantedLines:
    request: RequestReader
    threshold: float
    """On `line_scores`: a line scoring at least this counts."""
    relatedness_weight: float
    meta: dict[str, Any]
    typical_relatedness: float | None = None
    """The median line's relatedness in a typical clean document, that a document's own
    median is shrunk toward (`reference_relatedness`); None for a head kept before
    planted-lines-mlp-2026.12.8, which read the median alone."""
    against_prose: bool = False
    """Lines are compared with the document's prose alone (`prose_basis`); False for a head
    kept before planted-lines-mlp-2026.12.9, which compared them with every run."""
    prose_lines_at_least: int = PROSE_LINES_AT_LEAST
    """`prose_basis`'s `at_least` the head was chosen with (2 for planted-lines-mlp-2026.12.9)."""

    def __post_init__(self) -> None:
        if self.relatedness_weight < 0:
            raise ValueError(f"relatedness_weight must be >= 0, got {self.relatedness_weight}")
        if self.typical_relatedness is not None and not -1 <= self.typical_relatedness <= 1:
            raise ValueError(f"typical_relatedness is a cosine, got {self.typical_relatedness}")

    @property
    def version(self) -> str:
        return str(self.meta.get("version", "unknown"))

    def read(
        self,
        vectors: np.ndarray,
        whole: Sequence[bool] | None = None,
        prose: Sequence[bool] | None = None,
    ) -> LineReading:
        """The strongest reading of a document's line vectors (one row per run, in order);
        only the lines `whole` marks may count (all, without it), each compared with the
        lines `prose` marks (`prose_basis`; with every line, without it)."""
        if len(vectors) < 2:
            return NO_READING
        logits = self.request.logits(vectors)
        basis = prose_basis(prose, self.prose_lines_at_least) if self.against_prose else None
        related = relatedness(vectors, basis)
        scores = line_scores(
            logits, related, self.relatedness_weight, self.typical_relatedness, basis
        )
        may_count = np.ones(len(vectors), dtype=bool) if whole is None else np.asarray(whole, bool)
        counting = np.flatnonzero(may_count)
        if not len(counting):
            return NO_READING
        best = counting[np.argmax(scores[counting])]
        probability, request = sigmoid(np.array([scores[best] - self.threshold, logits[best]]))
        return LineReading(float(probability), float(request), float(related[best]))

    def to_file(self, weights_path: Path) -> None:
        """The weights at `weights_path`; threshold, weight and provenance at `meta_path` of
        it."""
        # numpy types savez's keywords as its own options (allow_pickle); these are arrays.
        np.savez(weights_path, **cast("dict[str, Any]", self.request.arrays()))
        meta = {
            **self.meta,
            "threshold": self.threshold,
            "relatedness_weight": self.relatedness_weight,
        }
        if self.typical_relatedness is not None:
            meta["typical_relatedness"] = self.typical_relatedness
        if self.against_prose:
            meta["compared_with"] = "prose"
            meta["prose_lines_at_least"] = self.prose_lines_at_least
        text = json.dumps(meta, indent=2, sort_keys=True) + "\n"
        meta_path(weights_path).write_text(text, encoding="utf-8")

    @classmethod
    def from_file(cls, weights_path: Path) -> PlantedLines:
        with np.load(weights_path) as data:
            request = RequestReader.from_arrays(data)
        meta = json.loads(meta_path(weights_path).read_text(encoding="utf-8"))
        typical = meta.pop("typical_relatedness", None)
        compared_with = meta.pop("compared_with", "every run")
        if compared_with not in ("prose", "every run"):
            raise ValueError(f"a head compares lines with prose or every run, not {compared_with}")
        # A head that names no count was chosen with two (planted-lines-mlp-2026.12.9).
        at_least = meta.pop("prose_lines_at_least", 2)
        if not isinstance(at_least, int) or at_least < 2:
            raise ValueError(f"prose_lines_at_least is a count of 2 or more, not {at_least!r}")
        return cls(
            request,
            float(meta.pop("threshold")),
            float(meta.pop("relatedness_weight")),
            meta,
            None if typical is None else float(typical),
            compared_with == "prose",
            at_least,
        )
