"""The offline contradiction scorer: each detector, the API, and its measured quality on
the labelled set in data/offline_scorers.jsonl (figures in OFFLINE_SCORERS.md)."""

from __future__ import annotations

import dataclasses
import json
import math
import time
from pathlib import Path

import pytest

from mithril.services.memorygate.contradiction import (
    MAX_CONTEXTS,
    Context,
    ContextJudgement,
    ContradictionResult,
    score_contradiction,
)

DATA = Path(__file__).parent / "data" / "offline_scorers.jsonl"
FLAG = 0.3  # the gate flags contradiction above this

# Floors asserted on the whole labelled set (measured figures in OFFLINE_SCORERS.md).
CONFLICT_PRECISION_FLOOR = 0.95
CONFLICT_RECALL_FLOOR = 0.90
CONFLICT_FPR_CEILING = 0.03
ALIGNED_PRECISION_FLOOR = 0.93
ALIGNED_RECALL_FLOOR = 0.88


def rows() -> list[dict[str, object]]:
    with DATA.open(encoding="utf-8") as handle:
        return [
            row
            for line in handle
            if line.strip() and (row := json.loads(line))["task"] == "contradiction"
        ]


def judge(claim: str, context: str, similarity: float) -> ContextJudgement:
    return score_contradiction(claim, [Context(context, similarity)]).judgements[0]


# ----------------------------------------------------------------------------- API


def test_result_shape_and_max() -> None:
    result = score_contradiction(
        "The VPN endpoint is vpn2.corp.example.com.",
        [
            Context("The VPN endpoint is vpn2.corp.example.com.", 0.99),
            Context("The VPN endpoint is vpn1.corp.example.com.", 0.97),
            Context("The cafeteria closes at 3pm.", 0.05),
        ],
    )
    assert isinstance(result, ContradictionResult)
    assert [j.index for j in result.judgements] == [0, 1, 2]
    assert result.contradiction == max(j.conflict for j in result.judgements) >= 0.9
    assert result.aligned_count == 1
    assert result.judgements[0].aligned and result.judgements[0].conflict == 0
    assert not result.judgements[1].aligned
    assert not result.judgements[2].same_subject
    with pytest.raises(dataclasses.FrozenInstanceError):
        result.contradiction = 0.0  # type: ignore[misc]


def test_no_contexts() -> None:
    result = score_contradiction("The VPN endpoint is vpn2.corp.example.com.", [])
    assert result.contradiction == 0.0
    assert result.judgements == ()
    assert result.aligned_count == 0


def test_contexts_beyond_the_cap_are_not_judged() -> None:
    contexts = [Context("The VPN endpoint is vpn1.corp.example.com.", 0.97)] * (MAX_CONTEXTS + 3)
    result = score_contradiction("The VPN endpoint is vpn2.corp.example.com.", contexts)
    assert len(result.judgements) == MAX_CONTEXTS + 3
    assert all(j.conflict > FLAG for j in result.judgements[:MAX_CONTEXTS])
    assert all(j.reasons == ("not judged",) for j in result.judgements[MAX_CONTEXTS:])


@pytest.mark.parametrize("similarity", [math.nan, math.inf, -math.inf, 7.0, -3.0])
def test_odd_similarities_are_tolerated(similarity: float) -> None:
    judgement = judge("MFA is enabled.", "MFA is disabled.", similarity)
    assert 0.0 <= judgement.conflict <= 1.0


@pytest.mark.parametrize("text", ["", "   ", "....", "\u200b" * 50, "é" * 3000, "1" * 5000])
def test_degenerate_texts(text: str) -> None:
    result = score_contradiction(text, [Context(text, 0.9), Context("MFA is on.", 0.9)])
    assert 0.0 <= result.contradiction <= 1.0


