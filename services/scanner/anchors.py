"""Anchors: the literal strings every match of a rule pattern must contain, derived automatically.

`plan(pattern)` parses an RE2 pattern (the subset of RE2 syntax rule files use: literals,
escapes, classes, groups with flags, alternation, greedy/lazy repetition, assertions) and
returns a `Plan`:

- `anchor`: a set of literal strings such that every match of the pattern contains at least
  one of them (matched case-insensitively, so case-sensitive patterns are covered too), chosen
  to be as rare as possible in ordinary text (see `literal_cost`); or None when the pattern has
  no usable anchor (it is then matched directly, see `engine.py`);
- `radius`: how far (in characters) a match can reach from an anchor occurrence, so that a
  window of `radius` characters on each side of every occurrence contains the whole match;
  None when the pattern can reach arbitrarily far (`.*`, `[^-]*`): it is then matched over the
  whole text once its anchor is present.

Soundness. An anchor is computed from the pattern's structure only: a concatenation requires
what any of its parts requires, an alternation requires one of what each branch requires, a
repetition with a minimum of one requires what its body requires. Literal runs are combined
across concatenations ("system" + "prompt"). So a text without any anchor string cannot
match the pattern; the anchor is a pure prefilter.

Radius. A repetition without an upper bound (`\\w+`, `[\\W_]+`, `\\s*`) is counted as at most
`SPAN_CAP` characters when sizing windows; runs of dot or negated classes (`.*`, `[^\\n]*`)
make the pattern unbounded. The engine only uses windows for texts longer than
`engine.DIRECT_LIMIT`; shorter texts are always matched whole, so the cap only matters for a
match inside a long text whose single word or separator run is longer than `SPAN_CAP`.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

SPAN_CAP = 256
"""Characters an unbounded repetition of a word/separator class may span within a window."""
MAX_RADIUS = 8192
"""Above this reach a pattern is matched over the whole text (once its anchor is present)."""
MAX_EXACT = 64
"""Largest set of alternative strings tracked for one sub-pattern."""
MAX_ANCHOR_COST = 0.5
"""Anchor sets costlier than this (mostly single letters or very common words) are not used."""

# Very common English words: as anchors they would fire on almost every ordinary text.
_COMMON = frozenset(
    """
    a about after all also an and any are as at be been before but by can could did do does
    done each even every first for from get give go had has have he her here him his how i if
    in into is it its just know last like make many may me more most much must my new no not
    now of off old on once one only or other our out over own part put say see set she should
    so some such take tell than that the their them then there these they thing this those
    through time to too two up us use very want was way we well were what when where which who
    will with would year yes yet you your
    """.split()
)

_CLASS_ESCAPES = frozenset("wWsSdDpPC")
_ASSERT_ESCAPES = frozenset("bBAzG")
_CONTROL = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "e": "\x1b"}


class AnchorError(ValueError):
    """The pattern uses syntax the anchor parser does not understand."""


@dataclass(frozen=True, slots=True)
class Plan:
    """How the engine finds a pattern: a literal anchor set and a window radius."""

    anchor: frozenset[str] | None
    radius: int | None


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


def literal_cost(text: str) -> float:
    """Rough likelihood that `text` occurs in an ordinary text position (lower is rarer)."""
    if text.strip() == "":
        return 4.0
    if text in _COMMON:
        return 1.0
    return 0.5 ** min(len(text), 16)


def _set_cost(strings: frozenset[str]) -> float:
    return sum(literal_cost(s) for s in strings)


def _minimal(strings: frozenset[str]) -> frozenset[str]:
    """Drop strings containing another string of the set (the shorter one suffices)."""
    ordered = sorted(strings, key=len)
    kept: list[str] = []
    for s in ordered:
        if not any(k in s for k in kept):
            kept.append(s)
    return frozenset(kept)


def _best(options: tuple[frozenset[str], ...]) -> frozenset[str] | None:
    usable = [o for o in options if o and "" not in o]
    return min(usable, key=_set_cost) if usable else None


def _candidates(info: _Info) -> tuple[frozenset[str], ...]:
    out = info.required
    if info.exact is not None and "" not in info.exact:
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
            run = frozenset(a + b for a, b in product(run, part.exact))
        else:
            if run is not None and "" not in run:
                required.append(_minimal(run))
            run = part.exact if part.exact is not None else frozenset({""})
        if exact is not None:
            if part.exact is not None and len(exact) * len(part.exact) <= MAX_EXACT:
                exact = frozenset(a + b for a, b in product(exact, part.exact))
            else:
                exact = None
        span = None if span is None or part.span is None else span + part.span
        empty = empty and part.can_be_empty
    if "" not in run:
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
            parts.append(self.quantified(self.atom()))
        return _concat(parts) if parts else _EMPTY

    def quantified(self, atom: _Info) -> _Info:
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


def plan(pattern: str) -> Plan:
    """The anchor set and window radius for one RE2 pattern (see the module docstring)."""
    try:
        info = _Parser(pattern).parse()
    except (AnchorError, ValueError, IndexError):
        return Plan(None, None)
    anchor = _best(_candidates(info))
    if anchor is not None and _set_cost(anchor) > MAX_ANCHOR_COST:
        anchor = None
    radius = info.span if info.span is not None and info.span <= MAX_RADIUS else None
    return Plan(anchor, radius)
