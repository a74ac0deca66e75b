"""`request_in_table`: a request to the assistant planted between the rows of a retrieved table.

A table fetched by a tool or a retriever is data: every line of it is a row. A line of prose
among the rows that asks for something ("Summarize the main findings of the report.", "What is
the capital of Brazil?") is addressed to whoever reads the table next, which is the model.
Nothing else in the text has to look like an attack, which is why the phrase rules miss it.

Flagged: in a text with at least `min_rows` (default 3) markdown table rows, a line that

- is not a row (it neither starts nor ends with `|` nor holds two of them), and does not
  continue a row whose cell was broken across lines;
- has at least `min_words` (default 3) words and reads as a request: it ends with `?`, or its
  first word is one of `REQUEST_VERBS` (or "please"/"kindly" and then one of them), or it opens
  with "in your" ("In your answer, mention ...");
- does not speak of the table itself ("Use the table below to pick a plan.": a caption), and
  is not a compiler's "help:" line under the `|` gutter of the source lines it quotes;
- sits right between two rows, or, above or below the table (where titles and captions go),
  ends like a sentence (`.`, `?`, `!`). A blank line ends a markdown table: past one, only the
  first or last line of the whole text counts, the text being otherwise the table.

At most `MAX_CANDIDATES` request-shaped lines next to a row are examined per text, the first
ones in it. Only tool and retrieval content is examined (the rule is `origins: untrusted`): a
user's own prompt may well paste a table and then ask a question about it.
"""

from __future__ import annotations

from collections.abc import Iterator

import re2

from ..rules import Rule
from ..tables import ROW, has_rows, is_row
from .base import Hit, ScanContext

TRIGGER = r"\|[^\n|]*\|"
"""Two pipes on one line: a markdown table may be present."""

_VERBS = """
    absorb add adopt anagram analyse analyze answer append augment blend brainstorm break
    calculate classify combine compare compose consider continue convert create debug decode
    deploy describe design detail develop display draft echo embed employ encode engage enhance
    enlist enrich ensure enter evaluate execute explain express find fix forward fuse generate
    give group harmonize help identify imagine implement include incorporate infuse inject
    insert integrate interweave introduce jumble keep leverage list make meld mention merge
    misspell modify name outline paraphrase parse pretend print provide rearrange recite
    recommend remove render repeat replace reply respond reveal reverse review rewrite run say
    scramble send share show simulate solve substitute suggest summarise summarize tell
    transform translate update use utilize weave write
"""
REQUEST_VERBS = frozenset(_VERBS.split())
"""Imperative verbs that open requests: the verbs among the first words of the DEV rows of the
prompt datasets and of BIPIA's training attacks (held-out rows were not consulted)."""

MAX_CANDIDATES = 64
"""Request-shaped lines next to a row examined per text at most (bounds the Python work)."""

_POLITE = frozenset({"please", "kindly"})
_TO_THE_READER = frozenset({"you", "your"})
_FIRST_WORDS = re2.compile(r"^[\W_]*([A-Za-z]+)(?:[\W_]+([A-Za-z]+))?")
_CLOSERS = "\"')]*” "
_SENTENCE_ENDS = (".", "?", "!")
_ABOUT_THE_TABLE = re2.compile(r"(?i)\b(?:table|tables|column|columns|row|rows|above|below)\b")
_WORD = re2.compile(r"[^\W_]+")


# A table row next to a line shaped like a request (at most one pipe, inside it), blank lines
# allowed between. One RE2 pass finds every candidate, so a long table costs no Python per row.
_LEAD = r"[^\w\n|]*"
_OPENER = (
    rf"(?i:{_LEAD}(?:(?:please|kindly)[^\w\n|]+)?(?:{'|'.join(sorted(REQUEST_VERBS))})\b"
    rf"|{_LEAD}in[^\w\n|]+(?:you|your)\b)"
)
_REQUEST_SHAPED = rf"[ \t]*(?:{_OPENER}[^|\n]*(?:\|[^|\n]*[^|\s])?|[^|\s][^|\n]*\?[\"')\]*” \t]*)"
_BLANKS = r"\r?\n(?:[ \t\r]*\n)*"
_NEXT_TO_ROW = re2.compile(
    rf"(?m)^(?:{ROW}){_BLANKS}({_REQUEST_SHAPED})$|^({_REQUEST_SHAPED}){_BLANKS}(?:{ROW})$"
)


def _line_before(text: str, start: int) -> tuple[str, bool]:
    """The nearest non-blank line ending before `start` (a line start), stripped; and whether
    blank lines lie between."""
    end, gap = start - 1, False
    while end > 0:
        line_start = text.rfind("\n", 0, end) + 1
        line = text[line_start:end].strip()
        if line:
            return line, gap
        end, gap = line_start - 1, True
    return "", gap


def _line_after(text: str, end: int) -> tuple[str, bool]:
    """The nearest non-blank line starting after `end` (a line end), stripped; and whether
    blank lines lie between."""
    start, gap = end + 1, False
    while start < len(text):
        line_end = text.find("\n", start)
        if line_end < 0:
            line_end = len(text)
        line = text[start:line_end].strip()
        if line:
            return line, gap
        start, gap = line_end + 1, True
    return "", gap


def _is_request(line: str, min_words: int) -> bool:
    if len(_WORD.findall(line)) < min_words:
        return False
    if line.rstrip(_CLOSERS).endswith("?"):
        return True
    match = _FIRST_WORDS.match(line)
    if match is None:
        return False
    first, second = match.group(1).lower(), (match.group(2) or "").lower()
    if first == "help" and line[match.end(1) : match.end(1) + 1] == ":":
        return False  # a compiler's diagnostic under its source lines ("help: consider ...")
    if first in _POLITE:
        first = second
    elif first == "in" and second in _TO_THE_READER:  # "In your answer, mention ..."
        return True
    return first in REQUEST_VERBS


class RequestInTableDetector:
    name = "request_in_table"

    def detect(self, rule: Rule, context: ScanContext) -> Iterator[Hit]:
        if self.name not in context.triggers or not context.origin.is_untrusted_content:
            return
        min_rows = int(rule.params.get("min_rows", 3))
        min_words = int(rule.params.get("min_words", 3))
        text = context.text
        if not has_rows(text, min_rows):
            return
        for examined, match in enumerate(_NEXT_TO_ROW.finditer(text)):
            if examined == MAX_CANDIDATES:
                return
            group = 1 if match.group(1) is not None else 2  # prose after a row, or before one
            line_start, line_end = match.span(group)
            line = text[line_start:line_end].strip()
            if line.startswith("#"):
                continue  # a Markdown heading ("## What is it?" after a README's table)
            before, gap_before = _line_before(text, line_start)
            after, gap_after = _line_after(text, line_end)
            # A blank line ends a markdown table: past one, only a line that opens or closes the
            # whole text still goes with the table (nothing else is there).
            row_before = is_row(before) and (not gap_before or not after)
            row_after = is_row(after) and (not gap_after or not before)
            if not (row_before or row_after):
                continue  # a paragraph of its own
            if row_before and before.startswith("|") and not before.endswith("|"):
                continue  # the rest of a cell broken across lines
            between = row_before and row_after
            if not between and not line.rstrip(_CLOSERS).endswith(_SENTENCE_ENDS):
                continue  # a title or caption above or below the table
            if _ABOUT_THE_TABLE.search(line):
                continue  # a caption or a reader's note about the table itself
            if _is_request(line, min_words):
                start = line_start + text[line_start:line_end].index(line[0])
                yield Hit("raw", start, start + len(line))
                return