def test_reasons_never_quote_the_texts() -> None:
    claim = "The Atlas project is led by Priya Natarajan at vpn2.corp.example.com."
    context = "The Atlas project is led by Tom Becker at vpn1.corp.example.com."
    result = score_contradiction(claim, [Context(context, 0.8)])
    reasons = " ".join(result.judgements[0].reasons).lower()
    assert result.contradiction > FLAG
    for fragment in ("atlas", "priya", "becker", "vpn1", "vpn2", "example"):
        assert fragment not in reasons


def test_long_inputs_stay_bounded() -> None:
    words = "the vpn endpoint is not enabled 10.0.0.1 $5,000 25% monday 9:30 Bob runs on SAP ,"
    text = " ".join(words.split() * 200)
    start = time.perf_counter()
    score_contradiction(text, [Context(text, 0.9)] * MAX_CONTEXTS)
    assert time.perf_counter() - start < 10.0


# ----------------------------------------------------------------------------- detectors


@pytest.mark.parametrize(
    ("claim", "context", "reason"),
    [
        (
            "The VPN endpoint is vpn2.corp.example.com.",
            "The VPN endpoint is vpn1.corp.example.com.",
            "location",
        ),
        (
            "Incidents go to security@corp.example.com.",
            "Incidents go to soc@corp.example.com.",
            "email",
        ),
        ("The primary DB is at 10.0.4.12.", "The primary DB is at 10.0.4.15.", "ip"),
        ("The licence costs $12,000 a year.", "The licence costs $9,500 a year.", "money"),
        ("The commission rate is 8%.", "The commission rate is 5%.", "percent"),
        ("The launch is on 2025-06-15.", "The launch is on June 22, 2025.", "date"),
        ("The launch is planned for Q3.", "The launch is planned for Q4 2025.", "date"),
        ("The all-hands is on Thursdays.", "The all-hands is on Tuesdays.", "weekday"),
        ("The standup starts at 9:30.", "The standup starts at 9:00.", "time"),
        ("The cluster runs version 3.6.1.", "The cluster runs version 3.4.0.", "version"),
        ("Log retention is 90 days.", "Log retention is 30 days.", "number"),
        ("The default branch is `main`.", "The default branch is `master`.", "literal"),
    ],
)
def test_typed_values_in_the_same_slot(claim: str, context: str, reason: str) -> None:
    judgement = judge(claim, context, 0.9)
    assert judgement.conflict > FLAG
    assert any(reason in r for r in judgement.reasons)
    assert not judgement.aligned


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("Log retention is 30 days.", "Logs are retained for one month."),  # unit conversion
        ("The team has 12 engineers.", "The team has more than 10 engineers."),  # bound
        ("The outage lasted 2 hours.", "The outage lasted about 2 hours."),
        ("The launch is on 2025-06-15.", "The launch is on 15 June 2025."),
        ("Backups run at 2 AM.", "Backups run at 02:00."),
        ("The wiki is wiki.corp.example.com.", "The wiki is https://wiki.corp.example.com/."),
    ],
)
def test_equal_values_written_differently(claim: str, context: str) -> None:
    assert judge(claim, context, 0.9).conflict == 0.0


def test_thresholds_of_the_same_rule() -> None:
    assert (
        judge(
            "Refunds over $500 need approval.", "Refunds over $1,000 need approval.", 0.95
        ).conflict
        > FLAG
    )
    assert (
        judge("The bounty pays up to $5,000.", "The bounty pays up to $2,500.", 0.95).conflict
        > FLAG
    )


