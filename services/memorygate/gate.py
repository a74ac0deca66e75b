"""The memory gate: Remember, Recall, review of held claims, audit and Improve.

Remember runs the steps in order: the credential guard first (nothing else ever sees the
raw claim), the source's reputation, then the memory check and the danger check
concurrently, the trust score and the gate. Accepted and warned claims go to verified
memory through the ledger's two-phase write; the rest are held. The source's reputation is
updated from the outcome last, once the decision is durable.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Protocol, TypeVar

import grpc

from mithril.services.memorygate import ledger as ledger_module
from mithril.services.memorygate.decision import MemoryDecision
from mithril.services.memorygate.errors import (
    DependencyUnavailable,
    HeldClaimNotFound,
    MemoryWriteFailed,
    ReviewConflict,
)
from mithril.services.memorygate.ledger import (
    APPROVE,
    DECISION,
    REJECT,
    REVIEW,
    AlreadyReviewed,
    AuditEntry,
    HeldClaim,
    Ledger,
    Page,
    new_id,
    now,
)
from mithril.services.memorygate.steps.content_danger import ContentDanger
from mithril.services.memorygate.steps.credentials import CredentialGuard, GuardResult
from mithril.services.memorygate.steps.memory_check import ConsistencyCheck
from mithril.services.memorygate.steps.reputation import Outcome, ReputationBook, outcome_of
from mithril.services.memorygate.trust import Signals, Status, TrustModel

_log = logging.getLogger(__name__)
T = TypeVar("T")


class VerifiedStore(Protocol):
    """Verified memory (Cognee): only accepted claims are ever written to it."""

    async def add_verified(self, text: str, *, source: str, low_confidence: bool) -> None: ...

    async def search_verified(self, query: str, top_k: int) -> list[Any]: ...

    async def improve(self) -> str: ...


@dataclass(frozen=True, slots=True)
class PendingDecision:
    """A verdict not yet durable, and what the source earns once it is."""

    decision: MemoryDecision
    outcome: Outcome
    outcome_reason: str


@dataclass(frozen=True, slots=True)
class Memory:
    text: str
    source: str
    score: float
    low_confidence: bool


async def _required(service: str, call: Awaitable[T]) -> T:
    """Await a call to a service the gate cannot decide without."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise DependencyUnavailable(service, error.code().name) from error


