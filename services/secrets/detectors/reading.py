"""A second reading of text written so that no pattern reads it as written, and the way back.

A *step* rewrites text by removing characters and turning others into the characters they
stand for (an invisible character removed, `%3D` read as `=`). Steps chain into a
`Reading`, which maps every character it ends with back to the original offset it came
from and knows which original characters a step removed or turned.

`ReadAgainDetector` reads a text again wherever one of its triggers occurs (an invisible
character, a spaced run, a percent escape), lets the other credential detectors read the
result, and reports what they find at its original span, unless the text as written shows
it to them just as well. Clean text costs its prefilter alone.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from mithril.services.secrets.detectors.base import Candidate, Detector, prefilter_set
from mithril.services.secrets.kinds import KindInfo
from mithril.services.secrets.textview import TextView

CONTEXT = 4096
"""Characters read on either side of a trigger: the longest credential an inner detector
finds (a JWT) fits."""


@dataclass(frozen=True, slots=True)
class Step:
    """One rewrite of a text."""

    text: str
    """The rewritten text."""
    removed: list[int]
    """Offsets in `text` before which a character of the input was removed, in order."""
    changed: list[int]
    """Offsets in the input of the characters removed or turned."""


def rewrite(text: str, edits: Sequence[tuple[int, int, str]]) -> Step:
    """`text` with each `(start, end, replacement)` applied (sorted, not overlapping; a
    replacement no longer than what it replaces, its characters standing for the first ones)."""
    if not edits:
        return Step(text, [], [])
    pieces: list[str] = []
    removed: list[int] = []
    changed: list[int] = []
    last = shift = 0
    for start, end, replacement in edits:
        pieces.append(text[last:start])
        pieces.append(replacement)
        gone = end - start - len(replacement)
        # Output offset of the first character after the replacement.
        after = start - shift + len(replacement)
        removed.extend([after] * gone)
        changed.extend(range(start, end))
        shift += gone
        last = end
    pieces.append(text[last:])
    return Step("".join(pieces), removed, changed)


@dataclass(slots=True)
class Reading:
    """A stretch of text read again, and the way back to the original offsets."""

    text: str
    lo: int
    """Offset of the stretch in the original text."""
    removed: tuple[list[int], ...]
    """Each step's `Step.removed`, in the order the steps ran."""
    changed_by_step: tuple[list[int], ...]
    """Each step's `Step.changed`, in its own input's offsets."""
    _changed: list[int] | None = None

    def original(self, index: int) -> int:
        """The original offset of the reading's character at `index`."""
        return self.lo + _through(self.removed, index)

    def changed_within(self, start: int, end: int) -> bool:
        """Whether an original character in [start, end) was removed or turned."""
        if self._changed is None:  # mapped back once, when a finding asks
            self._changed = sorted(
                self.lo + _through(self.removed[:k], i)
                for k, changed in enumerate(self.changed_by_step)
                for i in changed
            )
        at = bisect.bisect_left(self._changed, start)
        return at < len(self._changed) and self._changed[at] < end


def _through(steps: Sequence[list[int]], index: int) -> int:
    for removed in reversed(steps):
        index += bisect.bisect_right(removed, index)
    return index


def read_again(text: str, lo: int, hi: int, steps: Sequence[Callable[[str], Step]]) -> Reading:
    """`text[lo:hi]` rewritten by each of `steps` in turn."""
    current = text[lo:hi]
    removed: list[list[int]] = []
    changed: list[list[int]] = []
    for step in steps:
        done = step(current)
        removed.append(done.removed)
        changed.append(done.changed)
        current = done.text
    return Reading(current, lo, tuple(removed), tuple(changed))