@pytest.mark.parametrize(
    ("claim", "context", "reason"),
    [
        ("MFA is enabled for admin accounts.", "MFA is disabled for admin accounts.", "antonym"),
        ("MFA is enabled for admin accounts.", "MFA isn't enabled for admin accounts.", "negation"),
        ("Uploads are allowed.", "Uploads are forbidden.", "antonym"),
        ("Code review is optional for docs.", "Code review is required for docs.", "antonym"),
        ("The bucket is public.", "The bucket is private.", "antonym"),
        ("The office is open on Sundays.", "The office is closed on Sundays.", "antonym"),
        ("Churn increased in Q2.", "Churn decreased in Q2.", "antonym"),
        ("Guests can access the VPN.", "Guests cannot access the VPN.", "negation"),
        (
            "Data may be stored outside the EU.",
            "Data must never be stored outside the EU.",
            "negation",
        ),
        ("Bob manages the data team.", "Bob no longer manages the data team.", "negation"),
        ("The service is up.", "The service is down.", "antonym"),
    ],
)
def test_polarity(claim: str, context: str, reason: str) -> None:
    judgement = judge(claim, context, 0.9)
    assert judgement.conflict > FLAG
    assert any(reason in r for r in judgement.reasons)


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("Backups are not encrypted.", "Backups are unencrypted."),  # double negative agrees
        ("The office opens at 9.", "The office closes at 5."),  # events, not states
        ("If the VPN is not reachable, use the backup.", "The VPN is reachable from the office."),
        ("Remote work is allowed on Fridays.", "Remote work is not allowed in the first month."),
        ("The private repo is archived.", "The public repo is archived."),  # two subjects
    ],
)
def test_polarity_look_alikes(claim: str, context: str) -> None:
    assert judge(claim, context, 0.9).conflict <= FLAG


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("The Atlas project is led by Priya Natarajan.", "The Atlas project is led by Tom Becker."),
        ("Payroll is processed in Workday.", "Payroll is processed in SAP SuccessFactors."),
        (
            "The escalation goes to Maria Gomez.",
            "The escalation goes to Daniel Okafor after 15 minutes.",
        ),
        (
            "The wifi network for guests is called CorpGuest.",
            "The guest wifi network is called Visitors-5G.",
        ),
        ("The weekly report is sent to finance.", "The weekly report is sent to legal."),
        ("Our office is in Berlin.", "Our office is in Munich."),  # right for one office only
    ],
)
def test_substitution_after_the_same_predicate(claim: str, context: str) -> None:
    judgement = judge(claim, context, 0.7)
    assert judgement.conflict > FLAG
    assert any("after the same predicate" in r for r in judgement.reasons)


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("The CFO is Maria Lopez.", "The CTO is Maria Lopez."),  # the subject differs
        ("The CFO is Maria Lopez.", "The CTO is Daniel Kim."),
        ("The database is slow.", "The database is large."),  # adjectives after a copula
        ("Q3 revenue was $4.2M.", "Q4 revenue was $5.1M."),
        (
            "The EU VPN endpoint is vpn-eu.corp.example.com.",
            "The US VPN endpoint is vpn-us.corp.example.com.",
        ),
        ("The API also returns XML.", "The API returns JSON."),  # additive
        ("Cluster 7f3a9c keeps 3 replicas.", "Cluster 7f3a9d keeps 3 replicas."),  # two ids
        (
            "Purchase orders above $10,000 need a sign-off.",
            "Purchase orders above $10,000 need to sign off.",
        ),
    ],
)
def test_different_subjects_and_additions(claim: str, context: str) -> None:
    assert judge(claim, context, 0.85).conflict <= FLAG


@pytest.mark.parametrize(
    ("claim", "context"),
    [
        ("Payroll moved from SAP to Workday.", "Payroll runs on SAP."),
        ("We switched our CI from Jenkins to GitHub Actions.", "Our CI runs on Jenkins."),
        ("The helpdesk moved from extension 4400 to 5100.", "Call the helpdesk on extension 4400."),
        (
            "The review now happens on Wednesdays instead of Mondays.",
            "The review happens every Monday.",
        ),
        ("Carol Smith replaced Dan Wu as head of IT.", "Dan Wu is the head of IT."),
    ],
)
def test_retraction(claim: str, context: str) -> None:
    judgement = judge(claim, context, 0.7)
    assert judgement.conflict > FLAG
    assert any("retracts" in r for r in judgement.reasons)


