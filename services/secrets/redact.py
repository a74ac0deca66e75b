"""Replace finding spans with "[REDACTED:<kind>]" markers."""

from __future__ import annotations

from collections.abc import Iterable

from mithril.domain import Finding


def marker(kind: str) -> str:
    """The text that replaces a redacted span."""
    return f"[REDACTED:{kind}]"


def apply_redactions(text: str, findings: Iterable[Finding], offset: int = 0) -> str:
    """Replace each finding's span (offsets relative to `text` plus `offset`) with its marker.

    Findings must be in text order and must not overlap; findings without a span are skipped.
    """
    parts: list[str] = []
    cursor = 0
    for finding in findings:
        if finding.start is None or finding.end is None:
            continue
        start, end = finding.start - offset, finding.end - offset
        parts.append(text[cursor:start])
        parts.append(marker(finding.kind))
        cursor = end
    parts.append(text[cursor:])
    return "".join(parts)
