"""The gate's ledger on SQLite and PostgreSQL: the two-phase write to verified memory,
held claims, reviews that cannot happen twice, and paging."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from mithril.services.memorygate.ledger import (
    APPROVE,
    DECISION,
    REJECT,
    REVIEW,
    AlreadyReviewed,
    AuditEntry,
    HeldClaim,
    Ledger,
    new_id,
)

T0 = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture
def ledger(event_store_url: str) -> Iterator[Ledger]:
    ledger = Ledger(event_store_url)
    yield ledger
    ledger.close()


def entry(decision_id: str, source: str = "slack", status: str = "accept", **kw) -> AuditEntry:  # type: ignore[no-untyped-def]
    return AuditEntry(
        id=new_id(),
        event_type=kw.pop("event_type", DECISION),
        decision_id=decision_id,
        source=source,
        status=status,
        state="",
        provenance={"status": status, "claim": kw.pop("claim", "x")},
        create_time=kw.pop("at", T0),
        **kw,
    )


def hold(
    ledger: Ledger, claim: str = "held claim", status: str = "review", at: datetime = T0
) -> HeldClaim:
    decision_id = new_id()
    held = HeldClaim(
        id=new_id(),
        decision_id=decision_id,
        claim=claim,
        source="agent-7",
        status=status,
        provenance={"status": status},
        create_time=at,
    )
    ledger.hold(entry(decision_id, "agent-7", status), held)
    return held


def test_a_write_is_invisible_until_committed(ledger: Ledger) -> None:
    audit = entry("d1")
    ledger.begin_write(audit, "The VPN is vpn2.example.com", low_confidence=True)
    assert ledger.verified_records(["The VPN is vpn2.example.com"]) == {}
    assert [a.state for a in ledger.list_audit(source=None, limit=10, before=None).items] == [
        "pending"
    ]
    assert [w.write_id for w in ledger.pending_writes()] == [audit.id]
    assert ledger.pending_writes(begun_before=T0) == []  # younger than the cut-off
    assert [w.write_id for w in ledger.pending_writes(T0 + timedelta(seconds=1))] == [audit.id]

    ledger.commit_write(audit.id)
    records = ledger.verified_records(["The VPN is vpn2.example.com"])
    assert [(r.source, r.low_confidence) for r in records.values()] == [("slack", True)]
    assert ledger.pending_writes() == []
    assert ledger.list_audit(source=None, limit=10, before=None).items[0].state == "committed"


def test_a_failed_write_leaves_a_failed_audit_row_and_no_memory(ledger: Ledger) -> None:
    audit = entry("d2")
    ledger.begin_write(audit, "claim", low_confidence=False)
    ledger.fail_write(audit.id, "ConnectionError")
    [row] = ledger.list_audit(source=None, limit=10, before=None).items
    assert row.state == "failed"
    assert row.provenance["stored"] is False
    assert row.provenance["write_error"] == "ConnectionError"
    assert ledger.verified_records(["claim"]) == {}
    assert ledger.pending_writes() == []


def test_held_claims_list_newest_first_with_paging_and_filters(ledger: Ledger) -> None:
    made = [hold(ledger, f"claim {i}", "review" if i % 2 else "quarantine") for i in range(5)]
    first = ledger.list_held(status=None, include_reviewed=False, limit=2, before=None)
    assert [h.claim for h in first.items] == ["claim 4", "claim 3"]
    second = ledger.list_held(
        status=None, include_reviewed=False, limit=2, before=first.next_cursor
    )
    assert [h.claim for h in second.items] == ["claim 2", "claim 1"]
    third = ledger.list_held(
        status=None, include_reviewed=False, limit=2, before=second.next_cursor
    )
    assert [h.claim for h in third.items] == ["claim 0"]
    assert third.next_cursor is None
    reviews = ledger.list_held(status="review", include_reviewed=False, limit=10, before=None)
    assert {h.claim for h in reviews.items} == {"claim 1", "claim 3"}
    assert ledger.get_held(made[0].id) == made[0]
    assert ledger.get_held("nope") is None


def test_a_rejection_is_final_and_audited(ledger: Ledger) -> None:
    held = hold(ledger)
    review = entry(
        held.decision_id, "agent-7", REJECT, event_type=REVIEW, reviewer="ana", note="spam"
    )
    done = ledger.finish_review(held.id, REJECT, review)
    assert (done.review_verdict, done.reviewer, done.note) == (REJECT, "ana", "spam")
    with pytest.raises(AlreadyReviewed):
        ledger.claim_for_approval(held.id)
    with pytest.raises(AlreadyReviewed):
        ledger.finish_review(held.id, REJECT, entry(held.decision_id))
    assert ledger.list_held(status=None, include_reviewed=False, limit=10, before=None).items == []
    assert (
        len(ledger.list_held(status=None, include_reviewed=True, limit=10, before=None).items) == 1
    )
    audit = ledger.list_audit(source="agent-7", limit=10, before=None).items
    assert [a.event_type for a in audit] == [REVIEW, DECISION]


def test_an_approval_moves_the_claim_into_the_ledger_in_two_phases(ledger: Ledger) -> None:
    held = hold(ledger, "The office opens at 9")
    claimed = ledger.claim_for_approval(held.id)
    review = entry(held.decision_id, "agent-7", APPROVE, event_type=REVIEW, reviewer="bo")
    ledger.begin_write(review, claimed.claim, low_confidence=False)
    assert ledger.verified_records(["The office opens at 9"]) == {}
    assert ledger.get_held(held.id).review_verdict is None  # type: ignore[union-attr]
    ledger.commit_write(review.id)
    done = ledger.get_held(held.id)
    assert done is not None
    assert (done.review_verdict, done.reviewer) == (APPROVE, "bo")
    records = ledger.verified_records(["The office opens at 9"])
    assert {r.source for r in records.values()} == {"agent-7"}
    assert [
        a.event_type for a in ledger.list_audit(source="agent-7", limit=5, before=None).items
    ] == [
        REVIEW,
        DECISION,
    ]


def test_a_failed_approval_returns_the_claim_to_the_queue(ledger: Ledger) -> None:
    held = hold(ledger, "claim")
    claimed = ledger.claim_for_approval(held.id)
    review = entry(held.decision_id, "agent-7", APPROVE, event_type=REVIEW)
    ledger.begin_write(review, claimed.claim, low_confidence=False)
    ledger.fail_write(review.id, "TimeoutError")
    assert ledger.verified_records(["claim"]) == {}
    assert ledger.pending_writes() == []
    assert ledger.claim_for_approval(held.id).id == held.id  # pending again


def test_a_crash_mid_approval_is_finished_from_the_pending_write(ledger: Ledger) -> None:
    held = hold(ledger, "claim")
    review = entry(held.decision_id, "agent-7", APPROVE, event_type=REVIEW, reviewer="cy")
    ledger.begin_write(review, ledger.claim_for_approval(held.id).claim, low_confidence=False)
    [pending] = ledger.pending_writes()  # what a restarted gate finds
    ledger.commit_write(pending.write_id)
    assert ledger.get_held(held.id).review_verdict == APPROVE  # type: ignore[union-attr]


def test_only_one_of_many_concurrent_approvals_wins(ledger: Ledger) -> None:
    held = hold(ledger)

    def attempt(_: int) -> bool:
        try:
            ledger.claim_for_approval(held.id)
        except AlreadyReviewed:
            return False
        return True

    with ThreadPoolExecutor(max_workers=8) as pool:
        outcomes = list(pool.map(attempt, range(16)))
    assert outcomes.count(True) == 1


def test_unknown_held_claims_are_key_errors(ledger: Ledger) -> None:
    with pytest.raises(KeyError):
        ledger.claim_for_approval("missing")
    with pytest.raises(KeyError):
        ledger.finish_review("missing", REJECT, entry("d"))


def test_audit_pages_and_filters_by_source(ledger: Ledger) -> None:
    for i in range(3):
        audit = entry(f"a{i}", source="slack", at=T0 + timedelta(seconds=i))
        ledger.begin_write(audit, f"text {i}", low_confidence=False)
        ledger.commit_write(audit.id)
    hold(ledger)
    page = ledger.list_audit(source="slack", limit=2, before=None)
    assert [a.decision_id for a in page.items] == ["a2", "a1"]
    rest = ledger.list_audit(source="slack", limit=2, before=page.next_cursor)
    assert [a.decision_id for a in rest.items] == ["a0"]
    assert ledger.counts() == {"audit_committed": 4, "held_pending": 1}
