"""PEM / OpenSSH private key blocks, from the BEGIN header to the END footer.

A header without a footer still counts when a key body follows (a truncated paste): the span
then runs over the body characters, at most `MAX_BODY` of them. The same cap bounds how long
the streaming redactor holds a key back.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import re2

from mithril.domain import Severity
from mithril.services.secrets.detectors.base import (
    Candidate,
    L,
    R,
    compile_re2,
    partial_regex,
    prefix_pattern,
    tail_start,
)
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo

MAX_BODY = 8192
"""Longest key body (characters between header and footer) handled; an RSA-8192 PEM is ~6.3K."""
MAX_HEADER = 64
INFO = KindInfo("private_key", CREDENTIAL, Severity.CRITICAL, "PEM private key")
_HEADER = r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_FOOTER = r"-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
_BODY_CLASS = r"[A-Za-z0-9+/=\s:,.\\]"
# Body text: base64 lines plus "Proc-Type: 4,ENCRYPTED" style headers (single dashes allowed).
_BODY = rf"(?:{_BODY_CLASS}|-{{1,4}}[A-Za-z0-9+/=:,.])*"
_MIN_BODY = 16


@dataclass(frozen=True, eq=False)
class PemPrivateKeyDetector:
    info: KindInfo = INFO
    priority: int = 100
    prefilter: str = "-----BEGIN[A-Z0-9 ]*PRIVATE KEY"
    lookbehind: int = 0
    max_window: int = MAX_HEADER + MAX_BODY + MAX_HEADER
    partial_pattern: None = None
    """Not a single regex: `partial_start` tracks an open BEGIN ... END block."""
    _header: re2._Regexp = field(init=False, repr=False)
    _footer: re2._Regexp = field(init=False, repr=False)
    _body: re2._Regexp = field(init=False, repr=False)
    _header_partial: re2._Regexp = field(init=False, repr=False)
    _footer_partial: re2._Regexp = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_header", compile_re2(_HEADER))
        object.__setattr__(self, "_footer", compile_re2(_FOOTER))
        object.__setattr__(self, "_body", compile_re2(_BODY))
        header_pieces = (L("-----BEGIN"), R("[A-Z0-9 ]", False), L("PRIVATE KEY-----"))
        object.__setattr__(self, "_header_partial", partial_regex(prefix_pattern(header_pieces)))
        footer_pieces = (L("-----END"), R("[A-Z0-9 ]", False), L("PRIVATE KEY-----"))
        object.__setattr__(self, "_footer_partial", compile_re2(prefix_pattern(footer_pieces)))

    def _body_end(self, text: str, header_end: int) -> int:
        body = self._body.match(text, header_end)
        body_end = body.end() if body else header_end
        return min(body_end, header_end + MAX_BODY)

    def _block(self, text: str, header_end: int) -> tuple[int, int] | None:
        """(span end, examined end) of the key whose header ends at header_end."""
        body_end = self._body_end(text, header_end)
        body_chars = sum(not c.isspace() for c in text[header_end:body_end])
        footer = self._footer.match(text, body_end)
        if footer is not None:
            return (footer.end(), footer.end()) if body_chars >= _MIN_BODY else None
        # No footer right after the body: a truncated key, if there is enough body.
        if body_chars < 64:
            return None
        end = body_end
        while end > header_end and text[end - 1].isspace():
            end -= 1
        return end, min(body_end + 1, len(text))

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        cursor = pos
        while True:
            header = self._header.search(text, cursor)
            if header is None:
                return
            if header.end() - header.start() > MAX_HEADER:
                cursor = header.end()
                continue
            block = self._block(text, header.end())
            if block is None:
                cursor = header.end()
                continue
            end, examined = block
            yield Candidate(
                header.start(),
                end,
                self.info.name,
                0.99,
                self.info.severity,
                self.priority,
                examined,
            )
            cursor = end

    def partial_start(self, text: str, pos: int) -> int | None:
        if text.find("-", max(pos, len(text) - self.max_window)) == -1:
            return None
        # A header that is still arriving.
        start = tail_start(self._header_partial, text, pos, MAX_HEADER)
        # A complete header whose body (or footer) is still arriving.
        lo = max(pos, len(text) - self.max_window)
        header = self._header.search(text, lo)
        while header is not None:
            body_end = self._body_end(text, header.end())
            if body_end - header.end() < MAX_BODY and self._footer.match(text, body_end) is None:
                rest = text[body_end:]
                if not rest or self._footer_partial.fullmatch(rest) is not None:
                    return header.start() if start is None else min(start, header.start())
            header = self._header.search(text, header.end())
        return start


DETECTOR = PemPrivateKeyDetector()
