"""Credentials spelled out so that no pattern reads them: invisible characters between their
characters (`AKIA` + U+200B + `Z3MX...`), every character spaced (`A K I A Z 3 M X ...`), or
written in Unicode tag characters, which render as nothing ("ASCII smuggling"). An injected
instruction asks for exactly this when it wants a key past a filter: the text reads the same
to a person, and an address built from it reaches the attacker's server all the same.

Where such text occurs (an invisible or tag character, or a run of at least
`MIN_SPACED` single characters each followed by one space), the text around it is read a
second time as a person reads it: invisible characters removed, tag characters turned into
the ASCII they stand for, the spaces inside a spaced run taken out. The other credential
detectors read that view; what they find there is mapped back to the original text and
redacted there, separators included. A finding the plain text shows just as well is left to
the plain detector. Clean text costs the prefilter alone.

Only credentials are looked for, not personal data (as for encoded ones), and not a PEM
block: spelled out it would be twice the longest window the streaming redactor holds.
Dots, dashes and line breaks between the characters are not taken out: credentials have
them of their own.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import re2

from mithril.domain import Severity
from mithril.services.invisible import INVISIBLE, TAG_OFFSET, TAGS, re2_class
from mithril.services.secrets.detectors.base import (
    Candidate,
    Detector,
    compile_re2,
    iter_spans,
    prefilter_set,
)
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.textview import TextView

MIN_SPACED = 8
"""Single characters a spaced run needs before it is read joined: "p a s s w o r d" is 8."""
CONTEXT = 4096
"""Characters read on either side of the text that triggers a second reading: the longest
credential an inner detector finds (a JWT) fits."""
MAX_WINDOW = 8192
"""The longest spelled-out credential held whole in a stream: a 4 KB JWT, spaced."""

_HIDDEN = f"[{re2_class(INVISIBLE)}{re2_class(TAGS)}]"
_SPACE = "[ \t\u00a0]"  # the characters themselves: read alike by RE2 and by `re`
_VISIBLE = "[!-~]"
_SPACED = f"(?:{_VISIBLE}{_SPACE}){{{MIN_SPACED - 1},}}{_VISIBLE}"
_SPACED_TRIGGER = f"(?:[A-Za-z0-9]{_SPACE}){{5}}[A-Za-z0-9]"
"""Six letters or digits spaced in a row: every spelled key has them, and code's `a + b * c`
does not (a spaced run of punctuation alone joins into no credential)."""
# In the view (invisible characters already gone): a spaced run of whole tokens, quotes or
# brackets and closing punctuation aside; its last character glued to the next word would
# make a key of "A K I A ... 1 done".
_SPACED_RUN = compile_re2(f"(?:^|\\s)[\"'`(<\\[]?({_SPACED})[\"'`)>\\].,;:!?]*(?:\\s|$)")
MAX_PUNCTUATION = 0.25
"""A spaced run is joined only when at most this share of its characters are neither
letters nor digits: a spelled key is mostly letters and digits, `a + b + c + d` is not."""
# `re`, which gives character offsets directly (RE2's byte offsets would cost a conversion
# each in text that is not ASCII), on patterns with nothing to backtrack but a token's or a
# run's own length.
_HIDDEN_CLASS = f"[{''.join(map(chr, INVISIBLE))}{chr(TAGS[0])}-{chr(TAGS[-1])}]"
_HIDDEN_CHARS = re.compile(f"{_HIDDEN_CLASS}+")
_TRIGGERS = re.compile(f"{_HIDDEN_CLASS}+|{_SPACED_TRIGGER}")
# Held at the end of a stream: a trailing token (invisible characters may yet join it to
# more), or a token's single characters each followed by one space, however few ("fine. "
# is neither).
_TAIL = f"(?:(?:{_VISIBLE}|{_HIDDEN_CLASS})+|(?:{_VISIBLE}{_SPACE})+{_VISIBLE}?)\\Z"
_TAIL_AFTER_SPACE = re.compile(f"(?<=\\s){_TAIL}")
_TAIL_FROM = re.compile(_TAIL)
"""`_TAIL` from a token's start (after a space), or from wherever the window starts."""

INFO = KindInfo(
    "spelled_credential",
    CREDENTIAL,
    Severity.CRITICAL,
    "Credential spelled out with invisible characters or spaces between its characters",
)


@dataclass(frozen=True, slots=True)
class _Reading:
    """A stretch of text as a person reads it, and the way back to the original offsets."""

    text: str
    lo: int
    """Offset of the stretch in the original text."""
    removed: tuple[list[int], ...]
    """Each step's removals (invisible characters, then spaces), as the offsets in that
    step's output before which a character was removed, in order."""
    changed: list[int]
    """Offsets (in the original text) of the characters removed or turned, sorted."""

    def original(self, index: int) -> int:
        """The original offset of the reading's character at `index`."""
        for removed in reversed(self.removed):
            index += bisect.bisect_right(removed, index)
        return self.lo + index

    def changed_within(self, start: int, end: int) -> bool:
        """Whether an original character in [start, end) was removed or turned."""
        at = bisect.bisect_left(self.changed, start)
        return at < len(self.changed) and self.changed[at] < end


