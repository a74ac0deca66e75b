"""Short turns a user sends mid-conversation: a benign source of prompts written for Mithril.

No dataset here holds them. s-labs' and neuralchemy's prompts of four words or fewer are
five attacks to one benign row ("Skip safety", "Get system", against "What is fraud?"), so
what a learned part makes of "continue", "show me the config" or "just answer yes or no"
was never measured, though a chat application's users send such turns all day.

`data/follow_ups.jsonl` (where the rows come from: `data/README.md`): each row's `text`,
`label` 0, `category` (continuation, correction, format, code, agent, ...), `author`, and
`part`: HELD_OUT for half the rows by sha256("mithril-follow-ups:" + text), DEV for the
rest and for the rows probed by hand before the file was written (`probed`). Scanned as
`Origin.USER`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

SOURCE = "benign/follow-ups"
DATA = Path(__file__).resolve().parent / "data" / "follow_ups.jsonl"
DEV, HELD_OUT = "dev", "held_out"


def part_of(text: str, probed: bool = False) -> str:
    """The split a row belongs to: DEV when it was probed, else half held out by hash."""
    if probed:
        return DEV
    digest = hashlib.sha256(f"mithril-follow-ups:{text}".encode()).digest()
    return HELD_OUT if digest[-1] % 2 == 0 else DEV


@dataclass(frozen=True, slots=True)
class FollowUp:
    text: str
    category: str
    author: str
    part: str
    probed: bool


def load(path: Path = DATA) -> list[FollowUp]:
    with path.open(encoding="utf-8") as handle:
        items = [json.loads(line) for line in handle if line.strip()]
    return [
        FollowUp(item["text"], item["category"], item["author"], item["part"], item["probed"])
        for item in items
    ]
