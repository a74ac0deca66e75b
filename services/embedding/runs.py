"""A text cut into runs of whole lines: what the learned tiers read of a document beside
its windows.

An instruction planted on one line of a retrieved email is a few dozen tokens among
hundreds: in the encoder's 256-token windows, and in their character n-grams, the
document around it outweighs it. Read on its own line, it is a prompt again. The language
gate (`multilingual.py`) cuts English text into runs to find passages in other languages;
the n-gram part of the classifier (`classifier.py`) reads each run as well.
"""

from __future__ import annotations

RUN_LETTERS = 32
"""A run holds at least this many letters: a shorter line joins the next (a heading, a
table's separator, a signature), the last the one before."""
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


def scanned(text: str) -> list[str]:
    """The text, or its first and its last SCAN_CHARS // 2 characters when it is longer."""
    if len(text) <= SCAN_CHARS:
        return [text]
    half = SCAN_CHARS // 2
    return [text[:half], text[-half:]]


def line_runs(text: str) -> list[str]:
    """The runs of whole lines of a text of more than one; [] for a text that is one run
    (its windows already read it whole)."""
    runs = [run for part in scanned(text) for run in joined_lines(part)]
    return runs if len(runs) > 1 else []
