"""The embedding tiers as one library: what the servicer, the gateway and the CLI call.

    tiers = EmbeddingTiers.load(EmbeddingSettings())      # loads model, corpus, classifier
    vectors = await tiers.embed(["some text"])             # (n, 384) float32, L2-normalised
    scores = await tiers.score(["some text"])              # [TierScore(similarity, probability,
                                                           #            neighbors)]
    tiers.score_sync(texts)                                # the same, without an event loop

Both scores are calibrated probabilities with 0.5 at the operating point chosen on the
train-validation slice (see `calibration.py`), so the gateway can noisy-OR them with the
other tiers against one threshold. Concurrent calls share encoder runs (`batching.py`).
A text identified as another language than English is scored by the multilingual model
(`multilingual.py`) alone: its probability is the head's, its similarity 0 and it lists no
neighbours (the corpus is English; cosines across languages are not on the same scale). An
English text with passages in another language is scored by both, and keeps the higher
probability. A short English text the English classifier is unsure of gets the multilingual
head's second opinion (`Multilingual.second_opinion`), and keeps the higher probability.
"""

from __future__ import annotations

import functools
import json
import logging
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from threadpoolctl import ThreadpoolController

from mithril.runtime.cache import TTLCache, cache_key
from mithril.services.embedding.attack_encoder import AttackEncoder
from mithril.services.embedding.batching import EncoderBatcher
from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.classifier import Classifier
from mithril.services.embedding.combiner import Combiner
from mithril.services.embedding.config import EmbeddingSettings
from mithril.services.embedding.corpus import Corpus, load_index
from mithril.services.embedding.encoder import Encoder
from mithril.services.embedding.multilingual import Multilingual
from mithril.services.embedding.network import file_digest
from mithril.services.embedding.planted import (
    NO_READING,
    LineReading,
    PlantedLines,
    document_lines,
)
from mithril.services.embedding.similarity import Neighbor, SimilarityIndex


@dataclass(frozen=True, slots=True)
class TierScore:
    similarity: float
    """Calibrated probability from the nearest corpus entries (ScoreSimilarity.score)."""
    probability: float
    """Calibrated probability from the classifier (Classify.probabilities)."""
    neighbors: tuple[Neighbor, ...]
    """The nearest corpus entries, closest first."""
    max_similarity: float = 0.0
    """The raw highest cosine to the corpus, -1 to 1."""
    language: str = ""
    """The language the multilingual model read the text (or a passage of it) as, when its
    probability is the one given; '' when the English classifier's is."""
    passage: bool = False
    """True when `language` is a passage's: the rest of the text is English, and the
    similarity is the English model's."""
    second_opinion: bool = False
    """True when the probability is the multilingual head's reading of an English text
    (`language` "en"); the similarity is the English model's."""
    near_copy: float = 0.0
    """What the similarity says beside the classifier, whose probability already reads it
    when the combiner runs: 0.5 at a near-copy of a corpus entry (`combiner.py`); else the
    same as `similarity`."""

    document_probability: float | None = None
    """How retrieved and tool content reads: the classifier's probability without the
    attack encoder flagging on its own (`ClassifierResult.document_probability`), or the
    multilingual model's where it reads higher; None: the same as `probability`."""
    document_language: str | None = None
    """The language behind `document_probability`, as `language` is behind `probability`;
    None: the same as `language`."""

    @property
    def for_documents(self) -> float:
        return self.probability if self.document_probability is None else self.document_probability

    @property
    def language_for_documents(self) -> str:
        return self.language if self.document_language is None else self.document_language

    def read_for_documents(self, probability: float, language: str) -> TierScore:
        """This score with documents reading `probability` (the multilingual model's, read
        as `language`) where it is higher than what they read now: another reading below
        the prompts' probability (the attack encoder's own) may be above the combiner's."""
        if probability <= self.for_documents:
            return self
        return replace(self, document_probability=probability, document_language=language)

    @property
    def similarity_language(self) -> str:
        """The language of the model that gave `similarity`: '' for the English one."""
        return "" if self.passage or self.second_opinion else self.language


log = logging.getLogger(__name__)

