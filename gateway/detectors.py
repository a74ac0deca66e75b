"""Where findings come from: the services over gRPC, or the same libraries in-process.

Both answer the same calls with the same findings, so a decision does not depend on which
one the policy runs over; `mithril scan` uses the in-process one by default. Remote calls
to one service are coalesced into batch RPCs when requests overlap (`batching.py`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import struct
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import grpc

from mithril.domain import Finding, Origin, Severity
from mithril.gateway import metrics
from mithril.gateway.batching import MicroBatcher
from mithril.gateway.secrets_screen import SecretsScreen
from mithril.runtime import channels
from mithril.runtime.channels import bearer_metadata
from mithril.runtime.convert import finding_from_proto
from mithril.scanner.v1 import scanner_service_pb2, scanner_service_pb2_grpc
from mithril.secrets.v1 import secrets_service_pb2, secrets_service_pb2_grpc
from mithril.services.secrets.redact import apply_redactions

SCANNER = "scanner"
SECRETS = "secrets"
FAST = frozenset({SCANNER, SECRETS})
"""The fast tier: what `Detectors.analyse` runs."""
AVAILABLE = FAST | {"embedding", "classifier", "judge"}
"""Every detector this build can run (the later tiers in `cascade.py`)."""


@dataclass(frozen=True, slots=True)
class Analysis:
    findings: tuple[Finding, ...]
    unavailable: tuple[str, ...] = ()
    """Services that could not answer; their findings are missing."""


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str
    findings: tuple[Finding, ...]


class RedactStream(Protocol):
    """Incremental redaction of one stream: feed chunks, get back what is safe to send."""

    async def feed(self, chunk: str) -> Redaction: ...

    async def flush(self) -> Redaction: ...

    async def aclose(self) -> None: ...


class Detectors(Protocol):
    async def analyse(
        self, text: str, origin: Origin, detectors: Collection[str] = FAST
    ) -> Analysis: ...

    async def redact(self, text: str, kinds: Collection[str] | None = None) -> Redaction: ...

    async def redact_stream(self, kinds: Collection[str] | None = None) -> RedactStream: ...

    def may_redact(self, data: bytes) -> bool:
        """False only when `redact` certainly finds nothing in any text `data` (UTF-8)
        holds verbatim; True when it may, or when this tier cannot tell cheaply."""
        ...

    async def close(self) -> None: ...


def learned_severity(score: float) -> Severity:
    """A learned tier's finding's severity, from its calibrated probability."""
    return Severity.HIGH if score >= 0.8 else Severity.MEDIUM if score >= 0.5 else Severity.LOW


def canonical(finding: Finding) -> Finding:
    """Confidences as they survive a trip through a protobuf float, rounded to 6 places,
    so in-process and remote findings compare equal."""
    as_float32 = struct.unpack("f", struct.pack("f", finding.confidence))[0]
    return dataclasses.replace(finding, confidence=round(as_float32, 6))


class ServiceUnavailableError(Exception):
    """A service needed for the answer could not be reached."""

    def __init__(self, service: str, detail: str) -> None:
        super().__init__(f"{service} service unavailable: {detail}")
        self.service = service
        self.detail = detail


# ---------------------------------------------------------------- in-process


class _LocalRedactStream:
    def __init__(self, redactor) -> None:  # type: ignore[no-untyped-def]
        self._redactor = redactor

    async def feed(self, chunk: str) -> Redaction:
        out = self._redactor.feed(chunk)
        return Redaction(out.text, tuple(canonical(f) for f in out.findings))

    async def flush(self) -> Redaction:
        out = self._redactor.flush()
        return Redaction(out.text, tuple(canonical(f) for f in out.findings))

    async def aclose(self) -> None:
        return None


class LocalDetectors:
    """The scanner and secrets libraries, run in this process as one fast tier: the secrets
    detectors' prefilters ride in the scanner's first-stage RE2 set (`Scanner` extra
    triggers), so a text both libraries scan is read by one set pass, not two."""

    def __init__(self, rule_files: Sequence[Path] = ()) -> None:
        from mithril.services.scanner.scanner import Scanner
        from mithril.services.secrets.detector import SecretsDetector

        self.secrets = SecretsDetector.default()
        self.scanner = Scanner.from_rule_files(rule_files, extra_triggers=self.secrets.prefilters)

    def analyse_now(
        self, text: str, origin: Origin, detectors: Collection[str] = FAST
    ) -> tuple[Finding, ...]:
        """The fast tier's findings, computed on the calling thread."""
        if SCANNER not in detectors:
            return tuple(self.secrets.detect(text)) if SECRETS in detectors else ()
        result = self.scanner.scan(text, origin)
        if SECRETS not in detectors or not result.extra:  # no prefilter hit: no secret
            return result.findings
        return result.findings + tuple(self.secrets.detect_prefiltered(text, result.extra))

    async def analyse(
        self, text: str, origin: Origin, detectors: Collection[str] = FAST
    ) -> Analysis:
        return Analysis(tuple(canonical(f) for f in self.analyse_now(text, origin, detectors)))

    async def redact(self, text: str, kinds: Collection[str] | None = None) -> Redaction:
        redaction = self.secrets.redact(text, kinds)
        return Redaction(redaction.text, tuple(canonical(f) for f in redaction.findings))

    async def redact_stream(self, kinds: Collection[str] | None = None) -> RedactStream:
        return _LocalRedactStream(self.secrets.stream(kinds))

    def may_redact(self, data: bytes) -> bool:
        return self.secrets.may_find(data)

    async def close(self) -> None:
        return None