class MemoryGate:
    def __init__(
        self,
        *,
        guard: CredentialGuard,
        reputation: ReputationBook,
        consistency: ConsistencyCheck,
        danger: ContentDanger,
        store: VerifiedStore,
        ledger: Ledger,
        model: TrustModel,
        contradiction_flag: float,
        clock: Callable[[], datetime] = now,
    ) -> None:
        self.guard = guard
        self.reputation = reputation
        self.consistency = consistency
        self.danger = danger
        self.store = store
        self.ledger = ledger
        self.model = model
        self.contradiction_flag = contradiction_flag
        self.clock = clock

    # -- startup ---------------------------------------------------------------------

    async def finish_pending_writes(self, grace_seconds: float = 0.0) -> int:
        """Complete the verified-memory writes a crash interrupted; returns how many.
        A write is taken to be interrupted once it has been pending for `grace_seconds`:
        younger ones may still be in flight (here, or in a replica sharing the ledger)."""
        begun_before = self.clock() - timedelta(seconds=grace_seconds)
        pending = await asyncio.to_thread(self.ledger.pending_writes, begun_before)
        finished = 0
        for write in pending:
            try:
                await self.store.add_verified(
                    write.text, source=write.source, low_confidence=write.low_confidence
                )
            except Exception:
                _log.exception("could not finish a pending memory write; it stays pending")
                continue
            await asyncio.to_thread(self.ledger.commit_write, write.write_id)
            finished += 1
        if pending:
            _log.info("finished %d of %d pending memory writes", finished, len(pending))
        return finished

    # -- Remember --------------------------------------------------------------------

    async def remember(
        self,
        claim: str,
        source: str,
        metadata: Mapping[str, str] | None = None,
        observed: datetime | None = None,
    ) -> MemoryDecision:
        """Decide, then make the decision durable (verified memory or the quarantine),
        then let the source's reputation learn from it."""
        pending = await self.decide(claim, source, metadata, observed)
        return await self.commit(pending)

    async def decide(
        self,
        claim: str,
        source: str,
        metadata: Mapping[str, str] | None = None,
        observed: datetime | None = None,
    ) -> PendingDecision:
        """Every step up to the gate's verdict; nothing is written yet."""
        # Metadata is stored with the decision, so it goes through the guard too.
        filled = {key: value for key, value in (metadata or {}).items() if value}
        guarded, *guarded_values = await _required(
            "secrets", self.guard.check_all([claim, *filled.values()])
        )
        clean_metadata = {**(metadata or {})}
        clean_metadata.update(
            {key: result.text for key, result in zip(filled, guarded_values, strict=True)}
        )
        reputation = await _required("reputation", self.reputation.score(source))
        contexts = await self.consistency.contexts(guarded.text)
        memory, danger = await asyncio.gather(
            self.consistency.check(guarded.text, contexts),
            _required("scanner", self.danger.scan(guarded.text, raw=claim)),
        )
        moment = self.clock()
        signals = Signals(
            reputation=reputation,
            corroboration=self.model.corroboration(memory.aligned_chunks),
            freshness=self.model.freshness(observed or moment, moment),
            contradiction=memory.contradiction,
            danger=danger.danger,
        )
        trust_score = self.model.score(signals)
        status = self.status_for(trust_score, planted_credential=guarded.planted_credential)
        contradicted = memory.contradiction > self.contradiction_flag
        outcome, outcome_reason = outcome_of(
            status, planted_credential=guarded.planted_credential, contradicted=contradicted
        )
        decision = MemoryDecision(
            decision_id=new_id(),
            status=status,
            trust_score=trust_score,
            signals=signals,
            weights=self.model.weights,
            source=source,
            claim=guarded.text,
            redacted_kinds=guarded.redacted_kinds,
            findings=(*guarded.findings, *danger.findings),
            reasons=_reasons(guarded, memory.reasons, danger.reasons, contradicted),
            metadata=clean_metadata,
            evidence={
                "contradiction_scorer": memory.scorer,
                "contexts": memory.contexts,
                "aligned_chunks": memory.aligned_chunks,
                "danger_scanner": round(danger.scanner_score, 6),
                "danger_rules": round(danger.rules_score, 6),
                "danger_judge": danger.judge_score,
                "danger_rule_ids": list(danger.rule_ids),
                "contradicted": contradicted,
                "attempted_exfiltration": guarded.planted_credential,
                "reputation_outcome": f"{outcome.value}: {outcome_reason}",
            },
        )
        return PendingDecision(decision, outcome, outcome_reason)

    def status_for(self, trust_score: float, *, planted_credential: bool) -> Status:
        """The gate's thresholds, except that a claim that carried a credential is never
        stored automatically: whoever writes one into shared memory is exfiltrating it,
        however trusted, so a person looks before the redacted claim is stored."""
        status = self.model.gate(trust_score)
        if planted_credential and status.stored:
            return Status.QUARANTINE
        return status

    async def commit(self, pending: PendingDecision) -> MemoryDecision:
        decision = pending.decision
        if decision.status.stored:
            decision = await self._store(decision)
        else:
            decision = await self._hold(decision)
        await self._record_outcome(
            decision.source, pending.outcome, pending.outcome_reason, decision.decision_id
        )
        return decision

    async def _store(self, decision: MemoryDecision) -> MemoryDecision:
        decision = replace(decision, stored=True)
        entry = _audit_entry(decision, self.clock())
        await asyncio.to_thread(
            self.ledger.begin_write,
            entry,
            decision.claim,
            low_confidence=decision.status is Status.WARN,
        )
        try:
            await self.store.add_verified(
                decision.claim,
                source=decision.source,
                low_confidence=decision.status is Status.WARN,
            )
        except Exception as error:
            reason = type(error).__name__
            await asyncio.to_thread(self.ledger.fail_write, entry.id, reason)
            raise MemoryWriteFailed(f"verified memory refused the write ({reason})") from error
        await asyncio.to_thread(self.ledger.commit_write, entry.id)
        return decision

    async def _hold(self, decision: MemoryDecision) -> MemoryDecision:
        decision = replace(decision, stored=False, quarantine_id=new_id())
        moment = self.clock()
        held = HeldClaim(
            id=decision.quarantine_id,
            decision_id=decision.decision_id,
            claim=decision.claim,
            source=decision.source,
            status=decision.status.value,
            provenance=decision.provenance(),
            create_time=moment,
        )
        await asyncio.to_thread(self.ledger.hold, _audit_entry(decision, moment), held)
        return decision

    async def _record_outcome(
        self, source: str, outcome: Outcome, reason: str, decision_id: str
    ) -> None:
        """The decision is durable already: a reputation service that misses one update
        is logged, not turned into a failed Remember."""
        try:
            await self.reputation.record(source, outcome, reason, decision_id)
        except Exception:
            _log.exception("reputation update lost for decision %s", decision_id)

    # -- Recall ----------------------------------------------------------------------

    async def recall(self, query: str, top_k: int) -> list[Memory]:
        guarded_query = await _required("secrets", self.guard.check(query))
        chunks = await self.store.search_verified(guarded_query.text, top_k)
        scrubbed = await _required("secrets", self.guard.check_all([c.text for c in chunks]))
        records = await asyncio.to_thread(
            self.ledger.verified_records, [chunk.text for chunk in chunks]
        )
        memories = []
        for chunk, clean in zip(chunks, scrubbed, strict=True):
            record = records.get(ledger_module.text_digest(chunk.text))
            memories.append(
                Memory(
                    text=clean.text,
                    source=record.source if record else "",
                    score=float(chunk.score),
                    low_confidence=record.low_confidence if record else False,
                )
            )
        return memories

    # -- held claims -----------------------------------------------------------------

    async def list_held(
        self, *, status: str | None, include_reviewed: bool, limit: int, before: int | None
    ) -> Page:
        return await asyncio.to_thread(
            lambda: self.ledger.list_held(
                status=status, include_reviewed=include_reviewed, limit=limit, before=before
            )
        )

    async def get_held(self, held_id: str) -> HeldClaim:
        held = await asyncio.to_thread(self.ledger.get_held, held_id)
        if held is None:
            raise HeldClaimNotFound(held_id)
        return held

    async def review(self, held_id: str, verdict: str, reviewer: str, note: str) -> HeldClaim:
        """Approve moves the claim into verified memory (two-phase, like Remember); reject
        discards it. Either way the source earns the reviewer's verdict."""
        if verdict == APPROVE:
            held = await self._approve(held_id, reviewer, note)
            outcome = Outcome.GOOD
        else:
            held = await self._reject(held_id, reviewer, note)
            outcome = Outcome.BAD
        await self._record_outcome(held.source, outcome, f"review {verdict}", held.decision_id)
        return held

    async def _approve(self, held_id: str, reviewer: str, note: str) -> HeldClaim:
        try:
            held = await asyncio.to_thread(self.ledger.claim_for_approval, held_id)
        except KeyError:
            raise HeldClaimNotFound(held_id) from None
        except AlreadyReviewed:
            raise ReviewConflict(held_id) from None
        entry = _review_entry(held, APPROVE, reviewer, note, self.clock())
        await asyncio.to_thread(self.ledger.begin_write, entry, held.claim, low_confidence=False)
        try:
            await self.store.add_verified(held.claim, source=held.source, low_confidence=False)
        except Exception as error:
            reason = type(error).__name__
            await asyncio.to_thread(self.ledger.fail_write, entry.id, reason)
            raise MemoryWriteFailed(f"verified memory refused the write ({reason})") from error
        await asyncio.to_thread(self.ledger.commit_write, entry.id)
        return await self.get_held(held_id)

    async def _reject(self, held_id: str, reviewer: str, note: str) -> HeldClaim:
        held = await self.get_held(held_id)
        entry = _review_entry(held, REJECT, reviewer, note, self.clock())
        try:
            return await asyncio.to_thread(
                lambda: self.ledger.finish_review(held_id, REJECT, entry)
            )
        except KeyError:
            raise HeldClaimNotFound(held_id) from None
        except AlreadyReviewed:
            raise ReviewConflict(held_id) from None

    # -- audit and maintenance ---------------------------------------------------------

    async def audit(self, *, source: str | None, limit: int, before: int | None) -> Page:
        return await asyncio.to_thread(
            lambda: self.ledger.list_audit(source=source, limit=limit, before=before)
        )

    async def improve(self) -> str:
        return await self.store.improve()


