"""The streaming redactor: same output as one-shot redaction, and no secret byte leaks early.

Every sample secret is embedded in prose and streamed split at every position into two chunks,
one character at a time, and in seeded random chunkings. For each we assert that
(a) the concatenated output equals `redact(full_text).text` exactly, and
(b) no prefix of the output ever contains a 4+ character piece of the secret that is not also
    in the surrounding prose, and that the held-back text never exceeds `max_holdback`.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterable

import pytest
from secrets_samples import ALL, PEM, PROSE_AFTER, PROSE_BEFORE, Sample

from mithril.services.secrets import SecretsDetector, StreamingRedactor, StreamOutput
from mithril.services.secrets.detectors.pem_private_key import MAX_BODY

DETECTOR = SecretsDetector.default()
MARKER = re.compile(r"\[REDACTED:[a-z_]+\]")
PIECE = 4


def _forbidden(text: str, secret: str) -> set[str]:
    allowed = text.replace(secret, "\x00")
    pieces = {secret[i : i + PIECE] for i in range(len(secret) - PIECE + 1)}
    return {piece for piece in pieces if piece not in allowed}


def _stream(
    chunks: Iterable[str], forbidden: set[str], redactor: StreamingRedactor | None = None
) -> tuple[str, list[StreamOutput]]:
    redactor = redactor or DETECTOR.stream()
    outputs: list[StreamOutput] = []
    sent = ""
    for chunk in chunks:
        output = redactor.feed(chunk)
        outputs.append(output)
        sent += output.text
        assert redactor.held <= redactor.max_holdback
        visible = MARKER.sub("\x00", sent)
        leaked = [piece for piece in forbidden if piece in visible]
        assert not leaked, f"leaked {leaked!r} after chunk {chunk!r}"
    final = redactor.flush()
    outputs.append(final)
    return sent + final.text, outputs


def _case(sample: Sample) -> tuple[str, str, set[str]]:
    text = PROSE_BEFORE + sample.text + PROSE_AFTER
    forbidden = _forbidden(text, sample.secret)
    assert forbidden, "the test needs secret pieces that are not in the prose"
    return text, DETECTOR.redact(text).text, forbidden


@pytest.mark.parametrize("sample", ALL, ids=lambda s: s.id)
def test_every_two_chunk_split(sample: Sample) -> None:
    text, expected, forbidden = _case(sample)
    assert expected != text
    for cut in range(len(text) + 1):
        output, _ = _stream([text[:cut], text[cut:]], forbidden)
        assert output == expected, f"split at {cut}"


@pytest.mark.parametrize("sample", ALL, ids=lambda s: s.id)
def test_one_character_chunks(sample: Sample) -> None:
    text, expected, forbidden = _case(sample)
    output, _ = _stream(list(text), forbidden)
    assert output == expected


@pytest.mark.parametrize("sample", ALL, ids=lambda s: s.id)
def test_random_chunkings(sample: Sample) -> None:
    text, expected, forbidden = _case(sample)
    rng = random.Random(f"secrets-stream-{sample.id}")
    for _ in range(25):
        chunks, index = [], 0
        while index < len(text):
            size = rng.choice((1, 1, 2, 3, 4, 5, 8, 13, 40))
            chunks.append(text[index : index + size])
            index += size
        output, _ = _stream(chunks, forbidden)
        assert output == expected


@pytest.mark.parametrize("sample", ALL, ids=lambda s: s.id)
def test_kind_filtered_stream_matches_kind_filtered_redact(sample: Sample) -> None:
    text, _, forbidden = _case(sample)
    expected = DETECTOR.redact(text, kinds=[sample.kind]).text
    output, _ = _stream(list(text), forbidden, DETECTOR.stream(kinds=[sample.kind]))
    assert output == expected


def test_stream_findings_have_whole_stream_offsets() -> None:
    text = "\n".join(f"{PROSE_BEFORE}{sample.text}{PROSE_AFTER}" for sample in ALL)
    expected = DETECTOR.redact(text)
    rng = random.Random(7)
    chunks, index = [], 0
    while index < len(text):
        size = rng.randint(1, 30)
        chunks.append(text[index : index + size])
        index += size
    output, outputs = _stream(chunks, set())
    assert output == expected.text
    streamed = [finding for step in outputs for finding in step.findings]
    assert streamed == list(expected.findings)


def test_plain_prose_is_emitted_promptly() -> None:
    redactor = DETECTOR.stream()
    assert redactor.feed("Hello world, this is fine. ").text == "Hello world, this is fine. "
    words = (
        "The quick brown fox jumps over the lazy dog while the model keeps talking. " * 20
    ).split(" ")
    for word in words:
        redactor.feed(word + " ")
        assert redactor.held <= 1
    # An unfinished word is held only until it ends.
    redactor = DETECTOR.stream()
    assert redactor.feed("Hello wor").text == "Hello "
    assert redactor.feed("ld. ").text == "world. "


def test_keyword_context_and_digit_groups_are_held() -> None:
    redactor = DETECTOR.stream()
    out = redactor.feed("Config follows. password = ")
    assert out.text == "Config follows. "
    assert redactor.feed('"Tr0ub').text == ""
    out = redactor.feed('4dor&3x" done')
    assert out.text == 'password = "[REDACTED:credential_assignment]" '
    redactor = DETECTOR.stream()
    assert redactor.feed("My card is 4111 1111 ").text == "My card is "
    assert redactor.feed("1111 1111 thanks").text == "[REDACTED:credit_card] "


def test_pem_is_held_from_header_to_footer() -> None:
    redactor = DETECTOR.stream()
    head, body_and_footer = PEM.split("\n", 1)
    assert redactor.feed("key:\n").text == "key:\n"
    assert redactor.feed(head + "\n").text == ""
    for line in body_and_footer.splitlines(keepends=True)[:-1]:
        assert redactor.feed(line).text == ""
    out = redactor.feed(body_and_footer.splitlines()[-1] + "\nthanks, bye")
    assert out.text == "[REDACTED:private_key]\nthanks, "
    assert [f.kind for f in out.findings] == ["private_key"]
    assert redactor.flush().text == "bye"


def test_truncated_pem_is_redacted_at_flush() -> None:
    truncated = PEM.rsplit("-----END", 1)[0]
    redactor = DETECTOR.stream()
    assert redactor.feed(truncated).text == ""
    assert redactor.flush().text == "[REDACTED:private_key]\n"
    assert DETECTOR.redact(truncated).text == "[REDACTED:private_key]\n"


def test_pem_hold_is_bounded_by_the_stated_cap() -> None:
    redactor = DETECTOR.stream()
    redactor.feed("-----BEGIN RSA PRIVATE KEY-----\n")
    line = "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlqa2xtbm9wcXJzdHV2\n"
    for _ in range(MAX_BODY // len(line) + 10):
        redactor.feed(line)
        assert redactor.held <= redactor.max_holdback
    assert redactor.max_holdback <= MAX_BODY + 200


def test_feed_after_flush_is_an_error() -> None:
    redactor = DETECTOR.stream()
    redactor.feed("hello")
    assert redactor.flush().text == "hello"
    assert redactor.flush().text == ""
    with pytest.raises(RuntimeError):
        redactor.feed("more")


def test_streaming_cost_is_linear() -> None:
    prose = "Numbers 12 and 345, mail me later, the token count is high. " * 4000
    redactor = DETECTOR.stream()
    start = time.perf_counter()
    sent = "".join(redactor.feed(prose[i : i + 5]).text for i in range(0, len(prose), 5))
    sent += redactor.flush().text
    elapsed = time.perf_counter() - start
    assert sent == DETECTOR.redact(prose).text
    assert elapsed < 20.0
