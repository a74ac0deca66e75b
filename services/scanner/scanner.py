"""The scanner facade: views + RE2 rule matching + detectors -> `ScanResult`.

Pipeline for `Scanner.scan(text, origin, families)`:

1. the raw view goes through the raw `Engine` (`engine.py`): a first-stage RE2 set over the
   rules' automatically derived anchors (`anchors.py`), the anchorless patterns and the cheap
   view triggers; then only the wanted rules whose anchor occurred are searched, each pattern
   by its own RE2 regex and, in long texts, only in windows around its anchor. Linear time on
   any input, with no DFA blow-up from ~130 patterns sharing one state machine;
2. if a normalisation trigger fired, the normalised view (`normalize.py`) is matched by a
   second engine holding the same rules rewritten for that view; spans map back to the
   original;
3. if a decoding trigger fired, bounded base64/hex/URL/rot13 segments (`decode.py`) are decoded
   and matched again (at most `decode.MAX_DEPTH` levels); their findings carry no span;
4. programmatic detectors (`detectors/`) run on what the passes found;
5. findings are filtered by origin and family, deduplicated per rule id (first view wins:
   raw, then normalized, then decoded), sorted by severity then confidence, and scored with
   `combine_confidences` (noisy-OR).

Origins. Rules with `origins: untrusted` (the indirect-injection rules about text that talks
to "the AI reading this", asks to forward data to an address, hides instructions for a model)
only run on tool and retrieval content: a user may legitimately write "summarize this email
and send it to bob@example.com", a retrieved web page may not. Rules may also carry an
`untrusted_confidence` that applies to tool/retrieval content, where any instruction to the
model is already out of place. Everything else applies to every origin. In tool and
retrieval content, a match within a command-line option's entry, as manuals and --help print
them ("-d, --debug" and "Turn on debug mode" under it), is documentation: the rule is searched
again with the entries blanked out (`options.py`), and failing another match its finding
counts at DOCUMENTATION_CONFIDENCE, evidence only. So does a standalone request's match on
the opening line of a text marked up as a docstring, whose summary line is a command by
convention ("Generate a swiss roll dataset."; `docstrings.py`).

Extra triggers. A caller may add named RE2 patterns of its own (`extra_triggers`) to the raw
engine's first-stage set: `ScanResult.extra` names those that occurred. The gateway's in-process
fast tier hands the secrets detectors' prefilters in this way, so one RE2 pass over the text
serves both libraries.

A `Scanner` is immutable after construction and safe to share across threads and tasks.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from mithril.domain import Finding, Origin, combine_confidences

from . import decode, docstrings, normalize
from .detectors import DETECTOR_TRIGGERS, DETECTORS, DecodedSegment, RegexHit, ScanContext
from .engine import Engine
from .options import in_option_description, without_option_entries
from .rules import FAMILIES, Rule, load_rules

DETECTOR_NAME = "scanner"

_EXTRA = "extra:"
_NORMALIZE_TRIGGERS = frozenset(normalize.TRIGGERS)
_DECODE_TRIGGERS = frozenset(decode.TRIGGERS)


DOCUMENTATION_CONFIDENCE = 0.25
"""A rule's confidence at most, for a match within a command-line option's entry or on a
docstring's summary line: no verdict alone, nor with another rule's such match, but
evidence that adds up with the learned tiers' under the noisy-OR. An instruction dressed as
an option's description is then still caught where the classifier leans to it (0.34 and
up), while a manual's entries, which it reads as documentation, pass."""

OPTION_ENTRY = "within a command-line option's entry"
SUMMARY_LINE = "on a docstring's summary line"


def _as_documentation(rule: Rule, where: str) -> Rule:
    """The rule as a match `where` documentation puts it counts: DOCUMENTATION_CONFIDENCE at
    most, with a message that says where it matched."""
    confidence = min(rule.confidence, DOCUMENTATION_CONFIDENCE)
    untrusted = rule.untrusted_confidence
    return replace(
        rule,
        confidence=confidence,
        untrusted_confidence=None if untrusted is None else min(untrusted, confidence),
        message=f"{rule.message} ({where}: weighed as documentation)",
    )


def _describes_an_option(text: str, hit: RegexHit) -> bool:
    """Whether the hit lies within a command-line option's entry (`options.py`); a hit
    without a span (a decoded view's) is kept."""
    if hit.start is None or hit.end is None:
        return False
    return in_option_description(text, hit.start, hit.end)


def _no_rules(rule: Rule) -> bool:
    return False


@dataclass(frozen=True, slots=True)
class ScanResult:
    """What one scan found."""

    findings: tuple[Finding, ...]
    """Strongest first (severity, then confidence); at most one finding per rule id."""
    score: float
    """Noisy-OR of the findings' confidences, 0..1."""
    views: tuple[str, ...]
    """Views scanned besides "raw", e.g. ("normalized", "base64")."""
    extra: frozenset[str] = frozenset()
    """Names of the caller's extra triggers that occurred in the raw text."""


_EMPTY = ScanResult((), 0.0, ())


