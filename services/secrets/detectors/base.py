"""The detector protocol, the candidate type, and helpers for building RE2 patterns.

Every detector finds *candidates* with RE2 (linear time) and validates them in Python. RE2
runs on the text's UTF-8 bytes (`TextView.data`, encoded once per call), never on the `str`:
the re2 wrapper re-encodes a `str` on every call, which would make each search O(text). Each
also answers `partial_start`: where, at the end of a text, a match could begin that more text
would complete. The streaming redactor holds back from there, so its hold-back is exactly "the
tail that could still grow into a match", bounded by the detector's `max_window`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import re2

from mithril.domain import Severity
from mithril.services.secrets.kinds import KindInfo
from mithril.services.secrets.textview import TextView

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_BOUNDS_OPTIONS = re2.Options()
_BOUNDS_OPTIONS.log_errors = False
_BOUNDS_OPTIONS.never_capture = True

TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")


@dataclass(frozen=True, slots=True)
class Candidate:
    """One validated match: the span to redact and how sure the detector is."""

    start: int
    end: int
    kind: str
    confidence: float
    severity: Severity
    priority: int
    region_end: int = -1
    """End of the text the match examined (>= end); more text before it could change it."""

    @property
    def settled_end(self) -> int:
        return max(self.end, self.region_end)


@runtime_checkable
class Detector(Protocol):
    """One kind of secret. Implementations are immutable and safe to share."""

    info: KindInfo
    priority: int
    """Overlap resolution: higher wins (more specific kinds rank higher)."""
    prefilter: str
    """An RE2 pattern for the shared prefilter set: no hit means `find` yields nothing."""
    lookbehind: int
    """How many characters before a span its match may depend on (key name, scheme, ...)."""
    max_window: int
    """The longest stretch of text (context plus span) one match can cover."""
    partial_pattern: str | None
    """RE2 pattern matching every prefix of every match (context included), or None when
    `partial_start` needs more than a regex. The streaming redactor ORs these together."""

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        """Validated candidates whose regex match starts at or after `pos`."""
        ...

    def find_in(self, view: TextView, pos: int = 0) -> Iterator[Candidate]:
        """`find` on an already-encoded text (offsets are characters, as in `find`)."""
        ...

    def partial_start(self, text: str, pos: int) -> int | None:
        """Earliest index >= pos from which text[i:] could be the beginning of a match that
        continues past the end of `text`; None when no such index exists."""
        ...


def prefilter_set(patterns: Iterable[str]) -> Callable[[bytes], list[int]]:
    """One compiled RE2 set of `patterns`: called on UTF-8 bytes, it returns the indices of
    the patterns that occur (empty when none does). The set's own binding, without the
    per-call wrapper, since it runs on every text."""
    prefilter = re2.Set.SearchSet()
    for pattern in patterns:
        prefilter.Add(pattern)
    prefilter.Compile()
    return prefilter._set.Match


def compile_re2(pattern: str) -> re2._Regexp:
    return re2.compile(pattern, _OPTIONS)


def compile_bounds(pattern: str) -> re2._Regexp:
    """`pattern` with every group non-capturing: the same matches, found by RE2's DFA alone
    (submatch extraction runs a slower engine over the whole match, however long)."""
    return re2.compile(pattern, _BOUNDS_OPTIONS)


def iter_bounded_spans(
    bounds: re2._Regexp, full: re2._Regexp, data: bytes, pos: int, max_len: int
) -> Iterator[list[tuple[int, int]] | None]:
    """`iter_spans(full, data, pos)`, except that a match longer than `max_len` yields None
    instead of its group spans (callers reject such matches anyway)."""
    match = full._regexp.Match
    for ((start, end),) in iter_spans(bounds, data, pos):
        if end - start > max_len:
            yield None
            continue
        # Anchored at the same start and cut at the same end, leftmost-first semantics pick
        # the same match (the patterns have no end-of-text or word-boundary assertions).
        yield match(_ANCHOR_START, data, start, end)


_UNANCHORED = re2._Anchor.UNANCHORED
_ANCHOR_START = re2._Anchor.ANCHOR_START


def iter_spans(
    regex: re2._Regexp, data: bytes, pos: int = 0, endpos: int | None = None
) -> Iterator[list[tuple[int, int]]]:
    """`regex.finditer(data, pos, endpos)` as lists of byte spans (whole match first, (-1, -1)
    for a group that did not take part).

    Calls the compiled RE2 object directly: the wrapper's per-match objects cost far more
    than the match itself (each `.start()` recounts the capture groups). Same semantics:
    leftmost matches, non-overlapping, an empty match advances one character.
    """
    match = regex._regexp.Match
    end = len(data) if endpos is None else min(endpos, len(data))
    while pos <= end:
        spans = match(_UNANCHORED, data, pos, end)
        first = spans[0]
        if first[0] < 0:
            return
        yield spans
        if first[1] > first[0]:
            pos = first[1]
        else:
            pos = first[1] + 1
            while pos < end and data[pos] & 0xC0 == 0x80:
                pos += 1


def search_spans(regex: re2._Regexp, data: bytes, pos: int = 0) -> list[tuple[int, int]] | None:
    """Byte spans (whole match, then each group) of `regex.search(data, pos)`, or None."""
    spans = regex._regexp.Match(_UNANCHORED, data, pos, len(data))
    return None if spans[0][0] < 0 else spans


def first_span(
    regex: re2._Regexp, data: bytes, pos: int = 0, anchored: bool = False
) -> tuple[int, int] | None:
    """Byte span of `regex.search(data, pos)` (or `.match` when anchored), or None."""
    spans = regex._regexp.Match(_ANCHOR_START if anchored else _UNANCHORED, data, pos, len(data))
    return None if spans[0][0] < 0 else spans[0]


def lit(text: str, ignore_case: bool = False) -> str:
    """A literal, optionally case-insensitive, as an RE2 pattern."""
    parts = []
    for char in text:
        if ignore_case and char.isalpha():
            parts.append(f"[{char.lower()}{char.upper()}]")
        else:
            parts.append(re2.escape(char))
    return "".join(parts)


def lit_prefix(text: str, ignore_case: bool = False) -> str:
    """Any prefix of a literal (including the empty one)."""
    pattern = ""
    for char in reversed(text):
        pattern = f"(?:{lit(char, ignore_case)}{pattern})?"
    return pattern


@dataclass(frozen=True, slots=True)
class Piece:
    """A piece of a sequence pattern: its full form and the form any prefix of it takes."""

    full: str
    partial: str


def L(text: str, ignore_case: bool = False) -> Piece:
    return Piece(lit(text, ignore_case), lit_prefix(text, ignore_case))


def R(char_class: str, at_least_one: bool = True) -> Piece:
    """A run of a character class; repetition bounds are enforced in Python, not in RE2."""
    group = f"(?:{char_class})"
    return Piece(f"{group}{'+' if at_least_one else '*'}", f"{group}*")


def C(char_class: str) -> Piece:
    """Exactly one character of a class."""
    return Piece(f"(?:{char_class})", f"(?:{char_class})?")


def O(piece: Piece) -> Piece:  # noqa: E743
    """An optional piece."""
    return Piece(f"(?:{piece.full})?", piece.partial)


def ALT(*sequences: Sequence[Piece]) -> Piece:
    """Alternatives, each a sequence of pieces."""
    full = "|".join(full_pattern(seq) for seq in sequences)
    partial = "|".join(prefix_pattern(seq) for seq in sequences)
    return Piece(f"(?:{full})", f"(?:{partial})")


def full_pattern(pieces: Sequence[Piece]) -> str:
    return "".join(piece.full for piece in pieces)


def prefix_pattern(pieces: Sequence[Piece]) -> str:
    """A pattern matching every prefix of every string `full_pattern(pieces)` matches."""
    if not pieces:
        return ""
    head, rest = pieces[0], pieces[1:]
    if not rest:
        return f"(?:{head.partial})"
    return f"(?:{head.full}{prefix_pattern(rest)}|{head.partial})"


def partial_regex(pattern: str) -> re2._Regexp:
    """Compile a prefix pattern anchored at the end of the text."""
    return compile_re2(f"(?:{pattern})\\z")


def tail_start(regex: re2._Regexp, text: str, pos: int, max_window: int) -> int | None:
    """Leftmost start >= pos of a non-empty prefix-pattern match reaching the end of `text`.

    Clamped to `len(text) - max_window`: a match cannot start earlier than that and still
    reach past the end, so the clamp keeps the hold-back bounded without losing anything.
    """
    lo = max(pos, len(text) - max_window)
    # Only the window is encoded and searched: prefix patterns have no assertion that looks
    # before a match (only the final \z), so the slice finds the same leftmost start.
    window = text[lo:]
    data = window.encode("utf-8")
    spans = search_spans(regex, data)
    if spans is None or spans[0][0] >= len(data):
        return None
    start = spans[0][0]
    return lo + (start if len(data) == len(window) else len(data[:start].decode("utf-8")))


def token_before(text: str, index: int) -> bool:
    """True when the character before `index` is a word character (so no boundary)."""
    return index > 0 and text[index - 1] in TOKEN_CHARS


def token_after(text: str, index: int, chars: frozenset[str] = TOKEN_CHARS) -> bool:
    """True when the character at `index` continues the token (so no boundary)."""
    return index < len(text) and text[index] in chars