# ---------------------------------------------------------------- over gRPC

_UNAVAILABLE_CODES = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)


def open_channel(target: str) -> grpc.aio.Channel:
    """A service channel whose call durations feed the gateway's metrics."""
    return channels.open_channel(target, observe=_observe_call)


def _observe_call(service: str, method: str, seconds: float) -> None:
    short = service.rsplit(".", 1)[-1].removesuffix("Service").lower()
    metrics.SERVICE_CALL_DURATION.labels(short, method).observe(seconds)


async def _guarded(service: str, call):  # type: ignore[no-untyped-def]
    """Await a call; a service that cannot answer becomes ServiceUnavailableError."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        if error.code() in _UNAVAILABLE_CODES:
            raise ServiceUnavailableError(service, error.code().name) from error
        raise


class _RemoteRedactStream:
    """One RedactStream RPC per model response: a chunk in, the safe text out."""

    def __init__(self, call, kinds: Sequence[str]) -> None:  # type: ignore[no-untyped-def]
        self._call = call
        self._kinds = list(kinds)
        self._first = True

    async def feed(self, chunk: str) -> Redaction:
        request = secrets_service_pb2.RedactStreamRequest(chunk=chunk)
        if self._first:
            request.kinds.extend(self._kinds)
            self._first = False
        await _guarded(SECRETS, self._call.write(request))
        return _redaction(await _guarded(SECRETS, self._call.read()))

    async def flush(self) -> Redaction:
        if self._first:  # nothing was ever sent: nothing is held
            await self.aclose()
            return Redaction("", ())
        await _guarded(SECRETS, self._call.done_writing())
        response = await _guarded(SECRETS, self._call.read())
        if response is grpc.aio.EOF:
            return Redaction("", ())
        return _redaction(response)

    async def aclose(self) -> None:
        self._call.cancel()


def _redaction(response) -> Redaction:  # type: ignore[no-untyped-def]
    return Redaction(
        response.text, tuple(canonical(finding_from_proto(f)) for f in response.findings)
    )


class RemoteDetectors:
    """The scanner and secrets services over gRPC, called concurrently, batched under load."""

    def __init__(
        self,
        scanner_addr: str,
        secrets_addr: str,
        token: str,
        timeout: float,
        max_batch_chars: int = 1_048_576,
    ) -> None:
        self._channels = [open_channel(scanner_addr), open_channel(secrets_addr)]
        self.scanner = scanner_service_pb2_grpc.ScannerServiceStub(self._channels[0])
        self.secrets = secrets_service_pb2_grpc.SecretsServiceStub(self._channels[1])
        self._metadata: Sequence[tuple[str, str]] = bearer_metadata(token)
        self.timeout = timeout
        self._scans: MicroBatcher[scanner_service_pb2.ScanRequest, Sequence[Finding]] = (
            MicroBatcher(self._scan_batch, max_weight=max_batch_chars, weight=_text_length)
        )
        self._detections: MicroBatcher[secrets_service_pb2.DetectRequest, Sequence[Finding]] = (
            MicroBatcher(self._detect_batch, max_weight=max_batch_chars, weight=_text_length)
        )
        self.secrets_screen = SecretsScreen(self._prefilters)

    async def _prefilters(self) -> tuple[Mapping[str, str], str]:
        reply = await self.secrets.GetPrefilters(
            secrets_service_pb2.GetPrefiltersRequest(),
            timeout=self.timeout,
            metadata=self._metadata,
        )
        return dict(reply.prefilters), reply.fingerprint

    async def _scan_batch(
        self, requests: list[scanner_service_pb2.ScanRequest]
    ) -> list[tuple[Finding, ...]]:
        if len(requests) == 1:  # the unbatched RPC: one less level of nesting to encode
            reply = await self.scanner.Scan(
                requests[0], timeout=self.timeout, metadata=self._metadata
            )
            return [_findings(reply.findings)]
        batch = await self.scanner.ScanBatch(
            scanner_service_pb2.ScanBatchRequest(requests=requests),
            timeout=self.timeout,
            metadata=self._metadata,
        )
        return [_findings(reply.findings) for reply in batch.responses]

    async def _detect_batch(
        self, requests: list[secrets_service_pb2.DetectRequest]
    ) -> list[tuple[Finding, ...]]:
        if len(requests) == 1:
            reply = await self.secrets.Detect(
                requests[0], timeout=self.timeout, metadata=self._metadata
            )
            self.secrets_screen.observe(reply.prefilters_fingerprint)
            return [_findings(reply.findings)]
        batch = await self.secrets.DetectBatch(
            secrets_service_pb2.DetectBatchRequest(requests=requests),
            timeout=self.timeout,
            metadata=self._metadata,
        )
        self.secrets_screen.observe(batch.prefilters_fingerprint)
        return [_findings(reply.findings) for reply in batch.responses]

    async def analyse(
        self, text: str, origin: Origin, detectors: Collection[str] = FAST
    ) -> Analysis:
        calls = []
        if SCANNER in detectors:
            request = scanner_service_pb2.ScanRequest(text=text, origin=int(origin))  # type: ignore[arg-type]
            calls.append(_guarded(SCANNER, self._scans.submit(request)))
        if SECRETS in detectors:
            calls.append(
                _guarded(
                    SECRETS, self._detections.submit(secrets_service_pb2.DetectRequest(text=text))
                )
            )
        results = await asyncio.gather(*calls, return_exceptions=True)
        findings: list[Finding] = []
        unavailable: list[str] = []
        for result in results:
            if isinstance(result, ServiceUnavailableError):
                unavailable.append(result.service)
            elif isinstance(result, BaseException):
                raise result
            else:
                findings += result
        return Analysis(tuple(findings), tuple(unavailable))

    async def redact(self, text: str, kinds: Collection[str] | None = None) -> Redaction:
        # Detection rides the batched DetectBatch path; the markers are the library's own.
        request = secrets_service_pb2.DetectRequest(text=text, kinds=sorted(kinds or ()))
        findings = await _guarded(SECRETS, self._detections.submit(request))
        return Redaction(apply_redactions(text, findings), tuple(findings))

    def may_redact(self, data: bytes) -> bool:
        # The service's own prefilters, fetched from it and retired when it answers with
        # another fingerprint (a rolling upgrade): see secrets_screen.py.
        return self.secrets_screen.may_find(data)

    async def redact_stream(self, kinds: Collection[str] | None = None) -> RedactStream:
        # No deadline: a stream lives as long as the model's response.
        call = self.secrets.RedactStream(metadata=self._metadata)
        return _RemoteRedactStream(call, sorted(kinds or ()))

    async def close(self) -> None:
        await self.secrets_screen.close()
        for channel in self._channels:
            await channel.close()


def _text_length(
    request: scanner_service_pb2.ScanRequest | secrets_service_pb2.DetectRequest,
) -> int:
    return len(request.text)


def _findings(messages) -> tuple[Finding, ...]:  # type: ignore[no-untyped-def]
    return tuple(canonical(finding_from_proto(f)) for f in messages)
