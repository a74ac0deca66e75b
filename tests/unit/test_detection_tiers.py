"""The per-tier accounting of the detection benchmark, on hand-made rows (no model)."""

import asyncio
import dataclasses
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any, cast

import pytest

from mithril.benchmark.detection import (
    COMBINED,
    HELD_OUT,
    TierRow,
    cascade_tiers,
    format_markdown,
    run_detection,
    tier_table,
    write_report,
)
from mithril.domain import Finding, Origin, Severity
from mithril.gateway.decision import FactsAction, Mode, Policy
from mithril.gateway.detectors import Analysis
from mithril.gateway.tiers import (
    classifier_finding,
    judge_finding,
    planted_line_finding,
    similarity_finding,
)

TIERS = ("fast", "similarity", "classifier")


def _row(label: int, fast: bool, similarity: bool, classifier: bool, final: bool) -> TierRow:
    return TierRow(label, (fast, similarity, classifier), final)


ROWS = [
    # attacks (8)
    _row(1, True, True, True, True),  # fast catches it, learned agree
    _row(1, True, False, False, True),  # fast only
    _row(1, False, True, False, True),  # similarity adds
    _row(1, False, True, True, True),  # similarity adds; classifier agrees, adds nothing
    _row(1, False, False, True, True),  # classifier adds
    _row(1, False, False, False, True),  # flagged only by the combination of scores
    _row(1, False, False, False, False),  # missed
    _row(1, False, False, False, False),  # missed
    # benign (5)
    _row(0, True, False, False, True),  # fast false positive
    _row(0, False, False, True, True),  # classifier false positive
    _row(0, False, True, True, True),  # similarity false positive (classifier agrees)
    _row(0, False, False, False, False),
    _row(0, False, False, False, False),
]


def test_adds_standalone_and_cumulative() -> None:
    table = tier_table(ROWS, TIERS)
    assert (table.attacks, table.benign) == (8, 5)
    assert [line.tier for line in table.lines] == [*TIERS, COMBINED]
    fast, similarity, classifier, combined = table.lines

    assert (fast.adds_tp, fast.adds_fp) == (2, 1)
    assert (similarity.adds_tp, similarity.adds_fp) == (2, 1)
    assert (classifier.adds_tp, classifier.adds_fp) == (1, 1)
    assert (combined.adds_tp, combined.adds_fp) == (1, 0)
    assert (combined.removes_tp, combined.removes_fp) == (0, 0)

    # Standalone: every row the tier flags, whatever earlier tiers did.
    assert (fast.tp, fast.fp) == (2, 1)
    assert (similarity.tp, similarity.fp) == (3, 1)
    assert (classifier.tp, classifier.fp) == (3, 2)
    assert (combined.tp, combined.fp) == (None, None)

    assert [(line.cumulative_tp, line.cumulative_fp) for line in table.lines] == [
        (2, 1),
        (4, 2),
        (5, 3),
        (6, 3),
    ]
    # The last line is the cascade's own verdict.
    final_tp = sum(1 for r in ROWS if r.label and r.final)
    final_fp = sum(1 for r in ROWS if not r.label and r.final)
    assert (table.final_tp, table.final_fp) == (final_tp, final_fp) == (6, 3)

    data = table.to_dict()
    lines = cast(list[dict[str, Any]], data["lines"])
    assert lines[1]["tpr"] == 3 / 8 and lines[2]["fpr"] == 2 / 5
    assert lines[-1]["cumulative_tpr"] == 6 / 8 and lines[-1]["cumulative_fpr"] == 3 / 5
    assert lines[-1]["tpr"] is None


def test_combined_line_removes_what_the_cascade_clears() -> None:
    # A judge overruling: the fast tier flags, the cascade does not.
    rows = [
        TierRow(1, (True, False), False),
        TierRow(1, (True, False), True),
        TierRow(0, (False, True), False),
        TierRow(0, (False, False), True),
    ]
    table = tier_table(rows, ("fast", "judge"))
    combined = table.lines[-1]
    assert (combined.adds_tp, combined.removes_tp) == (0, 1)
    assert (combined.adds_fp, combined.removes_fp) == (1, 1)
    assert (table.lines[1].cumulative_tp, table.lines[1].cumulative_fp) == (2, 1)
    assert (table.final_tp, table.final_fp) == (1, 1)


