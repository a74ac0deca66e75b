"""Offline contradiction and corroboration: a claim against verified memory, no model.

The fallback for the judge's `ScoreContradiction` when no LLM is configured. The caller
passes the claim and the verified chunks it retrieved, each with the cosine similarity
(all-MiniLM-L6-v2) it already computed; this module reads the texts and says, per chunk,
whether it is about the same subject, how strongly it conflicts with the claim, and
whether it supports it. Everything is rules over tokens, so every judgement comes with
short reasons (types and fixed vocabulary only, never text taken from the claim or chunk).

How a chunk is judged:

1. Same subject: similarity >= SIM_SAME, or >= SIM_LEXICAL with a subject term of the
   claim in the chunk, or >= SIM_FLOOR with most of the claim's content words in it.
   Other chunks get conflict 0 and are never aligned.
2. Conflicts, each between a sentence (or clause) of the claim and one of the chunk, both
   about the same subject (their subject words, before the verb, agree):
   * typed values in the same slot that differ: numbers with units (tolerant of
     "about", "at least", unit conversion), money, percentages, dates, quarters, years,
     weekdays, times, versions, e-mail addresses, URLs and host names, IPs, quoted literals;
   * polarity: the same statement with a different parity of negations ("not", "never",
     "no longer", "without") and antonyms (enabled/disabled, allowed/forbidden, ...);
   * substitution: the same subject and predicate with a different proper noun, quoted
     literal or prepositional object at the end ("runs on Workday" / "runs on SAP");
   * retraction: the claim moves away from a value ("changed from A to B", "instead of A",
     "A was replaced by B", "no longer A") that the chunk asserts;
   * supersession language ("has changed to", "is now", "update:", ...) on a chunk about
     the same subject that holds a different value, or, weaker, on its own.
3. Aligned: same subject, similarity >= SIM_ALIGN, no conflict, a chunk sentence with
   the same negation parity holding most of the claim's content words (fewer when the
   claim's values are the evidence, or similarity >= SIM_ALIGN_ALONE) and most of what
   it says after its verb, and every value the claim asserts found in the chunk.

What it cannot do (measured in OFFLINE_SCORERS.md): world knowledge (hypernyms like
Linux/Ubuntu, that a host name resolves to an IP, time zones, "broken" vs "repaired"),
paraphrased predicates ("stored in X" / "lives in Y"), synonyms beyond a small table,
scope (a general rule against a narrower one is flagged), functional versus multi-valued
relations ("Our office is in Berlin" / "... in Munich" is flagged even if there are two
offices), coreference, and subjects that differ only by a synonym.
"""

from __future__ import annotations

import difflib
import functools
import math
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import re2

MAX_TEXT_CHARS = 2000
"""Characters of the claim and of each context that are read."""
MAX_CONTEXTS = 32
"""Contexts judged; the rest are returned as not the same subject."""
MAX_SENTENCES = 16
"""Sentences read per text."""
MAX_TOKENS = 60
"""Tokens per sentence used for alignment."""
MAX_CLAIM_SENTENCES = 8
"""Claim sentences compared (claims are short statements)."""
MAX_PAIRED_SENTENCES = 8
"""Sentences of each context compared with the claim: those sharing most words with it."""
MAX_VALUES = 24
"""Typed values read per sentence."""

SIM_FLOOR = 0.30
"""Below this similarity a context is never the same subject."""
SIM_LEXICAL = 0.45
"""From this similarity, one shared subject term makes a context the same subject."""
SIM_SAME = 0.80
"""From this similarity a context is the same subject without shared terms."""
SIM_ALIGN = 0.70
"""Aligned contexts need at least this similarity."""
SIM_ALIGN_ALONE = 0.88
"""From this similarity a context supports the claim without most of its words."""
ALIGN_COVERAGE = 0.75
"""Aligned contexts restate at least this share of each claim sentence's content words."""
ALIGN_COVERAGE_WITH_VALUES = 0.5
"""The same when the claim's values (which must all be found) are part of the evidence."""
ALIGN_PREDICATE = 0.6
"""Without values, the share of the claim's words after its verb the context must hold."""
ALIGN_MAX_CONFLICT = 0.15
"""Aligned contexts have a conflict below this."""

# Conflict strengths of each detector.
VALUE_CONFLICT = 0.9
RETRACTION_CONFLICT = 0.9
POLARITY_CONFLICT_FULL = 0.85
POLARITY_CONFLICT_PARTIAL = 0.7
SUBSTITUTION_PROPER = 0.75
SUBSTITUTION_COMMON = 0.55
SUPERSEDE_VALUE = 0.7
SUPERSEDE_ALONE = 0.35
SUPERSEDE_BOOST = 0.05


@dataclass(frozen=True)
class Context:
    """A verified memory chunk and its cosine similarity to the claim."""

    text: str
    similarity: float  # cosine to the claim, -1..1


@dataclass(frozen=True)
class ContextJudgement:
    """What one context says about the claim."""

    index: int
    same_subject: bool
    conflict: float  # 0..1
    aligned: bool
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class ContradictionResult:
    """Contradiction with verified memory (the largest conflict) and every judgement."""

    contradiction: float  # max over contexts, 0..1
    judgements: tuple[ContextJudgement, ...]

    @property
    def aligned_count(self) -> int:
        return sum(1 for judgement in self.judgements if judgement.aligned)


# ----------------------------------------------------------------------------- lexicon


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOPWORDS = _words(
    """
    a an the this that these those our their its his her my your we they he she it i you
    them us me of in on at to for from by with about as into onto over under than then so
    and or but also too very just only all any each every some both other another such
    there here which who whom whose what when where why how if unless while whether
    because since until till after before during per via be is are was were been being am
    do does did has have had will would shall should can could may might must
    please etc eg ie currently now today still yet already always usually often typically
    generally mostly actually really again one ones same new own more most much many
    roughly approximately approx nearly almost least fewer less circa above below up down
    off out
    across within through between around against upon
    """
)
_NEGATORS = _words("not never no none nobody nothing neither nor without")
_CONDITIONALS = _words("if unless when whenever whether suppose assuming")
_ADDITIVE = _words("also too additionally another besides plus")
_PREDICATE_MARKERS = _words(
    """
    is are was were be been am will would shall should can could may might must has have
    had does do did not never no need needs needed
    runs run uses use starts start ends end begins begin closes opens costs cost takes take
    lasts last expires expire requires require supports support contains contain includes
    include holds hold owns own manages manage leads lead reports hosts host serves serve
    listens points point resolves resolve goes go lives live sits meets meet happens happen
    occurs equals means stores store sends send receives receive belongs belong handles
    handle covers cover allows allow blocks block permits permit prohibits forbids accepts
    accept rejects reject approves approve denies deny enables enable disables disable
    encrypts applies apply pays pay charges charge returns return ships ship deploys deploy
    renews renew rotates rotate retains retain keeps keep gets get gives give comes come
    moved changed switched migrated replaced became ran started used increased decreased
    rose fell dropped grew lasted cost took went sent scheduled located hosted stored
    due planned set reached
    """
)
_COPULAS = _words("is are was were be been am remains remain stays stay")
_AUXILIARIES = _COPULAS | _words(
    "will would shall should can could may might must has have had does do did"
)
_SWITCH_PRECEDERS = _words(
    "is are was were be been turned switched set stays remains stay remain kept left went goes go"
)


