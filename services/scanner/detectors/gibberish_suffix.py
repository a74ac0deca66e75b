"""`gibberish_suffix`: an optimiser-made adversarial suffix (GCG and kin) ending the text.

Suffixes found by gradient or random search are token soup: unbalanced brackets, clusters of
code punctuation, words glued across scripts or cases, all on one line after ordinary prose.
Only the last `tail` characters (default 240) of the final line are examined, so the cost is
constant. A tail is flagged when at least `min_signals` (default 2) of these hold:

- brackets `([{` and `)]}` are unbalanced by 2 or more;
- at least 3 clusters of 2+ consecutive code-punctuation characters;
- at least 2 tokens glue a lower-case letter to an upper-case one, or Latin to another script;
- at least 3 backslashes or curly braces.

A name quoted as inline code (reStructuredText's ``TypedDict``, Markdown's `load_config`) is
read as the one word it is: documentation that ends by naming a few (``ReadOnly``,
``NotRequired``) would otherwise show the clusters of backticks and the glued cases of token
soup. Lines that look like code (statement endings, indentation, `def`/`function`/`return`/
`import`) are never flagged, nor the last row of a table (a README's API table: `*DataApi* |
[**delete_rows**](docs/DataApi.md#delete_rows) | **POST** /v1/table/{id}/delete | ...`).
"""

from __future__ import annotations

from collections.abc import Iterator

import re2

from ..rules import Rule
from ..tables import has_rows, is_row
from .base import Hit, ScanContext

_CLUSTER = re2.compile(r"[\[\]{}()\\<>|$=`^~@#]{2,}")
_GLUED = re2.compile(r"[a-z]{2}[A-Z][a-z]|[A-Za-z][^\x00-\x{2FF}\s]|[^\x00-\x{2FF}\s][A-Za-z]")
_QUOTED_NAME = re2.compile(r"``[\w.:()-]+``|`[\w.:()-]+`")
"""A name quoted as inline code: a dotted identifier, maybe called, between backticks."""
_CODE_LINE = re2.compile(r"(?:[;{:]\s*$)|^\s{2,}\S|\bdef |\bfunction\b|\breturn\b|\bimport ")


TRIGGER = r"[\[\]{}()\\<>|$=`^~@#]{2}"
"""Two adjacent code-punctuation characters somewhere: the only texts worth examining."""


class GibberishSuffixDetector:
    name = "gibberish_suffix"

    def detect(self, rule: Rule, context: ScanContext) -> Iterator[Hit]:
        if self.name not in context.triggers:
            return
        text = context.text
        width = int(rule.params.get("tail", 240))
        min_signals = int(rule.params.get("min_signals", 2))
        end = len(text.rstrip())
        start = max(0, end - width)
        newline = text.rfind("\n", start, end)
        if newline >= 0:
            start = newline + 1
        tail = text[start:end]
        if len(tail) < 40 or _CODE_LINE.search(tail):
            return
        tail = _QUOTED_NAME.sub("name", tail)
        opened = sum(tail.count(c) for c in "([{")
        closed = sum(tail.count(c) for c in ")]}")
        signals = 0
        signals += abs(opened - closed) >= 2
        signals += len(_CLUSTER.findall(tail)) >= 3
        signals += len(_GLUED.findall(tail)) >= 2
        signals += tail.count("\\") + tail.count("{") + tail.count("}") >= 3
        # Asked last: whether the text is a table reads all of it.
        if signals >= min_signals and not (is_row(tail) and has_rows(text)):
            yield Hit("raw", start, end)