RECENT_SCORES_SECONDS = 60.0
"""How long a text's scores are kept for a second call about the same text."""

_Item = tuple[Literal["embed", "score"], str, int]


class EmbeddingTiers:
    def __init__(
        self,
        settings: EmbeddingSettings,
        encoder: Encoder,
        index: SimilarityIndex,
        classifier: Classifier,
        *,
        multilingual: Multilingual | None = None,
        planted: PlantedLines | None = None,
        index_from_cache: bool = False,
    ) -> None:
        self.settings = settings
        self.encoder = encoder
        self.index = index
        self.classifier = classifier
        self.multilingual = multilingual
        self.planted = planted
        self.index_from_cache = index_from_cache
        # ScoreSimilarity and Classify are two calls, and the gateway makes both for a text:
        # the second finds the first's scores here instead of running the models again.
        # Keys are digests; only the batcher's worker thread touches it.
        self._recent: TTLCache[tuple[int, TierScore]] = TTLCache(
            settings.recent_scores, RECENT_SCORES_SECONDS
        )
        self._batcher: EncoderBatcher[_Item, np.ndarray | TierScore] = EncoderBatcher(
            self._run,
            max_items=settings.micro_batch_items,
            max_wait_ms=settings.micro_batch_wait_ms,
        )

    @classmethod
    def load(cls, settings: EmbeddingSettings | None = None) -> EmbeddingTiers:
        """Load the model, the corpus index (cached) and the classifier. Takes a second or
        two with a cached index; the first start embeds the corpus (about a minute)."""
        settings = settings or EmbeddingSettings()
        encoder = Encoder.load(
            threads=settings.threads,
            max_tokens=settings.max_tokens,
            stride=settings.window_stride,
            batch_size=settings.encode_batch_size,
            # The attack encoder and e5 run right after it (see `Encoder.load`).
            spinning=False,
        )
        corpus = Corpus.from_files(settings.corpus_files)
        matrix, cached = load_index(corpus, encoder.model_id, encoder.encode, settings.cache_dir)
        classifier = load_classifier(settings)
        _check_trained_on(classifier, encoder)
        classifier.combiner = load_combiner(settings, classifier)
        calibration = Calibration.from_file(settings.similarity_calibration_file)
        index = SimilarityIndex(corpus, matrix, calibration)
        multilingual = (
            Multilingual.load(
                settings.multilingual_file,
                settings.multilingual_windows,
                settings.threads,
                settings.multilingual_passages,
                settings.multilingual_second_opinion,
            )
            if settings.multilingual
            else None
        )
        planted = (
            PlantedLines.from_file(settings.planted_lines_file) if settings.planted_lines else None
        )
        return cls(
            settings,
            encoder,
            index,
            classifier,
            multilingual=multilingual,
            planted=planted,
            index_from_cache=cached,
        )

    # -- synchronous, for in-process callers without an event loop -----------------------

    def embed_sync(self, texts: list[str]) -> np.ndarray:
        return self.encoder.encode(list(texts))

    def score_sync(self, texts: list[str], top_k: int = 0) -> list[TierScore]:
        with one_blas_thread():
            return self._score_sync(list(texts), top_k)

    def _score_sync(self, texts: list[str], top_k: int) -> list[TierScore]:
        foreign = self.multilingual.score(texts) if self.multilingual else [None] * len(texts)
        # The English models read every text but those wholly in another language, whose
        # scores they would only make up.
        english = [i for i, other in enumerate(foreign) if other is None or not other.whole]
        read = self._score_english([texts[i] for i in english], top_k)
        scores = dict(zip(english, read, strict=True))
        self._ask_second_opinion(texts, scores)
        results = []
        for i, other in enumerate(foreign):
            if other is None:
                results.append(scores[i])
            elif other.whole:
                results.append(TierScore(0.0, other.probability, (), 0.0, other.language))
            elif other.probability > scores[i].probability:
                # A passage in another language reads as more of an attack than the text
                # does to the English classifier: the passage decides.
                results.append(
                    replace(
                        scores[i],
                        probability=other.probability,
                        language=other.language,
                        passage=True,
                        document_probability=None,
                        document_language=None,
                    )
                )
            else:
                results.append(scores[i].read_for_documents(other.probability, other.language))
        return results

    def _ask_second_opinion(self, texts: list[str], scores: dict[int, TierScore]) -> None:
        """Where the English classifier is unsure of a text, the multilingual head reads it
        too, and the higher probability stands (see `multilingual.py`); for a prompt and
        for a document each, as each reads the English classifier."""
        opinion = self.multilingual.english_opinion if self.multilingual else None
        if opinion is None:
            return
        unsure = [
            i
            for i, s in scores.items()
            if opinion.asks(s.probability) or opinion.asks(s.for_documents)
        ]
        if not unsure:
            return
        assert self.multilingual is not None
        read = self.multilingual.second_opinion([texts[i] for i in unsure])
        for i, probability in zip(unsure, read, strict=True):
            if probability is None:
                continue
            score = scores[i]
            if opinion.asks(score.for_documents):
                score = score.read_for_documents(probability, "en")
            if opinion.asks(score.probability) and probability > score.probability:
                # What documents read is pinned: None would follow the prompts' new reading.
                score = replace(
                    score,
                    probability=probability,
                    language="en",
                    second_opinion=True,
                    document_probability=score.for_documents,
                    document_language=score.language_for_documents,
                )
            scores[i] = score

    def _score_english(self, texts: list[str], top_k: int) -> list[TierScore]:
        if not texts:
            return []
        windows = self.encoder.encode_windows(texts, self.settings.max_windows)
        similar = self.index.search(windows, len(texts), top_k or self.settings.top_k)
        raws = np.array([s.raw for s in similar])
        classified = self.classifier.classify(windows, texts, raws)
        combiner = self.classifier.combiner
        near = (
            combiner.similarity_alone.probability(raws).tolist()
            if combiner
            else [s.score for s in similar]
        )
        return [
            TierScore(
                s.score,
                c.probability,
                s.neighbors,
                s.raw,
                near_copy=n,
                document_probability=c.document_probability,
            )
            for s, c, n in zip(similar, classified, near, strict=True)
        ]

    # -- asynchronous, micro-batched across concurrent callers -------------------------

    async def embed(self, texts: list[str]) -> np.ndarray:
        results = await self._batcher.submit_many([("embed", t, 0) for t in texts])
        return np.vstack([np.asarray(r) for r in results])

    async def score(self, texts: list[str], top_k: int = 0) -> list[TierScore]:
        k = top_k or self.settings.top_k
        results = await self._batcher.submit_many([("score", t, k) for t in texts])
        scores: list[TierScore] = []
        for result in results:
            assert isinstance(result, TierScore)
            scores.append(replace(result, neighbors=result.neighbors[:k]))
        return scores

    async def read_lines(self, texts: list[str]) -> list[LineReading]:
        """Each text's line that most reads as a request to an assistant unrelated to the
        rest of the text (`planted.py`); the lines are embedded through the micro-batcher.
        Raises LookupError when no planted-line head is loaded."""
        if self.planted is None:
            raise LookupError("the planted-line head is off (MITHRIL_EMBEDDING_PLANTED_LINES)")
        lines = [document_lines(text) for text in texts]  # [] for a text of one run
        every = [line.text for each in lines for line in each]
        vectors = await self.embed(every) if every else None
        readings, start = [], 0
        for each in lines:
            end = start + len(each)
            readings.append(
                self.planted.read(
                    vectors[start:end],
                    [line.whole for line in each],
                    [line.prose for line in each],
                )
                if each and vectors is not None
                else NO_READING
            )
            start = end
        return readings

    def _run(self, items: list[_Item]) -> list[np.ndarray | TierScore]:
        results: list[np.ndarray | TierScore | None] = [None] * len(items)
        embeds = [i for i, item in enumerate(items) if item[0] == "embed"]
        scores = [i for i, item in enumerate(items) if item[0] == "score"]
        if embeds:
            vectors = self.encoder.encode([items[i][1] for i in embeds])
            for row, i in enumerate(embeds):
                results[i] = vectors[row]
        missing = []
        for i in scores:
            _, text, top_k = items[i]
            recent = self._recent.get(cache_key("score", text))
            if recent is not None and recent[0] >= top_k:
                results[i] = recent[1]
            else:
                missing.append(i)
        if missing:
            top_k = max(items[i][2] for i in missing)
            texts = [items[i][1] for i in missing]
            for i, text, score in zip(missing, texts, self.score_sync(texts, top_k), strict=True):
                results[i] = score
                self._recent.put(cache_key("score", text), (top_k, score))
        return [r for r in results if r is not None]

    @property
    def batch_runs(self) -> int:
        return self._batcher.runs

    @property
    def largest_batch(self) -> int:
        return self._batcher.largest_run

    def info(self) -> dict[str, object]:
        return {
            "model": self.encoder.model_name,
            "dimensions": self.encoder.dimensions,
            "runtime": self.encoder.runtime,
            "corpus_size": len(self.index),
            "classifier_version": self.classifier.version,
            "multilingual_version": self.multilingual.version if self.multilingual else "",
            "planted_lines_version": self.planted.version if self.planted else "",
        }

    def close(self) -> None:
        self._batcher.close()


