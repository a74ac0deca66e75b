# ruff: noqa: RUF001, RUF002  (lookalike characters are this module's subject)
r"""The normalised text view: undo the tricks attackers use to slip past literal rules.

Folding, in this order, per character then per token:

1. NFKC (fullwidth, mathematical and circled letters become plain ones), lower case;
2. zero-width, bidi-control and other invisible characters removed; Unicode tag characters
   (U+E0020..U+E007E, "ASCII smuggling") turned into the ASCII they hide;
3. Cyrillic/Greek/Latin-extended lookalikes folded to Latin (`о` -> `o`, `ι` -> `i`), a few
   symbol lookalikes too (`€` -> `e`);
4. `_` becomes a space (`ignore_previous_instructions`);
5. spaced-out letters collapsed (`i g n o r e`, `i.g.n.o.r.e`); a double gap keeps a word break;
6. lone punctuation between words dropped (`ignore _ all . previous`);
7. leetspeak folded inside words mixing letters with `0 1 3 4 5 6 7 8 9 @ $ | ! +`;
8. `l` is canonicalised to `i`, because `1` and `|` stand for either. Rule patterns are
   rewritten the same way for this view (`canonical_pattern`), so rule authors write plain
   words and never think about it.

Cost control: the view is only built when a cheap trigger (`TRIGGERS`, compiled into the same
RE2 set as the rules) fires (lone punctuation does not trigger it: raw-view patterns already
allow `[\W_]+` between words), and then only for windows of `WINDOW` characters around the
trigger positions, so one odd character in a megabyte costs a few microseconds, not a second
pass over the megabyte. Every normalised character keeps the offset of the original character
it came from, so matches map back to exact spans in the original text. When the windows would
exceed `BUDGET` characters the whole text gets a cheaper fold instead (steps 1-4 and 8 via
`str.translate`) and matches from it carry no span.

Rules that need capitals (`case_sensitive`, or a `(?-i:...)` part: a persona's name) cannot
match a lower-cased view. They also read `cased_view`: steps 1-2 alone, case kept, built
only where `cased_changes` finds a styled letter, a tag character or a character hidden
inside a word.
"""

from __future__ import annotations

import bisect
import functools
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from types import EllipsisType

import re2

from mithril.services.invisible import INVISIBLE, TAGS, UNTAGGED, re2_class

WINDOW = 400
"""Characters of context normalised on each side of a trigger position."""
BUDGET = 256 * 1024
"""Above this many window characters, fall back to the span-less whole-text fold."""
MAX_TRIGGER_HITS = 2048

Windows = list[tuple[int, int]] | None
"""[start, end) spans a view is built over; None: the whole text, folded without spans."""


_LOOKALIKES = {
    # Cyrillic
    "а": "a", "в": "b", "г": "r", "е": "e", "ё": "e", "з": "3", "и": "u", "й": "u", "к": "k",
    "м": "m", "н": "h", "о": "o", "п": "n", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x",
    "ь": "b", "ъ": "b", "ѕ": "s", "і": "i", "ї": "i", "ј": "j", "һ": "h", "ԁ": "d", "ӏ": "l",
    "ԛ": "q", "ԝ": "w", "ѵ": "v", "ѡ": "w", "ү": "y", "ɡ": "g", "ո": "n", "ս": "u",
    # Greek
    "α": "a", "β": "b", "γ": "y", "δ": "d", "ε": "e", "ζ": "z", "η": "n", "ι": "i", "κ": "k",
    "λ": "a", "μ": "u", "ν": "v", "ο": "o", "π": "n", "ρ": "p", "σ": "o", "ς": "c", "τ": "t",
    "υ": "u", "φ": "o", "χ": "x", "ω": "w", "ϲ": "c", "ϳ": "j", "ί": "i", "ό": "o", "έ": "e",
    "ά": "a", "ύ": "u", "ή": "n", "ώ": "w",
    # Latin extended / IPA / symbols used as letters
    "ɑ": "a", "ɐ": "a", "ɩ": "i", "ı": "i", "ɪ": "i", "ɴ": "n", "ʀ": "r", "ʏ": "y", "ᴀ": "a",
    "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ᴋ": "k", "ᴍ": "m", "ᴏ": "o", "ᴘ": "p", "ᴛ": "t", "ᴜ": "u",
    "ᴠ": "v", "ᴡ": "w", "ᴢ": "z", "ß": "ss", "ø": "o", "đ": "d", "ħ": "h", "ŀ": "l", "ł": "l",
    "€": "e", "£": "l", "¡": "i", "¢": "c", "¥": "y", "©": "c", "®": "r", "∂": "d", "∑": "e",
    "∏": "n", "√": "v", "†": "t", "×": "x",
}  # fmt: skip