# Antonyms: surface word -> (pole name, sign). Surface forms, not stems, on purpose:
# "opens at 9" and "closes at 5" are events, "is open" and "is closed" are states.
_POLAR_GROUPS: tuple[tuple[str, str, str], ...] = (
    (
        "enable",
        "enable enabled enables enabling activated active switch:on",
        "disable disabled disables disabling deactivated inactive switch:off",
    ),
    (
        "allow",
        "allow allowed allows permitted permit permits authorised authorized",
        "forbidden forbid forbids prohibited prohibit prohibits banned disallowed blocked "
        "unauthorised unauthorized",
    ),
    (
        "require",
        "required require requires mandatory compulsory obligatory need needs needed",
        "optional",
    ),
    ("true", "true correct accurate right", "false incorrect inaccurate wrong"),
    (
        "increase",
        "increase increased increases increasing rose raised risen grew grown higher faster",
        "decrease decreased decreases decreasing fell fallen lowered dropped reduced lower slower",
    ),
    (
        "approve",
        "approved approve approves accepted accept accepts granted",
        "rejected reject rejects denied deny denies declined unapproved refused",
    ),
    ("public", "public", "private"),
    ("open", "open", "closed shut"),
    ("encrypt", "encrypted", "unencrypted plaintext cleartext"),
    (
        "available",
        "available reachable switch:up online",
        "unavailable unreachable switch:down offline",
    ),
    ("support", "supported", "unsupported"),
    ("valid", "valid", "invalid expired"),
    ("lock", "locked", "unlocked"),
    ("compliant", "compliant", "noncompliant non-compliant"),
    ("secure", "secure safe", "insecure unsafe"),
    ("complete", "complete completed finished", "incomplete unfinished pending"),
    ("paid", "paid", "unpaid outstanding"),
    ("visible", "visible shown", "hidden invisible"),
    ("healthy", "healthy", "unhealthy degraded"),
    ("success", "succeeded successful passed passing", "failed failing unsuccessful"),
    ("include", "included", "excluded"),
    ("internal", "internal", "external"),
    ("permanent", "permanent", "temporary"),
    ("legal", "legal lawful", "illegal unlawful"),
    ("possible", "possible", "impossible"),
)
_POLAR: dict[str, tuple[str, int]] = {}
for _base, _plus, _minus in _POLAR_GROUPS:
    for _word in _plus.split():
        _POLAR[_word] = (_base, 1)
    for _word in _minus.split():
        _POLAR[_word] = (_base, -1)

# Words that say the same thing in these statements: "canonical: variants".
_SYNONYM_GROUPS = """
employee: staff employees personnel workers people headcount
retain: retention retained retains kept keep keeps stored
night: nightly nightli
day: daily
week: weekly
month: monthly
host: hostname server servers
addr: address addresses
endpoint: gateway
email: mail e-mail emailed mailed
start: starts started begin begins began commence commences kicks
schedul: scheduled planned slated due
locat: lives lived located hosted resides sits
send: sent sends goes go went delivered routed forwarded
lead: led leads heads headed
team: department departments dept division teams
admin: administrator administrators admins
repo: repository repositories
database: db
mfa: 2fa two-factor multi-factor
passwd: password passwords pw
"""
_SYNONYMS = {
    variant: canonical
    for line in _SYNONYM_GROUPS.strip().splitlines()
    for canonical, variants in [line.split(":", 1)]
    for variant in variants.split()
}

_UNITS: dict[str, tuple[str, float]] = {}
for _names, _family, _factor in (
    ("ms millisecond milliseconds", "time", 0.001),
    ("s sec secs second seconds", "time", 1.0),
    ("min mins minute minutes", "time", 60.0),
    ("h hr hrs hour hours", "time", 3600.0),
    ("day days", "time", 86400.0),
    ("week weeks wk wks", "time", 604800.0),
    ("month months", "time", 2629800.0),
    ("year years yr yrs", "time", 31557600.0),
    ("b byte bytes", "size", 1.0),
    ("kb kib", "size", 1e3),
    ("mb mib", "size", 1e6),
    ("gb gib", "size", 1e9),
    ("tb tib", "size", 1e12),
    ("pb pib", "size", 1e15),
    ("kbps", "rate", 1e3),
    ("mbps", "rate", 1e6),
    ("gbps", "rate", 1e9),
):
    for _name in _names.split():
        _UNITS[_name] = (_family, _factor)

_NUMBER_WORDS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "ninety": 90,
    "hundred": 100,
}
_MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
}
_MONTH_ABBR = {name[:3]: number for name, number in _MONTHS.items()} | {"sept": 9}
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_TLDS = sorted(
    _words(
        """
        com net org io dev app cloud co ai gov edu mil int us uk de fr eu nl ch at se no dk
        fi es it pl cz ru cn jp in br ca au nz info biz me tv xyz site online tech internal
        local lan corp example test invalid localhost intranet
        """
    )
)

_COMPARATORS = (
    ("at least", ">="),
    ("minimum of", ">="),
    ("no less than", ">="),
    ("more than", ">"),
    ("over", ">"),
    ("above", ">"),
    ("greater than", ">"),
    ("up to", "<="),
    ("at most", "<="),
    ("maximum of", "<="),
    ("no more than", "<="),
    ("less than", "<"),
    ("fewer than", "<"),
    ("under", "<"),
    ("below", "<"),
    ("about", "~"),
    ("around", "~"),
    ("approximately", "~"),
    ("approx", "~"),
    ("roughly", "~"),
    ("nearly", "~"),
    ("almost", "~"),
    ("circa", "~"),
    ("~", "~"),
    (">=", ">="),
    ("<=", "<="),
    (">", ">"),
    ("<", "<"),
)

# ----------------------------------------------------------------------------- patterns


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = 8 << 20
    return options


def _compile(pattern: str) -> re2._Regexp:
    return re2.compile(pattern, _options())


_MONTH_RE = "(?:" + "|".join([*_MONTHS, *sorted(_MONTH_ABBR, key=len, reverse=True)]) + r")\.?"
_MONTH_FULL_RE = "(?:" + "|".join(m for m in _MONTHS if m != "may") + ")"
_NUM_RE = r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?"
_SCALE_RE = r"(?:\s?(?:k|m|bn|million|billion|thousand)\b)?"
_TZ_RE = r"(?:\s?(?:utc|gmt|cet|cest|bst|ist|[ecmp][sd]t)\b)?"
_VALUE_RE = _compile(
    "|".join(
        (
            r"(?P<url>\b(?:https?|ftp|sftp|ssh|s3|gs|wss?)://[^\s<>\"'`]+)",
            r"(?P<email>\b[a-z0-9][a-z0-9._%+\-]*@[a-z0-9\-]+(?:\.[a-z0-9\-]+)+)",
            r"(?P<ip>\b\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?::\d{1,5})?\b)",
            r"(?P<quoted>`[^`\n]{1,80}`|\"[^\"\n]{1,80}\")",
            r"(?P<date>\b\d{4}-\d{1,2}-\d{1,2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
            rf"|\b{_MONTH_RE}\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}}\b)?"
            rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH_RE}(?:,?\s+\d{{4}}\b)?"
            rf"|\b{_MONTH_RE}\s+\d{{4}}\b|\b{_MONTH_FULL_RE}\b"
            r"|\bq[1-4](?:\s+(?:fy)?\d{4}\b|\s+fy\d{2}\b)?\b)",
            r"(?P<weekday>\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b)",
            r"(?P<time>\b\d{1,2}(?::\d{2})?\s?(?:am\b|pm\b|a\.m\.|p\.m\.)"
            + _TZ_RE
            + r"|\b\d{1,2}:\d{2}(?::\d{2})?\b"
            + _TZ_RE
            + r"|\bnoon\b|\bmidnight\b)",
            r"(?P<money>(?:[$€£¥]|\b(?:usd|eur|gbp|chf|jpy)\s?)\s?(?:"
            + _NUM_RE
            + ")"
            + _SCALE_RE
            + r"|\b(?:"
            + _NUM_RE
            + ")"
            + _SCALE_RE
            + r"\s?(?:usd|eur|gbp|chf|jpy|dollars?|euros?|pounds?)\b)",
            r"(?P<percent>\b\d+(?:\.\d+)?\s?(?:%|percent\b|per cent\b|pct\b))",
            r"(?P<version>\bv\d+(?:\.\d+)*\b|\bversion\s+\d+(?:\.\d+)*\b"
            r"|\b\d+\.\d+\.\d+(?:[-+][a-z0-9.]+)?\b)",
            r"(?P<host>\b(?:[a-z0-9](?:[a-z0-9\-]{0,61}[a-z0-9])?\.)+(?:"
            + "|".join(_TLDS)
            + r")\b(?::\d{1,5})?)",
            r"(?P<number>\b(?:"
            + _NUM_RE
            + r")(?:\s?(?:k|m)\b|(?:ms|s|h|d|kb|mb|gb|tb|pb|kib|mib|gib|tib|min|mins|hrs?)\b|\b)"
            + r"|\b(?:"
            + "|".join(_NUMBER_WORDS)
            + r")\b)",
        )
    )
)
_WORD_RE = _compile(r"[a-z0-9]+(?:[\-'][a-z0-9]+)*|[,;:=()]")
_SENTENCE_END_RE = _compile(r"[.!?]+(?:\s+|$)|\n+|;\s+")