def test_one_class_and_bad_rows() -> None:
    table = tier_table([TierRow(1, (False,), True)], ("fast",))
    assert table.benign == 0 and table.to_dict()["benign"] == 0
    assert table.lines[-1].adds_tp == 1
    with pytest.raises(ValueError, match="verdicts"):
        tier_table([TierRow(1, (True, False), True)], ("fast",))


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def test_run_detection_reports_the_tier_table(tmp_path: Path) -> None:
    texts = {
        "rule attack": (1, (True, False)),
        "learned attack": (1, (False, True)),
        "combined attack": (1, (False, False)),
        "missed attack": (1, (False, False)),
        "benign flagged by rules": (0, (True, False)),
        "plain benign": (0, (False, False)),
    }
    rows = [{"text": t, "label": label, "split": "validation"} for t, (label, _) in texts.items()]
    rows.append({"text": "a dev row", "label": 1, "split": "train"})
    _jsonl(tmp_path / "injection/s-labs.jsonl", rows)
    flagged = {"rule attack", "learned attack", "combined attack", "benign flagged by rules"}
    seen: list[str] = []

    def decide(text: str, origin: Origin) -> tuple[bool, float, list[Finding]]:
        return text in flagged, 1.0 if text in flagged else 0.0, []

    def tiers(text: str, origin: Origin, findings: list[Finding]) -> list[tuple[str, bool]]:
        seen.append(text)
        fast, learned = texts[text][1]
        return [("fast", fast), ("similarity", learned)]

    report = run_detection(tmp_path, decide, tiers)
    assert "a dev row" not in seen and len(seen) == len(texts)
    table = report.tiers["injection/s-labs"]
    held = report.get("injection/s-labs", HELD_OUT)
    assert held is not None and (table.final_tp, table.final_fp) == (held.tp, held.fp) == (3, 1)
    assert [(line.tier, line.adds_tp, line.adds_fp) for line in table.lines] == [
        ("fast", 1, 1),
        ("similarity", 1, 0),
        (COMBINED, 1, 0),
    ]

    markdown = format_markdown(report)
    assert "## Per tier (held-out)" in markdown
    assert "| injection/s-labs | similarity | 1 | 0 | 25.0% | 0.0% | 50.0% | 50.0% |" in markdown
    assert "| injection/s-labs | combined | 1 | 0 | - | - | 75.0% | 50.0% |" in markdown
    assert "come later" not in markdown
    _, js = write_report(report, tmp_path / "out")
    data = json.loads(js.read_text(encoding="utf-8"))
    assert data["tiers_held_out"]["injection/s-labs"]["lines"][-1]["cumulative_tp"] == 3


def test_run_detection_without_tiers_has_no_tier_section(tmp_path: Path) -> None:
    _jsonl(tmp_path / "benign/mt-vicuna-bench.jsonl", [{"text": "hello", "label": 0}])
    report = run_detection(tmp_path, decide=lambda text, origin: (False, 0.0, []))
    assert report.tiers == {}
    assert "Per tier" not in format_markdown(report)


def _rule(confidence: float) -> Finding:
    return Finding("jailbreak.test", "scanner", "jailbreak", Severity.HIGH, confidence, "rule")


class _Tiers:
    names = frozenset({"embedding", "classifier"})

    def __init__(self, similarity: float, probability: float) -> None:
        self.scores = (similarity, probability)
        self.calls = 0

    async def learned(self, text: str, origin: Origin, which: Collection[str]) -> Analysis:
        self.calls += 1
        similarity, probability = self.scores
        return Analysis((similarity_finding(similarity, 0.9, "x"), classifier_finding(probability)))


class _Detectors:
    def __init__(self, findings: tuple[Finding, ...]) -> None:
        self.findings = findings

    async def analyse(self, text: str, origin: Origin, detectors: Collection[str]) -> Analysis:
        return Analysis(self.findings)


class _Firewall:
    def __init__(self, tiers: _Tiers, detectors: _Detectors) -> None:
        self.policy = Policy(
            Mode.BLOCK, 0.5, frozenset({"scanner", "secrets", "embedding", "classifier"})
        )
        self.tiers = tiers
        self.detectors = detectors


