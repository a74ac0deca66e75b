"""Scanner rules: the `Rule` dataclass, the YAML loader and its validation.

Rules are data. The bundled ones live in `rules/*.yaml` next to this module, one file per
family; users add their own files with the same schema (`Scanner.from_rule_files`).

Schema (one YAML document per file)::

    rules:
      - id: jailbreak.dan            # required, unique across ALL loaded files, stable forever
        family: jailbreak            # required, one of FAMILIES below
        severity: high               # required: low | medium | high | critical
        confidence: 0.9              # required, 0..1; how likely a match is a real attack.
                                     #   A text is flagged when the noisy-OR of its findings'
                                     #   confidences reaches the caller's threshold (0.5 by
                                     #   default), so a rule below 0.5 never flags on its own.
        message: "DAN persona"       # required, human-readable; never echoes matched text
        detector: regex              # optional, default "regex"; otherwise the name of a
                                     #   detector in `detectors.DETECTORS`
        patterns:                    # regex rules: one or more RE2 patterns (not Python `re`:
          - '\bDAN\b'                #   no look-around, no back-references). Matched
                                     #   case-insensitively unless case_sensitive: true.
        case_sensitive: false        # optional
        origins: any                 # optional: any (default) | untrusted (tool/retrieval
                                     #   content only) | trusted (user/system/assistant only)
        untrusted_confidence: 0.8    # optional: confidence used for tool/retrieval content
        views: [raw, normalized, decoded]  # optional: which text views the rule runs on
        params: {}                   # optional: detector-specific settings

The `normalized` view is lower-cased; a rule that needs capitals (`case_sensitive`, or a
`(?-i:...)` part) also reads the cased view there (`normalize.cased_view`: styled letters
plain, hidden characters dropped, case kept).

Patterns may use `{{name}}` macros from `MACROS` (e.g. `{{you}}`, `{{gap}}`) so common
phrasing fragments are written once. Every pattern is compiled at load time; a bad pattern,
an unknown family/detector/view/severity, a duplicate id or an unknown key is a
`RuleError` naming the file and the rule.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import re2
import yaml

from mithril.domain import Origin, Severity

FAMILIES: frozenset[str] = frozenset(
    {
        "jailbreak",
        "instruction_override",
        "role_hijack",
        "prompt_leak",
        "payload_splitting",
        "indirect_injection",
        "obfuscation",
    }
)
"""The attack-technique families a rule can belong to."""

VIEWS: frozenset[str] = frozenset({"raw", "normalized", "decoded"})
"""Rule view selectors: `decoded` covers base64, hex, url and rot13 views."""

ORIGIN_SCOPES: frozenset[str] = frozenset({"any", "untrusted", "trusted"})

MACROS: Mapping[str, str] = MappingProxyType(
    {
        # a short gap between two words: whitespace/punctuation, optionally 0-3 filler words
        "gap": r"[\W_]+(?:\w+[\W_]+){0,3}?",
        # a word separator tolerant of inserted punctuation ("ignore _ all . previous")
        "s": r"[\W_]{1,6}",
        "you": r"(?:you|u|ya|your(?:self)?|thee)",
        "ai": r"(?:ai|assistant|chat ?bot|bot|model|llm|language model|chatgpt|gpt|claude)",
        "prior": (
            r"(?:previous|prior|preceding|above|earlier|former|original|initial|old|"
            r"existing|past|foregoing|aforementioned|before|first)"
        ),
        "rules": (
            r"(?:instructions?|directives?|commands?|rules?|guidelines?|prompts?|orders?|"
            r"constraints?|restrictions?|guidance|programming|policies|policy|"
            r"training|safeguards?|filters?|limitations?|boundaries|protocols?|"
            r"configuration|conditioning|directions?|system (?:prompt|message))"
        ),
        "ignore": (
            r"(?:ignore|disregard|forget|override|overrule|bypass|skip|drop|discard|"
            r"abandon|dismiss|neglect|nullify|cancel|void|revoke|erase|delete|remove|"
            r"clear|reset|suspend|set aside|throw out|get rid of|pay no attention to|"
            r"stop following|do not follow|don'?t follow|no longer follow)"
        ),
        "secret": (
            r"(?:system prompt|system message|initial prompt|original prompt|hidden prompt|"
            r"secret prompt|pre-?prompt|meta-?prompt|prompt|instructions|system instructions|"
            r"initial instructions|hidden instructions|guidelines|configuration|config|"
            r"rules|directives|programming|operational (?:guidelines|parameters)|"
            r"internal (?:rules|instructions|guidelines|settings)|hidden (?:rules|settings)|"
            r"training data|source code|context window|password|secret key|secret)"
        ),
    }
)


class RuleError(ValueError):
    """A rule file is malformed; the message names the file and the rule."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One detection rule, as loaded from YAML (see the module docstring for the schema)."""

    id: str
    family: str
    severity: Severity
    confidence: float
    message: str
    detector: str = "regex"
    patterns: tuple[str, ...] = ()
    case_sensitive: bool = False
    origins: str = "any"
    untrusted_confidence: float | None = None
    views: frozenset[str] = frozenset(VIEWS)
    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    source: str = ""
    """The file the rule came from (for error messages and listings)."""

    def applies_to(self, origin: Origin) -> bool:
        if self.origins == "untrusted":
            return origin.is_untrusted_content
        if self.origins == "trusted":
            return not origin.is_untrusted_content
        return True

    def confidence_for(self, origin: Origin) -> float:
        if origin.is_untrusted_content and self.untrusted_confidence is not None:
            return self.untrusted_confidence
        return self.confidence

    @property
    def needs_case(self) -> bool:
        """Whether a match depends on capitals: the whole rule or a `(?-i:...)` part."""
        return self.case_sensitive or any("(?-i" in pattern for pattern in self.patterns)

    def compiled_patterns(self) -> tuple[str, ...]:
        """The RE2 patterns after macro expansion and the case-sensitivity flag."""
        flag = "" if self.case_sensitive else "(?i)"
        return tuple(flag + expand_macros(p) for p in self.patterns)