_SUPERSESSION_RE = _compile(
    r"\bno longer\b|\bnot any ?more\b|\bany ?more\b|\bno more\b"
    r"|\b(?:has|have|had)\s+(?:been\s+)?(?:changed|moved|switched|migrated|replaced|updated|"
    r"renamed|rescheduled|reassigned|retired|deprecated|decommissioned|transferred)\b"
    r"|\b(?:changed|moved|switched|migrated|updated|renamed|rescheduled|reassigned|upgraded|"
    r"downgraded|transferred|shifted|relocated)\s+(?:from|to)\b"
    r"|\b(?:is|are|was|were)\s+now\b|\bnow\s+(?:is|are|uses?|runs?|points?|lives?|goes|sits|"
    r"resolves|belongs|reports|happens|starts|ends|costs|requires|located|hosted|owned|"
    r"managed|handled|led|set|at|on|in)\b"
    r"|\binstead of\b|\brather than\b|\bin place of\b|\bactually\b"
    r"|\b(?:update|updated|correction|erratum)\s*:|\breplaced\s+(?:by|with)\b|\breplaces\b"
    r"|\b(?:deprecated|retired|decommissioned|obsolete|discontinued|superseded)\b"
    r"|\b(?:previously|formerly|used to)\b"
    r"|\b(?:as of|effective|starting|beginning)\s+(?:today|now|this|next|\d|"
    + _MONTH_RE
    + r"|mon|tue|wed|thu|fri|sat|sun)"
)
_CHANGE_VERBS = (
    r"(?:changed|change|changes|moved|move|moves|switched|switch|migrated|migrate|updated|"
    r"renamed|rescheduled|reassigned|upgraded|downgraded|transferred|shifted|relocated|"
    r"increased|decreased|raised|lowered|reduced|cut|bumped|extended|shortened|went|gone)"
)
_RETRACT_FROM_RE = _compile(
    r"\b" + _CHANGE_VERBS + r"\b[^,;]{0,40}?\bfrom\s+(?P<old>[^,;]{1,60}?)\s+(?:to|into)\s+"
)
_RETRACT_AFTER_RE = _compile(
    r"\b(?:instead of|rather than|in place of|replacing|replaced|replaces|formerly|previously|"
    r"no longer"
    r"(?:\s+(?:is|are|at|on|in|uses?|using|runs? on|hosted (?:at|on|in)|located (?:at|in)|"
    r"points? to|sent to|goes to|served (?:from|by)|owned by|managed by|handled by))?)"
    r"\s+(?P<old>[^,;]{1,50})"
)
_RETRACT_BEFORE_RE = _compile(
    r"\b(?:was|were|has been|have been|is being|got|is|are)\s+(?:now\s+)?(?:replaced|superseded|"
    r"retired|deprecated|decommissioned|discontinued|sunset)\b"
)

# ----------------------------------------------------------------------------- parsing


@dataclass(frozen=True)
class _Value:
    kind: str
    norm: tuple[object, ...]
    start: int
    end: int
    token: int  # index of its placeholder token
    comparator: str = "="
    retracted: bool = False


@dataclass
class _Token:
    text: str  # lower-cased word, punctuation, or "<kind>" for a value
    start: int
    end: int
    proper: bool = False
    upper: bool = False  # all capitals in the text: "US", "IT" are names, not stopwords
    key: str = ""  # alignment key, filled on first use
    value: int = -1  # index into values


@dataclass
class _Sentence:
    text: str  # lower-cased
    tokens: list[_Token]
    values: list[_Value]
    predicate: int  # index of the first predicate token; subject region before it
    retracted_words: frozenset[str]
    supersession: bool
    additive: bool
    conditional: bool
    content: frozenset[str] = field(default_factory=frozenset)
    signed: frozenset[str] = field(default_factory=frozenset)  # "private repo" kept apart
    clauses: list[_Clause] | None = None  # filled on first use
    subject: frozenset[str] = field(default_factory=frozenset)
    subject_values: tuple[_Value, ...] = ()

    def asserted(self) -> list[_Value]:
        return [v for v in self.values if not v.retracted]


def _clean(text: str) -> tuple[str, str]:
    """The cased and lower-cased text, normalised and capped (same length, same offsets)."""
    text = unicodedata.normalize("NFKC", text[:MAX_TEXT_CHARS])
    text = (
        text.replace("\u2019", "'")
        .replace("\u2018", "'")
        .replace("\u201c", '"')
        .replace("\u201d", '"')
        .replace("\u2013", "-")
        .replace("\u2014", "-")
    )
    lower = text.lower()
    if len(lower) != len(text):  # a few characters change length when lower-cased
        text = lower
    return text, lower


def _split_contraction(word: str) -> tuple[str, ...]:
    """'isn't' -> ('is', 'not'); 'cannot' -> ('can', 'not'); other words unchanged."""
    if word == "cannot":
        return ("can", "not")
    if word.endswith("n't"):
        base = {"can't": "can", "won't": "will", "shan't": "shall"}.get(word, word[:-3])
        return (base, "not")
    return (word,)