_LEET = {"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "6": "g", "7": "t", "8": "b",
         "9": "g", "@": "a", "$": "s", "|": "i", "!": "i", "+": "t"}  # fmt: skip

_LOOKALIKE_CLASS = "".join(sorted(k for k in _LOOKALIKES if len(k) == 1))

_STYLED = (
    r"\x{FF10}-\x{FF19}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{1D400}-\x{1D7FF}\x{24B6}-\x{24E9}"
    r"\x{1F130}-\x{1F189}"
)
"""Fullwidth digits and letters, mathematical, circled and squared letters (an RE2 class's body)."""

TRIGGERS: dict[str, str] = {
    # invisible / bidi / tag characters, fullwidth or styled letters
    "unicode": (
        r"[\x{200B}-\x{200F}\x{202A}-\x{202E}\x{2060}-\x{206F}\x{FEFF}\x{00AD}"
        rf"\x{{E0000}}-\x{{E007F}}{_STYLED}]"
    ),
    # a lookalike letter touching a Latin letter: a word written in mixed scripts
    "lookalike": f"[a-zA-Z][{_LOOKALIKE_CLASS}]|[{_LOOKALIKE_CLASS}][a-zA-Z]",
    # leetspeak inside a word: r3veal, 1gnore, ru1es, |gnore, $ystem (not x+y, str1, 3rd, mp3)
    "leet": (
        r"[a-zA-Z]{2}[013456789@$|!+][a-zA-Z]|[a-zA-Z][013456789@$|!+][a-zA-Z]{2}|"
        r"(?:^|[\s\"'(])[013457@$|!][a-zA-Z]{3}|"
        r"[a-zA-Z][013456789@$|!+]{2}[a-zA-Z]"
    ),
    # attack words glued into identifiers: ignore_previous, reveal_prompt
    "identifier": (
        r"(?i)(?:ignore|disregard|forget|bypass|override|reveal|system|prompt|instructions?|"
        r"previous)_[a-z]"
    ),
    # spaced-out, dotted or backslashed letters: i g n o r e, i.g.n.o.r.e, \i\g\n\o\r\e
    "spaced": r"\b[a-zA-Z](?:[ .\-*/|,_\\]{1,3}[a-zA-Z]\b){4}",
}
"""Cheap patterns (added to the rule set) whose match means the normalised view may differ."""

_CASED_CHANGE = re2.compile(
    f"[{re2_class(TAGS)}]|[{_STYLED}]|[\\pL\\pN][{re2_class(INVISIBLE)}]+[\\pL\\pN]"
)
"""Where the cased view can show a rule something the raw text does not: a tag character, a
styled letter or digit, or a hidden character inside a word. An emoji's zero-width joiner,
the `unicode` trigger's commonest cause, is none of them."""


def cased_changes(text: str) -> bool:
    """Whether `cased_view(text)` can read differently from `text` for a rule."""
    return _CASED_CHANGE.search(text) is not None


TRIGGER_PATTERN = "|".join(f"(?:{p})" for p in TRIGGERS.values())

