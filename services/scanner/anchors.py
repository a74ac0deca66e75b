"""Anchors: what every match of a rule pattern must contain, derived from the pattern itself.

`plan(pattern)` parses an RE2 pattern (the syntax rule files use: literals, escapes, classes,
groups with flags, alternation, greedy/lazy repetition, assertions; anything else gives an
empty plan) and returns a `Plan`:

- `anchor`: a set of strings such that every match of the pattern contains one of them. The
  strings are literals plus two zero-cost connectors: `\\b` (kept from the pattern, so `ai`
  does not fire inside "said") and separator runs (`[\\W_]+`, `\\s*`, ..., so
  `\\bignore[\\W_]+previous` stays one anchor and a pair of words is far rarer than either
  word). An anchor set has no counters, so the engine's RE2 set over all anchors costs about
  what a plain literal search costs. Among the sets a pattern requires, the rarest is chosen
  (`literal_cost`: a letter-by-letter prior plus a list of frequent English words). None when
  the pattern requires nothing usable (character-class patterns): the engine then matches the
  pattern itself in its first-stage set;
- `guards`: up to `MAX_GUARDS` further, independent sets every match also needs; the engine
  checks them on short texts, where one regex search costs as much as the whole prefilter;
- `radius`: how far (characters) a match can reach from its anchor, so a window of `radius`
  on each side of an occurrence holds the whole match; None when unbounded (`.*`, `[^-]*`).

Soundness. Requirements follow the structure only: a concatenation requires what any part
requires, plus the cross product of adjacent exact parts ("system" + `[\\W_]+` + "prompt"); an
alternation requires one of what each branch requires; a repetition with a minimum of one
requires what its body requires. Anchors are matched case-insensitively (a superset for
case-sensitive patterns). So a text without an occurrence of the anchor cannot match: the
anchor is a pure prefilter and never decides a match on its own.

Radius. An unbounded repetition of a word or separator class (`\\w+`, `[\\W_]+`, `\\s*`)
counts as at most `SPAN_CAP` characters; repetitions of `.` or of a negated class make the
reach unbounded. The engine only uses windows for texts longer than `engine.DIRECT_LIMIT`, so
the cap matters only for a match, inside such a long text, whose single word or separator run
is longer than `SPAN_CAP` characters.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import product

import re2

SPAN_CAP = 256
"""Characters an unbounded repetition of a word/separator class may span within a window."""
MAX_RADIUS = 8192
"""Above this reach a pattern is matched over the whole text (once its anchor is present)."""
MAX_EXACT = 64
"""Largest set of alternative strings tracked for one sub-pattern."""
MAX_ANCHOR_COST = 8.0
"""Anchor sets costlier than this (whitespace, lone punctuation, many frequent words) are not
used: such a pattern is matched directly (see `engine.py`)."""
UNUSABLE = 100.0
"""Cost of an anchor string without a real character (only whitespace or connectors)."""
WEAK_ANCHOR_COST = 0.5
"""Anchor sets at least this costly (common words: "always", "write", "?") occur in most
paragraphs of ordinary prose, so on short texts the engine matches such a pattern in its
first-stage set instead of confirming nearly every anchor hit with a search of its own."""
MAX_GUARDS = 2
"""Extra required sets per pattern checked by the prefilter besides its anchor."""
MAX_GUARD_COST = 1.2
"""Guards costlier than this fire on most texts and are not worth a set entry."""

# Frequent English words. An anchor string found inside many of them would fire on almost any
# ordinary text; `literal_cost` counts in how many of these words a candidate occurs.
_VOCABULARY_WORDS = """
    a about above across act add after again against ago air all almost alone along already
    also always am among an and animal another answer any anything are area around as ask at
    away back be became because become been before began begin behind being below best better
    between big black body book both boy bring brought build but by call came can car care carry
    case cause change child children city close cold come common could country course cover cut
    day did different do does dog done door down draw during each early earth easy eat end
    enough even ever every example eye face fact family far father feel feet few field find fire
    first fish five follow food for form found four free friend from front full game gave get
    girl give go going gone good got great green ground group grow had half hand happen hard has
    have he head hear heard help her here high him his hold home horse hot hour house how however
    i idea if important in into is it its just keep kind knew know land large last late learn
    leave left less let letter life light like line list little live long look made make man
    many map mark may me mean men might mile mind miss money more morning most mother move much
    must my name near need never new next night no not nothing now number of off often old on
    once one only open or order other our out over own page paper part people perhaps picture
    place plan plant play point power put question quick quite rain ran read ready real really
    red rest right river road rock room round run said same saw say school sea second see seem
    seen sentence set several she ship short should show side since small so some something
    sometimes song soon sound space stand start state still stop story street study such sun
    sure table take talk tell ten than that the their them then there these they thing think
    this those though thought three through time to today together told too took top toward
    town tree true try turn two under until up upon us use usually very voice walk want war warm
    was watch water way we week well went were what when where which while white who whole why
    will with without woman word words work world would write year yes yet you young your
