"""One text, encoded once: the UTF-8 bytes every RE2 call runs on, and offset conversion.

The `re2` wrapper re-encodes a `str` on every call (and converts offsets by scanning from the
start), so a `search(text, pos)` costs O(len(text)) however close the match is. Detectors
therefore match on `TextView.data` and convert byte spans to character offsets here: free for
ASCII text, and O(block) per offset otherwise (block tables are built once, in C-speed slices).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable

_BLOCK = 1024
"""Characters per block of the offset tables used for non-ASCII text."""


class TextView:
    """`text`, its UTF-8 encoding `data`, and char <-> byte offset conversion."""

    __slots__ = ("_byte_of_block", "ascii", "data", "text", "to_byte", "to_char")

    to_byte: Callable[[int], int]
    to_char: Callable[[int], int]
    """Offset converters: the identity for ASCII text."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.data = text.encode("utf-8")
        self.ascii = len(self.data) == len(text)
        if self.ascii:
            self.to_byte = self.to_char = _identity
            self._byte_of_block: list[int] = []
        else:
            # offsets[k] = byte offset of character k * _BLOCK, for every such character.
            offsets = [0]
            for index in range(_BLOCK, len(text) + 1, _BLOCK):
                offsets.append(offsets[-1] + len(text[index - _BLOCK : index].encode("utf-8")))
            self._byte_of_block = offsets
            self.to_byte = self._to_byte
            self.to_char = self._to_char

    def _to_byte(self, char: int) -> int:
        char = min(max(char, 0), len(self.text))
        block = char // _BLOCK
        start = block * _BLOCK
        return self._byte_of_block[block] + len(self.text[start:char].encode("utf-8"))

    def _to_char(self, byte: int) -> int:
        """The character offset of a byte offset that falls on a character boundary."""
        block = bisect.bisect_right(self._byte_of_block, byte) - 1
        base = self._byte_of_block[block]
        return block * _BLOCK + len(self.data[base:byte].decode("utf-8"))


def _identity(offset: int) -> int:
    return offset
