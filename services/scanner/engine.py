"""RE2 matching in two stages: cheap anchor sets first, then each candidate rule pattern only
where its anchor occurs. Linear time on any input.

Why not one big set. An `re2.Set` of every rule pattern answers "which patterns match" in one
DFA pass, but the DFA state is the cross product of every pattern's progress: word-gap
repetitions (`(?:\\w+[\\W_]+){0,4}?`), counted repeats and common words (you, all, the) across
~130 patterns make ordinary English visit new states all the time, the state cache thrashes
and a megabyte takes seconds. One pattern alone keeps a small DFA.

Stage 1 asks RE2 sets (one DFA pass, UTF-8 bytes encoded once) which of these occur:

- per distinct anchor, one entry: literal strings every match of a pattern must contain,
  derived automatically by `anchors.plan` (word boundaries and separator runs included, e.g.
  `\\bignore[\\W_]+previous`), the rarest the pattern offers. No counters, so anchors cost the
  DFA about what a plain literal search costs;
- patterns without a usable anchor (character-class patterns: tag characters, zero-width,
  bidi, spaced letters, padding), matched directly; they are cheap for the DFA;
- the scanner's named trigger patterns (normalisation, decoding, detectors).

Texts up to `DIRECT_LIMIT` bytes: one set holds all three plus each pattern's guards (other
sets its matches need, `anchors.Plan.guards`); a pattern whose anchor and guards all occurred
is then searched over the whole text. A pattern with a weak anchor (`anchors.Plan.weak`: common
words such as "always" or "write", present in most paragraphs) is instead put in that set whole:
confirming its anchor would cost a search on nearly every text, while a handful of such patterns
add little to one DFA pass over a short text. Longer texts: the direct patterns and triggers are
matched over the whole text by their own set, and the anchor set runs block by block (`BLOCK`
bytes, each block read with enough overlap to hold any anchor occurrence that starts in it),
which tells where each anchor occurs. A pattern is then searched only in the windows
`[block start - R, block end + R]` of the blocks where its anchor occurs (`R` = the pattern's
reach, `anchors.Plan.radius`, in bytes; an unbounded word or separator run counts
`anchors.SPAN_CAP` characters), merged; patterns that can reach arbitrarily far (`.*`) are
searched whole. Searches use RE2's `startpos`/`endpos`, which keep the whole text as context
for `\\b`, `^` and `$`: a match inside a window is a real match of the text, and the window
holding the leftmost match reports exactly its span.

Cost: the stage-1 sets read the text about once each; each pattern whose anchor occurs is
searched over at most the whole text once. Ordinary text wakes up a few patterns, mostly near
rare anchors; adversarial text stuffed with every anchor costs one pass per pattern, which is
still linear. Nothing here uses Python's `re`: RE2 guarantees linear time on any input.

An `Engine`'s rules and sets are immutable after construction (its only state is a cache of
per-scope filters, filled idempotently); RE2 objects are safe to share across threads.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import re2

from . import anchors
from .rules import Rule

_UNANCHORED = re2._Anchor.UNANCHORED

MAX_MEM = 64 << 20
"""RE2 memory budget per compiled object (each set and each regex)."""
DIRECT_LIMIT = 32 * 1024
"""Texts up to this many UTF-8 bytes go through one set and whole-text searches."""
BLOCK = 8 * 1024
"""Bytes per block when locating anchors in longer texts."""
MAX_SCOPES = 256
"""Scopes (what a caller wants, e.g. an origin and families) whose first-stage filter is
cached; past this, further scopes work theirs out on each call."""


class EngineError(RuntimeError):
    """The rule set could not be compiled."""


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = MAX_MEM
    return options


@dataclass(frozen=True, slots=True)
class _Pattern:
    rule: int
    regex: re2._Regexp
    needs: frozenset[int]
    """Stage-1 keys that must all have fired: its anchor and guards, or its own direct entry."""
    anchor: int | None
    """Key of the anchor whose blocks give its windows; None: search the whole text."""
    order: int
    """Position among its rule's patterns (the earlier pattern wins a tie)."""


