"""What the gate decided about one claim, with its provenance, in one value that becomes
the RPC's answer, the audit row and the held claim alike."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mithril.domain import Finding
from mithril.runtime.convert import finding_from_dict, finding_to_dict
from mithril.services.memorygate.trust import Signals, Status


@dataclass(frozen=True, slots=True)
class MemoryDecision:
    decision_id: str
    status: Status
    trust_score: float
    signals: Signals
    weights: dict[str, float]
    source: str
    claim: str
    """The redacted claim: the only form of it anything is allowed to keep."""
    redacted_kinds: list[str] = field(default_factory=list)
    findings: tuple[Finding, ...] = ()
    reasons: tuple[str, ...] = ()
    stored: bool = False
    quarantine_id: str = ""
    metadata: dict[str, str] = field(default_factory=dict)
    evidence: dict[str, Any] = field(default_factory=dict)
    """Per-step detail: scorers used, sub-scores, reputation outcome."""

    def provenance(self) -> dict[str, Any]:
        return {
            "decision_id": self.decision_id,
            "status": self.status.value,
            "trust_score": round(self.trust_score, 6),
            "signals": {
                "reputation": self.signals.reputation,
                "corroboration": self.signals.corroboration,
                "freshness": self.signals.freshness,
                "contradiction": self.signals.contradiction,
                "danger": self.signals.danger,
            },
            "weights": dict(self.weights),
            "source": self.source,
            "claim": self.claim,
            "redacted_kinds": list(self.redacted_kinds),
            "findings": [finding_to_dict(finding) for finding in self.findings],
            "reasons": list(self.reasons),
            "stored": self.stored,
            "quarantine_id": self.quarantine_id,
            "metadata": dict(self.metadata),
            "evidence": dict(self.evidence),
        }

    @classmethod
    def from_provenance(cls, data: dict[str, Any]) -> MemoryDecision:
        signals = data.get("signals", {})
        return cls(
            decision_id=str(data.get("decision_id", "")),
            status=Status(data["status"]),
            trust_score=float(data.get("trust_score", 0.0)),
            signals=Signals(
                reputation=float(signals.get("reputation", 0.0)),
                corroboration=float(signals.get("corroboration", 0.0)),
                freshness=float(signals.get("freshness", 0.0)),
                contradiction=float(signals.get("contradiction", 0.0)),
                danger=float(signals.get("danger", 0.0)),
            ),
            weights={str(k): float(v) for k, v in data.get("weights", {}).items()},
            source=str(data.get("source", "")),
            claim=str(data.get("claim", "")),
            redacted_kinds=list(data.get("redacted_kinds", [])),
            findings=tuple(finding_from_dict(f) for f in data.get("findings", [])),
            reasons=tuple(data.get("reasons", [])),
            stored=bool(data.get("stored", False)),
            quarantine_id=str(data.get("quarantine_id", "")),
            metadata={str(k): str(v) for k, v in data.get("metadata", {}).items()},
            evidence=dict(data.get("evidence", {})),
        )
