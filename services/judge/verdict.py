"""Defensive parsing of the LLM's reply into a verdict or a score.

Models wrap JSON in code fences, add prose around it, think aloud first, misspell
fields, send numbers as strings. The parser strips `<think>` blocks and fences, takes the
first balanced JSON object, and validates it with pydantic leniently: an unknown verdict
is "uncertain", scores are clamped to [0, 1], a missing score is derived from the
verdict (and a missing verdict from the score), the rationale is flattened and cut to
RATIONALE_CHARS. A reply with no usable object raises `UnparseableReply`, whose message
never quotes the reply (it may echo the untrusted text).
"""

from __future__ import annotations

import enum
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from mithril.services.judge.errors import UnparseableReply

RATIONALE_CHARS = 300

_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")
_DECODER = json.JSONDecoder()


class Verdict(enum.StrEnum):
    ATTACK = "attack"
    BENIGN = "benign"
    UNCERTAIN = "uncertain"


_SYNONYMS = {
    "attack": Verdict.ATTACK,
    "malicious": Verdict.ATTACK,
    "injection": Verdict.ATTACK,
    "jailbreak": Verdict.ATTACK,
    "unsafe": Verdict.ATTACK,
    "benign": Verdict.BENIGN,
    "safe": Verdict.BENIGN,
    "clean": Verdict.BENIGN,
    "uncertain": Verdict.UNCERTAIN,
    "unsure": Verdict.UNCERTAIN,
    "unknown": Verdict.UNCERTAIN,
}

SCORE_OF_VERDICT = {Verdict.ATTACK: 0.9, Verdict.BENIGN: 0.1, Verdict.UNCERTAIN: 0.5}
"""The score assumed when a reply gives a verdict without one."""

ATTACK_FROM = 0.7
BENIGN_UP_TO = 0.3
"""A reply with a score and no verdict: attack at or above ATTACK_FROM, benign at or below
BENIGN_UP_TO, uncertain between."""


@dataclass(frozen=True, slots=True)
class ParsedVerdict:
    verdict: Verdict
    score: float
    rationale: str


@dataclass(frozen=True, slots=True)
class ParsedScore:
    score: float
    rationale: str


def extract_object(reply: str) -> dict[str, Any]:
    """The first balanced JSON object in `reply` (fenced blocks first, then the rest)."""
    text = _THINK.sub("", reply)
    candidates = [match.group(1) for match in _FENCE.finditer(text)] + [text]
    for candidate in candidates:
        found = _first_object(candidate)
        if found is not None:
            return found
    raise UnparseableReply("the reply holds no JSON object")


def _first_object(text: str) -> dict[str, Any] | None:
    start = text.find("{")
    while start != -1:
        try:
            value, _ = _DECODER.raw_decode(text, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    return None


def _as_score(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        text = value.strip()
        percent = text.endswith("%")
        try:
            value = float(text.rstrip("%").strip())
        except ValueError:
            return None
        if percent:
            value /= 100
    if not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return min(1.0, max(0.0, float(value)))


def _as_rationale(value: Any) -> str:
    if value is None or isinstance(value, dict | list):
        return ""
    text = " ".join(_CONTROL.sub(" ", str(value)).split())
    if len(text) > RATIONALE_CHARS:
        text = text[: RATIONALE_CHARS - 1].rstrip() + "…"
    return text


class _Reply(BaseModel):
    """A reply object, read leniently: every field may be absent or of the wrong type."""

    model_config = ConfigDict(extra="ignore")

    verdict: Verdict | None = None
    score: float | None = None
    rationale: str = ""

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict(cls, value: Any) -> Verdict | None:
        if value is None:
            return None
        if not isinstance(value, str):
            return Verdict.UNCERTAIN
        return _SYNONYMS.get(value.strip().lower(), Verdict.UNCERTAIN)

    @field_validator("score", mode="before")
    @classmethod
    def _score(cls, value: Any) -> float | None:
        return _as_score(value)

    @field_validator("rationale", mode="before")
    @classmethod
    def _rationale(cls, value: Any) -> str:
        return _as_rationale(value)


def _reply(reply: str) -> _Reply:
    found = extract_object(reply)
    lowered = {str(key).strip().lower(): value for key, value in found.items()}
    if "reason" in lowered and "rationale" not in lowered:
        lowered["rationale"] = lowered["reason"]
    return _Reply.model_validate(lowered)


def parse_verdict(reply: str) -> ParsedVerdict:
    """A judge reply: `{"verdict", "score", "rationale"}`, read defensively."""
    parsed = _reply(reply)
    if parsed.verdict is None and parsed.score is None:
        raise UnparseableReply("the reply's JSON object has neither a verdict nor a score")
    if parsed.verdict is None:
        assert parsed.score is not None
        if parsed.score >= ATTACK_FROM:
            verdict = Verdict.ATTACK
        elif parsed.score <= BENIGN_UP_TO:
            verdict = Verdict.BENIGN
        else:
            verdict = Verdict.UNCERTAIN
        return ParsedVerdict(verdict, parsed.score, parsed.rationale)
    score = parsed.score if parsed.score is not None else SCORE_OF_VERDICT[parsed.verdict]
    return ParsedVerdict(parsed.verdict, score, parsed.rationale)


def parse_score(reply: str) -> ParsedScore:
    """A contradiction or danger reply: `{"score", "rationale"}`, read defensively."""
    parsed = _reply(reply)
    if parsed.score is None:
        raise UnparseableReply("the reply's JSON object has no numeric score")
    return ParsedScore(parsed.score, parsed.rationale)