class EngineMatch(NamedTuple):
    """What one engine pass found."""

    spans: dict[int, tuple[int, int]]
    """Rule index (into `Engine.rules`) -> code-point span of its first match, ascending."""
    triggers: frozenset[str]
    """Names of the trigger patterns that matched."""


_NO_MATCH = EngineMatch({}, frozenset())


def _nothing(_data: bytes | memoryview) -> list[int]:
    return []


class _StageOne:
    """One compiled `re2.Set`: entry `i` below `trigger_start` stands for stage-1 key
    `keys[i]` (an anchor, a guard or a directly matched pattern), the rest for the named
    triggers."""

    __slots__ = ("keys", "match", "names", "trigger_start")

    match: Callable[[bytes | memoryview], list[int]]
    """Indices of the entries that match (the RE2 binding itself: no per-call wrapper)."""

    def __init__(
        self, entries: Sequence[tuple[int, str]], triggers: Mapping[str, str] | None = None
    ) -> None:
        triggers = triggers or {}
        self.keys = tuple(key for key, _ in entries)
        self.trigger_start = len(entries)
        self.names = tuple(triggers)
        self.match = _nothing
        everything = [*(source for _, source in entries), *triggers.values()]
        if everything:
            compiled = re2.Set.SearchSet(_options())
            for source in everything:
                try:
                    compiled.Add(source)
                except re2.error as exc:
                    raise EngineError(f"cannot add {source!r} to a rule set") from exc
            try:
                compiled.Compile()
            except re2.error as exc:
                raise EngineError("cannot compile a rule set") from exc
            self.match = compiled._set.Match

    def read(self, found: list[int]) -> tuple[set[int], list[str]]:
        """The stage-1 keys and the trigger names the matched entries stand for."""
        start, keys = self.trigger_start, self.keys
        fired = {keys[entry] for entry in found if entry < start}
        return fired, [self.names[entry - start] for entry in found if entry >= start]