def _verdicts(firewall: _Firewall, findings: list[Finding]) -> list[tuple[str, bool]]:
    loop = asyncio.new_event_loop()
    try:
        verdicts = cascade_tiers(cast(Any, firewall), loop.run_until_complete)
        return list(verdicts("text", Origin.USER, findings))
    finally:
        loop.close()


def test_cascade_tiers_scores_each_tier_alone() -> None:
    tiers = _Tiers(0.9, 0.2)
    firewall = _Firewall(tiers, _Detectors(()))
    # The cascade escalated: the learned findings are in the decision, nothing is rerun.
    findings = [_rule(0.3), similarity_finding(0.6, 0.8, "x"), classifier_finding(0.3)]
    assert _verdicts(firewall, findings) == [
        ("fast", False),
        ("similarity", True),
        ("classifier", False),
        ("planted line", False),
    ]
    assert tiers.calls == 0
    # The fast tier flagged, so the cascade skipped the learned tiers: they are run here.
    assert _verdicts(firewall, [_rule(0.8)]) == [
        ("fast", True),
        ("similarity", True),
        ("classifier", False),
        ("planted line", False),
    ]
    assert tiers.calls == 1
    # Escalated with both learned scores under MIN_REPORTED: no findings, not flagged.
    assert _verdicts(firewall, [_rule(0.2)]) == [
        ("fast", False),
        ("similarity", False),
        ("classifier", False),
        ("planted line", False),
    ]
    assert tiers.calls == 1


def test_the_planted_line_head_has_its_own_line_after_the_classifier() -> None:
    """The head's finding is made by the classifier tier but counted on its own line, and
    the rest of the classifier's without it."""
    firewall = _Firewall(_Tiers(0.1, 0.1), _Detectors(()))
    head = planted_line_finding(0.8, 6.0, 0.1)
    assert _verdicts(firewall, [_rule(0.3), classifier_finding(0.3), head]) == [
        ("fast", False),
        ("similarity", False),
        ("classifier", False),
        ("planted line", True),
    ]
    assert _verdicts(firewall, [_rule(0.3), classifier_finding(0.7)])[2:] == [
        ("classifier", True),
        ("planted line", False),
    ]


def test_cascade_tiers_rescores_after_a_judge() -> None:
    tiers = _Tiers(0.1, 0.7)
    firewall = _Firewall(tiers, _Detectors((_rule(0.6),)))
    tiers.names = frozenset({"embedding", "classifier", "judge"})
    firewall.policy = Policy(
        Mode.BLOCK, 0.5, frozenset({"scanner", "secrets", "embedding", "classifier", "judge"})
    )
    # The judge overruled the rule (confidence 0); the tiers' own scores are recomputed.
    overruled = Finding("jailbreak.test", "scanner", "jailbreak", Severity.HIGH, 0.0, "rule")
    findings = [overruled, judge_finding("benign", 0.1, "m")]
    assert _verdicts(firewall, findings) == [
        ("fast", True),
        ("similarity", False),
        ("classifier", True),
        ("planted line", False),
        ("judge", False),
    ]
    assert tiers.calls == 1


def test_the_classifier_finding_names_the_language_it_read() -> None:
    english, spanish = classifier_finding(0.9), classifier_finding(0.9, "es")
    assert english.message == "the attack classifier gives 0.90"
    assert spanish.message == "the multilingual attack classifier (es) gives 0.90"
    assert (english.rule_id, english.confidence) == (spanish.rule_id, spanish.confidence)
    second = classifier_finding(0.9, "en")
    assert (
        second.message == "the multilingual attack classifier (a second opinion on English)"
        " gives 0.90"
    )


def test_cascade_tiers_count_what_block_mode_refuses() -> None:
    """A credential alone is redacted, not refused, unless the policy blocks it; the
    firewall's own mode does not matter (a log-mode pipeline measures the same)."""
    key = Finding("secrets.aws_access_key", "secrets", "credential", Severity.HIGH, 0.95, "key")
    firewall = _Firewall(_Tiers(0.1, 0.1), _Detectors(()))
    firewall.policy = dataclasses.replace(firewall.policy, mode=Mode.LOG)
    assert _verdicts(firewall, [key])[0] == ("fast", False)
    assert _verdicts(firewall, [key, _rule(0.8)])[0] == ("fast", True)
    firewall.policy = dataclasses.replace(firewall.policy, facts=FactsAction.BLOCK)
    assert _verdicts(firewall, [key])[0] == ("fast", True)
