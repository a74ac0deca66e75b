# ruff: noqa: RUF001  (lookalike characters are what the homoglyph transform writes)
"""Obfuscated variants of labelled rows: the same attack, written so a naive reader misses it.

Each transform rewrites a whole text the way attackers hide instructions from keyword filters
and from models trained on plain text. Deterministic, so every run measures the same rows:

- `leetspeak`: a->4, e->3, i->1, o->0, s->5, t->7;
- `homoglyphs`: Latin a, c, e, i, o, p, x, y written with their Cyrillic lookalikes;
- `zero_width`: a zero-width space after every letter inside a word;
- `fullwidth`: ASCII written in the fullwidth forms (U+FF01..U+FF5E);
- `base64`: the whole text base64-encoded (UTF-8);
- `rot13`: letters rotated by 13.

`mithril bench detection` rewrites held-out prompts with each (`run_variants`): a sample of
the attacks the cascade flags as written (what does obfuscation cost?) and of the benign
prompts it passes (does obfuscation alone get a benign prompt blocked?).
"""

from __future__ import annotations

import base64
import codecs
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mithril.benchmark.detection import Decide
    from mithril.domain import Origin

VARIANT_ROWS = 250
"""Attacks, and benign prompts, rewritten per transform (a fixed sample, by text hash)."""

_LEET = str.maketrans("aeiostAEIOST", "431057431057")
_HOMOGLYPHS = str.maketrans("aceiopxyACEIOPXY", "асеіорхуАСЕІОРХУ")
_FULLWIDTH = str.maketrans({chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)} | {" ": "\u3000"})
ZERO_WIDTH_SPACE = "\u200b"


def leetspeak(text: str) -> str:
    return text.translate(_LEET)


def homoglyphs(text: str) -> str:
    return text.translate(_HOMOGLYPHS)


def zero_width(text: str) -> str:
    out: list[str] = []
    for index, char in enumerate(text):
        out.append(char)
        following = text[index + 1] if index + 1 < len(text) else ""
        if char.isalpha() and following.isalpha():
            out.append(ZERO_WIDTH_SPACE)
    return "".join(out)


def fullwidth(text: str) -> str:
    return text.translate(_FULLWIDTH)


def to_base64(text: str) -> str:
    return base64.b64encode(text.encode("utf-8")).decode("ascii")


def rot13(text: str) -> str:
    return codecs.encode(text, "rot13")


TRANSFORMS: dict[str, Callable[[str], str]] = {
    "leetspeak": leetspeak,
    "homoglyphs": homoglyphs,
    "zero_width": zero_width,
    "fullwidth": fullwidth,
    "base64": to_base64,
    "rot13": rot13,
}
"""Every transform, by the name the report uses."""


@dataclass(frozen=True, slots=True)
class VariantResult:
    """One transform over the sampled rows: attacks still flagged, benign prompts flagged."""

    transform: str
    attacks: int
    caught: int
    benign: int
    flagged: int

    @property
    def tpr(self) -> float | None:
        return self.caught / self.attacks if self.attacks else None

    @property
    def fpr(self) -> float | None:
        return self.flagged / self.benign if self.benign else None

    def to_dict(self) -> dict[str, object]:
        return asdict(self) | {"tpr": self.tpr, "fpr": self.fpr}


def sample(texts: Sequence[str], size: int = VARIANT_ROWS) -> list[str]:
    """`size` of `texts`, the same ones every run: lowest sha256 first."""
    return sorted(texts, key=lambda t: hashlib.sha256(t.encode("utf-8")).digest())[:size]


def run_variants(
    caught: Sequence[str],
    passed: Sequence[str],
    decide: Decide,
    origin: Origin,
    size: int = VARIANT_ROWS,
) -> list[VariantResult]:
    """Every transform over a sample of `caught` attacks and `passed` benign texts (as the
    cascade decided them written plainly), scanned from `origin`."""
    attacks, benign = sample(caught, size), sample(passed, size)
    results = []
    for name, transform in TRANSFORMS.items():
        hits = sum(decide(transform(text), origin)[0] for text in attacks)
        false = sum(decide(transform(text), origin)[0] for text in benign)
        results.append(VariantResult(name, len(attacks), hits, len(benign), false))
    return results
