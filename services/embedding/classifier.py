"""The learned tier: a small network over sentence embeddings, weights shipped as .npz,
beside it a linear model over character n-grams (`ngrams.py`) and, when loaded, the attack
encoder (`attack_encoder.py`: the embedding model itself fine-tuned).

`data/classifier.npz` holds `w0, b0, w1, b1, ...` (ReLU between layers, one logit out) and
`meta`, a JSON string with the version, the calibration and how the weights were made
(`services/embedding/training/train.py`, its seed and data; see `classifier.meta.json`).
A text's raw score is its highest logit over its windows; the n-gram part also reads each
run of whole lines of a text of several (`runs.py`), where a line planted in a document is
not drowned by the document around it. Each part is calibrated on its own (0.5 at its
operating point). With the combiner (`combiner.py`, as shipped) the tier's probability is
its reading of the parts' raw scores and the text's similarity to the corpus; without it,
the highest part's, so it flags what any part flags.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mithril.services.embedding.attack_encoder import AttackEncoder
from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.combiner import Combiner
from mithril.services.embedding.encoder import Windows
from mithril.services.embedding.ngrams import NgramModel
from mithril.services.embedding.runs import line_runs


@dataclass(frozen=True, slots=True)
class ClassifierResult:
    raw: float
    """The network's highest logit over the text's windows."""
    probability: float
    """Calibrated probability that the text is an attack: the combiner's, or the highest
    part's."""
    ngram_raw: float | None = None
    """The n-gram model's highest logit over the text's windows and lines, if it is
    loaded."""
    tuned_raw: float | None = None
    """The attack encoder's highest logit over the text's windows, if it is loaded."""
    document_probability: float | None = None
    """With the combiner: its probability alone, without the attack encoder flagging on its
    own, which is how retrieved and tool content is read (`combiner.py` says why). None:
    the same as `probability`."""


