"""Shared machinery for scheme://user:password@host credentials (the password is the span)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import re2

from mithril.services.secrets.detectors.base import (
    ALT,
    Candidate,
    L,
    R,
    compile_bounds,
    compile_re2,
    iter_bounded_spans,
    partial_regex,
    prefix_pattern,
    tail_start,
)
from mithril.services.secrets.kinds import KindInfo
from mithril.services.secrets.textview import TextView
from mithril.services.secrets.validators import is_placeholder

_USER = r"[^\s:/@?#\"'<>]"
_PASSWORD = r"[^\s/?#\"'<>]"
_HOST = r"[A-Za-z0-9\[]"
MAX_USER = 128
MAX_PASSWORD = 256


@dataclass(frozen=True, eq=False)
class UriCredentialDetector:
    info: KindInfo
    priority: int
    schemes: Sequence[str]
    confidence: float
    prefilter: str = r"://[^\s/@]*:[^\s/]*@"
    lookbehind: int = field(init=False)
    max_window: int = field(init=False)
    partial_pattern: str = field(init=False, repr=False)
    _full: re2._Regexp = field(init=False, repr=False)
    _bounds: re2._Regexp = field(init=False, repr=False)
    _max_len: int = field(init=False, repr=False)
    _partial: re2._Regexp = field(init=False, repr=False)

    def __post_init__(self) -> None:
        scheme = ALT(*[(L(name, ignore_case=True),) for name in self.schemes])
        pieces = (scheme, L("://"), R(_USER, False), L(":"), R(_PASSWORD), L("@"), R(_HOST))
        # The full pattern captures user and password; the password is the greedy run that
        # is followed by "@" (so passwords containing "@" keep their tail).
        full = rf"{scheme.full}://({_USER}*):({_PASSWORD}+)@{_HOST}"
        lookbehind = max(len(name) for name in self.schemes) + 3 + MAX_USER + 1
        object.__setattr__(self, "lookbehind", lookbehind)
        object.__setattr__(self, "max_window", lookbehind + MAX_PASSWORD + 2)
        object.__setattr__(self, "partial_pattern", prefix_pattern(pieces))
        object.__setattr__(self, "_full", compile_re2(full))
        object.__setattr__(self, "_bounds", compile_bounds(full))
        # Longer matches have a user over MAX_USER or a password over MAX_PASSWORD.
        max_scheme = max(len(name) for name in self.schemes)
        object.__setattr__(self, "_max_len", 4 * (max_scheme + 3 + MAX_USER + MAX_PASSWORD + 3))
        object.__setattr__(self, "_partial", partial_regex(self.partial_pattern))

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        return self.find_in(TextView(text), pos)

    def find_in(self, view: TextView, pos: int = 0) -> Iterator[Candidate]:
        text, to_char = view.text, view.to_char
        for spans in iter_bounded_spans(
            self._bounds, self._full, view.data, view.to_byte(pos), self._max_len
        ):
            if spans is None:
                continue
            start = to_char(spans[0][0])
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "+-."):
                continue
            user_start, user_end = to_char(spans[1][0]), to_char(spans[1][1])
            pw_start, pw_end = to_char(spans[2][0]), to_char(spans[2][1])
            if user_end - user_start > MAX_USER or not 3 <= pw_end - pw_start <= MAX_PASSWORD:
                continue
            password = text[pw_start:pw_end]
            if is_placeholder(password) or password.lower() in {"pass", "pw", "pwd"}:
                continue
            yield Candidate(
                pw_start,
                pw_end,
                self.info.name,
                self.confidence,
                self.info.severity,
                self.priority,
                to_char(spans[0][1]),
            )

    def partial_start(self, text: str, pos: int) -> int | None:
        return tail_start(self._partial, text, pos, self.max_window)
