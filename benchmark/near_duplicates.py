"""How much of a held-out row DEV already holds.

A split by text hash keeps a text out of DEV, not its near copies: the jailbreak artifacts
attack the same behaviours with the same templates, and neuralchemy repeats templates with
a word changed. Everything learned here was fitted on DEV rows, so a held-out row with a
near copy in DEV measures recall of that copy as much as detection.

Nearness is the Jaccard similarity of two texts' character 5-grams (whitespace collapsed,
case folded), the measure dataset deduplication uses for short texts. Candidates come from
MinHash LSH (datasketch) and are then compared exactly, so a reported similarity is never
an estimate; a text whose every DEV neighbour is below `NEAR` reads as 0.0. The LSH looks
for candidates from `SEARCH` up, well below `NEAR`: built at `NEAR` itself, it would find a
pair at 0.5 only 55 % of the time (25 bands of 5 rows); built at 0.3 (37 bands of 3), 99 %.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from datasketch import MinHash, MinHashLSH

SHINGLE_CHARS = 5
NEAR = 0.5
"""A held-out row sharing at least half its 5-grams with a DEV row is near it."""
CLOSE = 0.8
"""...and at least 80 %: a copy with a few words changed."""
PERMUTATIONS = 128
SEARCH = 0.3
"""The LSH's own threshold: candidates are looked for from here, then compared exactly."""


def shingles(text: str) -> frozenset[str]:
    """The text's character 5-grams, whitespace collapsed and case folded (a text shorter
    than one 5-gram is its own single shingle)."""
    folded = " ".join(text.split()).casefold()
    if len(folded) <= SHINGLE_CHARS:
        return frozenset((folded,))
    return frozenset(folded[i : i + SHINGLE_CHARS] for i in range(len(folded) - SHINGLE_CHARS + 1))


def _signatures(sets: Sequence[frozenset[str]]) -> list[MinHash]:
    return list(
        MinHash.bulk(
            [[s.encode("utf-8") for s in shingle_set] for shingle_set in sets],
            num_perm=PERMUTATIONS,
        )
    )


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


class DevIndex:
    """The DEV texts, to ask how near a held-out text comes to any of them."""

    def __init__(self, texts: Iterable[str], threshold: float = NEAR) -> None:
        self.threshold = threshold
        self._sets = [shingles(text) for text in dict.fromkeys(texts)]
        self._lsh = MinHashLSH(threshold=min(threshold, SEARCH), num_perm=PERMUTATIONS)
        with self._lsh.insertion_session() as session:
            for key, signature in enumerate(_signatures(self._sets)):
                session.insert(key, signature)

    def __len__(self) -> int:
        return len(self._sets)

    def similarities(self, texts: Sequence[str]) -> list[float]:
        """Each text's highest Jaccard similarity to a DEV text, or 0.0 when none reaches
        the index's threshold."""
        sets = [shingles(text) for text in texts]
        highest = []
        for shingle_set, signature in zip(sets, _signatures(sets), strict=True):
            scores = (jaccard(shingle_set, self._sets[key]) for key in self._lsh.query(signature))
            best = max(scores, default=0.0)
            highest.append(best if best >= self.threshold else 0.0)
        return highest