_KEYS = frozenset(
    {
        "id",
        "family",
        "severity",
        "confidence",
        "message",
        "detector",
        "patterns",
        "case_sensitive",
        "origins",
        "untrusted_confidence",
        "views",
        "params",
    }
)
_REQUIRED = ("id", "family", "severity", "confidence", "message")


def expand_macros(pattern: str) -> str:
    """Replace `{{name}}` macros; an unknown macro name is a `RuleError`."""
    if "{{" not in pattern:
        return pattern
    out: list[str] = []
    rest = pattern
    while "{{" in rest:
        head, _, tail = rest.partition("{{")
        name, sep, rest = tail.partition("}}")
        if not sep or name not in MACROS:
            raise RuleError(f"unknown macro {{{{{name}}}}} in pattern {pattern!r}")
        out.append(head)
        out.append(MACROS[name])
    out.append(rest)
    return "".join(out)


def _fail(source: str, rule_id: object, problem: str) -> RuleError:
    return RuleError(f"{source}: rule {rule_id!r}: {problem}")


def _probability(source: str, rule_id: object, name: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise _fail(source, rule_id, f"{name} must be a number between 0 and 1")
    return float(value)


def parse_rule(raw: Mapping[str, Any], source: str, known_detectors: Iterable[str]) -> Rule:
    """Validate one mapping from a rule file and build the `Rule`."""
    if not isinstance(raw, Mapping):
        raise RuleError(f"{source}: every entry under 'rules' must be a mapping")
    rule_id = raw.get("id")
    unknown = set(raw) - _KEYS
    if unknown:
        raise _fail(source, rule_id, f"unknown keys {sorted(unknown)}")
    for key in _REQUIRED:
        if key not in raw:
            raise _fail(source, rule_id, f"missing required key {key!r}")
    if not isinstance(rule_id, str) or not rule_id.strip() or rule_id != rule_id.strip():
        raise _fail(source, rule_id, "id must be a non-empty string without surrounding spaces")
    family = raw["family"]
    if family not in FAMILIES:
        raise _fail(source, rule_id, f"family must be one of {sorted(FAMILIES)}")
    try:
        severity = Severity.parse(raw["severity"])
    except (KeyError, ValueError, AttributeError):
        raise _fail(source, rule_id, "severity must be low, medium, high or critical") from None
    confidence = _probability(source, rule_id, "confidence", raw["confidence"])
    untrusted = raw.get("untrusted_confidence")
    if untrusted is not None:
        untrusted = _probability(source, rule_id, "untrusted_confidence", untrusted)
    message = raw["message"]
    if not isinstance(message, str) or not message.strip():
        raise _fail(source, rule_id, "message must be a non-empty string")
    detector = raw.get("detector", "regex")
    if detector != "regex" and detector not in set(known_detectors):
        raise _fail(source, rule_id, f"unknown detector {detector!r}")
    patterns = raw.get("patterns", [])
    if isinstance(patterns, str):
        patterns = [patterns]
    if not isinstance(patterns, list) or not all(isinstance(p, str) and p for p in patterns):
        raise _fail(source, rule_id, "patterns must be a list of non-empty strings")
    if detector == "regex" and not patterns:
        raise _fail(source, rule_id, "a regex rule needs at least one pattern")
    origins = raw.get("origins", "any")
    if origins not in ORIGIN_SCOPES:
        raise _fail(source, rule_id, f"origins must be one of {sorted(ORIGIN_SCOPES)}")
    views = raw.get("views", sorted(VIEWS))
    if isinstance(views, str):
        views = [views]
    if not isinstance(views, list) or not views or not set(views) <= VIEWS:
        raise _fail(source, rule_id, f"views must be a non-empty subset of {sorted(VIEWS)}")
    params = raw.get("params", {})
    if not isinstance(params, Mapping):
        raise _fail(source, rule_id, "params must be a mapping")
    rule = Rule(
        id=rule_id,
        family=family,
        severity=severity,
        confidence=confidence,
        message=message.strip(),
        detector=detector,
        patterns=tuple(patterns),
        case_sensitive=bool(raw.get("case_sensitive", False)),
        origins=origins,
        untrusted_confidence=untrusted,
        views=frozenset(views),
        params=MappingProxyType(dict(params)),
        source=source,
    )
    try:
        for pattern in rule.compiled_patterns():
            re2.compile(pattern)
    except (re2.error, RuleError) as exc:
        raise _fail(source, rule_id, f"invalid RE2 pattern: {exc}") from None
    return rule


def parse_rule_text(text: str, source: str, known_detectors: Iterable[str]) -> list[Rule]:
    """Parse one YAML rule document."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise RuleError(f"{source}: not valid YAML: {exc}") from None
    if document is None:
        return []
    if not isinstance(document, Mapping) or set(document) != {"rules"}:
        raise RuleError(f"{source}: a rule file is a mapping with a single key 'rules'")
    entries = document["rules"] or []
    if not isinstance(entries, list):
        raise RuleError(f"{source}: 'rules' must be a list")
    detectors = tuple(known_detectors)
    return [parse_rule(entry, source, detectors) for entry in entries]


def bundled_rule_texts() -> list[tuple[str, str]]:
    """(name, YAML text) of every bundled rule file, in a stable order."""
    folder = resources.files(__package__).joinpath("rules")
    files = sorted(
        (item for item in folder.iterdir() if item.name.endswith(".yaml")),
        key=lambda item: item.name,
    )
    return [(f"bundled:{item.name}", item.read_text(encoding="utf-8")) for item in files]


def load_rules(extra_paths: Sequence[Path], known_detectors: Iterable[str]) -> tuple[Rule, ...]:
    """Bundled rules plus the user's rule files; duplicate ids are a `RuleError`."""
    detectors = tuple(known_detectors)
    sources = bundled_rule_texts()
    for path in extra_paths:
        try:
            sources.append((str(path), Path(path).read_text(encoding="utf-8")))
        except OSError as exc:
            raise RuleError(f"{path}: cannot read rule file: {exc}") from None
    rules: list[Rule] = []
    seen: dict[str, str] = {}
    for source, text in sources:
        for rule in parse_rule_text(text, source, detectors):
            if rule.id in seen:
                raise RuleError(
                    f"{source}: duplicate rule id {rule.id!r} (already defined in "
                    f"{seen[rule.id]}); rule ids must be unique across all rule files"
                )
            seen[rule.id] = source
            rules.append(rule)
    return tuple(rules)