def _reasons(
    guarded: GuardResult,
    memory_reasons: tuple[str, ...],
    danger_reasons: tuple[str, ...],
    contradicted: bool,
) -> tuple[str, ...]:
    reasons: list[str] = []
    if guarded.planted_credential:
        reasons.append(
            f"credential planted ({', '.join(guarded.redacted_kinds)}): attempted exfiltration"
        )
    elif guarded.findings:
        reasons.append(f"redacted: {', '.join(guarded.redacted_kinds)}")
    if contradicted:
        reasons.append("contradicts verified memory")
    reasons.extend(memory_reasons)
    reasons.extend(danger_reasons)
    return tuple(dict.fromkeys(reasons))


def _audit_entry(decision: MemoryDecision, moment: datetime) -> AuditEntry:
    return AuditEntry(
        id=new_id(),
        event_type=DECISION,
        decision_id=decision.decision_id,
        source=decision.source,
        status=decision.status.value,
        state="",
        provenance=decision.provenance(),
        create_time=moment,
    )


def _review_entry(
    held: HeldClaim, verdict: str, reviewer: str, note: str, moment: datetime
) -> AuditEntry:
    provenance = dict(held.provenance)
    provenance["review"] = {"verdict": verdict, "reviewer": reviewer, "note": note}
    return AuditEntry(
        id=new_id(),
        event_type=REVIEW,
        decision_id=held.decision_id,
        source=held.source,
        status=verdict,
        state="",
        provenance=provenance,
        create_time=moment,
        reviewer=reviewer,
        note=note,
    )
