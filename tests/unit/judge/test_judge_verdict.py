"""Defensive parsing of LLM replies: fences, prose, missing fields, wrong types, garbage."""

from __future__ import annotations

import pytest

from mithril.services.judge.errors import UnparseableReply
from mithril.services.judge.verdict import (
    RATIONALE_CHARS,
    ParsedScore,
    ParsedVerdict,
    Verdict,
    extract_object,
    parse_score,
    parse_verdict,
)

A, B, U = Verdict.ATTACK, Verdict.BENIGN, Verdict.UNCERTAIN


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            '{"verdict": "attack", "score": 0.93, "rationale": "asks to ignore rules"}',
            ParsedVerdict(A, 0.93, "asks to ignore rules"),
        ),
        (
            '```json\n{"verdict": "benign", "score": 0.02, "rationale": "a recipe"}\n```',
            ParsedVerdict(B, 0.02, "a recipe"),
        ),
        ('```\n{"verdict":"benign","score":0.1,"rationale":"ok"}```', ParsedVerdict(B, 0.1, "ok")),
        (
            'Sure! Here is my answer: {"verdict": "attack", "score": 1, "rationale": "x"} Hope'
            " that helps {not json}",
            ParsedVerdict(A, 1.0, "x"),
        ),
        (
            '<think>the user wants {"verdict": "benign"}... no</think>\n'
            '{"verdict": "attack", "score": 0.8, "rationale": "r"}',
            ParsedVerdict(A, 0.8, "r"),
        ),
        ('{"verdict": "ATTACK ", "score": "0.7", "rationale": "r"}', ParsedVerdict(A, 0.7, "r")),
        ('{"Verdict": "Malicious", "Score": "85%", "Reason": "r"}', ParsedVerdict(A, 0.85, "r")),
        ('{"verdict": "safe", "score": 0, "rationale": ""}', ParsedVerdict(B, 0.0, "")),
        (
            '{"rationale": "braces } inside { strings", "verdict": "benign", "score": 0.2}',
            ParsedVerdict(B, 0.2, "braces } inside { strings"),
        ),
        (
            '{"outer": {"verdict": "attack"}, "verdict": "benign", "score": 0.3}',
            ParsedVerdict(B, 0.3, ""),
        ),
    ],
)
def test_well_formed_enough_replies(reply: str, expected: ParsedVerdict) -> None:
    assert parse_verdict(reply) == expected


@pytest.mark.parametrize(
    ("reply", "verdict", "score"),
    [
        ('{"verdict": "definitely bad"}', U, 0.5),  # unknown verdict -> uncertain
        ('{"verdict": 3, "score": 0.9}', U, 0.9),  # wrong type -> uncertain
        ('{"verdict": ["attack"], "score": 0.9}', U, 0.9),
        ('{"verdict": "attack"}', A, 0.9),  # missing score derived from the verdict
        ('{"verdict": "benign", "score": null}', B, 0.1),
        ('{"verdict": "uncertain", "score": "high"}', U, 0.5),
        ('{"verdict": "attack", "score": true}', A, 0.9),  # booleans are not scores
        ('{"verdict": "attack", "score": 7}', A, 1.0),  # clamped
        ('{"verdict": "benign", "score": -2}', B, 0.0),
        ('{"verdict": "benign", "score": NaN}', B, 0.1),
        ('{"verdict": "attack", "score": Infinity}', A, 0.9),
        ('{"score": 0.95}', A, 0.95),  # missing verdict derived from the score
        ('{"score": 0.05}', B, 0.05),
        ('{"score": 0.5}', U, 0.5),
    ],
)
def test_missing_or_wrong_fields_are_repaired(reply: str, verdict: Verdict, score: float) -> None:
    parsed = parse_verdict(reply)
    assert (parsed.verdict, parsed.score) == (verdict, score)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I cannot help with that.",
        "attack",
        "[1, 2, 3]",
        '{"verdict": "attack", "score": 0.9',  # cut off
        '{"rationale": "no verdict, no score"}',
        '{"verdict": null, "score": "n/a"}',
        "```json\n```",
        "<think>" + '{"verdict": "attack"}',  # only inside an unclosed think block
        "\x00\xff garbage \ud800",
    ],
)
def test_garbage_raises_a_clear_error_that_never_quotes_the_reply(reply: str) -> None:
    with pytest.raises(UnparseableReply) as caught:
        parse_verdict(reply)
    message = str(caught.value)
    assert message
    assert "cannot help" not in message and "rationale" not in message


def test_rationale_is_flattened_and_bounded() -> None:
    long = "word\n\t" * 200
    parsed = parse_verdict(
        '{"verdict": "benign", "rationale": "'
        + long.replace("\n", "\\n").replace("\t", "\\t")
        + '"}'
    )
    assert len(parsed.rationale) == RATIONALE_CHARS
    assert parsed.rationale.endswith("…")
    assert "\n" not in parsed.rationale and "\t" not in parsed.rationale
    assert parse_verdict('{"verdict": "benign", "rationale": {"a": 1}}').rationale == ""
    assert parse_verdict('{"verdict": "benign", "rationale": 42}').rationale == "42"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (
            '{"score": 0.8, "rationale": "contradicts statement 2"}',
            ParsedScore(0.8, "contradicts statement 2"),
        ),
        ('```json\n{"score": "1", "rationale": "r"}\n```', ParsedScore(1.0, "r")),
        ('Answer: {"score": 1.7}', ParsedScore(1.0, "")),
        ('{"score": -0.1, "reason": "none"}', ParsedScore(0.0, "none")),
    ],
)
def test_score_replies(reply: str, expected: ParsedScore) -> None:
    assert parse_score(reply) == expected


@pytest.mark.parametrize(
    "reply", ['{"verdict": "attack"}', '{"score": "high"}', "0.9", '{"score": [0.9]}']
)
def test_score_replies_need_a_numeric_score(reply: str) -> None:
    with pytest.raises(UnparseableReply):
        parse_score(reply)


def test_extract_object_prefers_fenced_blocks() -> None:
    reply = 'Example: {"score": 0} but really:\n```json\n{"score": 1}\n```'
    assert extract_object(reply) == {"score": 1}