@dataclass(frozen=True, eq=False)
class ReadAgainDetector:
    """A credential another detector finds in the text read again, and not as written."""

    info: KindInfo
    inner: tuple[Detector, ...]
    """The detectors that read the text read again."""
    steps: tuple[Callable[[str], Step], ...]
    triggers: re.Pattern[str]
    """Where a second reading may differ (character offsets, so `re`)."""
    prefilter: str
    """`triggers` as an RE2 pattern for the shared prefilter set."""
    tail: re.Pattern[str]
    """What is held at the end of a stream besides the inner detectors' holds read again
    (ending in `\\Z`): from wherever the unsent text starts, or else from a token's start."""
    priority: int
    stretch: int = 1
    """How many characters of the text as written one character read again may take (a
    spaced character two, a percent escape three): the context read scales with it."""
    max_window: int = 8192
    """The longest text held whole in a stream: a 4 KB JWT spaced out, the window a PEM
    block already has."""
    context_beyond_tail: bool = True
    """Whether a match's context may lie before the token `tail` holds (a key name spelled
    out, then a space): then the inner detectors' holds are read on the tail read again.
    Percent-encoded text has no spaces, so its context is in the token."""
    partial_pattern: None = None
    """`partial_start` reads the tail again, so no one regex stands for it."""
    lookbehind: int = field(init=False)
    _inner_prefilter: Callable[[bytes], list[int]] = field(init=False, repr=False)
    _tail_after_space: re.Pattern[str] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        longest = max(d.lookbehind for d in self.inner)
        object.__setattr__(self, "lookbehind", self.stretch * longest + self.stretch)
        object.__setattr__(self, "_inner_prefilter", prefilter_set(d.prefilter for d in self.inner))
        object.__setattr__(
            self, "_tail_after_space", re.compile(f"(?<=\\s)(?:{self.tail.pattern})")
        )

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        return self.find_in(TextView(text), pos)

    def find_in(self, view: TextView, pos: int = 0) -> Iterator[Candidate]:
        for lo, hi in self._stretches(view.text, pos):
            reading = read_again(view.text, lo, hi, self.steps)
            again = TextView(reading.text)
            for index in self._inner_prefilter(again.data):
                inner = self.inner[index]
                for found in inner.find_in(again):
                    candidate = self._as_written(view.text, reading, inner, found)
                    if candidate is not None and candidate.start >= pos:
                        yield candidate

    def partial_start(self, text: str, pos: int) -> int | None:
        """Where, at the end of `text`, a match could be growing: `tail`, or (with
        `context_beyond_tail`) a match an inner detector could still complete in the tail
        read again (a key name spelled out before a value that is not)."""
        lo = max(pos, len(text) - self.max_window)
        held = self.tail.match(text, lo) or self._tail_after_space.search(text, lo)
        earliest = held.start() if held is not None else None
        if not self.context_beyond_tail or self.triggers.search(text, lo) is None:
            return earliest
        reading = read_again(text, lo, len(text), self.steps)
        for inner in self.inner:
            start = inner.partial_start(reading.text, 0)
            if start is not None and start < len(reading.text):
                original = reading.original(start)
                earliest = original if earliest is None else min(earliest, original)
        return earliest

    def _stretches(self, text: str, pos: int) -> Iterator[tuple[int, int]]:
        """`CONTEXT` characters either side of each trigger at or after `pos - CONTEXT`,
        merged."""
        current: tuple[int, int] | None = None
        for match in self.triggers.finditer(text, max(0, pos - CONTEXT)):
            start = max(0, match.start() - CONTEXT)
            end = min(len(text), match.end() + CONTEXT)
            if current is not None and start <= current[1]:
                current = (current[0], end)
                continue
            if current is not None:
                yield current
            current = (start, end)
        if current is not None:
            yield current

    def _as_written(
        self, text: str, reading: Reading, inner: Detector, found: Candidate
    ) -> Candidate | None:
        """`found` (in the reading) as a candidate of the original text, or None when the
        text as written shows it to `inner` just as well."""
        start = reading.original(found.start)
        end = reading.original(found.end - 1) + 1
        context = reading.original(max(0, found.start - inner.lookbehind))
        if not reading.changed_within(context, end):
            return None
        if not reading.changed_within(start, end):
            # Only the context was rewritten ("p a s s w o r d = hunter2"): the plain
            # detector may still read the value from the context as written.
            lo = max(0, context - inner.lookbehind)
            plain = inner.find(text[lo : end + 64])
            if any((c.start + lo, c.end + lo) == (start, end) for c in plain):
                return None
        region_end = -1
        if found.region_end > found.end:
            region_end = reading.original(min(found.region_end, len(reading.text)) - 1) + 1
        return Candidate(
            start, end, self.info.name, found.confidence, found.severity, self.priority, region_end
        )