_SHARED: dict[str, EmbeddingTiers] = {}


def shared_tiers(settings: EmbeddingSettings | None = None) -> EmbeddingTiers:
    """One process-wide instance per settings (the model is loaded once)."""
    settings = settings or EmbeddingSettings()
    key = json.dumps(settings.model_dump(mode="json"), sort_keys=True)
    if key not in _SHARED:
        _SHARED[key] = EmbeddingTiers.load(settings)
    return _SHARED[key]


@functools.cache
def _blas() -> ThreadpoolController:
    return ThreadpoolController()


def one_blas_thread() -> Any:
    """NumPy's BLAS on the calling thread alone, for the tiers' products (a text's windows
    against the corpus, the classifier's layers). They are small: OpenBLAS split one text's
    product with the 7,863 corpus vectors across both cores, then waited for cores that ONNX
    Runtime and the other requests hold, and took 3.4 ms (p50, idle host) to 8 ms (loaded)
    against 0.3 ms on one thread. A context manager; about 10 µs."""
    return _blas().limit(limits=1, user_api="blas")


def load_classifier(settings: EmbeddingSettings) -> Classifier:
    """The classifier tier with the parts `settings` ask for."""
    classifier = Classifier.from_files(
        settings.classifier_file,
        settings.ngram_classifier_file if settings.ngram_features else None,
        settings.ngram_lines,
        settings.ngram_line_probability,
    )
    if settings.attack_encoder:
        classifier.tuned = AttackEncoder.load(
            settings.attack_encoder_file,
            threads=settings.threads,
            max_tokens=settings.max_tokens,
            stride=settings.window_stride,
            max_windows=settings.max_windows,
        )
    return classifier