def test_update_language() -> None:
    replaced = judge(
        "The VPN endpoint has changed to vpn3.corp.example.com.",
        "Staff connect to the VPN endpoint vpn1.corp.example.com.",
        0.8,
    )
    assert replaced.conflict >= 0.7
    assert any("update replaces" in r for r in replaced.reasons)
    # memory already holds the new value: nothing to contradict
    held = judge(
        "The design review happens on Wednesdays.",
        "The design review moved from Mondays to Wednesdays.",
        0.83,
    )
    assert held.conflict == 0.0 and held.aligned
    # the claim retires a value memory does not hold
    retired = judge(
        "The old VPN endpoint vpn1.corp.example.com was retired in 2023.",
        "The current VPN endpoint is vpn2.corp.example.com.",
        0.71,
    )
    assert retired.conflict <= FLAG


@pytest.mark.parametrize(
    ("claim", "context", "similarity"),
    [
        (
            "The weekly report is sent to finance on Fridays.",
            "Every Friday the weekly report goes to the finance team.",
            0.89,
        ),
        ("Backups run nightly at 2 AM.", "The backup job runs every night at 02:00.", 0.85),
        (
            "MFA is mandatory for all admin accounts.",
            "All admin accounts are required to use MFA.",
            0.9,
        ),
        (
            "Passwords must be at least 14 characters long.",
            "The minimum password length is 14 characters.",
            0.85,
        ),
        (
            "Guest Wi-Fi is not isolated.",
            "Guest Wi-Fi is not isolated, which IT plans to fix.",
            0.9,
        ),
        # a number naming the noun before it, and one that is an identifier, not a number
        (
            "Backups of the 796979 cluster run nightly at 02:00 UTC.",
            "Backups of cluster 796979 run nightly at 02:00 UTC.",
            0.95,
        ),
        (
            "Backups of the 89840d cluster run nightly at 02:00 UTC.",
            "Nightly backups of cluster 89840d run at 02:00 UTC.",
            0.95,
        ),
    ],
)
def test_aligned_paraphrases(claim: str, context: str, similarity: float) -> None:
    judgement = judge(claim, context, similarity)
    assert judgement.aligned and judgement.conflict == 0.0


@pytest.mark.parametrize(
    ("claim", "context", "similarity"),
    [
        (
            "The VPN endpoint is vpn2.corp.example.com.",
            "VPN access requires MFA for all staff.",
            0.6,
        ),
        (
            "The coffee machine on floor 3 is broken.",
            "The coffee machine on floor 3 was repaired.",
            0.9,
        ),
        ("MFA is enabled for admins.", "MFA is enabled for admins.", 0.5),  # below SIM_ALIGN
        ("Company laptops are encrypted.", "Company laptops are not encrypted.", 0.95),
    ],
)
def test_not_aligned(claim: str, context: str, similarity: float) -> None:
    assert not judge(claim, context, similarity).aligned


def test_unrelated_low_similarity_is_not_the_same_subject() -> None:
    judgement = judge(
        "The VPN endpoint is vpn2.corp.example.com.", "The cafeteria closes at 3pm.", 0.05
    )
    assert not judgement.same_subject and judgement.conflict == 0.0 and not judgement.aligned


def test_multi_sentence_context() -> None:
    context = (
        "Platform team on-call: the rotation changes every Monday at 09:00. "
        "The handover happens in the #platform channel."
    )
    judgement = judge(
        "The on-call rotation for the platform team changes every Wednesday.", context, 0.8
    )
    assert judgement.conflict > FLAG


# ----------------------------------------------------------------------------- labelled set


