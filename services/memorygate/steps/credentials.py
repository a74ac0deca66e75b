"""Step 1, the credential guard: through the secrets service, before anything else sees
the claim. Credentials (and the PII kinds not in `keep_kinds`) are replaced by
`[REDACTED:<kind>]`; from here on only the redacted claim exists, so the raw value never
reaches Cognee, an LLM or the audit log. A credential found only inside an encoded
segment has no span to cut out, so the whole claim is withheld instead."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

import grpc

from mithril.domain import Finding
from mithril.runtime.convert import finding_from_proto
from mithril.secrets.v1 import secrets_service_pb2 as pb
from mithril.secrets.v1 import secrets_service_pb2_grpc as pb_grpc
from mithril.services.secrets.kinds import CREDENTIAL
from mithril.services.secrets.redact import apply_redactions

WITHHELD = "[WITHHELD: the claim carried an encoded credential]"


@dataclass(frozen=True, slots=True)
class GuardResult:
    text: str
    """The claim with every redacted kind cut out: the only form anything else sees."""
    findings: tuple[Finding, ...]
    """Every kind redacted (credentials and PII), without their values."""

    @property
    def redacted_kinds(self) -> list[str]:
        return sorted({finding.kind for finding in self.findings})

    @property
    def planted_credential(self) -> bool:
        """A credential in a claim meant for shared memory is an exfiltration attempt."""
        return any(finding.category == CREDENTIAL for finding in self.findings)


class CredentialGuard:
    def __init__(
        self,
        channel: grpc.aio.Channel,
        metadata: Sequence[tuple[str, str]],
        keep_kinds: Collection[str],
        timeout: float,
    ) -> None:
        self._stub = pb_grpc.SecretsServiceStub(channel)
        self._metadata = metadata
        self._keep = frozenset(keep_kinds)
        self._timeout = timeout

    async def check(self, claim: str) -> GuardResult:
        [result] = await self.check_all([claim])
        return result

    async def check_all(self, texts: Sequence[str]) -> list[GuardResult]:
        """Each text guarded, in order, in one call to the secrets service."""
        if not texts:
            return []
        response = await self._stub.DetectBatch(
            pb.DetectBatchRequest(requests=[pb.DetectRequest(text=text) for text in texts]),
            metadata=self._metadata,
            timeout=self._timeout,
        )
        results = []
        for text, detected in zip(texts, response.responses, strict=True):
            found = [finding_from_proto(f) for f in detected.findings]
            results.append(redact(text, [f for f in found if f.kind not in self._keep]))
        return results


def redact(claim: str, findings: Sequence[Finding]) -> GuardResult:
    """The claim with `findings` cut out (pure; the service found them)."""
    if any(not finding.has_span for finding in findings):
        return GuardResult(WITHHELD, tuple(findings))
    ordered = sorted(findings, key=lambda finding: finding.start or 0)
    return GuardResult(apply_redactions(claim, ordered), tuple(ordered))