"""
_VOCABULARY = tuple(_VOCABULARY_WORDS.split())
_COMMON = frozenset(_VOCABULARY)
_VOCABULARY_TEXT = " " + " ".join(_VOCABULARY) + " "

BOUNDARY = "\x00"
"""Stands for `\\b` inside anchor strings (rule patterns never contain NUL)."""
GAPS = {"\x01": r"[\W_]+", "\x02": r"[\W_]*", "\x03": r"\s+", "\x04": r"\s*"}
"""Markers for separator runs inside anchor strings: `ignore[\\W_]+previous` stays one anchor.

A run of separators has no counter for the DFA to track, so an anchor set with such gaps stays
as cheap to match as plain literals, while word pairs are far rarer than single words.
"""
_MARKERS = BOUNDARY + "".join(GAPS)
_GAP_SOURCE = {r"[\W_]": ("\x01", "\x02"), r"\s": ("\x03", "\x04")}

_CHAR_COST = {" ": 1.0, "\n": 0.5, ".": 0.6, ",": 0.5, "'": 0.3, "-": 0.3, ":": 0.3, "?": 0.3}
_CLASS_ESCAPES = frozenset("wWsSdDpPC")
_ASSERT_ESCAPES = frozenset("BAzG")
_CONTROL = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}


class AnchorError(ValueError):
    """The pattern uses syntax the anchor parser does not understand."""


@dataclass(frozen=True, slots=True)
class Plan:
    """How the engine finds a pattern: a literal anchor set and a window radius."""

    anchor: frozenset[str] | None
    radius: int | None
    guards: tuple[frozenset[str], ...] = ()
    """Other sets every match must also contain (a cheap conjunction for the prefilter)."""

    @property
    def weak(self) -> bool:
        """Whether the anchor fires on most ordinary text (see `WEAK_ANCHOR_COST`)."""
        return self.anchor is not None and anchor_cost(self.anchor) >= WEAK_ANCHOR_COST


@dataclass(frozen=True, slots=True)
class _Info:
    """What is known about a sub-pattern."""

    exact: frozenset[str] | None
    """Every string it can match, when that set is small; else None."""
    required: tuple[frozenset[str], ...]
    """Alternative anchor sets: every match contains a string of each of these sets."""
    span: int | None
    """Maximum match length in characters (unbounded repeats capped), None if unbounded."""
    can_be_empty: bool
    open: bool = False
    """Contains `.` or a negated class: an unbounded repetition of it reaches arbitrarily far."""


def _lit(char: str) -> _Info:
    folded = char.lower() if char.isascii() else char
    return _Info(frozenset({folded}), (), 1, False)


_CLASS = _Info(None, (), 1, False)
_OPEN_CLASS = _Info(None, (), 1, False, open=True)
_EMPTY = _Info(frozenset({""}), (), 0, True)
_WORD_BOUNDARY = _Info(frozenset({BOUNDARY}), (), 0, True)


@lru_cache(maxsize=65536)
def literal_cost(text: str) -> float:
    """Rough likelihood that `text` occurs at a given position of ordinary text (lower is rarer).

    Each word costs 1 if it is a frequent English word, else 1/2 per letter; each further word
    of a phrase multiplies by 0.3, punctuation by its own rarity, each word boundary the anchor
    insists on by 1/2; plus 0.05 for every frequent word the string occurs in. Whitespace or
    nothing costs `UNUSABLE`.
    """
    real = _real(text)
    if real.strip() == "":
        return UNUSABLE
    spaced = "".join(" " if c in GAPS else c for c in text.replace(BOUNDARY, "")).lower()
    cost, words, word = 1.0, 0, ""
    for char in spaced + " ":
        if char.isalnum():
            word += char
            continue
        if word:
            cost *= 1.0 if word in _COMMON else 0.5 ** len(word)
            cost *= 0.3 if words else 1.0
            words += 1
            word = ""
        cost *= _CHAR_COST.get(char, 0.1)
    head = " " if text.startswith(BOUNDARY) and real[0].isalnum() else ""
    tail = " " if text.endswith(BOUNDARY) and real[-1].isalnum() else ""
    cost *= 0.5 ** (len(head) + len(tail))
    return cost + 0.05 * _VOCABULARY_TEXT.count(head + spaced.strip() + tail)


def anchor_cost(strings: frozenset[str]) -> float:
    """Rough likelihood that an anchor set occurs at a given position (sum over its strings)."""
    return sum(literal_cost(s) for s in strings)


def _minimal(strings: frozenset[str]) -> frozenset[str]:
    """Drop strings containing another string of the set (the shorter one suffices)."""
    ordered = sorted(strings, key=len)
    kept: list[str] = []
    for s in ordered:
        if not any(k in s for k in kept):
            kept.append(s)
    return frozenset(kept)


def _usable(strings: frozenset[str] | None) -> bool:
    """A non-empty set whose every string has at least one real (non-boundary) character."""
    return bool(strings) and all(_real(s) for s in strings)  # type: ignore[union-attr]


def _real(text: str) -> str:
    """The characters of an anchor string without its boundary and gap markers."""
    return "".join(c for c in text if c not in _MARKERS)


def _join(left: frozenset[str], right: frozenset[str]) -> frozenset[str]:
    return frozenset((a + b).replace(BOUNDARY * 2, BOUNDARY) for a, b in product(left, right))


def _best(options: tuple[frozenset[str], ...]) -> frozenset[str] | None:
    usable = [o for o in options if _usable(o)]
    return min(usable, key=lambda o: (anchor_cost(o), sorted(o))) if usable else None


def _candidates(info: _Info) -> tuple[frozenset[str], ...]:
    out = info.required
    if info.exact is not None and _usable(info.exact):
        out = (*out, _minimal(info.exact))
    return out


def _concat(parts: list[_Info]) -> _Info:
    required: list[frozenset[str]] = []
    run: frozenset[str] = frozenset({""})
    exact: frozenset[str] | None = frozenset({""})
    span: int | None = 0
    empty = True
    for part in parts:
        required.extend(part.required)
        if part.exact is not None and len(run) * len(part.exact) <= MAX_EXACT:
            run = _join(run, part.exact)
        else:
            if _usable(run):
                required.append(_minimal(run))
            run = part.exact if part.exact is not None else frozenset({""})
        if exact is not None:
            if part.exact is not None and len(exact) * len(part.exact) <= MAX_EXACT:
                exact = _join(exact, part.exact)
            else:
                exact = None
        span = None if span is None or part.span is None else span + part.span
        empty = empty and part.can_be_empty
    if _usable(run):
        required.append(_minimal(run))
    return _Info(exact, tuple(dict.fromkeys(required)), span, empty, any(p.open for p in parts))


def _alternate(branches: list[_Info]) -> _Info:
    exact: frozenset[str] | None = frozenset()
    for branch in branches:
        if exact is None or branch.exact is None or len(exact) + len(branch.exact) > MAX_EXACT:
            exact = None
            break
        exact = exact | branch.exact
    union: set[str] = set()
    for branch in branches:
        best = _best(_candidates(branch))
        if best is None:
            union = set()
            break
        union |= best
    required = (_minimal(frozenset(union)),) if union else ()
    spans = [b.span for b in branches]
    span = None if any(s is None for s in spans) else max(spans, default=0)  # type: ignore[type-var]
    empty = any(b.can_be_empty for b in branches)
    return _Info(exact, required, span, empty, any(b.open for b in branches))


def _repeat(body: _Info, low: int, high: int | None) -> _Info:
    if high is not None and high < low:
        raise AnchorError("bad repetition bounds")
    if body.span is None:
        span = None
    elif high is None:
        span = None if body.open else body.span * low + SPAN_CAP
    else:
        span = body.span * high
    if low == 0:
        exact = body.exact | {""} if high == 1 and body.exact is not None else None
        return _Info(exact, (), span, True, body.open)
    exact = body.exact if low == high == 1 else None
    return _Info(exact, _candidates(body), span, body.can_be_empty, body.open)


class _Parser:
    """Recursive-descent parser for the RE2 syntax used by rule patterns."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.start = 0

    def fail(self, message: str) -> AnchorError:
        return AnchorError(f"{message} at offset {self.i} in {self.p!r}")

    def parse(self) -> _Info:
        info = self.alternation()
        if self.i != len(self.p):
            raise self.fail("unbalanced ')'")
        return info

    def alternation(self) -> _Info:
        branches = [self.concatenation()]
        while self.i < len(self.p) and self.p[self.i] == "|":
            self.i += 1
            branches.append(self.concatenation())
        return branches[0] if len(branches) == 1 else _alternate(branches)

    def concatenation(self) -> _Info:
        parts: list[_Info] = []
        while self.i < len(self.p) and self.p[self.i] not in "|)":
            self.start = self.i
            parts.append(self.quantified(self.atom()))
        return _concat(parts) if parts else _EMPTY

    def quantified(self, atom: _Info) -> _Info:
        gap = _GAP_SOURCE.get(self.p[self.start : self.i])
        if gap is not None and self.i < len(self.p) and self.p[self.i] in "+*":
            plus = self.p[self.i] == "+"
            self.i += 1
            if self.i < len(self.p) and self.p[self.i] == "?":
                self.i += 1
            atom = _Info(frozenset({gap[0] if plus else gap[1]}), (), SPAN_CAP, not plus)
        while self.i < len(self.p):
            char = self.p[self.i]
            if char in "*+?":
                self.i += 1
                low, high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[char]
            elif char == "{" and (bounds := self.braces()) is not None:
                low, high = bounds
            else:
                return atom
            if self.i < len(self.p) and self.p[self.i] == "?":
                self.i += 1  # lazy: same language
            atom = _repeat(atom, low, high)
        return atom

    def braces(self) -> tuple[int, int | None] | None:
        end = self.p.find("}", self.i)
        if end < 0:
            return None
        body = self.p[self.i + 1 : end]
        low_text, comma, high_text = body.partition(",")
        if not low_text.isdigit() or (high_text and not high_text.isdigit()):
            return None
        self.i = end + 1
        low = int(low_text)
        if not comma:
            return low, low
        return low, int(high_text) if high_text else None

    def atom(self) -> _Info:
        char = self.p[self.i]
        if char == "(":
            return self.group()
        if char == "[":
            negated = self.p.startswith("[^", self.i)
            self.char_class()
            return _OPEN_CLASS if negated else _CLASS
        if char == ".":
            self.i += 1
            return _OPEN_CLASS
        if char in "^$":
            self.i += 1
            return _EMPTY
        if char == "\\":
            return self.escape()
        if char in "*+?":
            raise self.fail("repetition without an operand")
        self.i += 1
        return _lit(char)

    def group(self) -> _Info:
        p = self.p
        self.i += 1
        if p.startswith("?P<", self.i) or p.startswith("?<", self.i):
            self.i = p.index(">", self.i) + 1
        elif p.startswith("?", self.i):
            end = self.i + 1
            while end < len(p) and p[end] in "imsU-":
                end += 1
            if end >= len(p) or p[end] not in ":)":
                raise self.fail("unsupported group")
            self.i = end + 1
            if p[end] == ")":
                return _EMPTY  # flags for the rest of the enclosing group
        info = self.alternation()
        if self.i >= len(p) or p[self.i] != ")":
            raise self.fail("missing ')'")
        self.i += 1
        return info

    def escape(self) -> _Info:
        p = self.p
        if self.i + 1 >= len(p):
            raise self.fail("trailing backslash")
        char = p[self.i + 1]
        self.i += 2
        if char == "b":
            return _WORD_BOUNDARY
        if char in _ASSERT_ESCAPES:
            return _EMPTY
        if char in _CLASS_ESCAPES:
            if char in "pP" and self.i < len(p) and p[self.i] == "{":
                self.i = p.index("}", self.i) + 1
            elif char in "pP":
                self.i += 1
            return _CLASS
        if char == "x":
            return _lit(chr(self.hex_code()))
        if char in _CONTROL:
            return _lit(_CONTROL[char])
        if char.isalnum():
            raise self.fail(f"unsupported escape \\{char}")
        return _lit(char)

    def hex_code(self) -> int:
        p = self.p
        if self.i < len(p) and p[self.i] == "{":
            end = p.index("}", self.i)
            code = int(p[self.i + 1 : end], 16)
            self.i = end + 1
            return code
        code = int(p[self.i : self.i + 2], 16)
        self.i += 2
        return code

    def char_class(self) -> None:
        p = self.p
        self.i += 1
        if self.i < len(p) and p[self.i] == "^":
            self.i += 1
        if self.i < len(p) and p[self.i] == "]":
            self.i += 1
        while self.i < len(p) and p[self.i] != "]":
            if p[self.i] == "\\":
                self.i += 2
                if p[self.i - 1] in "xpP" and self.i < len(p) and p[self.i] == "{":
                    self.i = p.index("}", self.i) + 1
            elif p.startswith("[:", self.i):
                self.i = p.index(":]", self.i) + 2
            else:
                self.i += 1
        if self.i >= len(p):
            raise self.fail("missing ']'")
        self.i += 1


