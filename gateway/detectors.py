"""Where findings come from: the services over gRPC, or the same libraries in-process.

Both answer `analyse(text, origin)` with the same findings, so a decision does not depend
on which one the policy runs over; `mithril scan` uses the in-process one by default.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import grpc

from mithril.domain import Finding, Origin
from mithril.runtime.convert import finding_from_proto
from mithril.runtime.tracing import ClientTracingInterceptor
from mithril.scanner.v1 import scanner_service_pb2, scanner_service_pb2_grpc
from mithril.secrets.v1 import secrets_service_pb2, secrets_service_pb2_grpc

_log = logging.getLogger(__name__)

SCANNER = "scanner"
SECRETS = "secrets"


@dataclass(frozen=True, slots=True)
class Analysis:
    findings: tuple[Finding, ...]
    unavailable: tuple[str, ...] = ()
    """Services that could not answer; their findings are missing."""


@dataclass(frozen=True, slots=True)
class Redaction:
    text: str
    findings: tuple[Finding, ...]


class Detectors(Protocol):
    async def analyse(self, text: str, origin: Origin) -> Analysis: ...

    async def redact(self, text: str) -> Redaction: ...

    async def close(self) -> None: ...


def canonical(finding: Finding) -> Finding:
    """Confidences as they survive a trip through a protobuf float, rounded to 6 places,
    so in-process and remote findings compare equal."""
    as_float32 = struct.unpack("f", struct.pack("f", finding.confidence))[0]
    return dataclasses.replace(finding, confidence=round(as_float32, 6))


class LocalDetectors:
    """The scanner and secrets libraries, run in this process."""

    def __init__(self) -> None:
        from mithril.services.scanner.scanner import Scanner
        from mithril.services.secrets.detector import SecretsDetector

        self.scanner = Scanner.from_rule_files()
        self.secrets = SecretsDetector.default()

    async def analyse(self, text: str, origin: Origin) -> Analysis:
        scanned = self.scanner.scan(text, origin)
        found = self.secrets.detect(text)
        return Analysis(tuple(canonical(f) for f in (*scanned.findings, *found)))

    async def redact(self, text: str) -> Redaction:
        redaction = self.secrets.redact(text)
        return Redaction(redaction.text, tuple(canonical(f) for f in redaction.findings))

    async def close(self) -> None:
        return None


class ServiceUnavailableError(Exception):
    """A service needed for the answer could not be reached."""

    def __init__(self, service: str, detail: str) -> None:
        super().__init__(f"{service} service unavailable: {detail}")
        self.service = service
        self.detail = detail


_UNAVAILABLE_CODES = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.CANCELLED}
)


def open_channel(target: str) -> grpc.aio.Channel:
    """An insecure channel with tracing and round-robin over every resolved address."""
    return grpc.aio.insecure_channel(
        target,
        options=[
            ("grpc.lb_policy_name", "round_robin"),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
            ("grpc.enable_retries", 1),
        ],
        interceptors=[ClientTracingInterceptor()],
    )


class RemoteDetectors:
    """The scanner and secrets services over gRPC, called concurrently."""

    def __init__(self, scanner_addr: str, secrets_addr: str, token: str, timeout: float) -> None:
        self._channels = [open_channel(scanner_addr), open_channel(secrets_addr)]
        self.scanner = scanner_service_pb2_grpc.ScannerServiceStub(self._channels[0])
        self.secrets = secrets_service_pb2_grpc.SecretsServiceStub(self._channels[1])
        self._metadata: Sequence[tuple[str, str]] = (
            (("authorization", f"Bearer {token}"),) if token else ()
        )
        self.timeout = timeout

    async def _call(self, service: str, coroutine):  # type: ignore[no-untyped-def]
        try:
            return await coroutine
        except grpc.aio.AioRpcError as error:
            if error.code() in _UNAVAILABLE_CODES:
                raise ServiceUnavailableError(service, error.code().name) from error
            raise

    async def analyse(self, text: str, origin: Origin) -> Analysis:
        scan = self._call(
            SCANNER,
            self.scanner.Scan(
                scanner_service_pb2.ScanRequest(text=text, origin=int(origin)),  # type: ignore[arg-type]
                timeout=self.timeout,
                metadata=self._metadata,
            ),
        )
        detect = self._call(
            SECRETS,
            self.secrets.Detect(
                secrets_service_pb2.DetectRequest(text=text),
                timeout=self.timeout,
                metadata=self._metadata,
            ),
        )
        results = await asyncio.gather(scan, detect, return_exceptions=True)
        findings: list[Finding] = []
        unavailable: list[str] = []
        for result in results:
            if isinstance(result, ServiceUnavailableError):
                unavailable.append(result.service)
            elif isinstance(result, BaseException):
                raise result
            else:
                findings += (canonical(finding_from_proto(f)) for f in result.findings)
        return Analysis(tuple(findings), tuple(unavailable))

    async def redact(self, text: str) -> Redaction:
        response = await self._call(
            SECRETS,
            self.secrets.Redact(
                secrets_service_pb2.RedactRequest(text=text),
                timeout=self.timeout,
                metadata=self._metadata,
            ),
        )
        return Redaction(
            response.text, tuple(canonical(finding_from_proto(f)) for f in response.findings)
        )

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close()
