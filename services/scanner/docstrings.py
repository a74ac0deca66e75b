"""Where a retrieved text is an API reference's docstring, whose opening line is a command.

    Generate a swiss roll dataset.

    Parameters
    ----------
    n_samples : int, default=100

PEP 257 asks a docstring to open with a phrase in the imperative, ending in a period
("Write a DataFrame to the binary parquet format.", "Provide the PostgreSQL MONEY type."),
and numpydoc, Google's and Sphinx's styles all follow it: the very shape a request planted
in a document has, a command on a line of its own (`indirect.embedded_request`). So in
retrieved or tool content that is marked up as a docstring (numpydoc's underlined sections,
Google's "Args:", Sphinx's fields and roles, doctest prompts), a match of such a rule on
the text's opening line is read as that summary line. `Scanner` searches the rule again
with the line blanked out (`without_summary_line`), so a summary cannot hide a request
further on, and failing another match weighs the finding as documentation: evidence, no
verdict alone. Only the imperative itself is explained by the convention: a rule about what
a request says (ignore your instructions, send the data to ...) is weighed in full there.
"""

from __future__ import annotations

import re

from .options import core_span

IMPERATIVE_RULES = frozenset({"indirect.embedded_request"})
"""Rules that read a text's form (a request standing alone), which a summary line shares."""

_MARKUP = re.compile(
    # numpydoc: a section's name underlined with dashes (cognee writes "Parameters:").
    r"^[ \t]*(?:Parameters|Other Parameters|Returns|Yields|Receives|Raises|Warns|Examples?"
    r"|Notes|See Also|Attributes|Methods|References):?[ \t]*\n[ \t]*-{3,}[ \t]*$"
    # Google: a section's name and a colon, its first entry indented under it.
    r"|^[ \t]*(?:Args|Arguments|Keyword Args|Parameters|Returns|Yields|Raises|Attributes):"
    r"[ \t]*\n[ \t]+\S"
    # Sphinx: a field (":param path:", ":rtype:") or a cross-reference role (:class:`...`).
    r"|^[ \t]*:(?:param|type|returns?|rtype|raises?|ivar|cvar|vartype|keyword|kwtype)\b[^:\n]*:"
    r"|:(?:py:)?(?:class|func|meth|attr|mod|obj|exc|data|ref|term):`"
    # doctest: an interactive session.
    r"|^[ \t]*>>>[ \t]",
    re.MULTILINE,
)


def is_docstring(text: str) -> bool:
    """Whether the text carries a docstring style's markup (see the module docstring)."""
    return _MARKUP.search(text) is not None


def summary_line(text: str) -> tuple[int, int] | None:
    """The span of the text's opening line (its first non-blank one, without the whitespace
    around it) if the text is marked up as a docstring, else None."""
    start = len(text) - len(text.lstrip())
    if start == len(text) or not is_docstring(text):
        return None
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    return start, len(text[:end].rstrip())


def on_summary_line(text: str, line: tuple[int, int], start: int, end: int) -> bool:
    """Whether text[start:end], a rule's match, lies on the summary line once the
    whitespace around it and the next line's first character, which a rule without
    look-ahead takes in, are trimmed (`options.core_span`)."""
    start, end = core_span(text, start, end)
    return start < end and line[0] <= start and end <= line[1]


def without_summary_line(text: str, line: tuple[int, int]) -> str:
    """The text with the summary line's characters turned into spaces: positions in it are
    the text's."""
    return text[: line[0]] + " " * (line[1] - line[0]) + text[line[1] :]
