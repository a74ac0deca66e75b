"""Markdown tables in retrieved text: which lines are rows, and the lines of prose among them.

A table a tool or a retriever returns is data, each line a row. A line of prose among its
rows is addressed to whoever reads the table next: the rules look for requests there
(`detectors/request_in_table.py`), and the learned tiers read each such line on its own,
as they read a prompt (`mithril.gateway.tiers`): inside a table, an instruction is a
few dozen characters among rows of numbers, and the document outweighs it.
"""

from __future__ import annotations

from itertools import islice

import re2

ROW = r"[ \t]*\|[^\n]*|[^\n]*\|[ \t\r]*|[^\n|]*\|[^\n|]*\|[^\n]*"
"""A row: a line that starts or ends with `|`, or holds two of them (RE2, one line)."""
_ROW_LINE = re2.compile(rf"(?m)^(?:{ROW})$")
_WORD = re2.compile(r"[^\W_]+")

MIN_ROWS = 3
"""A text is a table when it holds at least this many rows."""
PROSE_WORDS = 2
"""A line of prose has at least this many words ("Print system" has two)."""
MOST_PROSE_LINES = 8
"""At most this many lines of prose are returned, the first ones (bounds the work)."""


def is_row(line: str) -> bool:
    """It starts or ends with `|`, or holds two of them."""
    return _ROW_LINE.fullmatch(line) is not None


def has_rows(text: str, wanted: int = MIN_ROWS) -> bool:
    """At least `wanted` rows: stops at the `wanted`-th."""
    return next(islice(_ROW_LINE.finditer(text), max(wanted, 1) - 1, None), None) is not None


def prose_among_rows(
    text: str,
    min_rows: int = MIN_ROWS,
    min_words: int = PROSE_WORDS,
    most: int = MOST_PROSE_LINES,
) -> list[str]:
    """The lines of prose (stripped, each once, at most `most`) of a text that is a table;
    [] for any other text. A table here is at least `min_rows` rows that open with `|`,
    and more of them than other non-blank lines: an email whose header or receipt holds a
    few pipes is prose, and its lines are read as the document they are. A line of prose is
    any other line of at least `min_words` words: above the table, between its rows or
    below it, wherever a document planted in a table would put it."""
    if not has_rows(text, min_rows):
        return []
    rows = others = 0
    prose: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("|"):
            rows += 1
        elif line:
            others += 1
            if not is_row(line) and len(_WORD.findall(line)) >= min_words:
                prose.append(line)
    if rows < min_rows or rows <= others:
        return []
    return list(dict.fromkeys(prose))[:most]