class Engine:
    """Anchor-prefiltered RE2 matching over the patterns of some rules, plus named triggers."""

    __slots__ = (
        "_anchor_set",
        "_decisive_by_scope",
        "_global_set",
        "_large_by_key",
        "_overlap",
        "_radius",
        "_rules",
        "_small_by_key",
        "_small_decisive",
        "_small_set",
    )

    def __init__(
        self,
        rules: Sequence[Rule],
        triggers: Mapping[str, str] | None = None,
        rewrite: Callable[[str], str] | None = None,
    ) -> None:
        self._rules = tuple(rules)
        compiled: list[tuple[int, int, re2._Regexp, anchors.Plan, str]] = []
        for index, rule in enumerate(self._rules):
            for order, pattern in enumerate(rule.compiled_patterns()):
                if rewrite is not None:
                    pattern = rewrite(pattern)
                try:
                    regex = re2.compile(pattern, _options())
                except re2.error as exc:
                    raise EngineError(f"rule {rule.id!r}: cannot compile {pattern!r}") from exc
                compiled.append((index, order, regex, anchors.plan(pattern), pattern))

        # Stage-1 keys, each an RE2 pattern: the primary anchors, then the guards of the
        # patterns confirmed by search on short texts, then the patterns matched directly
        # (no usable anchor: every text; a weak anchor: short texts only).
        keys: dict[str, int] = {}
        for *_, plan, _ in compiled:
            if plan.anchor is not None:
                keys.setdefault(anchors.anchor_pattern(plan.anchor), len(keys))
        primaries = len(keys)
        guard_keys: set[int] = set()
        for *_, plan, _ in compiled:
            if plan.anchor is not None and not plan.weak:
                for guard in plan.guards:
                    guard_keys.add(keys.setdefault(anchors.anchor_pattern(guard), len(keys)))
        direct: list[tuple[int, str]] = []
        weak: list[tuple[int, str]] = []
        radius: list[int | None] = [0] * primaries
        small: dict[int, list[_Pattern]] = {}
        large: dict[int, list[_Pattern]] = {}
        overlap = 0
        for index, order, regex, plan, source in compiled:
            if plan.anchor is None:
                key = len(keys) + len(direct)
                direct.append((key, source))
                planned = _Pattern(index, regex, frozenset({key}), None, order)
                small.setdefault(key, []).append(planned)
                large.setdefault(key, []).append(planned)
                continue
            anchor = keys[anchors.anchor_pattern(plan.anchor)]
            old = radius[anchor]
            radius[anchor] = None if old is None or plan.radius is None else max(old, plan.radius)
            overlap = max(overlap, anchors.anchor_length(plan.anchor))
            large.setdefault(anchor, []).append(
                _Pattern(index, regex, frozenset({anchor}), anchor, order)
            )
            if plan.weak:
                key = -1 - len(weak)  # below every anchor key: short texts only
                weak.append((key, source))
                small[key] = [_Pattern(index, regex, frozenset({key}), None, order)]
            else:
                needs = {anchor, *(keys[anchors.anchor_pattern(g)] for g in plan.guards)}
                small.setdefault(anchor, []).append(
                    _Pattern(index, regex, frozenset(needs), None, order)
                )
        named = dict(triggers or {})
        # An anchor only weak patterns use is not needed on short texts.
        wanted_keys = {key for key in small if key >= 0} | guard_keys
        stage_one = [(key, source) for source, key in keys.items() if key in wanted_keys]
        self._small_set = _StageOne([*stage_one, *direct, *weak], named)
        self._anchor_set = _StageOne([(key, source) for source, key in keys.items()][:primaries])
        self._global_set = _StageOne(direct, named)
        self._small_by_key = {key: tuple(found) for key, found in small.items()}
        self._decisive_by_scope: dict[Hashable, frozenset[int]] = {}
        # First-stage entries that can lead somewhere: a pattern to confirm or a trigger.
        small_set = self._small_set
        self._small_decisive = frozenset(
            entry
            for entry in range(small_set.trigger_start + len(small_set.names))
            if entry >= small_set.trigger_start or small_set.keys[entry] in small
        )
        self._large_by_key = {key: tuple(found) for key, found in large.items()}
        self._radius = tuple(radius)
        self._overlap = overlap

    @property
    def rules(self) -> tuple[Rule, ...]:
        return self._rules

    def match(
        self,
        text: str,
        wanted: Callable[[Rule], bool] | None = None,
        scope: Hashable | None = None,
    ) -> EngineMatch:
        """Rules (those `wanted` accepts; all by default) that match `text`, and triggers.

        `scope` names what `wanted` accepts (the same scope, the same answers), so the
        first-stage entries that only lead to unwanted rules are worked out once per scope.
        """
        if not text:
            return _NO_MATCH
        encoded = text.encode("utf-8")
        size = len(encoded)
        scale = 1 if size == len(text) else 4  # characters -> UTF-8 bytes, at most
        blocks: dict[int, list[int]] | None = None
        if size <= DIRECT_LIMIT:
            found = self._small_set.match(encoded)
            if not found:
                return _NO_MATCH
            decisive = (
                self._small_decisive
                if wanted is None or scope is None
                else self._decisive_in(scope, wanted)
            )
            if decisive.isdisjoint(found):  # only guards or unwanted rules: nothing to do
                return _NO_MATCH
            fired, triggers = self._small_set.read(found)
            by_key = self._small_by_key
        else:
            fired, triggers = self._global_set.read(self._global_set.match(encoded))
            blocks = self._locate_anchors(encoded, scale)
            fired.update(blocks)
            by_key = self._large_by_key
        best: dict[int, tuple[int, int, int, int]] = {}  # rule -> (start, order, start, end)
        verdicts: dict[int, bool] = {}
        windows: dict[int, list[tuple[int, int]]] = {}
        whole = [(0, size)]
        for key in fired:
            for pattern in by_key.get(key, ()):
                windowed = blocks is not None and pattern.anchor is not None
                if not windowed and not pattern.needs <= fired:
                    continue
                rule = pattern.rule
                verdict = verdicts.get(rule)
                if verdict is None:
                    verdict = verdicts[rule] = wanted is None or wanted(self._rules[rule])
                if not verdict:
                    continue
                if not windowed:
                    ranges = whole
                else:
                    ranges = windows.get(key)  # type: ignore[assignment]
                    if ranges is None:
                        ranges = windows[key] = _windows(
                            blocks[key], size, scale, self._radius[key]
                        )
                hit = _first(pattern.regex, encoded, ranges)
                if hit is not None:
                    found_at = (hit[0], pattern.order, *hit)
                    if rule not in best or found_at < best[rule]:
                        best[rule] = found_at
        if not best:
            return EngineMatch({}, frozenset(triggers)) if triggers else _NO_MATCH
        spans = {
            rule: (found_at[2], found_at[3])
            if scale == 1
            else _code_points(encoded, (found_at[2], found_at[3]))
            for rule, found_at in sorted(best.items())
        }
        return EngineMatch(spans, frozenset(triggers))

    def _decisive_in(self, scope: Hashable, wanted: Callable[[Rule], bool]) -> frozenset[int]:
        """`_small_decisive` without the entries whose patterns are all unwanted (cached)."""
        decisive = self._decisive_by_scope.get(scope)
        if decisive is None:
            small_set, rules = self._small_set, self._rules
            decisive = frozenset(
                entry
                for entry in self._small_decisive
                if entry >= small_set.trigger_start
                or any(
                    wanted(rules[pattern.rule])
                    for pattern in self._small_by_key[small_set.keys[entry]]
                )
            )
            if len(self._decisive_by_scope) < MAX_SCOPES:
                self._decisive_by_scope[scope] = decisive
        return decisive

    def _locate_anchors(self, encoded: bytes, scale: int) -> dict[int, list[int]]:
        """Anchor entry (= its key) -> ascending numbers of the blocks where it occurs.

        Each block is matched together with the `overlap` bytes after it (the longest anchor
        occurrence) and one byte of context on each side, so every occurrence starting in the
        block is seen whole with correct `\\b` context. An occurrence seen only in the overlap
        also counts for this block, which only widens windows.
        """
        located: dict[int, list[int]] = {}
        anchor_set = self._anchor_set
        view = memoryview(encoded)
        size = len(encoded)
        overlap = self._overlap * scale + 1
        for number, start in enumerate(range(0, size, BLOCK)):
            found = anchor_set.match(view[max(0, start - 1) : min(size, start + BLOCK + overlap)])
            for entry in found:
                located.setdefault(entry, []).append(number)
        return located


def _windows(blocks: list[int], size: int, scale: int, radius: int | None) -> list[tuple[int, int]]:
    """Merged byte windows around the given blocks (the whole text for unbounded reach)."""
    if radius is None:
        return [(0, size)]
    reach = radius * scale
    merged: list[tuple[int, int]] = []
    for number in blocks:
        start = max(0, number * BLOCK - reach)
        end = min(size, (number + 1) * BLOCK + reach)
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _first(
    regex: re2._Regexp, text: bytes, ranges: list[tuple[int, int]]
) -> tuple[int, int] | None:
    """Byte span of the first match of `regex` within the ranges (searched in order)."""
    for start, end in ranges:
        found = regex._regexp.Match(_UNANCHORED, text, start, end)[0]
        if found[0] >= 0:
            return found
    return None


def _code_points(text: bytes, span: tuple[int, int]) -> tuple[int, int]:
    start = len(text[: span[0]].decode("utf-8", "ignore"))
    return start, start + len(text[span[0] : span[1]].decode("utf-8", "ignore"))
