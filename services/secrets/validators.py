"""Checksums and plausibility checks used by the detectors (no regexes on user text here)."""

from __future__ import annotations

import math
from collections import Counter

# ISO 13616 lengths of the countries that issue IBANs (SWIFT IBAN registry).
IBAN_LENGTHS: dict[str, int] = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
    "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
    "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
    "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
    "IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
    "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
    "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
    "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
    "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}  # fmt: skip

_PLACEHOLDER_WORDS = (
    "example", "sample", "dummy", "placeholder", "your_", "your-", "yourpassword", "my_password",
    "redacted", "replace_me", "replaceme", "insert", "todo", "fixme", "lorem", "<", ">", "${",
    "{{", "}}", "$(", "%(", "%s", "os.environ", "os.getenv", "process.env", "getenv(", "env(",
    "env.", "secrets.", "vault(", "[password", "[token", "[secret", "your ", "my api",
    "api key", "deadbeef", "blahblah",
)  # fmt: skip
_PLACEHOLDER_VALUES = frozenset(
    {
        "none", "null", "nil", "true", "false", "undefined", "string", "str", "int", "bool",
        "bytes", "any", "number", "required", "optional", "password", "passwd", "secret",
        "token", "apikey", "api_key", "api-key", "pass", "pwd", "username", "user", "test",
        "value", "values", "empty", "changeit", "default", "hidden", "masked", "unset", "n/a",
        "tbd", "foo", "bar", "baz", "foobar", "abc", "abc123", "123", "1234", "xxx", "secret_key",
        "access_token", "auth_token", "str | none", "optional[str]", "anything", "whatever",
    }
)  # fmt: skip


def luhn_ok(digits: str) -> bool:
    """True when a string of digits passes the Luhn (mod 10) checksum."""
    total = 0
    for index, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if index % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


def iban_ok(compact: str) -> bool:
    """True for an upper-case, space-free IBAN of its country's length with a valid mod-97."""
    if len(compact) < 15 or not compact[:2].isalpha() or not compact[2:4].isdigit():
        return False
    if IBAN_LENGTHS.get(compact[:2]) != len(compact):
        return False
    rearranged = compact[4:] + compact[:4]
    remainder = 0
    for char in rearranged:
        if char.isdigit():
            remainder = (remainder * 10 + ord(char) - 48) % 97
        elif "A" <= char <= "Z":
            remainder = (remainder * 100 + ord(char) - 55) % 97
        else:
            return False
    return remainder == 1


def ssn_ok(area: str, group: str, serial: str) -> bool:
    """US SSN rules: area not 000, 666 or 9xx; group not 00; serial not 0000."""
    return (
        area != "000"
        and area != "666"
        and not area.startswith("9")
        and group != "00"
        and serial != "0000"
    )


def shannon_entropy(value: str) -> float:
    """Bits per character of the value's own character distribution."""
    if not value:
        return 0.0
    counts = Counter(value)
    length = len(value)
    return -sum(n / length * math.log2(n / length) for n in counts.values())


def distinct(value: str) -> int:
    """Number of distinct characters."""
    return len(set(value))


def dominated_by_one_char(value: str, share: float = 0.5) -> bool:
    """True when one character (like the x of xxxx or * of ****) makes up most of the value."""
    if not value:
        return True
    return Counter(value).most_common(1)[0][1] / len(value) > share


def looks_sequential(value: str) -> bool:
    """abcdefghij / 0123456789 style fillers."""
    lowered = value.lower()
    return "abcdefghij" in lowered or "0123456789" in lowered or "1234567890" in lowered


def is_placeholder(value: str) -> bool:
    """True for values that are templates, references or fillers rather than real secrets."""
    stripped = value.strip().strip("\"'`")
    lowered = stripped.lower()
    if not stripped or lowered in _PLACEHOLDER_VALUES:
        return True
    if stripped[0] in "$%{[<(`@*#" or stripped.endswith(("(", ":", "}")):
        return True
    if any(word in lowered for word in _PLACEHOLDER_WORDS):
        return True
    if set(stripped) <= set("*x.•-_#?X0 "):
        return True
    if any(run in stripped for run in ("xxxx", "XXXX", "****", "####", "....", "____")):
        return True
    if stripped.endswith(("...", "\u2026")):
        return True  # an elided example: api_key="sk-...", token="gsk_..."
    return len(stripped) >= 6 and dominated_by_one_char(stripped)