_SPACED_RUN = re2.compile(r"\b[a-z](?:[ .\-*/|,\\]{1,3}[a-z]\b){3,}")
_NOISE = re2.compile(r" (?:[_.,;:|~*\-]{1,2} +)+")
_DASHES = re2.compile(r"--+")
_LEET_TOKEN = re2.compile(
    r"[a-z0-9@$|!+]*(?:[a-z][a-z0-9@$|!+]*[0-9@$|!+]|[0-9@$|!+][a-z0-9@$|!+]*[a-z])"
    r"[a-z0-9@$|!+]*"
)
_TRIGGER_RE = re2.compile(TRIGGER_PATTERN)
_POSIX_CLASS = re2.compile(r"\[:\^?[a-z]+:\]")


@functools.lru_cache(maxsize=65536)
def fold_char(char: str) -> str:
    """Steps 1-4 and 8 for one character (cached; most text repeats few characters)."""
    code = ord(char)
    if code < 128:
        if char == "_":
            return " "
        lower = char.lower()
        return "i" if lower == "l" else lower
    out = []
    for piece in cased_char(char):  # steps 1-2, case kept
        piece = piece.lower()
        piece = _LOOKALIKES.get(piece, piece)
        out.append("".join(fold_char(c) if ord(c) < 128 else c for c in piece))
    return "".join(out)


_INVISIBLE_SET = frozenset(INVISIBLE)


@functools.lru_cache(maxsize=65536)
def cased_char(char: str) -> str:
    """Steps 1-2 for one character, case kept (`cased_view`)."""
    code = ord(char)
    if code < 128:
        return char
    if code in _INVISIBLE_SET:
        return ""
    if code in TAGS:
        return UNTAGGED[code]
    return unicodedata.normalize("NFKC", char)


_FAST_TABLE: dict[int, str | None] = {cp: None for cp in INVISIBLE}
_FAST_TABLE.update({ord(k): v for k, v in _LOOKALIKES.items()})
_FAST_TABLE.update(UNTAGGED)
_FAST_TABLE.update({ord("_"): " ", ord("l"): "i"})
_FAST_KEYS = frozenset(chr(code) for code in _FAST_TABLE if code >= 128)