def load_combiner(settings: EmbeddingSettings, classifier: Classifier) -> Combiner | None:
    """The combiner, if `settings` ask for it and every part it reads is loaded."""
    if not settings.combiner:
        return None
    if classifier.ngrams is None or classifier.tuned is None:
        log.warning(
            "the combiner reads the n-gram part and the attack encoder; with one of them off,"
            " each part flags on its own"
        )
        return None
    return Combiner.from_file(settings.combiner_file)


def tier_scores(
    texts: list[str], settings: EmbeddingSettings | None = None
) -> list[tuple[float, float]]:
    """(similarity, probability) per text, in-process: for the detection benchmark."""
    return [(s.similarity, s.probability) for s in shared_tiers(settings).score_sync(texts)]


def _check_trained_on(classifier: Classifier, encoder: Encoder) -> None:
    """Warn when the classifier was trained on other vectors than this encoder makes (a
    different ONNX Runtime can quantise the network differently): its calibration no longer
    holds, and services/embedding/training/train.py should be run again."""
    trained_on = classifier.meta.get("model_sha256")
    if trained_on and encoder.model_path and file_digest(encoder.model_path) != trained_on:
        log.warning(
            "the classifier (%s) was trained on another embedding network than %s:"
            " its scores are uncalibrated until it is retrained",
            classifier.version,
            encoder.model_path.name,
        )
