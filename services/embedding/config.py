"""Settings of the embedding service (env prefix MITHRIL_EMBEDDING_)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from mithril.runtime.settings import ServiceSettings, mithril_home

DEFAULT_PORT = 50053
DATA_DIR = Path(__file__).resolve().parent / "data"
BUNDLED_CORPUS = DATA_DIR / "attack_corpus.jsonl"
BUNDLED_CLASSIFIER = DATA_DIR / "classifier.npz"
BUNDLED_NGRAM_CLASSIFIER = DATA_DIR / "ngram_classifier.npz"
BUNDLED_SIMILARITY_CALIBRATION = DATA_DIR / "similarity_calibration.json"
BUNDLED_MULTILINGUAL = DATA_DIR / "multilingual.npz"
BUNDLED_ATTACK_ENCODER = DATA_DIR / "attack_encoder.npz"
BUNDLED_COMBINER = DATA_DIR / "combiner.json"
BUNDLED_PLANTED_LINES = DATA_DIR / "planted_lines.npz"
NGRAM_LINE_PROBABILITY = 0.95
"""The lowest of `training/lines.py`'s candidates at which no clean DEV context's line
flags (its report: data/line_threshold_report.md)."""


def _default_cache_dir() -> Path:
    return mithril_home() / "cache" / "embedding"


class EmbeddingSettings(ServiceSettings):
    """The embedding service's settings; every field can be set as MITHRIL_EMBEDDING_<FIELD>."""

    model_config = SettingsConfigDict(env_prefix="MITHRIL_EMBEDDING_", extra="ignore")

    port: int = Field(DEFAULT_PORT, ge=0, le=65535, description="gRPC port; 0 picks a free one.")
    threads: int = Field(
        0,
        ge=0,
        description="ONNX Runtime intra-op threads; 0 lets ONNX Runtime use every core.",
    )
    max_tokens: int = Field(
        256,
        ge=8,
        le=512,
        description="Tokens per window (the model's limit is 256 as trained; Embed truncates"
        " there, the scoring tiers slide windows of this size over longer texts).",
    )
    window_stride: int = Field(
        32, ge=0, le=128, description="Tokens shared by consecutive scoring windows."
    )
    max_windows: int = Field(
        8,
        ge=1,
        description="Most windows scored per text; longer texts are scored on this many"
        " windows spread evenly from the first to the last.",
    )
    encode_batch_size: int = Field(
        1,
        ge=1,
        description="Most windows sent to the model in one run. Keep 1: the int8 network"
        " quantises its activations per run, so above 1 a text's vector (and score) would"
        " depend on the texts it happened to share a run with; batches of 16 were no"
        " faster here.",
    )
    micro_batch_items: int = Field(
        64,
        ge=1,
        description="Most texts coalesced from concurrent requests into one encoder run.",
    )
    micro_batch_wait_ms: float = Field(
        0.0,
        ge=0,
        description="How long a request arriving at an idle encoder waits for others to"
        " share its run (bounded; 0 = go at once). Requests arriving while the encoder is"
        " busy are coalesced into the next run regardless.",
    )
    corpus_files: list[Path] = Field(
        default_factory=lambda: [BUNDLED_CORPUS],
        description="Attack corpus files (JSON lines: text, category, source, optional id),"
        " as a JSON list. Add your own next to the bundled one:"
        ' MITHRIL_EMBEDDING_CORPUS_FILES=\'["<bundled>", "/etc/mithril/attacks.jsonl"]\'.',
    )
    top_k: int = Field(5, ge=1, le=100, description="Neighbours returned when a request asks 0.")
    recent_scores: int = Field(
        1024,
        ge=0,
        description="Texts whose scores are kept for a minute (by digest), so that"
        " ScoreSimilarity and Classify about the same text run the models once; 0 = off.",
    )
    cache_dir: Path = Field(
        default_factory=_default_cache_dir,
        description="Where the corpus index (.npy) is cached, keyed by corpus hash and model;"
        " default MITHRIL_HOME/cache/embedding.",
    )
    classifier_file: Path = Field(
        BUNDLED_CLASSIFIER,
        description="Classifier weights (.npz) written by services/embedding/training.",
    )
    ngram_features: bool = Field(
        True,
        description="Score character n-grams beside the network (the classifier flags what"
        " either flags); off, the network decides alone, at its own operating point.",
    )
    ngram_lines: bool = Field(
        True,
        description="The n-gram part also reads each run of whole lines of a text of several"
        " (an instruction planted on one line of a document); about 0.1 ms per line.",
    )
    ngram_line_probability: float = Field(
        NGRAM_LINE_PROBABILITY,
        ge=0.5,
        lt=1.0,
        description="The n-gram part's probability a line read alone must reach to count as"
        " its reading of the text (0.5: the same as a window). Chosen on the clean DEV"
        " contexts by services/embedding/training/lines.py.",
    )
    ngram_classifier_file: Path = Field(
        BUNDLED_NGRAM_CLASSIFIER,
        description="The n-gram model (.npz) written by services/embedding/training.",
    )
    attack_encoder: bool = Field(
        True,
        description="The classifier also reads each text with the attack encoder (the"
        " embedding model fine-tuned to tell attacks from requests: a second pass of the"
        " network over each window, about as long as the first), and keeps the highest of"
        " its parts' probabilities.",
    )
    attack_encoder_file: Path = Field(
        BUNDLED_ATTACK_ENCODER,
        description="The attack encoder's adapter (.npz) written by"
        " services/embedding/training/attack_encoder.py.",
    )
    combiner: bool = Field(
        True,
        description="Read the learned parts' raw scores together (combiner.py: one logistic"
        " regression over similarity, network, n-grams and attack encoder), similarity"
        " flagging alone only near-copies of a corpus entry; off, each part flags on its"
        " own and the highest probability stands. Needs every part loaded.",
    )
    combiner_file: Path = Field(
        BUNDLED_COMBINER,
        description="The combiner's weights (JSON) written by"
        " services/embedding/training/combiner.py.",
    )
    planted_lines: bool = Field(
        True,
        description="Answer ReadLines: each line of a retrieved document read for a request"
        " to an assistant unrelated to the rest of the document (planted.py); one encoder"
        " run per run of lines, at most 32 per document, for the texts the gateway asks"
        " about (retrieved and tool content) only.",
    )
    planted_lines_file: Path = Field(
        BUNDLED_PLANTED_LINES,
        description="The planted-line head's weights (.npz) written by"
        " services/embedding/training/planted_lines.py; its threshold and relatedness weight are"
        " in the .meta.json"
        " beside it.",
    )
    similarity_calibration_file: Path = Field(
        BUNDLED_SIMILARITY_CALIBRATION,
        description="Calibration of the similarity score (JSON) written by the training script.",
    )
    multilingual: bool = Field(
        True,
        description="Score texts identified as another language than English with the"
        " multilingual model (multilingual-e5-small, fine-tuned) instead of the English one;"
        " a few ms per 128-token window read, for those texts only.",
    )
    multilingual_passages: bool = Field(
        True,
        description="Also search English texts for passages in another language (a German"
        " instruction in an English email) and score those with the multilingual model;"
        " about 1 ms per document to search.",
    )
    multilingual_second_opinion: bool = Field(
        True,
        description="Ask the multilingual model for a second opinion on a short English"
        " text the English classifier is unsure of (0-7 % of prompts; one e5 window"
        " each), and keep the higher probability.",
    )
    multilingual_file: Path = Field(
        BUNDLED_MULTILINGUAL,
        description="The multilingual head (.npz: its weights, calibration and the adapter e5"
        " was fine-tuned with) written by services/embedding/training/multilingual.py.",
    )
    multilingual_windows: int = Field(
        2,
        ge=1,
        le=8,
        description="Most 128-token windows the multilingual model reads per text (the"
        " start, the end, then evenly between).",
    )
