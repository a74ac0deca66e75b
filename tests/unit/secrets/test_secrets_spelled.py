"""Credentials spelled out (invisible characters between their characters, every character
spaced, tag characters): found, redacted whole, and text that is only laced or spaced left
alone."""

from __future__ import annotations

import random

import pytest
from secrets_samples import CREDENTIALS, Sample

from mithril.services.invisible import INVISIBLE, TAG_OFFSET
from mithril.services.secrets import SecretsDetector
from mithril.services.secrets.detectors import REGISTRY
from mithril.services.secrets.detectors.reading import read_again
from mithril.services.secrets.detectors.spelled import joined, shown

DETECTOR = SecretsDetector.default()
SPELLED_KIND = "spelled_credential"
SPELLED = [sample for sample in CREDENTIALS if sample.kind != "private_key"]


def _laced(secret: str, every: int, separator: str) -> str:
    return "".join(
        char + (separator if (i + 1) % every == 0 and i + 1 < len(secret) else "")
        for i, char in enumerate(secret)
    )


def _spellings(secret: str) -> dict[str, str]:
    return {
        "zero-width every character": _laced(secret, 1, "\u200b"),
        "word joiner every fifth": _laced(secret, 5, "\u2060"),
        "soft hyphen once": _laced(secret, len(secret) // 2, "\u00ad"),
        "bidi marks in pairs": _laced(secret, 3, "\u200e\u200f"),
        "tag characters": "".join(chr(TAG_OFFSET + ord(char)) for char in secret),
        "spaced": " ".join(secret),
        "spaced, no-break": "\u00a0".join(secret),
    }


@pytest.mark.parametrize("sample", SPELLED, ids=lambda s: s.id)
def test_every_credential_kind_spelled_out_is_redacted_whole(sample: Sample) -> None:
    for name, spelled in _spellings(sample.secret).items():
        written = sample.text.replace(sample.secret, spelled)
        if name.startswith("spaced"):
            # A spaced run is whole tokens: the key name or URI glued to the secret is
            # spaced too ("p o s t g r e s : / / ...").
            written = " ".join(
                spelled[1].join(token) if sample.secret in token else token
                for token in sample.text.split(" ")
            )
        text = f"Here: {written} ok."
        start = text.index(spelled)
        findings = DETECTOR.detect(text)
        covering = [f for f in findings if f.start <= start and start + len(spelled) <= f.end]
        assert covering, (name, text, findings)
        # A quoted value may hold spaces: then the plain detector reads it as written.
        kinds = {SPELLED_KIND, sample.kind} if name.startswith("spaced") else {SPELLED_KIND}
        assert covering[0].kind in kinds, (name, text)
        if covering[0].kind == SPELLED_KIND:
            assert (covering[0].start, covering[0].end) == (start, start + len(spelled))
        assert spelled not in DETECTOR.redact(text).text, name


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ("p a s s w o r d = Tr0ub4dor&3x", "Tr0ub4dor&3x"),
        ("P A S S W O R D :  Tr0ub4dor&3x", "Tr0ub4dor&3x"),
        ("api\u200b_key='k3yVx81Lmn0Qz'", "k3yVx81Lmn0Qz"),
        ("Authorization: Bea\u200brer abcDEF123456ghiJKL7890mno", "abcDEF123456ghiJKL7890mno"),
        ("pass\u00adword = " + " ".join("Tr0ub4dor&3x"), " ".join("Tr0ub4dor&3x")),
    ],
)
def test_a_key_name_spelled_out_still_marks_its_value(text: str, secret: str) -> None:
    findings = DETECTOR.detect(text)
    assert [(f.kind, text[f.start : f.end]) for f in findings] == [(SPELLED_KIND, secret)]


def test_a_plain_credential_keeps_its_own_kind_beside_invisible_characters() -> None:
    aws = next(sample for sample in CREDENTIALS if sample.kind == "aws_access_key")
    for text in (
        f"zero\u200bwidth here, and the key {aws.text} there",
        f"{aws.text}\u200b",
        f"s p a c e d  w o r d s then {aws.text}",
    ):
        assert [f.kind for f in DETECTOR.detect(text)] == ["aws_access_key"], text
    # Within the context the assignment detector reads, but not in the key name.
    text = "done\u200b. password = Tr0ub4dor&3x"
    assert [f.kind for f in DETECTOR.detect(text)] == ["credential_assignment"]


@pytest.mark.parametrize(
    "text",
    [
        "co\u00adop\u00ader\u00ada\u00adtion is hy\u00adphen\u00adat\u00aded for line breaks",
        "family: \U0001f468\u200d\U0001f469\u200d\U0001f467, flag: \U0001f3f4\U000e0067\U000e0062"
        "\U000e0073\U000e0063\U000e0074\U000e007f",
        "\ufeffpassword handling is described below; set it in the config file",
        "می\u200cخواهم password را عوض کنم",  # noqa: RUF001 (Persian joins words with ZWNJ)
        "T A B L E   O F   C O N T E N T S",
        "x = 1 + 2 * 3 - 4 / 5 + 6 % 7 and token = a + b + c + d + e",
        "p a s s w o r d = < y o u r   p a s s w o r d >",
        "A K I A I O S F O D N N 7 E X A M P L E is the documented example key id",
    ],
)
def test_laced_or_spaced_text_without_a_credential_is_left_alone(text: str) -> None:
    assert DETECTOR.may_find(text.encode()), "the text is read a second time"
    assert DETECTOR.detect(text) == []


def test_the_reading_maps_every_character_back() -> None:
    rng = random.Random("spelled-reading")
    invisible = [chr(code) for code in INVISIBLE]
    for _ in range(200):
        plain = "".join(rng.choice("AKIaz09_-=:. ") for _ in range(rng.randrange(1, 40)))
        text, origin = "", []
        for char in plain:
            text += "".join(rng.choice(invisible) for _ in range(rng.randrange(3)))
            origin.append(len(text))
            text += chr(TAG_OFFSET + ord(char)) if rng.random() < 0.1 else char
        reading = read_again(text, 0, len(text), (shown, joined))
        assert reading.text == plain
        assert [reading.original(i) for i in range(len(plain))] == origin
        for index in range(len(plain)):
            removed_or_turned = text[origin[index]] != plain[index] or (
                index > 0 and origin[index] != origin[index - 1] + 1
            )
            if removed_or_turned:
                lo = origin[index - 1] + 1 if index else 0
                assert reading.changed_within(lo, origin[index] + 1)


def test_a_spaced_run_is_joined_and_mapped_back() -> None:
    text = "key (A K I A 1 2 3 4). Not  a  run, n o r  this."
    reading = read_again(text, 0, len(text), (shown, joined))
    assert reading.text == "key (AKIA1234). Not  a  run, n o r  this."
    start = reading.text.index("AKIA1234")
    assert reading.original(start) == text.index("A K")
    assert reading.original(start + 7) == text.index("4)")


def test_the_detector_is_registered_as_a_credential() -> None:
    detector = REGISTRY[SPELLED_KIND]
    assert detector.info.category == "credential"
    assert detector.max_window <= REGISTRY["private_key"].max_window
