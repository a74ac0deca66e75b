"""Characters that render as nothing: zero-width and bidi-control characters, fillers,
variation selectors, and Unicode tag characters ("ASCII smuggling"). Text laced with them
reads the same to a person and differently to a pattern. The scanner removes them before it
reads a text for attacks, the secrets library before it reads one for credentials."""

from __future__ import annotations

INVISIBLE: tuple[int, ...] = (
    *(0x00AD, 0x034F, 0x061C, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180E, 0x3164, 0xFEFF, 0xFFA0),
    *range(0x200B, 0x2010),
    *range(0x202A, 0x202F),
    *range(0x2060, 0x2070),
    *range(0xFE00, 0xFE10),
    *(0xE0000, 0xE0001, 0xE007F),
)
"""Code points removed outright."""

TAG_OFFSET = 0xE0000
TAGS = range(0xE0020, 0xE007F)
"""Tag characters that stand for printable ASCII: `chr(code - TAG_OFFSET)`."""
UNTAGGED: dict[int, str] = {code: chr(code - TAG_OFFSET) for code in TAGS}
"""A `str.translate` table: each tag character to the ASCII it stands for."""


def re2_class(codes: tuple[int, ...] | range) -> str:
    """The body of an RE2 character class (no brackets) holding exactly `codes`."""
    ranges: list[tuple[int, int]] = []
    for code in sorted(codes):
        if ranges and code == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    return "".join(
        f"\\x{{{lo:X}}}" if lo == hi else f"\\x{{{lo:X}}}-\\x{{{hi:X}}}" for lo, hi in ranges
    )
