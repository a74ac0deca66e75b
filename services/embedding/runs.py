"""A text cut into runs of whole lines: what the learned tiers read of a document beside
its windows.

An instruction planted on one line of a retrieved email is a few dozen tokens among
hundreds: in the encoder's 256-token windows, and in their character n-grams, the
document around it outweighs it. Read on its own line, it is a prompt again. The language
gate (`multilingual.py`) cuts English text into runs to find passages in other languages;
the n-gram part of the classifier (`classifier.py`) reads each run as well.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

RUN_LETTERS = 32
"""A run holds at least this many letters: a shorter line joins the next (a heading, a
table's separator, a signature), the last the one before."""
FRAGMENT_LETTERS = 8
"""A gathered run of fewer letters (a fence, a brace, a blank line) says nothing read alone."""
SCAN_CHARS = 16384
"""A longer text is cut within its first and its last half of this many characters (the
English model, too, reads a long text in spread windows)."""


def letters(text: str) -> int:
    return sum(1 for char in text if char.isalpha())


def joined_lines(text: str, min_letters: int = RUN_LETTERS) -> list[str]:
    """The text's lines (with their ends), a line of fewer than `min_letters` letters
    joined to the next one, and a short last line to the one before."""
    runs: list[str] = []
    pending = ""
    for line in text.splitlines(keepends=True):
        line = pending + line
        if letters(line) < min_letters:
            pending = line
            continue
        pending = ""
        runs.append(line)
    if pending and runs:
        runs[-1] += pending
    return runs


def _pieces(text: str, min_letters: int) -> Iterator[tuple[str, bool]]:
    """The text's lines (with their ends) in order: each line of at least `min_letters`
    letters, and the shorter lines between them gathered; a piece is complete when it has
    as many letters, a leftover (False) when a longer line or the end came first."""
    pending = ""
    for line in text.splitlines(keepends=True):
        if letters(line) >= min_letters:
            if pending:
                yield pending, False
                pending = ""
            yield line, True
            continue
        pending += line
        if letters(pending) >= min_letters:
            yield pending, True
            pending = ""
    if pending:
        yield pending, False


def standalone_lines(text: str, min_letters: int = RUN_LETTERS) -> list[str]:
    """The text's lines (with their ends), a line of at least `min_letters` letters a run
    of its own; shorter lines gathered until they have as many, and what is left of them
    when a longer line comes joined to the run before (at the start, to that line).

    What the language gate cuts English text into: a line planted in a document stands on
    its own, and joined to the short line above it ("You can import it like this now."), or
    to the table rows above it, its language was drowned in their English (`joined_lines`
    joins them to the next line). Of the 240 translated DEV attacks planted in clean DEV
    BIPIA contexts the multilingual head caught 199 so, 205 so cut; no clean DEV document
    and no DEV prompt of several lines was flagged more."""
    runs: list[str] = []
    leading = ""  # a leftover before the first run: joins the line after it
    for piece, complete in _pieces(text, min_letters):
        if complete:
            runs.append(leading + piece)
            leading = ""
        elif runs:
            runs[-1] += piece
        else:
            leading = piece
    return runs


def separate_spans(
    text: str, min_letters: int = RUN_LETTERS, min_read: int = FRAGMENT_LETTERS
) -> list[tuple[str, range]]:
    """`separate_lines`' runs, each with the range of the text's lines
    (`str.splitlines(keepends=True)`) it holds: what a run was cut from, for a reading that
    needs the lines around it (is it inside a code fence?)."""
    spans = []
    start = 0
    for piece, _ in _pieces(text, min_letters):
        end = start + len(piece.splitlines())
        if letters(piece) >= min_read:
            spans.append((piece, range(start, end)))
        start = end
    return spans


def separate_lines(
    text: str, min_letters: int = RUN_LETTERS, min_read: int = FRAGMENT_LETTERS
) -> list[str]:
    """The text's lines (with their ends), a line of at least `min_letters` letters a run of
    its own, and consecutive shorter lines gathered into runs of their own, closed when they
    have as many letters or a longer line comes; a gathered run of fewer than `min_read`
    letters (a code fence, a closing brace) is left out.

    What the planted-line head reads: a line planted in a document stands alone whatever
    surrounds it. Joined to the short lines after it (`standalone_lines`: a code block's
    lines, a table's rows, a signature), a planted request was read among them: so were 71
    of the 133 DEV attacks in documentation the cascade missed."""
    return [piece for piece, _ in separate_spans(text, min_letters, min_read)]


def scanned(text: str) -> list[str]:
    """The text, or its first and its last SCAN_CHARS // 2 characters when it is longer."""
    if len(text) <= SCAN_CHARS:
        return [text]
    half = SCAN_CHARS // 2
    return [text[:half], text[-half:]]


def line_runs(text: str, cut: Callable[[str], list[str]] = joined_lines) -> list[str]:
    """The runs of whole lines of a text of more than one, as `cut` makes them; [] for a
    text that is one run (its windows already read it whole)."""
    runs = [run for part in scanned(text) for run in cut(part)]
    return runs if len(runs) > 1 else []
