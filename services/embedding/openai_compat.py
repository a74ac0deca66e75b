"""The OpenAI-compatible face of the embedding service: `POST /v1/embeddings` bodies.

The gateway serves this for a configured local model name:

    texts = parse_input(body["input"])                      # ValueError -> HTTP 400
    vectors = await tiers.embed(texts)                      # or the Embed RPC's values
    return embeddings_response(name, texts, vectors,
                               encoding_format=body.get("encoding_format", "float"),
                               prompt_tokens=tiers.encoder.count_tokens(texts))

The OpenAI Python SDK asks for `encoding_format="base64"` unless told otherwise (it
decodes little-endian float32 itself), so both formats are supported. Texts longer than
256 tokens are truncated, as the model was trained.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

ENCODING_FORMATS = ("float", "base64")


def parse_input(value: object) -> list[str]:
    """OpenAI's `input` (a string or a list of strings) as texts; token arrays are refused."""
    if isinstance(value, str):
        texts = [value]
    elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
        texts = list(value)
    elif isinstance(value, list) and value:
        raise ValueError("`input` as token ids is not supported; send strings")
    else:
        raise ValueError("`input` must be a non-empty string or list of strings")
    if any(not text.strip() for text in texts):
        raise ValueError("`input` must not contain empty strings")
    return texts


def embeddings_response(
    model_name: str,
    texts: Sequence[str],
    vectors: np.ndarray | Sequence[Sequence[float]] | None = None,
    *,
    encoding_format: str = "float",
    prompt_tokens: int | None = None,
    embed: Callable[[list[str]], np.ndarray] | None = None,
) -> dict[str, Any]:
    """An OpenAI `CreateEmbeddingResponse` for `texts`.

    `vectors` are the texts' embeddings (from `EmbeddingTiers.embed` or the Embed RPC);
    without them `embed` (default: the process-wide shared encoder) computes them.
    `prompt_tokens` defaults to the model tokenizer's count (special tokens included).
    """
    if encoding_format not in ENCODING_FORMATS:
        raise ValueError(f"`encoding_format` must be one of {ENCODING_FORMATS}")
    texts = list(texts)
    if vectors is None or prompt_tokens is None:
        from mithril.services.embedding.tiers import shared_tiers

        tiers = shared_tiers()
        if vectors is None:
            vectors = (embed or tiers.embed_sync)(texts)
        if prompt_tokens is None:
            prompt_tokens = tiers.encoder.count_tokens(texts)
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.shape[0] != len(texts):
        raise ValueError(f"{matrix.shape[0]} vectors for {len(texts)} texts")
    data = []
    for index, row in enumerate(matrix):
        embedding: list[float] | str
        if encoding_format == "base64":
            embedding = base64.b64encode(row.astype("<f4").tobytes()).decode("ascii")
        else:
            embedding = [float(v) for v in row]
        data.append({"object": "embedding", "index": index, "embedding": embedding})
    return {
        "object": "list",
        "data": data,
        "model": model_name,
        "usage": {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens},
    }
