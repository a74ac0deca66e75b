"""Gated scanning for the digit PII detectors (phone, SSN, card): only digit runs that could
pass validation reach Python.

Ordinary text is full of numbers (dates, prices, versions, ids) that the digit regexes match
and the Python validators then reject, which used to cost microseconds per number. Here:

1. One RE2 pass of the combined *gate* of the present detectors. A detector's gate is a
   necessary condition of acceptance: whenever it accepts a match [start, end), its gate
   matches at some p with start - GATE_REACH <= p < end (a structural shape such as 12 card
   digits or NNN-NN-NNNN, or a context keyword of its validator within GATE_REACH before
   the match). With finditer's non-overlapping hits there is then a hit h with
   h.start <= p < h.end, so the match starts inside [h.start, h.end + GATE_REACH].
2. Every gated pattern uses only REGION_CHARS, so no match contains another character and
   the text splits into independent *regions* (maximal runs of REGION_CHARS). The regex's
   finditer chain restricted to a region is exactly finditer run on that region alone.
3. Each region that has a digit and meets a hit's window is scanned, once, by every present
   detector with its own regex and validator, exactly as an unrestricted scan would (unless
   the region has fewer digits than any match the detector accepts).

So the candidates are identical to scanning the whole text, and text without gate hits (a
date every line, prices, versions) costs only the one gate pass.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import re2

from mithril.services.secrets.detectors._pii import PiiDetector
from mithril.services.secrets.detectors.base import Candidate, compile_re2, iter_spans
from mithril.services.secrets.textview import TextView

REGION_CHARS = "0123456789 .()+-ext"
"""Every character a gated detector's regex can match (digits, separators, "x"/"ext")."""
GATE_REACH = 48
"""Characters before a match that its validator reads for context keywords."""

_DIGIT = ord("D")
_OTHER = ord("H")
_MASK = bytes(
    _DIGIT if chr(b).isdigit() and b < 128 else (ord("-") if chr(b) in REGION_CHARS else _OTHER)
    for b in range(256)
)
"""Byte classes: D for an ASCII digit, - for another REGION_CHARS byte, H for the rest (all
bytes of non-ASCII characters included)."""

_IGNORECASE_EXTRA = {"i": "\u0130\u0131", "k": "\u212a", "s": "\u017f"}
"""Non-ASCII characters that Python's re matches case-insensitively with an ASCII letter."""


def _variants(char: str) -> tuple[str, str]:
    """(ASCII forms, non-ASCII forms) of a keyword character under Python's `(?i)`."""
    if not char.isalpha():
        return re2.escape(char), ""
    return f"{char.lower()}{char.upper()}", _IGNORECASE_EXTRA.get(char.lower(), "")


def keyword_gate(word: str, before: bool = False, after: bool = False) -> str:
    """An RE2 pattern matching wherever Python's `(?i)` pattern `[\\b]word[\\b]` matches.

    `before`/`after` mirror a \\b before/after the word in the validator's pattern. Next to
    an ASCII character RE2's ASCII \\b is at least as permissive as Python's Unicode one; a
    non-ASCII variant of a letter gets no boundary check at all, so this is a superset."""
    parts = []
    last = len(word) - 1
    for index, char in enumerate(word):
        ascii_forms, extra = _variants(char)
        ascii_class = f"[{ascii_forms}]" if len(ascii_forms) > 1 or char.isalpha() else ascii_forms
        edge_before = before and index == 0
        edge_after = after and index == last
        if not (edge_before or edge_after):
            parts.append(f"[{ascii_forms}{extra}]" if char.isalpha() else ascii_class)
            continue
        bounded = (r"\b" if edge_before else "") + ascii_class + (r"\b" if edge_after else "")
        parts.append(f"(?:{bounded}|[{extra}])" if extra else bounded)
    return "".join(parts)


NOT_AFTER_RUN = r"(?:^|[^0-9A-Za-z_+])"
"""What precedes an accepted digit match (`digit_run_edge_before` rejects the rest)."""


@functools.lru_cache(maxsize=64)
def _gate(detectors: tuple[PiiDetector, ...]) -> re2._Regexp:
    return compile_re2("|".join(f"(?:{d.gate})" for d in detectors))


def scan_gated(view: TextView, detectors: Sequence[PiiDetector], pos: int) -> list[list[Candidate]]:
    """Per detector, the candidates `detector.find_in(view, pos)` would yield."""
    found: list[list[Candidate]] = [[] for _ in detectors]
    data = view.data
    size = len(data)
    start = view.to_byte(pos)
    gate_from = view.to_byte(max(0, pos - GATE_REACH - 1))
    reach = GATE_REACH if view.ascii else 4 * GATE_REACH
    mask = b""
    done = start  # bytes before this are scanned (or before `pos`)
    for spans in iter_spans(_gate(tuple(detectors)), data, gate_from):
        hit_start, hit_end = spans[0]
        lo = hit_start if hit_start > done else done
        hi = hit_end + reach
        if hi > size:
            hi = size
        if lo >= hi:
            continue
        if not mask:
            mask = data.translate(_MASK)
        while lo < hi:
            digit = mask.find(b"D", lo, hi)
            if digit < 0:
                break
            # The region around the digit, from `done` at the earliest: a region that began
            # before `done` began before `pos` (finditer starts there) or was scanned already.
            region_start = max(done, mask.rfind(b"H", done, digit) + 1)
            region_end = mask.find(b"H", digit)
            if region_end < 0:
                region_end = size
            # A region with fewer digits than a detector needs holds nothing it accepts.
            digits = mask.count(b"D", region_start, region_end)
            for index, detector in enumerate(detectors):
                if digits >= detector.min_digits:
                    found[index].extend(detector.find_between(view, region_start, region_end))
            done = lo = region_end
    return found