@lru_cache(maxsize=4096)  # a pure function of the pattern, and a second of work per rule set
def plan(pattern: str) -> Plan:
    """The anchor set and window radius for one RE2 pattern (see the module docstring)."""
    try:
        info = _Parser(pattern).parse()
    except (AnchorError, ValueError, IndexError):
        return Plan(None, None)
    options = sorted(
        {o for o in _candidates(info) if _usable(o)}, key=lambda o: (anchor_cost(o), sorted(o))
    )
    radius = info.span if info.span is not None and info.span <= MAX_RADIUS else None
    if not options or anchor_cost(options[0]) > MAX_ANCHOR_COST:
        return Plan(None, radius)
    guards: list[frozenset[str]] = []
    for option in options[1:]:
        if (
            len(guards) < MAX_GUARDS
            and anchor_cost(option) <= MAX_GUARD_COST
            and not any(_implies(chosen, option) for chosen in (options[0], *guards))
        ):
            guards.append(option)
    return Plan(options[0], radius, tuple(guards))


def _implies(present: frozenset[str], other: frozenset[str]) -> bool:
    """Whether an occurrence of `present` always contains one of `other` (a useless guard)."""
    return all(any(_real(o) in _real(p) for o in other) for p in present)


def anchor_length(strings: frozenset[str]) -> int:
    """Longest occurrence (characters) of an anchor, a separator run counting `SPAN_CAP`."""
    return max(len(_real(s)) + SPAN_CAP * sum(c in GAPS for c in s) for s in strings)


@lru_cache(maxsize=65536)
def anchor_pattern(strings: frozenset[str]) -> str:
    """A case-insensitive RE2 pattern matching any of the anchor strings."""
    alternatives = []
    for text in sorted(strings):
        pieces: list[str] = []
        literal: list[str] = []
        for char in text + BOUNDARY:
            if char in _MARKERS:
                pieces.append(re2.escape("".join(literal)))
                literal = []
                pieces.append(r"\b" if char == BOUNDARY else GAPS[char])
            else:
                literal.append(char)
        alternatives.append("".join(pieces[:-1]))
    return "(?i)(?:" + "|".join(alternatives) + ")"