def read_as_shown(text: str, lo: int, hi: int) -> _Reading:
    """`text[lo:hi]` with invisible characters removed, tag characters turned into ASCII,
    and the spaces inside spaced runs taken out."""
    stretch = text[lo:hi]
    hidden = [i for match in _HIDDEN_CHARS.finditer(stretch) for i in range(*match.span())]
    invisible = [i for i in hidden if ord(stretch[i]) not in TAGS]
    shown = _HIDDEN_CHARS.sub(_as_shown, stretch)
    spaces = [
        start + 1 + 2 * k
        for start, end in _char_spans(_SPACED_RUN, TextView(shown), group=1)
        if _spelled_run(shown[start:end:2])
        for k in range((end - start) // 2)
    ]
    reading = _Reading(
        _without(shown, spaces),
        lo,
        ([i - k for k, i in enumerate(invisible)], [i - k for k, i in enumerate(spaces)]),
        [],
    )
    first_step = _Reading(shown, lo, (reading.removed[0],), [])
    reading.changed.extend(
        sorted([lo + i for i in hidden] + [first_step.original(i) for i in spaces])
    )
    return reading


def _as_shown(match: re.Match[str]) -> str:
    """A run of hidden characters as shown: the ASCII its tag characters stand for."""
    return "".join(chr(ord(c) - TAG_OFFSET) for c in match.group() if ord(c) in TAGS)


def _spelled_run(characters: str) -> bool:
    punctuation = len(characters) - sum(map(str.isalnum, characters))
    return punctuation <= MAX_PUNCTUATION * len(characters)


def _char_spans(regex: re2._Regexp, view: TextView, group: int = 0) -> Iterator[tuple[int, int]]:
    for spans in iter_spans(regex, view.data):
        start, end = spans[group]
        yield view.to_char(start), view.to_char(end)


def _without(text: str, offsets: list[int]) -> str:
    """`text` less the characters at `offsets` (sorted)."""
    if not offsets:
        return text
    pieces, last = [], 0
    for offset in offsets:
        pieces.append(text[last:offset])
        last = offset + 1
    pieces.append(text[last:])
    return "".join(pieces)


@dataclass(frozen=True, eq=False)
class SpelledCredentialDetector:
    """A credential another detector finds once invisible characters and the spaces of a
    spaced run are taken out, and not in the text as written."""

    inner: tuple[Detector, ...]
    """The detectors that read the text as shown (the credential kinds but a PEM block)."""
    info: KindInfo = INFO
    priority: int = 98
    """Above every kind but a PEM block and an encoded run: a plain detector's match on a
    piece of the spelled credential (up to the first invisible character) must not win."""
    lookbehind: int = field(init=False)
    max_window: int = MAX_WINDOW
    partial_pattern: None = None
    """`partial_start` reads the tail as shown, so no one regex stands for it."""
    prefilter: str = f"{_HIDDEN}|{_SPACED_TRIGGER}"
    _inner_prefilter: Callable[[bytes], list[int]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        # A key name spelled out is twice as long as the inner detector's context.
        object.__setattr__(self, "lookbehind", 2 * max(d.lookbehind for d in self.inner) + 2)
        object.__setattr__(self, "_inner_prefilter", prefilter_set(d.prefilter for d in self.inner))

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        return self.find_in(TextView(text), pos)

    def find_in(self, view: TextView, pos: int = 0) -> Iterator[Candidate]:
        for lo, hi in self._stretches(view, pos):
            reading = read_as_shown(view.text, lo, hi)
            shown = TextView(reading.text)
            for index in self._inner_prefilter(shown.data):
                inner = self.inner[index]
                for found in inner.find_in(shown):
                    candidate = self._spelled(view.text, reading, inner, found)
                    if candidate is not None and candidate.start >= pos:
                        yield candidate

    def partial_start(self, text: str, pos: int) -> int | None:
        """Where, at the end of `text`, a spelled credential could be growing: the trailing
        token or spaced run, or a match an inner detector could still complete in the text
        as shown (a key name spelled out before a value that is not)."""
        lo = max(pos, len(text) - self.max_window)
        tail = _TAIL_FROM.match(text, lo) or _TAIL_AFTER_SPACE.search(text, lo)
        earliest = tail.start() if tail is not None else None
        if _TRIGGERS.search(text, lo) is None:
            return earliest
        reading = read_as_shown(text, lo, len(text))
        for inner in self.inner:
            start = inner.partial_start(reading.text, 0)
            if start is not None and start < len(reading.text):
                original = reading.original(start)
                earliest = original if earliest is None else min(earliest, original)
        return earliest

    def _stretches(self, view: TextView, pos: int) -> Iterator[tuple[int, int]]:
        """The stretches worth a second reading: `CONTEXT` characters either side of each
        trigger at or after `pos - CONTEXT`, merged."""
        text = view.text
        current: tuple[int, int] | None = None
        for match in _TRIGGERS.finditer(text, max(0, pos - CONTEXT)):
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

    def _spelled(
        self, text: str, reading: _Reading, inner: Detector, found: Candidate
    ) -> Candidate | None:
        """`found` (in the reading) as a candidate of the original text, or None when the
        text as written shows it to `inner` just as well."""
        start = reading.original(found.start)
        end = reading.original(found.end - 1) + 1
        context = reading.original(max(0, found.start - inner.lookbehind))
        if not reading.changed_within(context, end):
            return None
        if not reading.changed_within(start, end):
            # Only the context was spelled out ("p a s s w o r d = hunter2"): the plain
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
