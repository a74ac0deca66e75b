"""Step 3, contradiction and corroboration against verified memory.

Context is the verified chunks most similar to the claim (Cognee's verified node set
only). The judge scores contradiction when it answers; otherwise the offline scorer
(contradiction.py) does. Alignment (corroboration) always comes from the offline scorer,
and a claim the judge finds contradictory corroborates nothing."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol

from mithril.services.memorygate.contradiction import Context, score_contradiction
from mithril.services.memorygate.steps.second_opinion import SecondOpinion


class VerifiedChunk(Protocol):
    text: str
    score: float


class VerifiedSearch(Protocol):
    async def search_verified(self, query: str, top_k: int) -> list[VerifiedChunk]: ...


@dataclass(frozen=True, slots=True)
class MemoryCheck:
    contradiction: float
    aligned_chunks: int
    contexts: int
    scorer: str
    """"judge" or "offline": who scored the contradiction."""
    reasons: tuple[str, ...]


class ConsistencyCheck:
    def __init__(
        self,
        store: VerifiedSearch,
        judge: SecondOpinion,
        *,
        top_k: int,
        min_similarity: float,
        flag_at: float,
    ) -> None:
        self._store = store
        self._judge = judge
        self._top_k = top_k
        self._min_similarity = min_similarity
        self._flag_at = flag_at

    async def contexts(self, claim: str) -> list[Context]:
        chunks = await self._store.search_verified(claim, self._top_k)
        return [
            Context(chunk.text, chunk.score)
            for chunk in chunks
            if chunk.score >= self._min_similarity
        ]

    async def check(
        self, claim: str, contexts: list[Context], *, ask_judge: bool = True
    ) -> MemoryCheck:
        if not contexts:
            return MemoryCheck(0.0, 0, 0, "offline", ("no verified memory on this subject",))
        # Typically ~5 ms, but up to ~1 s on adversarial, value-dense contexts: off the loop.
        offline = await asyncio.to_thread(score_contradiction, claim, contexts)
        opinion = (
            await self._judge.contradiction(claim, [c.text for c in contexts])
            if ask_judge
            else None
        )
        reasons = [r for j in offline.judgements for r in j.reasons]
        if opinion is None:
            contradiction, scorer = offline.contradiction, "offline"
        else:
            contradiction, scorer = opinion.score, "judge"
            reasons.append(f"judge contradiction {opinion.score:.2f}")
        aligned = 0 if contradiction > self._flag_at else offline.aligned_count
        return MemoryCheck(
            contradiction=contradiction,
            aligned_chunks=aligned,
            contexts=len(contexts),
            scorer=scorer,
            reasons=tuple(dict.fromkeys(reasons)),
        )
