"""Credentials spelled out so that no pattern reads them: invisible characters between their
characters (`AKIA` + U+200B + `Z3MX...`), every character spaced (`A K I A Z 3 M X ...`), or
written in Unicode tag characters, which render as nothing ("ASCII smuggling"). An injected
instruction asks for exactly this when it wants a key past a filter: the text reads the same
to a person, and an address built from it reaches the attacker's server all the same.

Where such text occurs (an invisible or tag character, or six letters or digits in a row
each followed by one space), the text around it is read again as a person reads it
(`reading.py`): invisible characters removed, tag characters turned into the ASCII they
stand for, and the spaces taken out of a spaced run of at least `MIN_SPACED` characters
(whole tokens, at most `MAX_PUNCTUATION` of them punctuation). The other credential
detectors read that; what they find is redacted in the original text, separators included.

Only credentials are looked for, not personal data, and not a PEM block: spelled out it
would be twice the longest window the streaming redactor holds. Dots, dashes and line
breaks between the characters are not taken out: credentials have them of their own.
"""

from __future__ import annotations

import re

from mithril.domain import Severity
from mithril.services.invisible import INVISIBLE, TAGS, UNTAGGED, re2_class
from mithril.services.secrets.detectors.base import Detector, compile_re2, iter_spans
from mithril.services.secrets.detectors.reading import ReadAgainDetector, Step, rewrite
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.textview import TextView

MIN_SPACED = 8
"""Single characters a spaced run needs before it is read joined: "p a s s w o r d" is 8."""
MAX_PUNCTUATION = 0.25
"""A spaced run is joined only when at most this share of its characters are neither
letters nor digits: a spelled key is mostly letters and digits, `a + b + c + d` is not."""

_SPACE = "[ \t\u00a0]"  # the characters themselves: read alike by RE2 and by `re`
_VISIBLE = "[!-~]"
_SPACED = f"(?:{_VISIBLE}{_SPACE}){{{MIN_SPACED - 1},}}{_VISIBLE}"
_SPACED_TRIGGER = f"(?:[A-Za-z0-9]{_SPACE}){{5}}[A-Za-z0-9]"
"""Six letters or digits spaced in a row: every spelled key has them, and code's `a + b * c`
does not (a spaced run of punctuation alone joins into no credential)."""
# A spaced run of whole tokens, quotes or brackets and closing punctuation aside (its last
# character glued to the next word would make a key of "A K I A ... 1 done"). RE2: a
# failed end costs `re` a step back through the whole run.
_SPACED_RUN = compile_re2(f"(?:^|\\s)[\"'`(<\\[]?({_SPACED})[\"'`)>\\].,;:!?]*(?:\\s|$)")
_INVISIBLE = f"[{''.join(map(chr, INVISIBLE))}]"
_TAG = f"[{chr(TAGS[0])}-{chr(TAGS[-1])}]"
_HIDDEN = re.compile(f"({_INVISIBLE}+)|{_TAG}+")

INFO = KindInfo(
    "spelled_credential",
    CREDENTIAL,
    Severity.CRITICAL,
    "Credential spelled out with invisible characters or spaces between its characters",
)


def shown(text: str) -> Step:
    """Invisible characters removed, tag characters turned into the ASCII they stand for."""
    return rewrite(
        text,
        [
            (m.start(), m.end(), "" if m.group(1) else m.group().translate(UNTAGGED))
            for m in _HIDDEN.finditer(text)
        ],
    )


def joined(text: str) -> Step:
    """The spaces taken out of every spaced run that reads as spelled."""
    view = TextView(text)
    edits: list[tuple[int, int, str]] = []
    for spans in iter_spans(_SPACED_RUN, view.data):
        start, end = view.to_char(spans[1][0]), view.to_char(spans[1][1])
        if _spelled_run(text[start:end:2]):
            edits.extend((space, space + 1, "") for space in range(start + 1, end, 2))
    return rewrite(text, edits)


def _spelled_run(characters: str) -> bool:
    punctuation = len(characters) - sum(map(str.isalnum, characters))
    return punctuation <= MAX_PUNCTUATION * len(characters)


def detector(inner: tuple[Detector, ...]) -> ReadAgainDetector:
    """The detector, reading with `inner` (the credential kinds but a PEM block)."""
    return ReadAgainDetector(
        INFO,
        inner,
        (shown, joined),
        triggers=re.compile(f"{_INVISIBLE}+|{_TAG}+|{_SPACED_TRIGGER}"),
        prefilter=f"[{re2_class(INVISIBLE)}{re2_class(TAGS)}]|{_SPACED_TRIGGER}",
        # A trailing token (invisible characters may yet join it to more), or a token's
        # single characters each followed by one space, however few ("fine. " is neither).
        tail=re.compile(
            f"(?:(?:{_VISIBLE}|{_INVISIBLE}|{_TAG})+|(?:{_VISIBLE}{_SPACE})+{_VISIBLE}?)\\Z"
        ),
        # Above every kind but a PEM block and an encoded run: a plain detector's match on a
        # piece of the spelled credential (up to the first invisible character) must not win.
        priority=98,
        stretch=2,
    )
