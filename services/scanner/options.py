"""Where a text describes a command-line option, as manual pages and --help print them.

    -d, --debug
           Turn on debug mode, which means that no changes are made.
    -q     do not write any warnings to stderr

An option's description is written in the imperative ("Turn on debug mode", "Show all of
the above information", "Write the output to ..."), and its name can hold the very words
an attack uses (--amdgpu-disable-loop-alignment, --list-secret-keys). In retrieved or tool
content, a rule's match that lies within an option's line or the lines indented under it
is most likely that documentation. `Scanner` searches the rule again in the text with every
option entry blanked out (`without_option_entries`), so an entry that quotes a rule's phrase
cannot hide a real request further on, and failing another match weighs the finding as
documentation: evidence, no verdict alone (an instruction dressed as an option's
description is still caught where the learned tiers, which read the whole text, lean to
it).
"""

from __future__ import annotations

import re

_OPTION = re.compile(r"[ \t]*-{1,2}[A-Za-z0-9?][\w.?=-]*")
"""A line that starts with an option's name: -d, --debug, -write-if-changed, --size=N. Not a
list item ("- milk"), a rule of dashes or a mail's "-----Original Message-----"."""

MAX_ENTRY_LINES = 200
"""The most lines read upwards from a match for the option it describes: an option's
description runs to a few dozen lines, and the bound keeps a scan linear in the text
whatever it holds."""


def in_option_description(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] lies within one option's entry: the line that names the
    option, and the lines below it indented deeper than it (blank lines between them
    included)."""
    start, end = core_span(text, start, end)
    if start >= end:
        return False
    first = _entry_of(text, start)
    return first is not None and first == _entry_of(text, end - 1)


def core_span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span without the whitespace around it, nor a lone first character of the line it
    ends on: RE2 has no look-ahead, so a rule that reads how the next line starts ("blank,
    or not in lower case") takes that character into its match."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    line_start = text.rfind("\n", start, end - 1) + 1
    if line_start > start and not text[line_start : end - 1].strip():
        end = line_start
        while end > start and text[end - 1].isspace():
            end -= 1
    return start, end


def _entry_of(text: str, position: int) -> int | None:
    """The start of the option line whose entry holds `position`, or None."""
    line_start = text.rfind("\n", 0, position) + 1
    line = _line_at(text, line_start)
    if _OPTION.match(line):
        return line_start
    indent = _indent(line)
    if not line.strip() or indent == 0:
        return None  # no line stands less indented than one at the margin
    cursor = line_start
    for _ in range(MAX_ENTRY_LINES):
        if cursor == 0:
            break
        cursor = text.rfind("\n", 0, cursor - 1) + 1
        above = _line_at(text, cursor)
        if above.strip() and _indent(above) < indent:
            return cursor if _OPTION.match(above) else None
    return None


def _line_at(text: str, start: int) -> str:
    end = text.find("\n", start)
    return text[start:] if end < 0 else text[start:end]


def _indent(line: str) -> int:
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip(" "))


def without_option_entries(text: str) -> str:
    """The text with every option entry's characters (as `in_option_description` reads
    entries: lines split at "\n", the option's line at most MAX_ENTRY_LINES above) turned
    into spaces, line breaks kept: positions in it are the text's."""
    out: list[str] = []
    ancestors: list[tuple[int, int, bool]] = []  # (indent, line number, names an option)
    for number, line in enumerate(text.split("\n")):
        body = line.rstrip("\r")
        if not body.strip():
            out.append(line)
            continue
        indent = _indent(body)
        while ancestors and ancestors[-1][0] >= indent:
            ancestors.pop()
        option = _OPTION.match(body) is not None
        in_entry = option or bool(
            ancestors and ancestors[-1][2] and number - ancestors[-1][1] <= MAX_ENTRY_LINES
        )
        ancestors.append((indent, number, option))
        out.append(" " * len(body) + line[len(body) :] if in_entry else line)
    return "\n".join(out)
