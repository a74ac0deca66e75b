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
    first_span,
    partial_regex,
    prefix_pattern,
    tail_start,
)
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.textview import TextView

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
_BODY_SPACE = b" \t\n\r\x0c"
"""The whitespace `\\s` matches in RE2 (the only whitespace a body can contain)."""


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

    def _body_end(self, data: bytes, header_end: int) -> int:
        """Byte offset where the body after a header ends (the body is ASCII, so its byte
        and character lengths agree)."""
        body = first_span(self._body, data, header_end, anchored=True)
        body_end = body[1] if body else header_end
        return min(body_end, header_end + MAX_BODY)

    def _block(self, view: TextView, header_end: int) -> tuple[int, int, int] | None:
        """(span end, examined end, characters examined past it), in bytes, of the key whose
        header ends at header_end."""
        data = view.data
        body_end = self._body_end(data, header_end)
        body = data[header_end:body_end]
        body_chars = len(body.translate(None, _BODY_SPACE))
        footer = first_span(self._footer, data, body_end, anchored=True)
        if footer is not None:
            return (footer[1], footer[1], 0) if body_chars >= _MIN_BODY else None
        # No footer right after the body: a truncated key, if there is enough body.
        if body_chars < 64:
            return None
        end = header_end + len(body.rstrip(_BODY_SPACE))
        return end, body_end, 1

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        return self.find_in(TextView(text), pos)

    def find_in(self, view: TextView, pos: int = 0) -> Iterator[Candidate]:
        data, to_char = view.data, view.to_char
        cursor = view.to_byte(pos)
        while True:
            header = first_span(self._header, data, cursor)
            if header is None:
                return
            header_start, header_end = header
            if header_end - header_start > MAX_HEADER:
                cursor = header_end
                continue
            block = self._block(view, header_end)
            if block is None:
                cursor = header_end
                continue
            end, examined, past = block
            yield Candidate(
                to_char(header_start),
                to_char(end),
                self.info.name,
                0.99,
                self.info.severity,
                self.priority,
                min(to_char(examined) + past, len(view.text)),
            )
            cursor = end

    def partial_start(self, text: str, pos: int) -> int | None:
        if text.find("-", max(pos, len(text) - self.max_window)) == -1:
            return None
        # A header that is still arriving.
        start = tail_start(self._header_partial, text, pos, MAX_HEADER)
        # A complete header whose body (or footer) is still arriving.
        view = TextView(text)
        data = view.data
        lo = view.to_byte(max(pos, len(text) - self.max_window))
        header = first_span(self._header, data, lo)
        while header is not None:
            header_end = header[1]
            body_end = self._body_end(data, header_end)
            if (
                body_end - header_end < MAX_BODY
                and first_span(self._footer, data, body_end, anchored=True) is None
            ):
                rest = data[body_end:]
                if not rest or self._footer_partial.fullmatch(rest) is not None:
                    header_start = view.to_char(header[0])
                    return header_start if start is None else min(start, header_start)
            header = first_span(self._header, data, header_end)
        return start


DETECTOR = PemPrivateKeyDetector()