def canonical_pattern(pattern: str) -> str:
    """Rewrite a rule pattern for the normalised view: literal `l`/`L` become `i`.

    Escapes (`\\b`, `\\x{...}`, `\\p{...}`), group syntax `(?...)` and POSIX classes
    `[:alpha:]` are copied unchanged.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            end = i + 2
            if pattern[i + 1] in "xpP" and end < n and pattern[end] == "{":
                end = pattern.index("}", end) + 1
            elif pattern[i + 1] in "pP" and end < n:
                end += 1  # one-letter class name: \pL, \PN
            out.append(pattern[i:end])
            i = end
        elif pattern.startswith("(?P<", i):
            end = pattern.index(">", i) + 1
            out.append(pattern[i:end])
            i = end
        elif pattern.startswith("(?", i):
            end = i + 2
            while end < n and pattern[end] in "imsU-":
                end += 1
            out.append(pattern[i : end + 1])
            i = end + 1
        elif pattern.startswith("[:", i) and _POSIX_CLASS.match(pattern, i):
            end = pattern.index(":]", i + 2) + 2
            out.append(pattern[i:end])
            i = end
        else:
            out.append("i" if char in "lL" else char)
            i += 1
    return "".join(out)


@dataclass(frozen=True, slots=True)
class NormalizedView:
    """The normalised text and, when built from windows, the map back to original offsets."""

    text: str
    starts: tuple[int, ...] = ()
    """Offset in `text` where each window begins."""
    maps: tuple[tuple[int, ...], ...] = ()
    """Per window: original offset of every normalised character."""

    def original_span(self, start: int, end: int) -> tuple[int, int] | None:
        """Map a [start, end) span of `text` to the original text; None when unmappable."""
        if not self.starts or end <= start:
            return None
        index = bisect.bisect_right(self.starts, start) - 1
        if index < 0:
            return None
        offsets = self.maps[index]
        lo = start - self.starts[index]
        hi = min(end - self.starts[index], len(offsets)) - 1
        if lo >= len(offsets) or hi < lo:
            return None
        return offsets[lo], offsets[hi] + 1


def _apply_edits(text: str, offsets: list[int], edits: list[tuple[int, int, str, list[int]]]):
    """Replace each (start, end, replacement, source positions) span, keeping offsets."""
    if not edits:
        return text, offsets
    pieces: list[str] = []
    new_offsets: list[int] = []
    last = 0
    for start, end, replacement, sources in edits:
        pieces.append(text[last:start])
        new_offsets.extend(offsets[last:start])
        pieces.append(replacement)
        new_offsets.extend(offsets[p] for p in sources)
        last = end
    pieces.append(text[last:])
    new_offsets.extend(offsets[last:])
    return "".join(pieces), new_offsets


def _collapse_spaced(text: str) -> list[tuple[int, int, str, list[int]]]:
    edits = []
    for match in _SPACED_RUN.finditer(text):
        letters: list[str] = []
        sources: list[int] = []
        gap_start, gap = match.start(), ""
        for position in range(match.start(), match.end()):
            char = text[position]
            if "a" <= char <= "z":
                # a word break: two spaces ("i g  a l l"), or a space between backslashes
                # (\I\ \h\a\v\e: one backslash joins letters, as one space does)
                if len(gap) >= 2 and " " in gap and gap.strip(" \\") == "":
                    letters.append(" ")
                    sources.append(gap_start)
                letters.append(char)
                sources.append(position)
                gap, gap_start = "", position + 1
            else:
                gap += char
        edits.append((match.start(), match.end(), "".join(letters), sources))
    return edits


def _fold_leet(text: str) -> str:
    """Leetspeak inside mixed tokens; the replacement is 1:1 so offsets stay valid."""
    chars: list[str] | None = None
    for match in _LEET_TOKEN.finditer(text):
        token = match.group()
        start, end = match.start(), match.end()
        # trailing/leading punctuation-like characters are punctuation, not letters
        while end > start and text[end - 1] in "!+|":
            end -= 1
        while start < end and text[start] == "+":
            start += 1
        letters = sum(c.isalpha() for c in token)
        if letters < 2 or end - start < 3:
            continue
        if chars is None:
            chars = list(text)
        for k in range(start, end):
            chars[k] = _LEET.get(chars[k], chars[k])
    return text if chars is None else "".join(chars)


def normalize_window(text: str) -> tuple[str, list[int]]:
    """Fully normalise `text`; return it with the original offset of each character."""
    parts = [fold_char(c) for c in text]
    folded = "".join(parts)
    if len(folded) == len(text) and all(len(p) == 1 for p in parts):
        offsets = list(range(len(text)))
    else:
        offsets = [i for i, part in enumerate(parts) for _ in part]
    folded, offsets = _apply_edits(folded, offsets, _collapse_spaced(folded))
    edits = [(m.start(), m.end(), " ", [m.start()]) for m in _NOISE.finditer(folded)]
    edits += [(m.start(), m.end(), " ", [m.start()]) for m in _DASHES.finditer(folded)]
    edits.sort()
    folded, offsets = _apply_edits(folded, offsets, edits)
    folded = _fold_leet(folded)
    return folded, offsets


def cased_window(text: str) -> tuple[str, list[int]]:
    """`text` with styled letters plain and hidden characters gone, case kept; with the
    original offset of each character."""
    parts = [cased_char(c) for c in text]
    offsets = [i for i, part in enumerate(parts) for _ in part]
    return "".join(parts), offsets


_CASED_TABLE: dict[int, str | None] = {cp: None for cp in INVISIBLE} | UNTAGGED
"""What `fast_cased` drops (invisible characters) or turns into ASCII (tag characters)."""
_CASED_KEYS = frozenset(chr(code) for code in _CASED_TABLE)


def fast_cased(text: str) -> str:
    """`cased_window` of the whole text without spans (for inputs too odd to window)."""
    return _replaced(unicodedata.normalize("NFKC", text), _CASED_TABLE, _CASED_KEYS)


def fast_fold(text: str) -> str:
    """Whole-text fold without spans or token steps (for inputs too odd to window)."""
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    text = text.lower().replace("_", " ").replace("l", "i")
    return _replaced(text, _FAST_TABLE, _FAST_KEYS)


def _replaced(text: str, table: dict[int, str | None], keys: frozenset[str]) -> str:
    """`text.translate(table)` for the non-ASCII `keys`, whose replacements are ASCII or
    nothing: several times faster on long non-ASCII text as one `str.replace` per distinct
    key present."""
    if text.isascii():
        return text
    for char in sorted(set(text) & keys):
        text = text.replace(char, table[ord(char)] or "")
    return text


def trigger_windows(
    text: str, width: int = WINDOW, limit: int | None = None
) -> list[tuple[int, int]]:
    """Merged [start, end) windows around every trigger position (bounded count).

    With a `limit`, stops as soon as the windows cover more than `limit` characters and
    returns the whole text: a caller comparing the total with `limit` decides the same way,
    without walking thousands of trigger hits first.
    """
    windows: list[tuple[int, int]] = []
    n = len(text)
    closed = 0
    for count, match in enumerate(_TRIGGER_RE.finditer(text)):
        if count >= MAX_TRIGGER_HITS:
            return [(0, n)]
        start, end = max(0, match.start() - width), min(n, match.end() + width)
        if windows and start <= windows[-1][1]:
            windows[-1] = (windows[-1][0], max(windows[-1][1], end))
        else:
            if windows:
                closed += windows[-1][1] - windows[-1][0]
            windows.append((start, end))
        if limit is not None and closed + windows[-1][1] - windows[-1][0] > limit:
            return [(0, n)]
    return windows


def view_windows(text: str) -> Windows:
    """Where a view of `text` is built: the windows around its triggers (the whole text when
    short); None when they exceed `BUDGET` and the whole text gets a span-less fold."""
    windows = trigger_windows(text, limit=BUDGET) if len(text) > 2 * WINDOW else [(0, len(text))]
    return None if sum(end - start for start, end in windows) > BUDGET else windows


def build_view(text: str, windows: Windows | EllipsisType = ...) -> NormalizedView:
    """The normalised view of `text` (windowed around triggers, or whole-text fallback);
    `windows` as `view_windows(text)` gave them, when the caller has them already."""
    if windows is ...:
        windows = view_windows(text)
    return _windowed(text, windows, normalize_window, fast_fold)


def cased_view(text: str, windows: Windows | EllipsisType = ...) -> NormalizedView:
    """Styled letters (fullwidth, mathematical, circled) as plain ones, invisible characters
    dropped and tag characters turned into the ASCII they hide, as in the normalised view,
    but nothing else folded and case kept: what a rule that needs capitals reads (a persona's
    name, "DAN", "STAN"; the canary's "PWNED"). The normalised view lower-cases, so such a
    rule never matched "𝗗𝗔𝗡" or "ＤＡＮ". Windowed as `build_view` is, over the same
    windows."""
    if windows is ...:
        windows = view_windows(text)
    return _windowed(text, windows, cased_window, fast_cased)


def _windowed(
    text: str,
    windows: Windows,
    fold_window: Callable[[str], tuple[str, list[int]]],
    fold_whole: Callable[[str], str],
) -> NormalizedView:
    if windows is None:
        return NormalizedView(fold_whole(text))
    pieces: list[str] = []
    starts: list[int] = []
    maps: list[tuple[int, ...]] = []
    position = 0
    for start, end in windows:
        folded, offsets = fold_window(text[start:end])
        starts.append(position)
        maps.append(tuple(start + o for o in offsets))
        pieces.append(folded)
        position += len(folded) + 2
    return NormalizedView("\n\n".join(pieces), tuple(starts), tuple(maps))
