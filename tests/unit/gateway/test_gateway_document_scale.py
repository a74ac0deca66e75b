"""The classifier's probability on retrieved and tool content is read on the documents'
scale when a deployment sets one: 0.5 sits at the document threshold, and nothing else
moves.

The learned backend here is an in-memory stand-in with fixed findings: this tests how the
gateway reads them, not the classifier (`gateway/document_scale.py`)."""

from __future__ import annotations

from collections.abc import Collection

import pytest
from pydantic import ValidationError

from mithril.domain import Finding, Origin, Severity
from mithril.gateway.cascade import escalate
from mithril.gateway.config import GatewaySettings
from mithril.gateway.decision import Mode, Policy, decide
from mithril.gateway.detectors import Analysis
from mithril.gateway.document_scale import on_document_scale
from mithril.gateway.tiers import Tiers

WHICH = ("embedding", "classifier")
THRESHOLD = 0.6


def learned(rule: str, confidence: float) -> Finding:
    return Finding(rule, "classifier", "learned", Severity.MEDIUM, confidence, "the reading")


class FixedBackend:
    """Answers every text with the same findings."""

    def __init__(self, *findings: Finding) -> None:
        self._findings = findings

    async def learned(self, text: str, origin: Origin, which: Collection[str]) -> Analysis:
        return Analysis(self._findings)

    async def close(self) -> None:
        return None


def test_the_document_threshold_maps_to_one_half_and_order_is_kept() -> None:
    assert on_document_scale(THRESHOLD, THRESHOLD) == pytest.approx(0.5)
    moved = [on_document_scale(p, THRESHOLD) for p in (0.0, 0.3, 0.55, 0.6, 0.7, 0.99, 1.0)]
    assert moved == sorted(moved)
    assert moved[2] < 0.5 < moved[4]
    assert moved[0] >= 0.0 and moved[-1] <= 1.0


def test_a_threshold_of_one_half_leaves_probabilities_alone() -> None:
    assert [on_document_scale(p, 0.5) for p in (0.0, 0.3, 0.55, 1.0)] == [0.0, 0.3, 0.55, 1.0]


@pytest.mark.parametrize("origin", [Origin.RETRIEVAL, Origin.TOOL])
async def test_contents_classifier_finding_moves_and_says_so(origin: Origin) -> None:
    tiers = Tiers(FixedBackend(learned("embedding.classifier", 0.55)), None, document_threshold=0.6)
    (finding,) = (await tiers.learned("some document", origin, WHICH)).findings
    assert finding.confidence == pytest.approx(on_document_scale(0.55, 0.6), abs=1e-6)
    assert finding.confidence < 0.5
    assert finding.severity is Severity.LOW
    assert finding.message == "the reading; 0.45 as content, whose threshold is 0.60"


async def test_a_prompts_classifier_finding_stays_on_the_prompts_scale() -> None:
    tiers = Tiers(FixedBackend(learned("embedding.classifier", 0.55)), None, document_threshold=0.6)
    (finding,) = (await tiers.learned("a prompt", Origin.USER, WHICH)).findings
    assert (finding.confidence, finding.message) == (0.55, "the reading")


async def test_the_planted_line_and_similarity_findings_keep_their_own_scale() -> None:
    kept = (learned("embedding.planted_line", 0.55), learned("embedding.similarity", 0.55))
    tiers = Tiers(FixedBackend(*kept), None, document_threshold=0.6)
    found = (await tiers.learned("some document", Origin.RETRIEVAL, WHICH)).findings
    assert found == kept


async def test_the_same_probability_flags_a_prompt_and_passes_a_document() -> None:
    policy = Policy(Mode.BLOCK, 0.5, frozenset({"scanner", "embedding", "classifier"}))
    tiers = Tiers(FixedBackend(learned("embedding.classifier", 0.55)), None, document_threshold=0.6)
    for origin, flagged in ((Origin.USER, True), (Origin.RETRIEVAL, False)):
        analysis = await escalate("text", origin, Analysis(()), policy, tiers)
        assert decide(analysis.findings, policy).flagged is flagged


async def test_documents_are_on_the_prompts_scale_unless_a_deployment_says_otherwise() -> None:
    backend = FixedBackend(learned("embedding.classifier", 0.55))
    assert Tiers(backend, None).document_threshold == 0.5
    (finding,) = (await Tiers(backend, None).learned("doc", Origin.RETRIEVAL, WHICH)).findings
    assert (finding.confidence, finding.message) == (0.55, "the reading")
    assert GatewaySettings().document_classifier_threshold == 0.5


def test_the_setting_is_read_from_the_environment_and_checked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MITHRIL_GATEWAY_DOCUMENT_CLASSIFIER_THRESHOLD", "0.56")
    assert GatewaySettings().document_classifier_threshold == 0.56
    monkeypatch.setenv("MITHRIL_GATEWAY_DOCUMENT_CLASSIFIER_THRESHOLD", "1.5")
    with pytest.raises(ValidationError):
        GatewaySettings()


def test_documents_are_read_without_the_attack_encoder_alone_unless_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert GatewaySettings().document_attack_encoder is False
    monkeypatch.setenv("MITHRIL_GATEWAY_DOCUMENT_ATTACK_ENCODER", "true")
    assert GatewaySettings().document_attack_encoder is True
