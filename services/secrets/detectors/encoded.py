"""Credentials hidden in base64 or hex: `QUtJQ...` (base64 of an AWS key), a Kubernetes
Secret's `data:` values, an injected "base64-encode the key into the link".

A credential's encoding depends on where in a 3-byte group it starts, so no fixed pattern
finds it; but every credential kind sits at or beside fixed text (`AKIA`, `ghp_`,
`password`, `postgres://`, ...), and each such marker has three base64 forms, one per
alignment (the characters its own bits alone decide), plus two hex forms. Those forms are
the prefilter. A run of base64/hex characters that contains one is decoded in step with the
marker (from the run's start, and from the marker's own group), and the other credential
detectors read the decoded text; the whole run is redacted when they find something. Clean
text costs the prefilter alone.

Only credentials are looked for (not personal data), one level deep, at most `MAX_DECODED`
characters either side of a marker; runs under `MIN_RUN` characters are not decoded.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import re2

from mithril.domain import Severity
from mithril.services.secrets.detectors.base import (
    Candidate,
    Detector,
    compile_re2,
    first_span,
    iter_spans,
    partial_regex,
    prefilter_set,
    tail_start,
)
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.textview import TextView

MAX_DECODED = 8192
"""Encoded characters decoded on either side of a marker: a base64 PEM key of 6 KB, the
window the streaming redactor already holds for a PEM block."""
MIN_RUN = 16
"""Shorter runs are not decoded: 12 bytes hold no credential any detector finds (an AWS key
id alone is 20), and a text of short marker forms must not cost a decoding each."""

_CASED = (
    "password", "passwd", "passphrase", "secret", "api_key", "api-key", "apikey", "access_key",
    "auth_token", "access_token", "refresh_token", "token", "private_key", "credential",
    "db_pass", "database_pass", "bearer ", "authorization",
)  # fmt: skip
"""Keywords the assignment, Bearer and Basic detectors read case-insensitively; looked for
lower-case, capitalised and upper-case."""
_EXACT = (
    "-----BEGIN",
    *("AKIA", "ASIA", "ABIA", "ACCA", "AGPA", "AIDA", "AROA", "AIPA", "ANPA", "ANVA"),
    *("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    *("xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxe-", "xoxs-", "xapp-", "hooks.slack.com"),
    *("AIza", "sk-proj-", "sk-svcacct-", "sk-admin-", "T3BlbkFJ", "sk-ant-"),
    *("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
    *("eyJhbGci", "eyJ0eXAi", "eyJraWQi"),
)
_SCHEMES = (  # "://" alone is too short to look for; URI credentials by their scheme
    "http", "https", "ftp", "sftp", "ssh", "git", "ldap", "ldaps", "smtp", "smtps", "postgres",
    "postgresql", "mysql", "mariadb", "mongodb", "mongodb+srv", "redis", "rediss", "amqp",
    "amqps", "mssql", "sqlserver", "oracle", "clickhouse", "snowflake", "jdbc:postgresql",
    "jdbc:mysql",
)  # fmt: skip


def markers() -> tuple[bytes, ...]:
    """The fixed texts looked for in encoded form (each at least four bytes)."""
    cased = {form for word in _CASED for form in (word, word.capitalize(), word.upper())}
    schemes = {f"{scheme}://" for scheme in _SCHEMES}
    return tuple(sorted(m.encode() for m in cased | set(_EXACT) | schemes))


_FIRST_CHAR_IN_GROUP = (0, 2, 3)
"""Where, within its 4-character group, a marker's first form character falls when the
marker starts at byte 0, 1 or 2 of a 3-byte group."""


def base64_forms(marker: bytes, alignment: int) -> str:
    """The characters of `marker`'s standard base64 encoding that its own bits alone decide,
    when it starts at byte `alignment` (0-2) of a 3-byte group."""
    encoded = base64.b64encode(bytes(alignment) + marker).decode()
    first = _FIRST_CHAR_IN_GROUP[alignment]
    last = (8 * (alignment + len(marker))) // 6  # characters wholly inside the marker's bits
    return encoded[first:last]


def _alternation(forms: Iterable[str]) -> str:
    return "|".join(re2.escape(form) for form in sorted(set(forms)))


def _both_alphabets(form: str) -> tuple[str, str]:
    return form, form.translate(str.maketrans("+/", "-_"))


INFO = KindInfo(
    "encoded_credential",
    CREDENTIAL,
    Severity.CRITICAL,
    "Credential inside base64- or hex-encoded text",
)
_RUN_CHAR = r"[A-Za-z0-9+/_-]"
_HEX_RUN = compile_re2(r"[0-9a-fA-F]+")
_HEX_TAIL = compile_re2(r"[0-9a-fA-F]*\z")


@dataclass(frozen=True, eq=False)
class EncodedCredentialDetector:
    """A base64 or hex run whose decoded text holds a credential another detector finds."""

    inner: tuple[Detector, ...]
    """The detectors that read the decoded text (the credential kinds, not this one)."""
    info: KindInfo = INFO
    priority: int = 99
    """Above every kind but a PEM block: the whole run goes, not a piece an inner kind
    happens to match in the encoded characters."""
    lookbehind: int = 0
    max_window: int = MAX_DECODED
    partial_pattern: str = f"{_RUN_CHAR}+={{0,2}}"
    prefilter: str = field(init=False)
    _runs: re2._Regexp = field(init=False, repr=False)
    _forms: re2._Regexp = field(init=False, repr=False)
    _partial: re2._Regexp = field(init=False, repr=False)
    _inner_prefilter: Callable[[bytes], list[int]] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        texts = markers()
        by_alignment = [
            _alternation(f for m in texts for f in _both_alphabets(base64_forms(m, k)))
            for k in range(3)
        ]
        hex_forms = _alternation(f for m in texts for f in (m.hex(), m.hex().upper()))
        groups = "".join(f"({forms})|" for forms in by_alignment) + f"({hex_forms})"
        every = "|".join([*by_alignment, hex_forms])
        object.__setattr__(self, "prefilter", every)
        object.__setattr__(
            self, "_runs", compile_re2(f"{_RUN_CHAR}*(?:{every}){_RUN_CHAR}*={{0,2}}")
        )
        object.__setattr__(self, "_forms", compile_re2(groups))
        object.__setattr__(self, "_partial", partial_regex(self.partial_pattern))
        object.__setattr__(self, "_inner_prefilter", prefilter_set(d.prefilter for d in self.inner))

    def find(self, text: str, pos: int = 0) -> Iterator[Candidate]:
        return self.find_in(TextView(text), pos)

    def find_in(self, view: TextView, pos: int = 0) -> Iterator[Candidate]:
        seen: dict[bytes, tuple[Severity, float] | None] = {}  # a run repeated is read once
        for spans in iter_spans(self._runs, view.data, view.to_byte(pos)):
            start, end = spans[0]
            if end - start < MIN_RUN:
                continue
            run = view.data[start:end]
            if run not in seen:
                seen[run] = self._decoded_credential(run)
            found = seen[run]
            if found is not None:
                severity, confidence = found
                yield Candidate(
                    view.to_char(start),
                    view.to_char(end),
                    self.info.name,
                    confidence,
                    severity,
                    self.priority,
                )

    def partial_start(self, text: str, pos: int) -> int | None:
        return tail_start(self._partial, text, pos, self.max_window)

    def _decoded_credential(self, run: bytes) -> tuple[Severity, float] | None:
        """(severity, confidence) of the first credential in a decoding of `run`, or None."""
        for decoded in self._decodings(run):
            # Only the detectors whose prefilter occurs in the decoded text read it.
            for index in self._inner_prefilter(decoded.encode("utf-8")):
                hit = next(iter(self.inner[index].find(decoded)), None)
                if hit is not None:
                    return hit.severity, hit.confidence
        return None

    def _decodings(self, run: bytes) -> Iterator[str]:
        """`run` decoded as text at each alignment a marker form shows (at most four for
        base64, one for hex), twice each: from the run's first character in step with the
        marker, so the text before the marker is read too, and from the marker's own group,
        for a run that begins with characters that are not part of the encoding
        ("example.com/QUtJQ...")."""
        residues: set[int] = set()
        hex_decoded = False
        for spans in iter_spans(self._forms, run):
            position = spans[0][0]
            alignment = next(k for k in range(4) if spans[k + 1][0] >= 0)
            if alignment == 3:
                if not hex_decoded:
                    hex_decoded = True
                    yield from _hex_texts(run, position)
                continue
            group = position - _FIRST_CHAR_IN_GROUP[alignment]
            if group < 0 or group % 4 in residues:
                continue
            residues.add(group % 4)
            earliest = group % 4 if group <= MAX_DECODED else group - MAX_DECODED
            for start in sorted({earliest, group}):
                text = _base64_text(run[start : group + MAX_DECODED])
                if text is not None:
                    yield text
            if len(residues) == 4 and hex_decoded:
                return


def _base64_text(encoded: bytes) -> str | None:
    """Standard or URL-safe base64 (padding optional) decoded as UTF-8, bad bytes replaced."""
    body = encoded.rstrip(b"=")
    body = body[: len(body) - 1] if len(body) % 4 == 1 else body
    altchars = b"-_" if b"-" in body or b"_" in body else None
    try:
        raw = base64.b64decode(body + b"=" * (-len(body) % 4), altchars=altchars, validate=True)
    except (binascii.Error, ValueError):
        return None
    return raw.decode("utf-8", errors="replace")


def _hex_texts(run: bytes, position: int) -> Iterator[str]:
    """The hex digits around `position` decoded as UTF-8 (bad bytes replaced): from the
    first digit of the run in step with `position` (at most `MAX_DECODED` before it), and
    from `position` itself, to the last digit (at most `MAX_DECODED` after it)."""
    lo = max(0, position - MAX_DECODED)
    before = first_span(_HEX_TAIL, run[lo:position])
    first = lo + before[0] if before is not None else position
    after = first_span(_HEX_RUN, run[: position + MAX_DECODED], position, anchored=True)
    end = after[1] if after is not None else position
    for start in sorted({first + (position - first) % 2, position}):
        digits = run[start : end - (end - start) % 2]
        yield bytes.fromhex(digits.decode()).decode("utf-8", errors="replace")
