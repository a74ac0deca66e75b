"""`encoded_payload`: an encoded segment (base64, hex, URL, rot13) that decodes to an attack.

Fires once per scan, on the first decoded segment in which any rule of another family
matched; the finding's span is the encoded segment in the original text.
Params: `min_words` (int, default 0): when > 0, also fire on decoded segments that merely read
as natural language with at least that many words (weaker evidence; use a lower confidence).
"""

from __future__ import annotations

from collections.abc import Iterator

from ..rules import Rule
from .base import Hit, ScanContext


class EncodedPayloadDetector:
    name = "encoded_payload"

    def detect(self, rule: Rule, context: ScanContext) -> Iterator[Hit]:
        min_words = int(rule.params.get("min_words", 0))
        for decoded in context.segments:
            other = {rid for rid in decoded.rule_ids if not rid.startswith("obfuscation.")}
            if min_words <= 0 and other:
                yield Hit("raw", decoded.start, decoded.end)
                return
            if min_words > 0 and len(decoded.segment.text.split()) >= min_words:
                yield Hit("raw", decoded.start, decoded.end)
                return
