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
    compile_re2,
    partial_regex,
    prefix_pattern,
    tail_start,
)
from mithril.services.secrets.kinds import KindInfo
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
        object.__setattr__(self, "_partial", partial_regex(self.partial_pattern))

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        for match in self._full.finditer(text, pos):
            start = match.start()
            if start > 0 and (text[start - 1].isalnum() or text[start - 1] in "+-."):
                continue
            user_start, user_end = match.span(1)
            pw_start, pw_end = match.span(2)
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
                match.end(),
            )

    def partial_start(self, text: str, pos: int) -> int | None:
        return tail_start(self._partial, text, pos, self.max_window)
