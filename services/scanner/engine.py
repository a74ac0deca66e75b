"""RE2 set matching: one pass over a text answers which patterns match, in linear time.

All regex rules of a view (plus the scanner's cheap view triggers) are compiled into one
`re2.Set`; `match` returns the indices of the rules and trigger names that matched. Spans are
computed afterwards, only for the rules the set reported, with one compiled RE2 regex per
pattern. Nothing here uses Python's `re`: RE2 guarantees linear time on any input.

An `Engine` is immutable after construction; RE2 objects are safe to share across threads.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import re2

from .rules import Rule

_UNANCHORED = re2._Anchor.UNANCHORED

MAX_MEM = 256 << 20
"""RE2 memory budget for the set's DFA; large so big inputs never exhaust the state cache."""


class EngineError(RuntimeError):
    """The rule set could not be compiled."""


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = MAX_MEM
    return options


class Engine:
    """An RE2 set over the patterns of some rules, plus named trigger patterns."""

    __slots__ = ("_owners", "_regexes", "_rules", "_set", "_triggers")

    def __init__(
        self,
        rules: Sequence[Rule],
        triggers: Mapping[str, str] | None = None,
        rewrite: Callable[[str], str] | None = None,
    ) -> None:
        self._rules = tuple(rules)
        owners: list[int | str] = []
        regexes: list[list[re2._Regexp]] = [[] for _ in self._rules]
        compiled = re2.Set.SearchSet(_options())
        for index, rule in enumerate(self._rules):
            for pattern in rule.compiled_patterns():
                if rewrite is not None:
                    pattern = rewrite(pattern)
                try:
                    compiled.Add(pattern)
                    regexes[index].append(re2.compile(pattern, _options()))
                except re2.error as exc:
                    raise EngineError(f"rule {rule.id!r}: cannot compile {pattern!r}") from exc
                owners.append(index)
        for name, pattern in (triggers or {}).items():
            compiled.Add(pattern)
            owners.append(name)
        if owners:
            try:
                compiled.Compile()
            except re2.error as exc:
                raise EngineError("cannot compile the rule set") from exc
        self._set = compiled if owners else None
        self._owners = tuple(owners)
        self._regexes = tuple(tuple(r) for r in regexes)
        self._triggers = frozenset((triggers or {}).keys())

    @property
    def rules(self) -> tuple[Rule, ...]:
        return self._rules

    def match(self, text: str) -> tuple[list[int], frozenset[str]]:
        """Indices (into `rules`, ascending) of matching rules, and names of matching triggers."""
        if self._set is None or not text:
            return [], frozenset()
        found = self._set.Match(text)
        if not found:
            return [], frozenset()
        rules: set[int] = set()
        triggers: set[str] = set()
        for index in found:
            owner = self._owners[index]
            if isinstance(owner, str):
                triggers.add(owner)
            else:
                rules.add(owner)
        return sorted(rules), frozenset(triggers)

    def spans(self, indices: list[int], text: str) -> dict[int, tuple[int, int] | None]:
        """Code-point span of the first match of each given rule in `text`.

        The text is encoded once; byte offsets are converted to code points only for
        non-ASCII text.
        """
        encoded = text.encode("utf-8")
        ascii_only = len(encoded) == len(text)
        out: dict[int, tuple[int, int] | None] = {}
        for index in indices:
            best: tuple[int, int] | None = None
            for regex in self._regexes[index]:
                found = regex._regexp.Match(_UNANCHORED, encoded, 0, len(encoded))[0]
                if found[0] >= 0 and (best is None or found[0] < best[0]):
                    best = found
            if best is not None and not ascii_only:
                start = len(encoded[: best[0]].decode("utf-8", "ignore"))
                best = (start, start + len(encoded[best[0] : best[1]].decode("utf-8", "ignore")))
            out[index] = best
        return out

    def span(self, rule_index: int, text: str) -> tuple[int, int] | None:
        """Code-point span of the first match of the rule in `text` (earliest pattern hit)."""
        return self.spans([rule_index], text)[rule_index]
