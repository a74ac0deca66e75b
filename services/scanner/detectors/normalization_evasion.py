"""`normalization_evasion`: an attack phrase visible only after normalisation.

When a rule of another family matched the normalised view but not the raw text, the text was
written to slip past literal matching (homoglyphs, leetspeak, spaced or hidden characters);
that deliberate obfuscation is evidence of its own. Span: the mapped span of the first such
match, when it could be mapped.
"""

from __future__ import annotations

from collections.abc import Iterator

from ..rules import Rule
from .base import Hit, ScanContext


class NormalizationEvasionDetector:
    name = "normalization_evasion"

    def detect(self, rule: Rule, context: ScanContext) -> Iterator[Hit]:
        raw = context.rule_ids_in("raw")
        for hit in context.hits:
            if hit.view != "normalized" or hit.rule.family == "obfuscation":
                continue
            if hit.rule.id not in raw:
                yield Hit("normalized", hit.start, hit.end)
                return
