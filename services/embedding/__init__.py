"""Sentence embeddings (all-MiniLM-L6-v2, int8 ONNX) and the two embedding tiers:
nearest-neighbour similarity to the attack corpus, and a learned classifier.

Public API: `EmbeddingTiers`, `TierScore`, `EmbeddingSettings`, `Encoder`,
`embeddings_response`, `tier_scores`.
"""

from .config import EmbeddingSettings
from .encoder import Encoder
from .openai_compat import embeddings_response, parse_input
from .tiers import EmbeddingTiers, TierScore, shared_tiers, tier_scores

__all__ = [
    "EmbeddingSettings",
    "EmbeddingTiers",
    "Encoder",
    "TierScore",
    "embeddings_response",
    "parse_input",
    "shared_tiers",
    "tier_scores",
]