class Classifier:
    def __init__(
        self,
        layers: list[tuple[np.ndarray, np.ndarray]],
        calibration: Calibration,
        meta: dict,
        ngrams: NgramModel | None = None,
        ngram_lines: bool = True,
        tuned: AttackEncoder | None = None,
        ngram_line_probability: float = 0.5,
        combiner: Combiner | None = None,
    ) -> None:
        if not layers or layers[-1][0].shape[1] != 1:
            raise ValueError("the classifier must end in a single logit")
        self.layers = layers
        self.calibration = calibration
        self.meta = meta
        self.ngrams = ngrams
        self.ngram_lines = ngram_lines
        self.ngram_line_probability = ngram_line_probability
        self.tuned = tuned
        self.combiner = combiner
        """When set (with every part loaded), the probability is the combiner's reading of
        the parts' raw scores and the text's similarity, not the highest part's."""

    @property
    def ngram_line_margin(self) -> float:
        """How far above the n-gram part's threshold a line read alone must score to flag:
        its raw score minus this counts against the threshold (0 when lines flag at 0.5)."""
        if self.ngrams is None:
            return 0.0
        calibration = self.ngrams.calibration
        return calibration.raw_at(self.ngram_line_probability) - calibration.threshold

    @property
    def version(self) -> str:
        """The network's version, and the n-gram model's and the attack encoder's when they
        are loaded."""
        parts = [str(self.meta.get("version", "unknown"))]
        if self.ngrams is not None:
            parts.append(str(self.ngrams.meta.get("version", "unknown")))
        if self.tuned is not None:
            parts.append(self.tuned.version)
        if self.combiner is not None:
            parts.append(self.combiner.version)
        return "+".join(parts)

    @classmethod
    def from_files(
        cls,
        path: Path,
        ngram_path: Path | None,
        ngram_lines: bool = True,
        ngram_line_probability: float = 0.5,
    ) -> Classifier:
        """The network at `path` and, if given, the n-gram model at `ngram_path` (reading
        lines too unless `ngram_lines` is False, a line flagging from
        `ngram_line_probability`)."""
        network = cls.from_file(path)
        if ngram_path is not None:
            network.ngrams = NgramModel.from_file(ngram_path)
        network.ngram_lines = ngram_lines
        network.ngram_line_probability = ngram_line_probability
        return network

    @classmethod
    def from_file(cls, path: Path) -> Classifier:
        with np.load(Path(path), allow_pickle=False) as data:
            meta: dict[str, Any] = json.loads(str(data["meta"]))
            layers = []
            index = 0
            while f"w{index}" in data:
                layers.append(
                    (
                        data[f"w{index}"].astype(np.float32),
                        data[f"b{index}"].astype(np.float32),
                    )
                )
                index += 1
        return cls(layers, Calibration.from_dict(meta["calibration"]), meta)

    def logits(self, vectors: np.ndarray) -> np.ndarray:
        """One logit per vector."""
        hidden = np.asarray(vectors, dtype=np.float32)
        for position, (weight, bias) in enumerate(self.layers):
            hidden = hidden @ weight + bias
            if position < len(self.layers) - 1:
                np.maximum(hidden, 0, out=hidden)
        return np.asarray(hidden[:, 0], dtype=np.float64)

    def classify(
        self, windows: Windows, texts: list[str], similarity: np.ndarray | None = None
    ) -> list[ClassifierResult]:
        """One result per text; `windows` are `texts`' windows, `similarity` their highest
        cosines to the corpus (what the combiner reads beside the parts)."""
        raws = windows.max_per_text(self.logits(windows.vectors), len(texts))
        probabilities = self.calibration.probability(raws)
        ngram_raws: list[float | None] = [None] * len(texts)
        tuned_raws: list[float | None] = [None] * len(texts)
        if self.ngrams is not None:
            found = ngram_raws_of(
                self.ngrams, windows, texts, self.ngram_lines, self.ngram_line_margin
            )
            probabilities = np.maximum(probabilities, self.ngrams.calibration.probability(found))
            ngram_raws = [float(raw) for raw in found]
        tuned_p = None
        document_probabilities: list[float | None] = [None] * len(texts)
        if self.tuned is not None:
            found = self.tuned.raws(texts)
            tuned_p = self.tuned.probabilities(found)
            probabilities = np.maximum(probabilities, tuned_p)
            tuned_raws = [float(raw) for raw in found]
        if self.combiner is not None and similarity is not None:
            if self.ngrams is None or tuned_p is None:
                raise ValueError("the combiner reads every part: load the n-grams and encoder")
            combined = self.combiner.probabilities(
                similarity,
                raws,
                np.array(ngram_raws, dtype=np.float64),
                np.array(tuned_raws, dtype=np.float64),
            )
            # The attack encoder still flags a prompt on its own (see combiner.py).
            probabilities = np.maximum(combined, tuned_p)
            document_probabilities = [float(p) for p in combined]
        return [
            ClassifierResult(float(raw), float(p), ngram_raw, tuned_raw, document_p)
            for raw, p, ngram_raw, tuned_raw, document_p in zip(
                raws, probabilities, ngram_raws, tuned_raws, document_probabilities, strict=True
            )
        ]


def ngram_raws_of(
    ngrams: NgramModel,
    windows: Windows,
    texts: list[str],
    lines: bool = True,
    line_margin: float = 0.0,
) -> np.ndarray:
    """The n-gram model's highest logit over each text's windows and, with `lines`, its runs
    of whole lines (`runs.line_runs`), each less `line_margin`: a line of a few words has
    few n-grams, and one sentence of an answer addressed to its reader ('just replace `var`
    with your variable name') reads more like an instruction than the answer does."""
    raws = windows.max_per_text(ngrams.logits(window_texts(windows, texts)), len(texts))
    if not lines:
        return raws
    pieces: list[str] = []
    owners: list[int] = []
    for owner, text in enumerate(texts):
        found = line_runs(text)
        pieces += found
        owners += [owner] * len(found)
    if pieces:
        lined = ngrams.logits(pieces) - line_margin
        np.maximum.at(raws, np.asarray(owners, dtype=np.int64), lined)
    return raws


def window_texts(windows: Windows, texts: list[str]) -> list[str]:
    """The characters each window covers."""
    return [
        texts[owner][start:end]
        for owner, (start, end) in zip(windows.owner.tolist(), windows.spans.tolist(), strict=True)
    ]