def test_labelled_set_is_big_enough_and_well_formed() -> None:
    data = rows()
    assert len(data) >= 60
    labels = {str(r["label"]) for r in data}
    assert labels == {"conflict", "aligned", "neutral", "unrelated"}
    assert len({r["id"] for r in data}) == len(data)
    for row in data:
        assert -1.0 <= float(row["similarity"]) <= 1.0  # type: ignore[arg-type]


def measure(data: list[dict[str, object]]) -> dict[str, float]:
    tp = fp = fn = tn = atp = afp = afn = 0
    for row in data:
        result = score_contradiction(
            str(row["claim"]),
            [Context(str(row["context"]), float(row["similarity"]))],  # type: ignore[arg-type]
        )
        positive, flagged = row["label"] == "conflict", result.contradiction > FLAG
        tp += positive and flagged
        fp += (not positive) and flagged
        fn += positive and not flagged
        tn += (not positive) and not flagged
        should, aligned = row["label"] == "aligned", result.judgements[0].aligned
        atp += should and aligned
        afp += (not should) and aligned
        afn += should and not aligned
    return {
        "precision": tp / max(1, tp + fp),
        "recall": tp / max(1, tp + fn),
        "fpr": fp / max(1, fp + tn),
        "aligned_precision": atp / max(1, atp + afp),
        "aligned_recall": atp / max(1, atp + afn),
    }


def test_measured_quality_stays_above_the_reported_floors() -> None:
    figures = measure(rows())
    assert figures["precision"] >= CONFLICT_PRECISION_FLOOR, figures
    assert figures["recall"] >= CONFLICT_RECALL_FLOOR, figures
    assert figures["fpr"] <= CONFLICT_FPR_CEILING, figures
    assert figures["aligned_precision"] >= ALIGNED_PRECISION_FLOOR, figures
    assert figures["aligned_recall"] >= ALIGNED_RECALL_FLOOR, figures


def test_unrelated_rows_are_never_the_same_subject() -> None:
    for row in rows():
        if row["label"] == "unrelated":
            judgement = judge(str(row["claim"]), str(row["context"]), float(row["similarity"]))  # type: ignore[arg-type]
            assert not judgement.same_subject, row["id"]


# The encoder computes in int8, and ONNX Runtime's integer kernels differ between CPUs:
# the stored similarities were computed on an Intel machine (AMX); an AMD one (AVX-512
# VNNI) gave the same pairs up to 0.069 apart, 0.012 on average. A different model, or a
# broken one, moves the average by far more.
SIMILARITY_MEAN_TOLERANCE = 0.03
SIMILARITY_MAX_TOLERANCE = 0.1


@pytest.mark.slow
def test_stored_similarities_match_the_project_encoder() -> None:
    """The labelled set's similarities are what the gate's encoder computes (within the
    int8 encoder's spread across CPUs), and the gate's figures hold with the similarities
    computed on this machine rather than the stored ones."""
    from mithril.services.embedding.encoder import Encoder

    data = rows()
    encoder = Encoder.load()
    claims = encoder.encode([str(r["claim"]) for r in data])
    contexts = encoder.encode([str(r["context"]) for r in data])
    computed = [float(a @ b) for a, b in zip(claims, contexts, strict=True)]
    gaps = [abs(c - float(r["similarity"])) for c, r in zip(computed, data, strict=True)]  # type: ignore[arg-type]
    assert sum(gaps) / len(gaps) < SIMILARITY_MEAN_TOLERANCE
    assert max(gaps) < SIMILARITY_MAX_TOLERANCE
    figures = measure([dict(r, similarity=c) for r, c in zip(data, computed, strict=True)])
    assert figures["precision"] >= CONFLICT_PRECISION_FLOOR, figures
    assert figures["recall"] >= CONFLICT_RECALL_FLOOR, figures
    assert figures["fpr"] <= CONFLICT_FPR_CEILING, figures
    assert figures["aligned_precision"] >= ALIGNED_PRECISION_FLOOR, figures
    assert figures["aligned_recall"] >= ALIGNED_RECALL_FLOOR, figures
