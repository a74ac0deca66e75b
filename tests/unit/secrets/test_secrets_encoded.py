"""Credentials hidden in base64 or hex: found at every alignment, redacted whole, and encoded
text without a credential left alone."""

from __future__ import annotations

import base64
import random

import pytest
import re2
from secrets_samples import CREDENTIALS, ENCODED, Sample

from mithril.services.secrets import SecretsDetector
from mithril.services.secrets.detectors import REGISTRY
from mithril.services.secrets.detectors.encoded import base64_forms, markers

DETECTOR = SecretsDetector.default()
ENCODED_KIND = "encoded_credential"


def _encodings(raw: bytes) -> dict[str, str]:
    return {
        "base64": base64.b64encode(raw).decode(),
        "base64url": base64.urlsafe_b64encode(raw).decode().rstrip("="),
        "hex": raw.hex(),
        "HEX": raw.hex().upper(),
    }


PLAIN_CREDENTIALS = [sample for sample in CREDENTIALS if sample not in ENCODED]


@pytest.mark.parametrize("sample", PLAIN_CREDENTIALS, ids=lambda s: s.id)
def test_every_credential_kind_encoded_is_redacted_whole(sample: Sample) -> None:
    # One to three bytes before the credential shift it through every alignment of base64's
    # 3-byte groups; the link puts characters that are not the encoding's before the run.
    for before in ("", " ", "k: ", "note\n"):
        for name, encoded in _encodings(f"{before}{sample.text}".encode()).items():
            for text in (f"Here: {encoded} ok.", f"![x](https://c.example/p/{encoded})"):
                findings = DETECTOR.detect(text)
                assert [f.kind for f in findings] == [ENCODED_KIND], (name, before, text)
                assert encoded in text[findings[0].start : findings[0].end]
                assert encoded not in DETECTOR.redact(text).text


def test_every_credential_kind_has_a_plain_sample_to_encode() -> None:
    # A new credential detector needs a sample (and, if none of the markers sits beside its
    # credentials, a marker) or the test above would not cover it.
    kinds = {d.info.name for d in REGISTRY.values() if d.info.category == "credential"}
    rewritten = {ENCODED_KIND, "spelled_credential", "url_encoded_credential"}
    assert {sample.kind for sample in PLAIN_CREDENTIALS} == kinds - rewritten


@pytest.mark.parametrize(
    "plain",
    [
        "password: <your password>",
        "Use a Bearer token from the dashboard, never a shared one.",
        "The token budget is 4096 and the secret sauce is patience.",
        "See https://example.com/docs/install for the steps.",
        "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ3x\n-----END CERTIFICATE-----",
        "AKIAIOSFODNN7EXAMPLE is the documentation's example key id.",
    ],
)
def test_encoded_text_without_a_credential_is_left_alone(plain: str) -> None:
    prefilter = re2.compile(REGISTRY[ENCODED_KIND].prefilter)
    for encoded in _encodings(plain.encode()).values():
        text = f"payload {encoded} end"
        assert prefilter.search(text), "the marker is seen, so the text is decoded and read"
        assert DETECTOR.detect(text) == [], encoded


@pytest.mark.parametrize(
    "text",
    [
        "sha256 d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592",
        "![img](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42"
        "mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
        "test_firewall_redacts_every_streamed_credential_split_at_any_offset",
        "/usr/share/doc/python3-minimal/changelog.Debian",
    ],
)
def test_runs_that_show_no_marker_are_not_decoded(text: str) -> None:
    assert not re2.compile(REGISTRY[ENCODED_KIND].prefilter).search(text)
    assert DETECTOR.detect(text) == []


def test_a_markers_forms_occur_wherever_it_starts() -> None:
    rng = random.Random("encoded-forms")
    for marker in markers():
        assert len(marker) >= 4, marker  # shorter markers' forms would hit ordinary text
        for alignment in range(3):
            form = base64_forms(marker, alignment)
            assert len(form) >= 4
            for _ in range(3):
                head = rng.randbytes(3 * rng.randrange(3) + alignment)
                raw = head + marker + rng.randbytes(rng.randrange(6))
                assert form in base64.b64encode(raw).decode(), (marker, alignment)
                urlsafe = form.translate(str.maketrans("+/", "-_"))
                assert urlsafe in base64.urlsafe_b64encode(raw).decode()


def test_a_credential_at_the_end_of_a_long_blob_is_found_and_the_blob_redacted() -> None:
    aws = next(sample for sample in PLAIN_CREDENTIALS if sample.kind == "aws_access_key")
    tail = f" aws {aws.text}".encode()
    for encoded in (
        base64.b64encode(bytes(range(256)) * 2000 + tail).decode(),
        "ab" * 100_000 + tail.hex(),
    ):
        text = f"attachment {encoded} end"
        assert DETECTOR.redact(text).text == "attachment [REDACTED:encoded_credential] end"
