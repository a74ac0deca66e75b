"""all-MiniLM-L6-v2 sentence embeddings with ONNX Runtime, from files shipped in packages.

The network is derived on this machine from the model's own weights (`network.py`: fused
transformer operators, int8 arithmetic); the tokenizer is the model's own `tokenizer.json`
(WordPiece, lower-cased), bundled under `data/`. Nothing is downloaded. Embeddings are
mean-pooled over the attention mask and L2-normalised, as sentence-transformers does for
this model; against the fp32 model in sentence-transformers the cosine is 0.992 on average
(0.979 at worst) over 400 texts of the visible datasets, the price of int8 activations
(`mithril bench embedding` measures it again).

Texts longer than `max_tokens` (256, the model's trained limit) are truncated by
`encode`; `encode_windows` instead slides windows of `max_tokens` over the whole text,
which the scoring tiers use so an instruction at the end of a long document is seen.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort
from tokenizers import Encoding, Tokenizer

DATA_DIR = Path(__file__).resolve().parent / "data"
MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_ID = "all-MiniLM-L6-v2-onnx"
DIMENSIONS = 384
RUNTIME = "onnxruntime"


def model_file() -> Path:
    """The int8 ONNX network, derived from the shipped weights on first use."""
    from mithril.services.embedding.network import derived_model

    return derived_model()


@dataclass(frozen=True, slots=True)
class Windows:
    """Window embeddings of several texts: `vectors[i]` belongs to text `owner[i]` and
    covers its characters `spans[i]` (start, end)."""

    vectors: np.ndarray
    owner: np.ndarray
    spans: np.ndarray

    def max_per_text(self, values: np.ndarray, count: int) -> np.ndarray:
        """The largest of `values` (one per window) for each of `count` texts."""
        best = np.full(count, -np.inf, dtype=np.float64)
        np.maximum.at(best, self.owner, values)
        return best


def inference_session(model: Path, threads: int, spinning: bool) -> ort.InferenceSession:
    """An ONNX Runtime session on the CPU for one of the derived networks: `threads` inside
    a run (0: ONNX Runtime's choice), one between runs; `spinning`, see `Encoder.load`."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


class Encoder:
    """Turns texts into L2-normalised 384-dimensional vectors. Thread-safe."""

    model_name = MODEL_NAME
    dimensions = DIMENSIONS
    runtime = RUNTIME

    def __init__(
        self,
        session: ort.InferenceSession,
        tokenizer_file: Path,
        *,
        max_tokens: int = 256,
        stride: int = 32,
        batch_size: int = 1,
        model_path: Path | None = None,
    ) -> None:
        self._session = session
        self.model_path = model_path
        """The network's file, when the session was loaded from one."""
        self.model_id = model_path.stem if model_path else MODEL_ID
        """Names the network's exact file (its name hashes what it was derived from):
        vectors cached under one id are only reused by the same network."""
        self._truncating = Tokenizer.from_file(str(tokenizer_file))
        self._truncating.no_padding()
        self._truncating.enable_truncation(max_length=max_tokens)
        self._windowing = Tokenizer.from_file(str(tokenizer_file))
        self._windowing.no_padding()
        self._windowing.enable_truncation(max_length=max_tokens, stride=stride)
        self._inputs = {i.name for i in session.get_inputs()}
        self.batch_size = batch_size
        """Pieces per model run. Keep 1: int8 activations are quantised per run, so a
        piece's vector would otherwise depend on its batch mates (cosine 0.974 at worst)."""
        self._lock = threading.Lock()  # tokenizers' truncation state is per object
        self.max_tokens = max_tokens

    @classmethod
    def load(
        cls,
        *,
        threads: int = 0,
        max_tokens: int = 256,
        stride: int = 32,
        batch_size: int = 1,
        model: Path | None = None,
        tokenizer_file: Path | None = None,
        spinning: bool = True,
    ) -> Encoder:
        """`spinning`: ONNX Runtime's threads wait for the next run busily, a little faster
        for one network alone (about 7 % here); the service turns it off (`tiers.py`),
        since the attack encoder's network and e5 run right after this one, and each one's
        threads would spin while the next computes (base then attack encoder per text:
        31-36 ms mean with spinning, 20-21 ms without, 300 texts of the datasets)."""
        model = model or model_file()
        return cls(
            inference_session(model, threads, spinning),
            tokenizer_file or DATA_DIR / "tokenizer.json",
            max_tokens=max_tokens,
            stride=stride,
            batch_size=batch_size,
            model_path=model,
        )

    def encode(self, texts: list[str]) -> np.ndarray:
        """One vector per text (float32, shape (len(texts), 384)), truncated at max_tokens."""
        with self._lock:
            encodings = self._truncating.encode_batch(list(texts))
        return self._run([(e.ids, e.attention_mask) for e in encodings])

    def count_tokens(self, texts: list[str]) -> int:
        """Tokens the model sees for `texts` (truncated, special tokens included)."""
        with self._lock:
            return sum(len(e.ids) for e in self._truncating.encode_batch(list(texts)))

    def encode_windows(self, texts: list[str], max_windows: int = 8) -> Windows:
        """Vectors of every window of every text (at most `max_windows` per text)."""
        with self._lock:
            encodings = self._windowing.encode_batch(list(texts))
        pieces: list[tuple[list[int], list[int]]] = []
        owner: list[int] = []
        spans: list[tuple[int, int]] = []
        for index, encoding in enumerate(encodings):
            for window in _spread([encoding, *encoding.overflowing], max_windows):
                pieces.append((window.ids, window.attention_mask))
                owner.append(index)
                spans.append(_span(window))
        return Windows(
            self._run(pieces),
            np.asarray(owner, dtype=np.int64),
            np.asarray(spans, dtype=np.int64).reshape(-1, 2),
        )

    def _run(self, pieces: list[tuple[list[int], list[int]]]) -> np.ndarray:
        out = np.zeros((len(pieces), DIMENSIONS), dtype=np.float32)
        for chunk in _chunks([len(ids) for ids, _ in pieces], self.batch_size):
            width = len(pieces[chunk[-1]][0])
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                token_ids, attention = pieces[i]
                ids[row, : len(token_ids)] = token_ids
                mask[row, : len(attention)] = attention
            feed = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feed["token_type_ids"] = np.zeros_like(ids)
            hidden = self._session.run(None, feed)[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            norms = np.linalg.norm(pooled, axis=1, keepdims=True)
            out[chunk] = pooled / np.clip(norms, 1e-12, None)
        return out


PADDING_SLACK = 1.25
"""A chunk's width (its longest piece) stays within this factor of its shortest piece's
length (plus `PADDING_GRACE` tokens): the model computes every padded position, so one long
text in a chunk of short ones would multiply the chunk's cost."""
PADDING_GRACE = 8


def _chunks(lengths: list[int], batch_size: int) -> list[list[int]]:
    """Indices grouped into model calls: by ascending length, at most `batch_size` each, a
    new chunk wherever the next piece would pad the chunk beyond `PADDING_SLACK`."""
    chunks: list[list[int]] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        current = chunks[-1] if chunks else None
        if (
            current is None
            or len(current) >= batch_size
            or lengths[index] > lengths[current[0]] * PADDING_SLACK + PADDING_GRACE
        ):
            chunks.append([index])
        else:
            current.append(index)
    return chunks


def _spread(windows: list[Encoding], limit: int) -> list[Encoding]:
    """At most `limit` windows, evenly spaced, always keeping the first and the last."""
    if len(windows) <= limit:
        return windows
    if limit == 1:
        return windows[:1]
    picks = np.linspace(0, len(windows) - 1, limit).round().astype(int)
    return [windows[i] for i in sorted(set(picks.tolist()))]


def _span(window: Encoding) -> tuple[int, int]:
    offsets = [
        offset
        for offset, special in zip(window.offsets, window.special_tokens_mask, strict=True)
        if not special
    ]
    if not offsets:
        return (0, 0)
    return (offsets[0][0], offsets[-1][1])
