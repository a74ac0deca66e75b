"""The secrets service publishes its prefilters; the gateway screens clean answers with
them, over real gRPC, and retires its copy when the service's detectors change."""

from __future__ import annotations

import asyncio

from mithril.domain import Origin
from mithril.gateway.detectors import RemoteDetectors
from mithril.secrets.v1 import secrets_service_pb2 as secrets_pb
from mithril.secrets.v1 import secrets_service_pb2_grpc as secrets_grpc
from mithril.services.secrets.config import SecretsSettings
from mithril.services.secrets.detector import SecretsDetector
from mithril.services.secrets.detectors import REGISTRY
from mithril.services.secrets.server import create_server as create_secrets

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"


async def until_current(detectors: RemoteDetectors) -> None:
    for _ in range(200):
        detectors.may_redact(b"warm-up")  # starts a refresh when the screen is not current
        if detectors.secrets_screen.current():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the screen never caught up with the service")


async def test_the_service_publishes_its_prefilters_and_their_fingerprint(
    services, channel_to
) -> None:  # type: ignore[no-untyped-def]
    stub = secrets_grpc.SecretsServiceStub(channel_to(services.secrets.port))
    published = await stub.GetPrefilters(secrets_pb.GetPrefiltersRequest())
    detector = SecretsDetector.default()
    assert dict(published.prefilters) == detector.prefilters
    assert published.fingerprint == detector.prefilters_fingerprint
    assert len(published.fingerprint) == 64
    single = await stub.Detect(secrets_pb.DetectRequest(text="plain"))
    batch = await stub.DetectBatch(
        secrets_pb.DetectBatchRequest(requests=[secrets_pb.DetectRequest(text="plain")] * 2)
    )
    assert single.prefilters_fingerprint == batch.prefilters_fingerprint == published.fingerprint


async def test_clean_answers_need_no_call_once_the_screen_holds_the_set(services) -> None:  # type: ignore[no-untyped-def]
    detectors = RemoteDetectors(services.scanner_addr, services.secrets_addr, "", 5.0)
    try:
        assert detectors.may_redact(b"The capital of France is Paris.")  # nothing fetched yet
        await until_current(detectors)
        assert not detectors.may_redact(b"The capital of France is Paris.")
        assert detectors.may_redact(f"your key is {AWS_KEY}".encode())
        assert detectors.may_redact(b"write to ana@example.com")
        # whatever the screen lets through, the service finds nothing in
        for text in ("The capital of France is Paris.", "2 + 2 = 4", "ok"):
            if not detectors.may_redact(text.encode()):
                assert (await detectors.redact(text)).findings == ()
    finally:
        await detectors.close()


async def test_a_service_with_other_detectors_retires_the_screen(services) -> None:  # type: ignore[no-untyped-def]
    full = await create_secrets(SecretsSettings(host="127.0.0.1", port=0))
    await full.server.start()
    port = full.port
    detectors = RemoteDetectors(services.scanner_addr, f"127.0.0.1:{port}", "", 5.0)
    try:
        await until_current(detectors)
        before = detectors.secrets_screen.fingerprint
        assert not detectors.may_redact(b"plain words")

        # A rolling upgrade: the same address now serves fewer detectors.
        await full.stop(0)
        fewer = SecretsDetector({"aws_access_key": REGISTRY["aws_access_key"]})
        upgraded = await create_secrets(SecretsSettings(host="127.0.0.1", port=port), fewer)
        await upgraded.server.start()
        try:
            for _ in range(100):  # the channel reconnects; the first answer names the new set
                analysis = await detectors.analyse("plain words", Origin.USER, {"secrets"})
                if not analysis.unavailable:
                    break
                await asyncio.sleep(0.05)
            assert detectors.may_redact(b"plain words")  # retired until the new set arrives
            await until_current(detectors)
            assert detectors.secrets_screen.fingerprint == fewer.prefilters_fingerprint != before
            assert not detectors.may_redact(b"write to ana@example.com")  # no email detector
            assert detectors.may_redact(f"key {AWS_KEY}".encode())
        finally:
            await upgraded.stop(0)
    finally:
        await detectors.close()