def _result(
    findings: dict[str, Finding], views: list[str], extra: frozenset[str] = frozenset()
) -> ScanResult:
    ordered = tuple(
        sorted(findings.values(), key=lambda f: (-f.severity, -f.confidence, f.rule_id))
    )
    score = combine_confidences([f.confidence for f in ordered])
    return ScanResult(ordered, score, tuple(views), extra)


class Scanner:
    """Attack-technique detection over a fixed, validated rule set."""

    __slots__ = (
        "_cased",
        "_decoded",
        "_detector_rules",
        "_normalized",
        "_raw",
        "_rules",
        "families",
    )

    families: frozenset[str]

    def __init__(
        self, rules: Sequence[Rule], extra_triggers: Mapping[str, str] | None = None
    ) -> None:
        ids = [rule.id for rule in rules]
        if len(ids) != len(set(ids)):
            duplicates = sorted({i for i in ids if ids.count(i) > 1})
            raise ValueError(f"duplicate rule ids: {duplicates}")
        self._rules = tuple(rules)
        regex = [r for r in self._rules if r.detector == "regex"]
        triggers = {f"normalize:{k}": v for k, v in normalize.TRIGGERS.items()}
        triggers |= {f"decode:{k}": v for k, v in decode.TRIGGERS.items()}
        triggers |= {f"detect:{k}": v for k, v in DETECTOR_TRIGGERS.items()}
        triggers |= {f"{_EXTRA}{k}": v for k, v in (extra_triggers or {}).items()}
        self._raw = Engine([r for r in regex if "raw" in r.views], triggers)
        self._normalized = Engine(
            [r for r in regex if "normalized" in r.views and not r.case_sensitive],
            rewrite=normalize.canonical_pattern,
        )
        # Rules that need capitals read the cased view (`normalize.cased_view`) too.
        self._cased = Engine([r for r in regex if "normalized" in r.views and r.needs_case])
        self._decoded = Engine([r for r in regex if "decoded" in r.views])
        self._detector_rules = tuple(r for r in self._rules if r.detector != "regex")
        self.families = frozenset(FAMILIES)

    @classmethod
    def from_rule_files(
        cls, extra_paths: Sequence[Path] = (), extra_triggers: Mapping[str, str] | None = None
    ) -> Scanner:
        """The bundled rules plus the given user rule files (same YAML schema)."""
        return cls(load_rules(extra_paths, DETECTORS), extra_triggers)

    @property
    def rules(self) -> tuple[Rule, ...]:
        return self._rules

    def scan(
        self,
        text: str,
        origin: Origin = Origin.USER,
        families: Collection[str] | None = None,
    ) -> ScanResult:
        scope = (origin, None if families is None else frozenset(families))
        raw = self._raw.match(text, lambda rule: self._wanted(rule, origin, families), scope)
        triggers = raw.triggers
        if not raw.spans and not triggers:
            return _EMPTY
        extra = frozenset(t[len(_EXTRA) :] for t in triggers if t.startswith(_EXTRA))
        if extra:
            triggers = triggers - {_EXTRA + name for name in extra}
            if not raw.spans and not triggers:
                return ScanResult((), 0.0, (), extra)
        hits: list[RegexHit] = []
        views: list[str] = []
        for index, (start, end) in raw.spans.items():
            hits.append(RegexHit(self._raw.rules[index], "raw", start, end))

        trigger_names = {t.split(":", 1)[1] for t in triggers}
        if trigger_names & _NORMALIZE_TRIGGERS:
            windows = normalize.view_windows(text)
            view = normalize.build_view(text, windows)
            views.append("normalized")
            seen = {hit.rule.id for hit in hits}
            normalized = self._normalized.match(
                view.text,
                lambda rule: rule.id not in seen and self._wanted(rule, origin, families),
            )
            for index, (start, end) in normalized.spans.items():
                mapped = view.original_span(start, end)
                hits.append(
                    RegexHit(self._normalized.rules[index], "normalized", *(mapped or (None, None)))
                )
            if "unicode" in trigger_names and self._cased.rules and normalize.cased_changes(text):
                self._match_cased(text, windows, hits, origin, families)

        segments: list[DecodedSegment] = []
        wanted = trigger_names & _DECODE_TRIGGERS
        if wanted:
            self._decode(text, wanted, 1, None, hits, segments, views, origin, families)

        hits = [hit for hit in hits if hit.rule.applies_to(origin)]
        if origin.is_untrusted_content:
            # A manual's option entry ("-d, --debug / Turn on debug mode") is documentation,
            # and so is a docstring's summary line ("Generate a swiss roll dataset.").
            hits = self._weigh_option_entries(text, hits)
            hits = self._weigh_summary_line(text, hits)
        findings: dict[str, Finding] = {}
        for hit in hits:
            self._add(findings, hit.rule, origin, families, hit.view, hit.start, hit.end)
        detector_triggers = frozenset(t[7:] for t in triggers if t.startswith("detect:"))
        if not (hits or segments or detector_triggers):
            return _result(findings, views, extra)
        context = ScanContext(
            text, origin, tuple(hits), tuple(segments), tuple(views), detector_triggers
        )
        for rule in self._detector_rules:
            if not self._wanted(rule, origin, families) or rule.id in findings:
                continue
            for found in DETECTORS[rule.detector].detect(rule, context):
                self._add(findings, rule, origin, families, found.view, found.start, found.end)
                break

        return _result(findings, views, extra)

    def _match_cased(
        self,
        text: str,
        windows: normalize.Windows,
        hits: list[RegexHit],
        origin: Origin,
        families: Collection[str] | None,
    ) -> None:
        """The rules that need capitals over the text with styled letters made plain, over
        the normalised view's windows."""
        seen = {hit.rule.id for hit in hits}
        view = normalize.cased_view(text, windows)
        cased = self._cased.match(
            view.text, lambda rule: rule.id not in seen and self._wanted(rule, origin, families)
        )
        for index, (start, end) in cased.spans.items():
            mapped = view.original_span(start, end)
            hits.append(RegexHit(self._cased.rules[index], "normalized", *(mapped or (None, None))))

    def _decode(
        self,
        text: str,
        wanted: set[str],
        depth: int,
        root: tuple[int, int] | None,
        hits: list[RegexHit],
        segments: list[DecodedSegment],
        views: list[str],
        origin: Origin,
        families: Collection[str] | None,
    ) -> None:
        for segment in decode.decode_segments(text, wanted):
            if segment.view not in views:
                views.append(segment.view)
            span = root or (segment.start, segment.end)
            ids = set()
            for index in self._decoded.match(segment.text).spans:
                rule = self._decoded.rules[index]
                if not self._wanted(rule, origin, families):
                    continue  # e.g. a retrieval-only rule in a user's decoded question
                ids.add(rule.id)
                hits.append(RegexHit(rule, segment.view, None, None))
            segments.append(DecodedSegment(segment, span[0], span[1], frozenset(ids)))
            if depth < decode.MAX_DEPTH:
                inner = self._raw.match(segment.text, _no_rules).triggers
                inner_views = {t.split(":", 1)[1] for t in inner} & _DECODE_TRIGGERS
                if segment.view == "rot13":
                    inner_views.discard("rot13")
                if inner_views:
                    self._decode(
                        segment.text,
                        inner_views,
                        depth + 1,
                        span,
                        hits,
                        segments,
                        views,
                        origin,
                        families,
                    )

    def _weigh_option_entries(self, text: str, hits: list[RegexHit]) -> list[RegexHit]:
        """The hits, those within a command-line option's entry (`options.py`) weighed as
        documentation (`_weighed_as_documentation`)."""
        documented = {hit.rule.id: hit for hit in hits if _describes_an_option(text, hit)}
        if not documented:
            return hits
        return self._weighed_as_documentation(
            hits, documented, without_option_entries(text), OPTION_ENTRY
        )

    def _weigh_summary_line(self, text: str, hits: list[RegexHit]) -> list[RegexHit]:
        """The hits of a standalone request's rule on the summary line of a text marked up
        as a docstring (`docstrings.py`) weighed as documentation
        (`_weighed_as_documentation`)."""
        imperative = [hit for hit in hits if hit.rule.id in docstrings.IMPERATIVE_RULES]
        line = docstrings.summary_line(text) if imperative else None
        if line is None:
            return hits
        documented = {
            hit.rule.id: hit
            for hit in imperative
            if hit.start is not None
            and hit.end is not None
            and docstrings.on_summary_line(text, line, hit.start, hit.end)
        }
        if not documented:
            return hits
        return self._weighed_as_documentation(
            hits, documented, docstrings.without_summary_line(text, line), SUMMARY_LINE
        )

    def _weighed_as_documentation(
        self, hits: list[RegexHit], documented: dict[str, RegexHit], blanked: str, where: str
    ) -> list[RegexHit]:
        """The hits, the `documented` ones replaced by their rule's first match in `blanked`
        (the text with the documentation's characters turned into spaces), if it has one,
        and otherwise kept as documentation (`_as_documentation`)."""
        kept = [hit for hit in hits if hit.rule.id not in documented]
        rest = self._raw.match(blanked, lambda rule: rule.id in documented)
        for index, (start, end) in rest.spans.items():
            kept.append(RegexHit(self._raw.rules[index], "raw", start, end))
        found = {hit.rule.id for hit in kept}
        kept.extend(
            replace(hit, rule=_as_documentation(hit.rule, where))
            for rule_id, hit in documented.items()
            if rule_id not in found
        )
        return kept

    @staticmethod
    def _wanted(rule: Rule, origin: Origin, families: Collection[str] | None) -> bool:
        return rule.applies_to(origin) and (families is None or rule.family in families)

    def _add(
        self,
        findings: dict[str, Finding],
        rule: Rule,
        origin: Origin,
        families: Collection[str] | None,
        view: str,
        start: int | None,
        end: int | None,
    ) -> None:
        if rule.id in findings or not self._wanted(rule, origin, families):
            return
        findings[rule.id] = Finding(
            rule_id=rule.id,
            detector=DETECTOR_NAME,
            category=rule.family,
            severity=rule.severity,
            confidence=rule.confidence_for(origin),
            message=rule.message,
            start=start,
            end=end,
            view=view,
        )
