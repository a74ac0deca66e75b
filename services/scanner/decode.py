"""Decoded views: base64, hex, URL-encoded and rot13 segments, decoded and scanned again.

Each decoder finds bounded candidate segments with an RE2 pattern (only when the matching
trigger in the rule set fired), tries at most `MAX_CANDIDATES` of them, keeps at most
`MAX_SEGMENTS`, at most `MAX_SEGMENT_CHARS` each and `MAX_TOTAL_CHARS` in all, and keeps a
result only when it reads as text (valid UTF-8, mostly printable, mostly letters and spaces).
The scanner decodes at most `MAX_DEPTH` levels deep (base64 inside base64).
"""

from __future__ import annotations

import base64
import binascii
import codecs
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import unquote_plus

import re2

MAX_SEGMENTS = 16
MAX_CANDIDATES = 64
MAX_SEGMENT_CHARS = 64 * 1024
MAX_TOTAL_CHARS = 256 * 1024
MAX_DEPTH = 2
ROT13_WINDOW = 1500

TRIGGERS: dict[str, str] = {
    "base64": r"[A-Za-z0-9+/]{20,}={0,2}",
    "hex": r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[ ,:]?){10,}",
    "url": r"(?:%[0-9a-fA-F]{2}[^\s%]{0,16}){3,}",
    # an explicit mention, or rot13 forms of words attacks need (ignore, previous,
    # instructions, system, prompt, disregard, forget, reveal, password, secret)
    "rot13": (
        r"(?i)\brot-?13\b|\bcaesar\b|\b(?:vtaber|cerivbhf|vafgehpgvbaf?|flfgrz|cebzcg|"
        r"qvfertneq|sbetrg|erirny|cnffjbeq|frperg|vtaberq)\b"
    ),
}
"""Cheap patterns (added to the rule set) whose match means a decoded view may exist."""

_SEGMENT = {
    "base64": re2.compile(r"[A-Za-z0-9+/\-_]{16,}={0,2}"),
    "hex": re2.compile(r"(?:(?:\\x|0x)?[0-9a-fA-F]{2}[ ,:]?){8,}"),
    "url": re2.compile(r"\S*(?:%[0-9a-fA-F]{2}[^\s%]*){3,}"),
    "rot13": re2.compile(TRIGGERS["rot13"]),
}
_HEX_SEPARATORS = str.maketrans("", "", " ,:")


@dataclass(frozen=True, slots=True)
class Segment:
    """A decoded piece of the input: its view name, the decoded text, its span in the input."""

    view: str
    text: str
    start: int
    end: int


def looks_like_text(decoded: str) -> bool:
    """Mostly printable letters and spaces, with at least a few letters."""
    if len(decoded) < 6:
        return False
    printable = sum(c.isprintable() or c in "\n\t\r" for c in decoded)
    letters = sum(c.isalpha() or c == " " for c in decoded)
    return printable >= 0.95 * len(decoded) and letters >= 0.6 * len(decoded)


def _decode_base64(segment: str) -> str | None:
    if len(segment.rstrip("=")) % 4 == 1:
        return None
    padded = segment.rstrip("=") + "=" * (-len(segment.rstrip("=")) % 4)
    altchars = b"-_" if ("-" in segment or "_" in segment) else None
    try:
        raw = base64.b64decode(padded, altchars=altchars, validate=True)
        return raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None


def _decode_hex(segment: str) -> str | None:
    # A segment is `((\\x|0x)?XX[ ,:]?)+`, so dropping the prefixes, then the separators,
    # leaves exactly the digit pairs (plain string operations: linear and fast).
    digits = segment.replace("\\x", "").replace("0x", "").translate(_HEX_SEPARATORS)
    if len(digits) % 2:
        digits = digits[:-1]
    try:
        return bytes.fromhex(digits).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


def _decode_url(segment: str) -> str | None:
    decoded = unquote_plus(segment, errors="strict")
    return decoded if decoded != segment else None


_DECODERS: dict[str, Callable[[str], str | None]] = {
    "base64": _decode_base64,
    "hex": _decode_hex,
    "url": _decode_url,
}


def _segments(view: str, text: str) -> Iterator[Segment]:
    if view == "rot13":
        last_end = -1
        for match in _SEGMENT["rot13"].finditer(text):
            start = max(match.start() - ROT13_WINDOW // 3, last_end, 0)
            end = min(len(text), match.end() + ROT13_WINDOW)
            if end <= last_end:
                continue
            last_end = end
            yield Segment("rot13", codecs.encode(text[start:end], "rot13"), start, end)
        return
    decoder = _DECODERS[view]
    for count, match in enumerate(_SEGMENT[view].finditer(text)):
        if count >= MAX_CANDIDATES:
            return
        start, end = match.start(), match.end()
        if end - start > MAX_SEGMENT_CHARS:
            end = start + MAX_SEGMENT_CHARS
        try:
            decoded = decoder(text[start:end])
        except UnicodeDecodeError:
            decoded = None
        if decoded is not None and looks_like_text(decoded):
            yield Segment(view, decoded, start, end)


def decode_segments(text: str, views: set[str] | frozenset[str]) -> list[Segment]:
    """Decoded segments of `text` for the given decoded views (bounded in count and size)."""
    found: list[Segment] = []
    total = 0
    for view in ("base64", "hex", "url", "rot13"):
        if view not in views:
            continue
        for count, segment in enumerate(_segments(view, text)):
            if count >= MAX_SEGMENTS or total + len(segment.text) > MAX_TOTAL_CHARS:
                break
            total += len(segment.text)
            found.append(segment)
    return found