@functools.lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A crude, consistent stem: enough to match plural and tense variants."""
    word = _SYNONYMS.get(word, word)
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix, replacement in (
        ("ies", "i"),
        ("ied", "i"),
        ("sses", "ss"),
        ("ing", ""),
        ("ed", ""),
        ("es", ""),
        ("s", ""),
        ("ly", ""),
    ):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: len(word) - len(suffix)] + replacement
            break
    if word.endswith("y") and len(word) > 3:
        word = word[:-1] + "i"
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "sl":
        word = word[:-1]
    return _SYNONYMS.get(word, word)


def _split_sentences(text: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
        if len(spans) >= MAX_SENTENCES:
            return spans
    if start < len(text):
        spans.append((start, len(text)))
    return spans[:MAX_SENTENCES]


def _number(text: str) -> float | None:
    text = text.strip().replace(",", "")
    if text in _NUMBER_WORDS:
        return float(_NUMBER_WORDS[text])
    scale = 1.0
    for suffix, factor in (
        ("billion", 1e9),
        ("million", 1e6),
        ("thousand", 1e3),
        ("bn", 1e9),
        ("k", 1e3),
        ("m", 1e6),
    ):
        if text.endswith(suffix):
            text = text[: -len(suffix)].strip()
            scale = factor
            break
    try:
        value = float(text)
    except ValueError:
        return None
    return value * scale if math.isfinite(value) else None


def _comparator(before: str) -> str:
    tail = before[-24:].rstrip()
    for phrase, symbol in _COMPARATORS:
        if tail.endswith(phrase) and (
            len(tail) == len(phrase) or not tail[-len(phrase) - 1].isalnum() or phrase[0] in "<>~"
        ):
            return symbol
    return "="


def _next_word(text: str, end: int) -> str:
    match = _WORD_RE.search(text, end, min(len(text), end + 24))
    if match is None or match.start() - end > 2:
        return ""
    return str(match.group())


def _previous_word(text: str, start: int) -> str:
    """The word right before `start` (a space apart), or ""."""
    head = text[max(0, start - 25) : start]
    if not head.endswith(" ") or head.endswith("  "):
        return ""
    words = head.split()
    return words[-1] if words and words[-1].isalpha() else ""


def _normalise(
    kind: str, raw: str, lower: str, start: int, end: int
) -> tuple[str, tuple[object, ...]]:
    """The kind and a comparable form of one matched value."""
    raw = raw.strip()
    if kind in ("url", "host"):
        text = raw.rstrip(".,);:!?'\"")
        if "://" in text:
            text = text.split("://", 1)[1]
        if text.startswith("www."):
            text = text[4:]
        text = text.rstrip("/")
        for port in (":443", ":80"):
            if text.endswith(port):
                text = text[: -len(port)]
        return "location", (text,)
    if kind == "email":
        return "email", (raw.rstrip("."),)
    if kind == "ip":
        return "ip", (raw,)
    if kind == "quoted":
        return "literal", (raw.strip('`"').strip(),)
    if kind == "weekday":
        return "weekday", (raw.rstrip("s"),)
    if kind == "time":
        return "time", _time(raw)
    if kind == "date":
        return "date", _date(raw)
    if kind == "version":
        digits = raw.lstrip("v").replace("version", "").strip()
        parts = [int(p) for p in digits.split("-")[0].split("+")[0].split(".") if p.isdigit()]
        while len(parts) > 1 and parts[-1] == 0:
            parts.pop()
        return "version", tuple(parts)
    if kind == "percent":
        number = _number(
            raw.split("%")[0].replace("percent", "").replace("per cent", "").replace("pct", "")
        )
        return "percent", (number,)
    if kind == "money":
        currency = "$"
        for symbol, name in (
            ("€", "eur"),
            ("£", "gbp"),
            ("¥", "jpy"),
            ("eur", "eur"),
            ("gbp", "gbp"),
            ("chf", "chf"),
            ("jpy", "jpy"),
            ("pound", "gbp"),
        ):
            if symbol in raw:
                currency = name if name else symbol
                break
        digits = raw
        for noise in (
            "$",
            "€",
            "£",
            "¥",
            "usd",
            "eur",
            "gbp",
            "chf",
            "jpy",
            "dollars",
            "dollar",
            "euros",
            "euro",
            "pounds",
            "pound",
        ):
            digits = digits.replace(noise, "")
        return "money", (currency, _number(digits))
    # number
    attached = raw.lstrip("0123456789.,")
    if attached in _UNITS:  # "25MB", "10ms"
        raw, unit = raw[: len(raw) - len(attached)], attached
    else:
        unit = _next_word(lower, end)
    value = _number(raw)
    if unit in _UNITS:
        family, factor = _UNITS[unit]
        return "number", (value * factor if value is not None else None, family, unit)
    if (
        value is not None
        and value.is_integer()
        and 1900 <= value <= 2099
        and "," not in raw
        and (not unit or not unit.isalpha() or unit in ("and", "or", "to"))
    ):
        return "date", (int(value), None, None, None)
    named = unit.isalpha() and unit not in _STOPWORDS and unit not in _NEGATORS
    # A number right after a noun may name it rather than count what follows: "cluster 42
    # runs" is "the 42 cluster runs". The noun is kept as a second label; one that cannot
    # be read as a number ("7f3a9c") is kept whole, to be matched as an identifier.
    label = _previous_word(lower, start)
    if label in _STOPWORDS or label in _NEGATORS:
        label = ""
    comparable: object = value if value is not None else raw
    return "number", (comparable, stem(unit) if named else "", "", stem(label) if label else "")


def _time(raw: str) -> tuple[object, ...]:
    text = raw.replace(".", "").replace(" ", "")
    if text == "noon":
        return (720, "")
    if text == "midnight":
        return (0, "")
    zone = ""
    for tz in (
        "utc",
        "gmt",
        "cest",
        "cet",
        "bst",
        "ist",
        "est",
        "edt",
        "cst",
        "cdt",
        "mst",
        "mdt",
        "pst",
        "pdt",
    ):
        if text.endswith(tz):
            zone = "utc" if tz == "gmt" else tz
            text = text[: -len(tz)]
            break
    half = ""
    if text.endswith(("am", "pm")):
        half, text = text[-2:], text[:-2]
    hours, _, minutes = text.partition(":")
    try:
        hour = int(hours)
        minute = int(minutes[:2]) if minutes else 0
    except ValueError:
        return (raw, zone)
    if half == "pm" and hour < 12:
        hour += 12
    if half == "am" and hour == 12:
        hour = 0
    return (hour * 60 + minute, zone)


def _date(raw: str) -> tuple[object, ...]:
    """(year, month, day, quarter); None where the text does not say."""
    text = raw.replace(",", " ").replace(".", " ")
    words = text.split()
    if len(words) == 1 and "-" in raw and raw[:4].isdigit():
        parts = [int(p) for p in raw.split("-")]
        return (parts[0], parts[1], parts[2], None)
    if len(words) == 1 and "/" in raw:
        return (raw,)  # ambiguous day/month order: compared as text
    if words and words[0].startswith("q") and len(words[0]) == 2 and words[0][1].isdigit():
        fiscal: int | None = None
        if len(words) > 1:
            digits = words[1].removeprefix("fy")
            fiscal = int(digits) if len(digits) == 4 else 2000 + int(digits)
        return (fiscal, None, None, int(words[0][1]))
    year: int | None = None
    month: int | None = None
    day: int | None = None
    for word in words:
        bare = word.rstrip("stndrh") if word[:1].isdigit() else word
        if word in _MONTHS:
            month = _MONTHS[word]
        elif word[:4] in _MONTH_ABBR and not word[:1].isdigit():
            month = _MONTH_ABBR[word[:4]] if word[:4] in _MONTH_ABBR else _MONTH_ABBR[word[:3]]
        elif word[:3] in _MONTH_ABBR and not word[:1].isdigit():
            month = _MONTH_ABBR[word[:3]]
        elif bare.isdigit():
            number = int(bare)
            if len(bare) == 4:
                year = number
            else:
                day = number
    return (year, month, day, None)


def _parse(text: str) -> list[_Sentence]:
    cased, lower = _clean(text)
    sentences: list[_Sentence] = []
    for begin, finish in _split_sentences(lower):
        sentence = _parse_sentence(cased[begin:finish], lower[begin:finish])
        if sentence.tokens:
            sentences.append(sentence)
    return sentences


def _parse_sentence(cased: str, lower: str) -> _Sentence:
    values: list[_Value] = []
    tokens: list[_Token] = []
    spans: list[tuple[int, int, str, tuple[object, ...]]] = []
    for match in _VALUE_RE.finditer(lower):
        if len(spans) >= MAX_VALUES:
            break
        kind = str(match.lastgroup)
        raw = str(match.group())
        start, end = match.span()
        if kind == "number" and raw in _NUMBER_WORDS and _next_word(lower, end) not in _UNITS:
            continue  # "one" as a pronoun
        if (
            kind == "host"
            and raw.count(".") == 1
            and raw.split(".")[-1] in ("in", "it", "me", "no", "at", "co", "us", "is")
        ):
            continue  # "e.g. in", sentence fragments
        kind, norm = _normalise(kind, raw, lower, start, end)
        spans.append((start, end, kind, norm))
    position = 0
    span_index = 0
    while position < len(lower):
        if span_index < len(spans) and spans[span_index][0] <= position:
            start, end, kind, norm = spans[span_index]
            span_index += 1
            if start < position:
                continue
            comparator = (
                _comparator(lower[:start]) if kind in ("number", "money", "percent") else "="
            )
            values.append(_Value(kind, norm, start, end, len(tokens), comparator))
            tokens.append(_Token(f"<{kind}>", start, end, value=len(values) - 1))
            position = end
            continue
        limit = spans[span_index][0] if span_index < len(spans) else len(lower)
        for match in _WORD_RE.finditer(lower, position, limit):
            word = str(match.group())
            start = match.start()
            proper = bool(cased[start : start + 1].isupper()) and (
                bool(tokens) or (len(word) > 1 and cased[start : match.end()].isupper())
            )
            upper = len(word) > 1 and cased[start : match.end()].isupper()
            for part in _split_contraction(word):
                tokens.append(_Token(part, start, match.end(), proper=proper, upper=upper))
            if len(tokens) >= MAX_TOKENS * 2:
                break
        position = limit
        if len(tokens) >= MAX_TOKENS * 2:
            break
    tokens = _drop_label(tokens)
    _mark_switches(tokens)
    predicate = _predicate_index(tokens)
    retracted_spans = _retracted_spans(lower, tokens, values)
    retracted_words: set[str] = set()
    for index, value in enumerate(values):
        if any(a <= value.start and value.end <= b for a, b in retracted_spans):
            values[index] = _Value(
                value.kind, value.norm, value.start, value.end, value.token, value.comparator, True
            )
    for token in tokens:
        if token.proper and any(a <= token.start and token.end <= b for a, b in retracted_spans):
            retracted_words.add(token.text)
    words = [t.text for t in tokens if t.value < 0]
    sentence = _Sentence(
        text=lower,
        tokens=tokens,
        values=values,
        predicate=predicate,
        retracted_words=frozenset(retracted_words),
        supersession=_SUPERSESSION_RE.search(lower) is not None,
        additive=any(w in _ADDITIVE for w in words),
        conditional=bool(words) and words[0] in _CONDITIONALS,
    )
    sentence.content = frozenset(_content(tokens))
    sentence.signed = _clause_words(tokens, predicate)
    sentence.subject = _clause_words(tokens[:predicate], predicate)
    sentence.subject_values = tuple(v for v in values if v.token < predicate)
    return sentence


_LABELS = _words("update updated correction erratum note fyi reminder important edit psa heads-up")


def _drop_label(tokens: list[_Token]) -> list[_Token]:
    """'Update: the limit is ...' -> 'the limit is ...' (the label is not the subject)."""
    if len(tokens) > 2 and tokens[0].text in _LABELS and tokens[1].text in (":", "-", ","):
        return tokens[2:]
    return tokens


def _mark_switches(tokens: list[_Token]) -> None:
    """'is on' / 'turned off' / 'is down' become polar tokens; otherwise they stay words."""
    for index in range(1, len(tokens)):
        token = tokens[index]
        if (
            token.text in ("on", "off", "up", "down")
            and tokens[index - 1].text in _SWITCH_PRECEDERS
        ):
            following = tokens[index + 1].text if index + 1 < len(tokens) else ""
            if following in (
                "",
                ",",
                ";",
                ":",
                "for",
                "in",
                "at",
                "since",
                "and",
                "by",
                "from",
                "during",
                "until",
                "today",
                "now",
                "again",
            ):
                token.text = f"switch:{token.text}"


def _predicate_index(tokens: Sequence[_Token]) -> int:
    for index, token in enumerate(tokens):
        if index > 0 and (token.text in _PREDICATE_MARKERS or token.text in (":", "=")):
            return index
    return 0


def _retracted_spans(
    lower: str, tokens: Sequence[_Token], values: Sequence[_Value]
) -> list[tuple[int, int]]:
    """Character spans of what the sentence moves away from ("from A to B", "instead of A",
    "A was retired"). Before "was retired" only the values are retracted when there are
    any: "the old VPN endpoint vpn1 was retired" retracts vpn1, not "VPN"."""
    spans: list[tuple[int, int]] = []
    for pattern in (_RETRACT_FROM_RE, _RETRACT_AFTER_RE):
        for match in pattern.finditer(lower):
            old = str(match.group(pattern.groupindex["old"]))
            if old.startswith(("by ", "with ")):
                continue  # "was replaced by B": the new value, handled below
            spans.append(match.span(pattern.groupindex["old"]))
    for match in _RETRACT_BEFORE_RE.finditer(lower):
        clause_start = 0
        for token in tokens:
            if token.start >= match.start():
                break
            if token.text in (",", ";"):
                clause_start = token.end
        inside = [v for v in values if clause_start <= v.start and v.end <= match.start()]
        if inside:
            spans.extend((v.start, v.end) for v in inside)
        else:
            spans.append((clause_start, match.start()))
    return spans


def _is_content(token: _Token) -> bool:
    text = token.text
    return (
        token.value < 0
        and (text not in _STOPWORDS or token.upper)
        and text not in _NEGATORS
        and text[0].isalnum()
    ) or text.startswith("switch:")


def _content_word(token: _Token) -> str:
    polar = _POLAR.get(token.text)
    if polar is not None:
        return "~" + polar[0]
    return stem(token.text)


def _content(tokens: Iterable[_Token]) -> list[str]:
    return [_content_word(t) for t in tokens if _is_content(t)]


# ----------------------------------------------------------------------------- values


def _same(a: _Value, b: _Value) -> bool | None:
    """True: the same value; False: different; None: not comparable."""
    if a.kind != b.kind:
        return None
    if a.kind in ("number", "money", "percent"):
        return _same_quantity(a, b)
    if a.kind == "time":
        (minutes_a, zone_a), (minutes_b, zone_b) = a.norm, b.norm
        if zone_a and zone_b and zone_a != zone_b:
            return None
        return minutes_a == minutes_b
    if a.kind == "date":
        if len(a.norm) != len(b.norm):
            return None
        if len(a.norm) == 1:
            return a.norm == b.norm
        return _same_date(a.norm, b.norm)
    if a.kind == "location":
        host_a, host_b = str(a.norm[0]), str(b.norm[0])
        if host_a == host_b:
            return True
        # a bare host and a URL on it with a path: the same place, different precision
        if "/" in host_a and "/" not in host_b:
            return host_a.split("/", 1)[0] == host_b
        if "/" in host_b and "/" not in host_a:
            return host_b.split("/", 1)[0] == host_a
        return False
    return a.norm == b.norm


def _same_date(a: tuple[object, ...], b: tuple[object, ...]) -> bool | None:
    year_a, month_a, day_a, quarter_a = a
    year_b, month_b, day_b, quarter_b = b
    if year_a is not None and year_b is not None and year_a != year_b:
        return False
    if quarter_a is not None or quarter_b is not None:
        quarter_a = quarter_a if quarter_a is not None else _quarter(month_a)
        quarter_b = quarter_b if quarter_b is not None else _quarter(month_b)
        if quarter_a is None or quarter_b is None:
            return True if year_a is not None and year_a == year_b else None
        return quarter_a == quarter_b
    if month_a is not None and month_b is not None and month_a != month_b:
        return False
    if day_a is not None and day_b is not None and day_a != day_b:
        return False
    if month_a is None and month_b is None and (year_a is None or year_b is None):
        return None
    return True


def _quarter(month: object) -> int | None:
    return (int(str(month)) - 1) // 3 + 1 if isinstance(month, int) else None


def _same_quantity(a: _Value, b: _Value) -> bool | None:
    if a.kind == "money":
        (currency_a, value_a), (currency_b, value_b) = a.norm, b.norm
        if currency_a != currency_b:
            return None
    elif a.kind == "number":
        (value_a, unit_a, word_a, *label_a), (value_b, unit_b, word_b, *label_b) = a.norm, b.norm
        if unit_a != unit_b and not _share_a_label({unit_a, *label_a}, {unit_b, *label_b}):
            return None
        if isinstance(value_a, str) or isinstance(value_b, str):
            # identifiers: the same one, or two that cannot be compared (not a conflict)
            return True if value_a == value_b else None
        if word_a != word_b:  # 30 days and 1 month: converted, so compare loosely
            if not isinstance(value_a, float) or not isinstance(value_b, float):
                return None
            return abs(value_a - value_b) <= 0.04 * max(abs(value_a), abs(value_b)) or _consistent(
                value_a, a.comparator, value_b, b.comparator
            )
    else:
        value_a, value_b = a.norm[0], b.norm[0]
    if not isinstance(value_a, float) or not isinstance(value_b, float):
        return None
    return _consistent(value_a, a.comparator, value_b, b.comparator)


def _share_a_label(a: set[object], b: set[object]) -> bool:
    return bool((a & b) - {""})


def _consistent(x: float, cx: str, y: float, cy: str) -> bool:
    """Whether 'cx x' and 'cy y' can describe the same quantity."""

    def interval(value: float, comparator: str) -> tuple[float, float]:
        slack = abs(value) * 0.15
        return {
            "=": (value - abs(value) * 1e-9, value + abs(value) * 1e-9),
            "~": (value - slack, value + slack),
            ">=": (value, math.inf),
            ">": (value, math.inf),
            "<=": (-math.inf, value),
            "<": (-math.inf, value),
        }[comparator]

    upper, lower = ("<", "<="), (">", ">=")
    if (cx in upper and cy in upper) or (cx in lower and cy in lower):
        return abs(x - y) <= abs(max(abs(x), abs(y))) * 1e-9  # "up to 5k" vs "up to 2.5k"
    low_a, high_a = interval(x, cx)
    low_b, high_b = interval(y, cy)
    return max(low_a, low_b) <= min(high_a, high_b) + 1e-9


# ----------------------------------------------------------------------------- detectors


@dataclass
class _Finding:
    conflict: float = 0.0
    reasons: list[str] = field(default_factory=list)

    def add(self, strength: float, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)
        self.conflict = max(self.conflict, strength)


def _overlap(a: frozenset[str], b: frozenset[str]) -> tuple[int, float, float]:
    """Shared words, the share of the smaller set and of the larger set."""
    shared = len(a & b)
    if not a or not b:
        return shared, 0.0, 0.0
    return shared, shared / min(len(a), len(b)), shared / max(len(a), len(b))


def _subjects_compatible(c: _Sentence, s: _Sentence) -> bool:
    """The words before the verb name the same thing (one may be more specific)."""
    for a in c.subject_values:
        for b in s.subject_values:
            bounds = a.comparator != "=" and b.comparator != "="
            if _same(a, b) is False and not bounds:  # thresholds are the value detector's
                return False
    if not c.subject or not s.subject:
        return True
    only_c, only_s = c.subject - s.signed, s.subject - c.signed
    return not (only_c and only_s)


def _value_conflicts(c: _Sentence, s: _Sentence, finding: _Finding) -> bool:
    """Typed values of the same kind in the same slot that differ."""
    shared, share_small, _ = _overlap(c.content, s.content)
    found = False
    claimed = c.asserted()
    held = s.asserted()
    for kind in sorted({v.kind for v in claimed} & {v.kind for v in held}):
        mine = [v for v in claimed if v.kind == kind]
        theirs = [v for v in held if v.kind == kind]
        verdicts = [(a, b, _same(a, b)) for a in mine for b in theirs]
        if any(same is True for _, _, same in verdicts):
            continue
        for a, b, same in verdicts:
            if same is not False:
                continue
            if a.token < c.predicate and b.token < s.predicate:
                # both name the subject ("Q3 revenue" / "Q4 revenue"), unless both are
                # thresholds of the same rule ("orders above €10k" / "above €25k need ...")
                bounds = a.comparator != "=" and b.comparator != "="
                if not (bounds and _same_predicate(c, s)):
                    continue
            if (
                _slot_key(c, a) & _slot_key(s, b)
                or (shared >= 2 and share_small >= 0.75)
                or _same_predicate(c, s)
            ):
                finding.add(VALUE_CONFLICT, f"different {kind} in the same slot")
                found = True
                break
    return found


def _predicate_words(sentence: _Sentence) -> frozenset[str]:
    return _clause_words(sentence.tokens[sentence.predicate :], 0)


def _same_predicate(c: _Sentence, s: _Sentence) -> bool:
    """The same grammatical subject, and what one says about it is part of what the other
    says ("go-live date is X" / "go-live is planned for Y"; not "opens at" / "closes at")."""
    if not c.subject or not s.subject or not (c.subject & s.subject):
        return False
    mine, theirs = _predicate_words(c), _predicate_words(s)
    return mine <= theirs or theirs <= mine


def _slot_key(sentence: _Sentence, value: _Value) -> frozenset[str]:
    """The content word before a value (and a number's unit word): what it is the value of."""
    words: list[str] = []
    for token in reversed(sentence.tokens[max(0, value.token - 6) : value.token]):
        if token.text in (",", ";") or words:
            break
        if _is_content(token):
            words.append(_content_word(token))
    for token in sentence.tokens[value.token + 1 : value.token + 3]:
        if token.text in (",", ";"):
            break
        if _is_content(token):
            words.append(_content_word(token))
            break
    return frozenset(words)


@dataclass(frozen=True)
class _Clause:
    tokens: list[_Token]
    words: frozenset[str]
    parity: int
    poles: frozenset[tuple[str, int]]
    conditional: bool


def _clauses(sentence: _Sentence) -> list[_Clause]:
    """Token runs between commas and contrastive conjunctions, each read once."""
    if sentence.clauses is not None:
        return sentence.clauses
    runs: list[list[_Token]] = []
    current: list[_Token] = []
    for token in sentence.tokens:
        if token.text in (",", ";", "but", "however", "whereas", "although", "though", "because"):
            if current:
                runs.append(current)
            current = []
            continue
        current.append(token)
    if current:
        runs.append(current)
    clauses: list[_Clause] = []
    for tokens in runs:
        predicate = _predicate_index(tokens)
        parity, poles = _polarity(tokens, predicate)
        clauses.append(
            _Clause(
                tokens,
                _clause_words(tokens, predicate),
                parity,
                frozenset(poles),
                tokens[0].text in _CONDITIONALS,
            )
        )
    sentence.clauses = clauses
    return clauses


def _polarity(tokens: Sequence[_Token], predicate: int) -> tuple[int, set[tuple[str, int]]]:
    """Parity of negations and negative antonyms after the verb, and the antonyms seen."""
    parity = 0
    poles: set[tuple[str, int]] = set()
    for index, token in enumerate(tokens):
        if token.text in _NEGATORS:
            parity ^= 1
        elif index >= predicate and token.text in _POLAR:
            base, sign = _POLAR[token.text]
            poles.add((base, sign))
            if sign < 0:
                parity ^= 1
    return parity, poles


def _clause_words(tokens: Sequence[_Token], predicate: int) -> frozenset[str]:
    words: set[str] = set()
    for index, token in enumerate(tokens):
        if not _is_content(token):
            continue
        word = _content_word(token)
        if index < predicate and token.text in _POLAR:
            word = f"{word}{_POLAR[token.text][1]:+d}"  # "private repo" is not "public repo"
        words.add(word)
    return frozenset(words)


def _polarity_conflicts(c: _Sentence, s: _Sentence, finding: _Finding) -> None:
    for mine in _clauses(c):
        if mine.conditional or not mine.words:
            continue
        for theirs in _clauses(s):
            if theirs.conditional or mine.parity == theirs.parity:
                continue
            shared, share_small, share_large = _overlap(mine.words, theirs.words)
            enough = shared >= 2 or (shared == 1 and len(mine.words) == len(theirs.words) == 1)
            if not enough or share_small < 0.75 or share_large < 0.4:
                continue
            if not _values_agree(mine.tokens, c, theirs.tokens, s):
                continue
            if _scoped_apart(mine.words, mine.tokens, theirs.words, theirs.tokens):
                continue
            strength = POLARITY_CONFLICT_FULL if share_small >= 0.99 else POLARITY_CONFLICT_PARTIAL
            if {(base, -sign) for base, sign in mine.poles} & theirs.poles:
                finding.add(strength, "antonym on the same statement")
            else:
                finding.add(strength, "negation mismatch on the same statement")


def _scoped_apart(
    claim_words: frozenset[str],
    claim_tokens: Sequence[_Token],
    held_words: frozenset[str],
    held_tokens: Sequence[_Token],
) -> bool:
    """Both clauses carry a qualifier the other lacks ("on Fridays" / "during the first
    month"): two scoped statements, not one statement and its negation."""
    claim_values = {t.text for t in claim_tokens if t.value >= 0}
    held_values = {t.text for t in held_tokens if t.value >= 0}
    claim_only = bool(claim_words - held_words) or bool(claim_values - held_values)
    held_only = bool(held_words - claim_words) or bool(held_values - claim_values)
    return claim_only and held_only


def _values_agree(
    claim_tokens: Sequence[_Token], c: _Sentence, held_tokens: Sequence[_Token], s: _Sentence
) -> bool:
    """No kind of value differs between the clauses (then the polarity is the news)."""
    mine = [c.values[t.value] for t in claim_tokens if t.value >= 0]
    theirs = [s.values[t.value] for t in held_tokens if t.value >= 0]
    for kind in {v.kind for v in mine} & {v.kind for v in theirs}:
        verdicts = [_same(a, b) for a in mine if a.kind == kind for b in theirs if b.kind == kind]
        if False in verdicts and True not in verdicts:
            return False
    return True


_DROP_FOR_ALIGNMENT = _words(
    "a an the this that these those our their its his her my your located situated based"
)


def _alignment_tokens(sentence: _Sentence) -> list[_Token]:
    return [t for t in sentence.tokens if t.text not in _DROP_FOR_ALIGNMENT][:MAX_TOKENS]


def _substitution_conflicts(c: _Sentence, s: _Sentence, finding: _Finding) -> None:
    """Same subject and predicate, a different proper noun or object at the end."""
    if c.additive:
        return
    if c.predicate and s.predicate and c.subject & s.subject:
        # the same subject: compare what is said about it, whatever the subject's wording
        mine = [t for t in c.tokens[c.predicate :] if t.text not in _DROP_FOR_ALIGNMENT]
        theirs = [t for t in s.tokens[s.predicate :] if t.text not in _DROP_FOR_ALIGNMENT]
        if _substitution(mine, theirs, finding, prefix_needed=1):
            return
    _substitution(_alignment_tokens(c), _alignment_tokens(s), finding, prefix_needed=2)


def _substitution(
    mine: list[_Token], theirs: list[_Token], finding: _Finding, *, prefix_needed: int
) -> bool:
    """One replaced object after an identical prefix that contains the predicate.

    `prefix_needed` 1: the tokens start at the predicate (the subjects already match);
    2: whole sentences, whose shared prefix must hold the subject and the predicate."""
    matcher = difflib.SequenceMatcher(
        a=[_align_key(t) for t in mine], b=[_align_key(t) for t in theirs], autojunk=False
    )
    opcodes = matcher.get_opcodes()
    replaced = [op for op in opcodes if op[0] == "replace"]
    if len(replaced) != 1:
        return False
    others = [op for op in opcodes if op[0] in ("insert", "delete")]
    if len(replaced) != 1:
        return False
    _, a0, a1, b0, b1 = replaced[0]
    if a1 - a0 > 8 or b1 - b0 > 8 or a0 < prefix_needed:
        return False
    for _, x0, x1, y0, y1 in others:
        extra = mine[x0:x1] + theirs[y0:y1]
        trailing = x0 >= a1 and y0 >= b1 and extra and extra[0].text in _STOPWORDS
        if any(_is_content(t) for t in extra) and not trailing:
            return False  # more than one difference: a paraphrase or a different statement
    prefix = mine[:a0]
    if prefix_needed > 1:
        if not any(_is_content(t) for t in prefix):
            return False
        if not any(t.text in _PREDICATE_MARKERS or t.text in (":", "=") for t in prefix):
            return False  # the difference is in the subject: a different subject
    old, new = _head(mine[a0:a1]), _head(theirs[b0:b1])
    if len(old) > 4 or len(new) > 4:
        return False
    if any(t.text in ("and", "or", ",") for t in old + new):
        return False  # lists
    if not any(_is_content(t) for t in old) or not any(_is_content(t) for t in new):
        return False
    if _parts(old) & _parts(new):
        return False  # "sign-off" / "sign off": the same words
    old_poles = {_POLAR[t.text][0] for t in old if t.text in _POLAR}
    if old_poles & {_POLAR[t.text][0] for t in new if t.text in _POLAR}:
        return False  # antonyms: the polarity detector's business
    if any(t.text in _NEGATORS for t in old + new):
        return False
    if any(t.value >= 0 for t in old + new):
        return False  # the value detector's business
    before = prefix[-1].text
    if any(_namelike(t) for t in old) and any(_namelike(t) for t in new):
        finding.add(SUBSTITUTION_PROPER, "different named object after the same predicate")
        return True
    if before not in _AUXILIARIES:
        finding.add(SUBSTITUTION_COMMON, "different object after the same predicate")
        return True
    return False


def _parts(span: Sequence[_Token]) -> set[str]:
    """Content words of a span, hyphenated words split into their parts."""
    parts: set[str] = set()
    for token in span:
        if _is_content(token):
            parts.add(_content_word(token))
            parts.update(stem(p) for p in token.text.split("-") if p and p not in _STOPWORDS)
    return parts


def _namelike(token: _Token) -> bool:
    """A name rather than a description: capitalised, or letters mixed with digits."""
    text = token.text
    mixed = any(ch.isdigit() for ch in text) and any(ch.isalpha() for ch in text)
    return token.proper or token.upper or mixed


def _head(span: list[_Token]) -> list[_Token]:
    """The object of a replaced span without a trailing qualifier ('Okafor after 15 min')."""
    for index in range(1, len(span)):
        if span[index].text in _STOPWORDS and _is_content(span[index - 1]):
            return span[:index]
    return span


def _align_key(token: _Token) -> str:
    if not token.key:
        if token.value >= 0 or not _is_content(token):
            token.key = token.text
        else:
            token.key = _content_word(token)
    return token.key


def _retraction_conflicts(c: _Sentence, s: _Sentence, finding: _Finding) -> None:
    retracted = [v for v in c.values if v.retracted]
    held = s.asserted()
    for old in retracted:
        if any(_same(old, value) is True for value in held):
            finding.add(RETRACTION_CONFLICT, f"claim retracts a {old.kind} that memory holds")
            return
    if c.retracted_words:
        held_proper = {t.text for t in s.tokens if t.proper and t.text not in s.retracted_words}
        if c.retracted_words & held_proper:
            finding.add(RETRACTION_CONFLICT, "claim retracts a named value that memory holds")


def _supersession_conflicts(c: _Sentence, s: _Sentence, finding: _Finding) -> None:
    """Update language ("has changed to", "is now") against a context on the same subject."""
    if not c.supersession or c.additive:
        return
    if c.retracted_words or any(v.retracted for v in c.values):
        return  # the claim says what it replaces: the retraction detector decides
    claim_values = c.asserted()
    kinds = {v.kind for v in claim_values}
    held_values = [v for v in s.asserted() if v.kind in kinds]
    new_values = [a for a in claim_values if not any(_same(a, b) is True for b in s.values)]
    old_values = [b for b in held_values if not any(_same(b, a) is True for a in c.values)]
    held_words = {t.text for t in s.tokens}
    claim_words = {t.text for t in c.tokens}
    new_names = {t.text for t in c.tokens[c.predicate :] if t.proper} - held_words
    old_names = {t.text for t in s.tokens[s.predicate :] if t.proper} - claim_words
    subject = c.subject or c.content
    subject_share = len(subject & s.content) / len(subject) if subject else 0.0
    replaced = (new_values and old_values) or (new_names and old_names)
    if replaced and subject_share >= 0.5:
        finding.add(SUPERSEDE_VALUE, "update replaces a value memory holds")
        return
    claims_something = bool(claim_values) or bool(
        {t.text for t in c.tokens[c.predicate :] if t.proper}
    )
    already_held = claims_something and not new_values and not new_names
    shared, share_small, _ = _overlap(c.content, s.content)
    if shared >= 2 and share_small >= 0.6 and not already_held:
        finding.add(SUPERSEDE_ALONE, "supersession language on the same subject")


# ----------------------------------------------------------------------------- judging


def _similarity(value: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    if not math.isfinite(number):
        return 0.0
    return max(-1.0, min(1.0, number))


def _judge(index: int, claim: list[_Sentence], context: Context) -> ContextJudgement:
    similarity = _similarity(context.similarity)
    if similarity < SIM_FLOOR:
        return ContextJudgement(
            index, False, 0.0, False, (f"similarity {similarity:.2f} below {SIM_FLOOR:.2f}",)
        )
    held = _parse(context.text)
    claim_content = frozenset().union(*(c.content for c in claim)) if claim else frozenset()
    if len(held) > MAX_PAIRED_SENTENCES:  # the context sentences closest to the claim
        held = sorted(held, key=lambda s: -len(s.content & claim_content))[:MAX_PAIRED_SENTENCES]
    claim_subject = frozenset().union(*(c.subject for c in claim)) if claim else frozenset()
    held_content = frozenset().union(*(s.content for s in held)) if held else frozenset()
    subject_terms = claim_subject or claim_content
    shared, _, _ = _overlap(claim_content, held_content)
    coverage = shared / len(claim_content) if claim_content else 0.0
    if similarity >= SIM_SAME:
        same, why = True, f"similarity {similarity:.2f} >= {SIM_SAME:.2f}"
    elif similarity >= SIM_LEXICAL and (subject_terms & held_content or shared >= 3):
        same, why = True, f"similarity {similarity:.2f} and shared subject terms"
    elif shared >= 2 and coverage >= 0.6:
        same, why = True, f"similarity {similarity:.2f} and {coverage:.0%} of claim terms shared"
    else:
        return ContextJudgement(
            index, False, 0.0, False, (f"different subject (similarity {similarity:.2f})",)
        )

    finding = _Finding()
    for c in claim:
        for s in held:
            pair_shared, _, _ = _overlap(c.content, s.content)
            if pair_shared == 0 and similarity < SIM_SAME:
                continue
            _retraction_conflicts(c, s, finding)  # names what it retracts: no subject test
            if not _subjects_compatible(c, s):
                continue
            valued = _value_conflicts(c, s, finding)
            _polarity_conflicts(c, s, finding)
            if not valued and pair_shared >= 1:
                _substitution_conflicts(c, s, finding)
            _supersession_conflicts(c, s, finding)
    conflict = finding.conflict
    if conflict >= SUPERSEDE_VALUE and any(c.supersession for c in claim):
        conflict = min(1.0, conflict + SUPERSEDE_BOOST)
    reasons = [why, *finding.reasons]

    aligned = False
    if conflict < ALIGN_MAX_CONFLICT and similarity >= SIM_ALIGN:
        values_found = all(
            any(_same(a, b) is True for s in held for b in s.asserted())
            for c in claim
            for a in c.asserted()
        )
        supported = _supported(claim, held, similarity)
        if values_found and supported:
            aligned = True
            reasons.append("supports the claim")
        elif not values_found:
            reasons.append("does not state the claim's values")
        else:
            reasons.append("same subject, does not state the claim")
    return ContextJudgement(index, same, round(conflict, 4), aligned, tuple(reasons))


def _sentence_parity(sentence: _Sentence) -> int:
    """Negations and negative antonyms after the verb, over the whole sentence, mod 2."""
    return _polarity(sentence.tokens, sentence.predicate)[0]


def _supported(claim: list[_Sentence], held: list[_Sentence], similarity: float) -> bool:
    """Every claim sentence is restated by a context sentence about the same subject."""
    for c in claim:
        if not c.content:
            continue
        has_values = any(v.token >= c.predicate for v in c.asserted())
        needed = ALIGN_COVERAGE_WITH_VALUES if has_values else ALIGN_COVERAGE
        predicate = _predicate_words(c)
        ok = False
        for s in held:
            if not _subjects_compatible(c, s):
                continue
            coverage = len(c.content & s.content) / len(c.content)
            enough = coverage >= needed or (coverage > 0 and similarity >= SIM_ALIGN_ALONE)
            # without values, what the claim says must be said: "broken" is not "repaired"
            said = has_values or (
                not predicate or len(predicate & s.content) / len(predicate) >= ALIGN_PREDICATE
            )
            if enough and said and _sentence_parity(c) == _sentence_parity(s):
                ok = True
                break
        if not ok:
            return False
    return True


def score_contradiction(claim: str, contexts: Sequence[Context]) -> ContradictionResult:
    """Judge `claim` against each verified context; contradiction is the largest conflict."""
    parsed = _parse(claim)[:MAX_CLAIM_SENTENCES]
    judgements: list[ContextJudgement] = []
    for index, context in enumerate(contexts):
        if index >= MAX_CONTEXTS or not parsed:
            judgements.append(ContextJudgement(index, False, 0.0, False, ("not judged",)))
            continue
        judgements.append(_judge(index, parsed, context))
    contradiction = max((j.conflict for j in judgements), default=0.0)
    return ContradictionResult(contradiction, tuple(judgements))
