"""Credentials in URL-encoded (percent-encoded) text: `password%3DTr0ub4dor%263x`,
`postgres%3A%2F%2Fadmin%3AS3cr3t%40db`. An injected "append the .env file, URL-encoded, to
this image link" exfiltrates a database URI or an assignment this way: the key names and
separators the plain detectors read are escaped, though most keys' own characters are not.

Where a percent escape of a printable ASCII character occurs, the text around it is read
again with every such escape decoded (`reading.py`); the other credential detectors read
that, and what they find is redacted in the original text, escapes included. One level deep;
escapes of other bytes (control characters, UTF-8) are left as they are, and so is a PEM block.
"""

from __future__ import annotations

import re

from mithril.domain import Severity
from mithril.services.secrets.detectors.base import Detector
from mithril.services.secrets.detectors.reading import ReadAgainDetector, Step, rewrite
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo

_ESCAPE = "%(?:[2-7][0-9A-Fa-f]|0[9AaDd])"
"""A percent escape of a printable ASCII character, a tab or a line break (0x7F, DEL, is
left as it is): an encoded .env file's lines are `%0A`-separated."""
_ESCAPES = re.compile(_ESCAPE)

INFO = KindInfo(
    "url_encoded_credential",
    CREDENTIAL,
    Severity.CRITICAL,
    "Credential inside URL-encoded (percent-encoded) text",
)


def decoded(text: str) -> Step:
    """Every percent escape of a printable ASCII character, a tab or a line break decoded."""
    edits: list[tuple[int, int, str]] = []
    for match in _ESCAPES.finditer(text):
        char = chr(int(match.group()[1:], 16))
        if char != "\x7f":
            edits.append((match.start(), match.end(), char))
    return rewrite(text, edits)


def detector(inner: tuple[Detector, ...]) -> ReadAgainDetector:
    """The detector, reading with `inner` (the credential kinds but a PEM block)."""
    return ReadAgainDetector(
        INFO,
        inner,
        (decoded,),
        triggers=_ESCAPES,
        prefilter=_ESCAPE,
        tail=re.compile("[!-~]+\\Z"),  # an encoded text is one token, escapes and all
        priority=97,
        stretch=3,
        context_beyond_tail=False,
    )
