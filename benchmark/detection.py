"""Detection-quality benchmark: TPR/FPR/precision/F1 per labelled source and split.

Sources (under `datasets_dir`, see its README.md):

- injection/s-labs.jsonl, injection/neuralchemy.jsonl: their own `split` field; `train` is the
  DEV part, `validation` the HELD-OUT part. Misses are broken down by neuralchemy `category`,
  false positives also by the dataset neuralchemy took the benign row from (its `source`).
- jailbreak/jbb-artifacts.jsonl, jailbreak/gptfuzz-templates.jsonl, jailbreak/giskard.jsonl,
  benign/mt-vicuna-bench.jsonl: no split field; a row is HELD-OUT when
  sha256(text) % 5 == 0, DEV otherwise. Misses by jbb `method` (the attack technique: GCG,
  PAIR, ...) and giskard `group`. gptfuzz templates carry `[INSERT PROMPT HERE]`; it is replaced
  by the neutral, harmless question in `GPTFUZZ_PLACEHOLDER` (the split uses the template text).
- benign/python-docs (only with `documentation=True`, as `mithril bench detection` asks):
  docstrings of this Python's standard library (`python_docs.py`), benign, held out by
  sha256(text) % 5 == 0 like the sources without a split, scanned as `Origin.RETRIEVAL`.
- benign/package-docs (with `documentation=True` too): the installed distributions' READMEs
  cut into chunks as a RAG pipeline cuts them (`package_docs.py`), benign, held out by
  distribution (every chunk of one README on one side), scanned as `Origin.RETRIEVAL`.
- benign/package-docstrings (with `documentation=True` too): the same distributions'
  docstrings, an API reference (`package_docstrings.py`), benign, held out with their
  distribution's README; no training script reads them. Scanned as `Origin.RETRIEVAL`.
- benign/package-sources (with `documentation=True` too): the same distributions' own Python
  files cut as a RAG pipeline cuts them (`package_sources.py`), benign, held out with their
  distribution's README; no training script reads them. Scanned as `Origin.RETRIEVAL`.
- benign/debian-docs (with `documentation=True` too): the READMEs of the Debian packages
  under /usr/share/doc, cut the same way (`debian_docs.py`), benign, every row HELD_OUT:
  documentation nothing was ever chosen on. Scanned as `Origin.RETRIEVAL`.
- benign/man-pages (with `documentation=True` too): the machine's manual pages under
  /usr/share/man, rendered by groff and cut the same way (`man_pages.py`), benign, held out by
  Debian package; no training script reads them. Scanned as `Origin.RETRIEVAL`.
- benign/follow-ups (with `follow_ups=True`, as `mithril bench detection` asks): short turns
  a user sends in the middle of a conversation ("continue", "make it shorter", "run the
  tests"), written for Mithril (`follow_ups.py`), benign; half held out by sha256, the rows
  first probed by hand in DEV. Scanned as `Origin.USER`.
- pii/presidio-synth.json (source `benign/presidio-synth`): presidio-research's synthetic
  sentences filled with personal data (names, addresses, card numbers, ...), benign. A row is
  HELD-OUT when its template is (sha256(template id) % 5 == 0), so a held-out sentence's
  wording was never seen filled otherwise. Its personal data is found by design: a row
  counts as flagged when its attack evidence alone reaches the threshold.
- indirect/bipia: attack strings (`text_attack_*` for email and table contexts, `code_attack_*`
  for code contexts) are embedded into the benign contexts the way BIPIA does it: at the start,
  in the middle (at a line or sentence boundary) or at the end of the context, position chosen
  deterministically per row; each context yields `BIPIA_ATTACKS_PER_CONTEXT` attacked rows
  (label 1, attacks rotated so all are used) and itself unchanged (label 0). BIPIA's own
  train files are DEV, its test files HELD-OUT. These rows are scanned as `Origin.RETRIEVAL`.

Everything else is scanned as `Origin.USER`. `decide(text, origin)` returns
(flagged, score, findings); the default uses `Scanner.from_rule_files()` and flags when the
score is at least `DEFAULT_THRESHOLD`.

Per tier (held-out rows, when `run_detection` is given `tiers`, as `mithril bench detection`
does with `cascade_tiers`): each tier's own verdict on every row, in cascade order (fast =
rules + secrets, similarity, classifier, the planted-line head, judge when configured),
scored with the policy's threshold exactly as the cascade scores that tier's findings.
`tier_table` counts what each tier flags that every earlier tier missed, its standalone
rates, and the cumulative rates; a last line, `combined`, holds what only the cascade's
combination of scores decides (sub-threshold scores of several tiers adding up under the
noisy-OR, or a judge overruling), so the cumulative rates end at the cascade's reported
figures, which is checked for every source.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mithril.benchmark import (
    debian_docs,
    follow_ups,
    man_pages,
    package_docs,
    package_docstrings,
    package_sources,
    python_docs,
    toolchain_docs,
)
from mithril.benchmark.near_duplicates import CLOSE, NEAR, DevIndex
from mithril.benchmark.obfuscation import TRANSFORMS, VARIANT_ROWS, VariantResult, run_variants
from mithril.benchmark.target import TargetLine, target_markdown
from mithril.benchmark.translated import load as load_translated
from mithril.benchmark.translated import run_in_documents, run_translated, with_novel_originals
from mithril.domain import Finding, Origin
from mithril.gateway.decision import FACT_CATEGORIES, score_findings

if TYPE_CHECKING:
    from mithril.gateway.firewall import Firewall

DEFAULT_THRESHOLD = 0.5
GPTFUZZ_PLACEHOLDER = "What is the boiling point of water at sea level?"
BIPIA_ATTACKS_PER_CONTEXT = 3
DEV, HELD_OUT = "dev", "held_out"

Decide = Callable[[str, Origin], tuple[bool, float, list[Finding]]]
TierVerdicts = Callable[[str, Origin, list[Finding]], Sequence[tuple[str, bool]]]
"""(text, origin, the decision's findings) -> (tier, flagged on its own) in cascade order."""
LEARNED_TIERS = (("embedding", "similarity"), ("classifier", "classifier"))
"""The learned tiers in cascade order: (detector name, name in the tier table)."""
PLANTED_LINE_TIER = "planted line"
"""The planted-line head's own line in the tier table, after the rest of the classifier."""
COMBINED = "combined"
"""The last line of a tier table: what only the combination of the tiers' scores decides."""


@dataclass(frozen=True, slots=True)
class Row:
    text: str
    label: int
    split: str
    category: str = ""
    origin: Origin = Origin.USER
    contested: bool = False
    """A benign row whose opening the same source also labels as an attack (see
    `mark_contested`)."""
    group: str = ""
    """Rows of one group (one template's fillings) share a split; empty: the row alone."""
    carries_facts: bool = False
    """The row holds personal data by construction: what is counted is whether it reads as
    an attack (`attack_score`), not whether its data was found (which it should be)."""
    planted: str = ""
    """For a document an attack was planted in, the attack: what DEV may already hold
    (`near_duplicates`)."""

    @property
    def own_text(self) -> str:
        """What makes this row this row: the planted attack, else the whole text."""
        return self.planted or self.text


@dataclass(slots=True)
class SplitResult:
    """Counts and rates for one source and split."""

    source: str
    split: str
    rows: int = 0
    attacks: int = 0
    benign: int = 0
    tp: int = 0
    fp: int = 0
    tn: int = 0
    fn: int = 0
    contested: int = 0
    """Benign rows whose opening the source also labels as an attack."""
    contested_fp: int = 0
    misses_by_category: dict[str, int] = field(default_factory=dict)
    attacks_by_category: dict[str, int] = field(default_factory=dict)
    false_positive_rules: dict[str, int] = field(default_factory=dict)
    false_positives_by_category: dict[str, int] = field(default_factory=dict)
    benign_by_category: dict[str, int] = field(default_factory=dict)

    @property
    def tpr(self) -> float | None:
        return self.tp / self.attacks if self.attacks else None

    @property
    def fpr(self) -> float | None:
        return self.fp / self.benign if self.benign else None

    @property
    def fpr_uncontested(self) -> float | None:
        """FPR over the benign rows the source does not also label as attacks."""
        benign = self.benign - self.contested
        return (self.fp - self.contested_fp) / benign if benign else None

    @property
    def precision(self) -> float | None:
        return self.tp / (self.tp + self.fp) if (self.tp + self.fp) else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.tpr
        if p is None or r is None or p + r == 0:
            return None
        return 2 * p * r / (p + r)

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data.update(
            tpr=self.tpr,
            fpr=self.fpr,
            fpr_uncontested=self.fpr_uncontested,
            precision=self.precision,
            f1=self.f1,
        )
        return data


def _rate(count: int, total: int) -> float | None:
    return count / total if total else None


@dataclass(slots=True)
class NoveltyLine:
    """One source's held-out rows by how near they come to a DEV row (`near_duplicates`):
    the cascade's rates on the rows near one and on the rest."""

    source: str
    rows: int = 0
    near: int = 0
    """Rows sharing at least `near_duplicates.NEAR` of their 5-grams with a DEV row."""
    close: int = 0
    """...of which at least `near_duplicates.CLOSE`."""
    near_attacks: int = 0
    near_tp: int = 0
    near_benign: int = 0
    near_fp: int = 0
    novel_attacks: int = 0
    novel_tp: int = 0
    novel_benign: int = 0
    novel_fp: int = 0

    def add(self, label: int, flagged: bool, similarity: float) -> None:
        self.rows += 1
        near = similarity >= NEAR
        self.near += near
        self.close += similarity >= CLOSE
        if label and near:
            self.near_attacks += 1
            self.near_tp += flagged
        elif label:
            self.novel_attacks += 1
            self.novel_tp += flagged
        elif near:
            self.near_benign += 1
            self.near_fp += flagged
        else:
            self.novel_benign += 1
            self.novel_fp += flagged

    @property
    def near_tpr(self) -> float | None:
        return _rate(self.near_tp, self.near_attacks)

    @property
    def near_fpr(self) -> float | None:
        return _rate(self.near_fp, self.near_benign)

    @property
    def novel_tpr(self) -> float | None:
        return _rate(self.novel_tp, self.novel_attacks)

    @property
    def novel_fpr(self) -> float | None:
        return _rate(self.novel_fp, self.novel_benign)

    def to_dict(self) -> dict[str, object]:
        data = asdict(self)
        data.update(
            near_tpr=self.near_tpr,
            near_fpr=self.near_fpr,
            novel_tpr=self.novel_tpr,
            novel_fpr=self.novel_fpr,
        )
        return data


@dataclass(frozen=True, slots=True)
class TierRow:
    """One scored row: its label, each tier's own verdict (cascade order), the cascade's."""

    label: int
    verdicts: tuple[bool, ...]
    final: bool


@dataclass(frozen=True, slots=True)
class TierLine:
    """One tier of a tier table. `tp`/`fp` are the tier's standalone counts (None on the
    `combined` line); `removes_*` are rows earlier lines flagged that the cascade clears
    (only ever on the `combined` line)."""

    tier: str
    adds_tp: int
    adds_fp: int
    tp: int | None
    fp: int | None
    cumulative_tp: int
    cumulative_fp: int
    removes_tp: int = 0
    removes_fp: int = 0


@dataclass(slots=True)
class TierTable:
    """What each tier of the cascade contributes on one source and split."""

    attacks: int
    benign: int
    lines: list[TierLine]

    @property
    def final_tp(self) -> int:
        return self.lines[-1].cumulative_tp

    @property
    def final_fp(self) -> int:
        return self.lines[-1].cumulative_fp

    def to_dict(self) -> dict[str, object]:
        lines = []
        for line in self.lines:
            data: dict[str, Any] = asdict(line)
            data.update(
                tpr=None if line.tp is None else _rate(line.tp, self.attacks),
                fpr=None if line.fp is None else _rate(line.fp, self.benign),
                cumulative_tpr=_rate(line.cumulative_tp, self.attacks),
                cumulative_fpr=_rate(line.cumulative_fp, self.benign),
            )
            lines.append(data)
        return {"attacks": self.attacks, "benign": self.benign, "lines": lines}


def tier_table(rows: Sequence[TierRow], tiers: Sequence[str]) -> TierTable:
    """Per tier in cascade order: the attacks (`adds_tp`) and benign rows (`adds_fp`) it
    flags that every earlier tier missed, its standalone counts, and the cumulative counts
    (flagged by it or any earlier tier). A last `combined` line adds the rows the cascade
    flags that no tier flags alone and removes those a tier flags that the cascade clears,
    so the cumulative counts end at the cascade's own; that is checked here."""
    attacks = sum(1 for r in rows if r.label)
    benign = len(rows) - attacks
    for row in rows:
        if len(row.verdicts) != len(tiers):
            raise ValueError(f"a row has {len(row.verdicts)} verdicts for {len(tiers)} tiers")
    lines: list[TierLine] = []
    cumulative = {1: 0, 0: 0}
    for index, tier in enumerate(tiers):
        adds = {1: 0, 0: 0}
        alone = {1: 0, 0: 0}
        for row in rows:
            label = 1 if row.label else 0
            if row.verdicts[index]:
                alone[label] += 1
                if not any(row.verdicts[:index]):
                    adds[label] += 1
        cumulative = {label: cumulative[label] + adds[label] for label in (0, 1)}
        lines.append(
            TierLine(tier, adds[1], adds[0], alone[1], alone[0], cumulative[1], cumulative[0])
        )
    adds, removes, final = {1: 0, 0: 0}, {1: 0, 0: 0}, {1: 0, 0: 0}
    for row in rows:
        label = 1 if row.label else 0
        final[label] += row.final
        if row.final and not any(row.verdicts):
            adds[label] += 1
        elif any(row.verdicts) and not row.final:
            removes[label] += 1
    cumulative = {label: cumulative[label] + adds[label] - removes[label] for label in (0, 1)}
    lines.append(
        TierLine(
            COMBINED,
            adds[1],
            adds[0],
            None,
            None,
            cumulative[1],
            cumulative[0],
            removes[1],
            removes[0],
        )
    )
    if cumulative != final:
        raise AssertionError(f"tier table ends at {cumulative}, the cascade at {final}")
    return TierTable(attacks, benign, lines)


@dataclass(slots=True)
class DetectionReport:
    """Results per (source, split), plus how they were produced."""

    results: list[SplitResult]
    threshold: float | None
    seconds: float
    notes: list[str] = field(default_factory=list)
    tiers: dict[str, TierTable] = field(default_factory=dict)
    """Per source, on held-out rows: what each tier of the cascade adds (see `tier_table`)."""
    variants: list[VariantResult] = field(default_factory=list)
    """Held-out prompts rewritten by each obfuscation transform (`obfuscation.py`)."""
    translated: list[VariantResult] = field(default_factory=list)
    """Held-out prompts translated into other languages (`translated.py`), per language."""
    translated_in_documents: list[VariantResult] = field(default_factory=list)
    """The same attacks planted in held-out BIPIA documents (`translated.py`), per language."""
    translated_in_documentation: list[VariantResult] = field(default_factory=list)
    """The same attacks planted in held-out documentation chunks (`DOCUMENTATION`)."""
    novelty: list[NoveltyLine] = field(default_factory=list)
    """Per source, held-out rows near a DEV row and the rest (`near_duplicates`)."""
    translated_novel: list[VariantResult] = field(default_factory=list)
    """`translated` over the rows whose English original no DEV row comes near."""

    def get(self, source: str, split: str) -> SplitResult | None:
        for result in self.results:
            if result.source == source and result.split == split:
                return result
        return None

    def target_lines(self) -> list[TargetLine]:
        """Every held-out source, and each held-out variant (obfuscated, translated,
        planted), against the target. An obfuscated variant counts by its attacks alone:
        a benign prompt rewritten is no benign text (zero-width characters inside words are
        flagged on purpose), and what the cascade makes of them is in their own table."""
        lines = [
            TargetLine(r.source, r.tp, r.attacks, r.fp, r.benign)
            for r in self.results
            if r.split == HELD_OUT
        ]
        lines += [
            TargetLine(f"obfuscated: {v.transform}", v.caught, v.attacks, 0, 0)
            for v in self.variants
        ]
        for kind, variants in (
            ("translated", self.translated),
            ("translated in documents", self.translated_in_documents),
            ("translated in documentation", self.translated_in_documentation),
        ):
            lines += [
                TargetLine(f"{kind}: {v.transform}", v.caught, v.attacks, v.flagged, v.benign)
                for v in variants
            ]
        return lines

    def to_dict(self) -> dict[str, object]:
        return {
            "threshold": self.threshold,
            "seconds": round(self.seconds, 2),
            "notes": self.notes,
            "results": [r.to_dict() for r in self.results],
            "tiers_held_out": {source: table.to_dict() for source, table in self.tiers.items()},
            "obfuscated_held_out": [v.to_dict() for v in self.variants],
            "translated_held_out": [v.to_dict() for v in self.translated],
            "translated_in_documents_held_out": [v.to_dict() for v in self.translated_in_documents],
            "translated_in_documentation_held_out": [
                v.to_dict() for v in self.translated_in_documentation
            ],
            "novelty_held_out": [line.to_dict() for line in self.novelty],
            "translated_novel_held_out": [v.to_dict() for v in self.translated_novel],
            "target_held_out": [line.to_dict() for line in self.target_lines()],
        }


def held_out(text: str) -> bool:
    """Deterministic hold-out for sources without a split: sha256(text) % 5 == 0."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest(), "big") % 5 == 0


def _jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                yield json.loads(line)


OPENING_CHARS = 120
"""How much of a text's start (whitespace collapsed, case folded) names its template."""


def _opening(text: str) -> str:
    return " ".join(text.split()).casefold()[:OPENING_CHARS]


def mark_contested(rows: list[Row]) -> list[Row]:
    """Flag the benign rows whose opening is also the opening of an attack row of the same
    source: the source labels one template both ways (neuralchemy, for one, labels the
    same adaptive-attack jailbreak template benign 16 times and attack 28 times). Such rows
    stay in every figure; the reports add an FPR without them beside the FPR with them.
    Applied to sources of labelled rows only (BIPIA builds its attacks into its clean
    contexts, so their openings are shared by construction)."""
    attack_openings = {_opening(row.text) for row in rows if row.label}
    return [
        dataclasses.replace(row, contested=True)
        if not row.label and _opening(row.text) in attack_openings
        else row
        for row in rows
    ]


def _own_split(
    path: Path, category_key: str | None, benign_origin_key: str | None = None
) -> list[Row]:
    """Rows split by the source's own `split` field. With `benign_origin_key`, a benign
    row's category also names where the source took it from ("benign:wildguard_judgecomp"),
    so that false positives are broken down by the data they came from."""
    rows = []
    for item in _jsonl(path):
        split = DEV if item.get("split") == "train" else HELD_OUT
        label = int(item["label"])
        category = str(item.get(category_key, "")) if category_key else ""
        if benign_origin_key and not label and item.get(benign_origin_key):
            category = f"{category or 'benign'}:{item[benign_origin_key]}"
        rows.append(Row(item["text"], label, split, category))
    return mark_contested(rows)


def _hashed_split(path: Path, category_key: str | None, placeholder: bool = False) -> list[Row]:
    rows = []
    for item in _jsonl(path):
        text = item["text"]
        split = HELD_OUT if held_out(text) else DEV
        if placeholder:
            text = text.replace("[INSERT PROMPT HERE]", GPTFUZZ_PLACEHOLDER)
        category = str(item.get(category_key, "")) if category_key else ""
        rows.append(Row(text, int(item["label"]), split, category))
    return mark_contested(rows)


def insert_into(context: str, attack: str, key: str) -> str:
    """`attack` on its own line at the start, the middle or the end of `context`, as
    sha256(key) picks."""
    position = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:4], "big") % 3
    if position == 0:
        return f"{attack}\n{context}"
    if position == 2:
        return f"{context}\n{attack}"
    middle = len(context) // 2
    cut = context.find("\n", middle)
    if cut < 0:
        cut = context.find(". ", middle)
        cut = cut + 1 if cut >= 0 else len(context)
    return f"{context[:cut]}\n{attack}\n{context[cut:].lstrip()}"


BIPIA = "indirect/bipia"
PRESIDIO, PRESIDIO_FILE = "benign/presidio-synth", "pii/presidio-synth.json"


def _bipia(folder: Path) -> list[Row]:
    rows: list[Row] = []
    for part, split in (("train", DEV), ("test", HELD_OUT)):
        attacks: dict[str, list[tuple[str, str]]] = {}
        for kind in ("text", "code"):
            path = folder / f"{kind}_attack_{part}.json"
            if not path.exists():
                continue
            data = json.loads(path.read_text(encoding="utf-8"))
            attacks[kind] = [(cat, text) for cat, texts in data.items() for text in texts]
        for task, kind in (("email", "text"), ("table", "text"), ("code", "code")):
            path = folder / task / f"{part}.jsonl"
            pool = attacks.get(kind, [])
            if not path.exists() or not pool:
                continue
            for number, item in enumerate(_jsonl(path)):
                context = item.get("context", "")
                if isinstance(context, list):
                    context = "\n".join(context)
                rows.append(Row(context, 0, split, f"{task}:benign", Origin.RETRIEVAL))
                for k in range(BIPIA_ATTACKS_PER_CONTEXT):
                    index = (number * BIPIA_ATTACKS_PER_CONTEXT + k) % len(pool)
                    category, attack = pool[index]
                    text = insert_into(context, attack, f"{task}:{part}:{number}:{k}")
                    rows.append(
                        Row(text, 1, split, f"{task}:{category}", Origin.RETRIEVAL, planted=attack)
                    )
    return rows


def _presidio(path: Path) -> list[Row]:
    rows = []
    for item in json.loads(path.read_text(encoding="utf-8")):
        template = f"presidio-template:{item.get('template_id', item['full_text'])}"
        kinds = "+".join(sorted({span["entity_type"].lower() for span in item.get("spans", [])}))
        split = HELD_OUT if held_out(template) else DEV
        rows.append(Row(item["full_text"], 0, split, kinds, group=template, carries_facts=True))
    return rows


FOLLOW_UPS = follow_ups.SOURCE


def _follow_ups() -> list[Row]:
    return [Row(row.text, 0, row.part, row.category) for row in follow_ups.load()]


def _python_docs() -> list[Row]:
    return [
        Row(text, 0, HELD_OUT if held_out(text) else DEV, kind, Origin.RETRIEVAL)
        for kind, text in python_docs.docstrings()
    ]


def _package_docs() -> list[Row]:
    return _chunk_rows(package_docs.documents(), "package-docs")


DOCUMENTATION = (
    python_docs.SOURCE,
    package_docs.SOURCE,
    debian_docs.SOURCE,
    toolchain_docs.NPM_SOURCE,
    toolchain_docs.RUST_SOURCE,
)
"""The sources of clean documentation (benign retrieved content)."""


def _chunk_rows(chunks: Iterable[package_docs.Chunk], prefix: str) -> list[Row]:
    """Benign retrieved rows, each document a group held out by its hash."""
    rows = []
    for chunk in chunks:
        group = f"{prefix}:{chunk.distribution}"
        split = HELD_OUT if held_out(group) else DEV
        rows.append(Row(chunk.text, 0, split, chunk.kind, Origin.RETRIEVAL, group=group))
    return rows


def _debian_docs() -> list[Row]:
    return [
        Row(
            chunk.text,
            0,
            HELD_OUT,
            chunk.kind,
            Origin.RETRIEVAL,
            group=f"debian-docs:{chunk.distribution}",
        )
        for chunk in debian_docs.documents()
    ]


def _toolchain_rows(source: str, chunks: Iterable[package_docs.Chunk]) -> list[Row]:
    return _chunk_rows(chunks, source.removeprefix("benign/"))


def _man_pages() -> list[Row]:
    return _chunk_rows(man_pages.documents(), "man-pages")


def load_sources(
    datasets_dir: Path,
    documentation: bool = False,
    manual: bool = True,
    follow_ups: bool = False,
    only: Collection[str] | None = None,
) -> dict[str, list[Row]]:
    """Every labelled source present under `datasets_dir`, as rows with a split, and with
    `documentation` the standard library's docstrings (`python_docs.SOURCE`), the
    installed distributions' READMEs (`package_docs.SOURCE`), docstrings
    (`package_docstrings.SOURCE`) and source files (`package_sources.SOURCE`), the last two
    held out with their README, and, where the machine has them, the Debian packages'
    READMEs (`debian_docs.SOURCE`, all held out), npm's manual and READMEs
    (`toolchain_docs.NPM_SOURCE`), the Rust toolchain's books (`toolchain_docs.RUST_SOURCE`)
    and, unless `manual` is False, the manual pages (`man_pages.SOURCE`, held out by
    package; rendering them takes a while); with
    `follow_ups` the short turns written for Mithril (`follow_ups.SOURCE`). With `only`,
    just the sources it names are read (a source with no rows is left out either way)."""
    d = Path(datasets_dir)
    loaders: dict[str, Callable[[], list[Row]]] = {
        "injection/s-labs": lambda: _own_split(d / "injection/s-labs.jsonl", None),
        # neuralchemy gathers its benign rows from several datasets, and one of them
        # (wildguard_judgecomp) labels jailbreak prompts by whether they succeeded.
        "injection/neuralchemy": lambda: _own_split(
            d / "injection/neuralchemy.jsonl", "category", benign_origin_key="source"
        ),
        "jailbreak/jbb-artifacts": lambda: _hashed_split(
            d / "jailbreak/jbb-artifacts.jsonl", "method"
        ),
        "jailbreak/gptfuzz-templates": lambda: _hashed_split(
            d / "jailbreak/gptfuzz-templates.jsonl", None, placeholder=True
        ),
        "jailbreak/giskard": lambda: _hashed_split(d / "jailbreak/giskard.jsonl", "group"),
        "benign/mt-vicuna-bench": lambda: _hashed_split(
            d / "benign/mt-vicuna-bench.jsonl", "category"
        ),
        BIPIA: lambda: _bipia(d / BIPIA),
        PRESIDIO: lambda: _presidio(d / PRESIDIO_FILE),
    }
    paths = {BIPIA: d / BIPIA, PRESIDIO: d / PRESIDIO_FILE}
    loaders = {
        name: loader
        for name, loader in loaders.items()
        if paths.get(name, d / f"{name}.jsonl").exists()
    }
    if follow_ups:
        loaders[FOLLOW_UPS] = _follow_ups
    if documentation:
        loaders |= {
            python_docs.SOURCE: _python_docs,
            package_docs.SOURCE: _package_docs,
            # Held out with the same key as the READMEs: a distribution's are on one side.
            package_docstrings.SOURCE: lambda: _chunk_rows(
                package_docstrings.documents(), "package-docs"
            ),
            package_sources.SOURCE: lambda: _chunk_rows(
                package_sources.documents(), "package-docs"
            ),
            debian_docs.SOURCE: _debian_docs,
            toolchain_docs.NPM_SOURCE: lambda: _toolchain_rows(
                toolchain_docs.NPM_SOURCE, toolchain_docs.npm_documents()
            ),
            toolchain_docs.RUST_SOURCE: lambda: _toolchain_rows(
                toolchain_docs.RUST_SOURCE, toolchain_docs.rust_documents()
            ),
        }
        if manual:
            loaders[man_pages.SOURCE] = _man_pages
    sources: dict[str, list[Row]] = {}
    for name, loader in loaders.items():
        if (only is None or name in only) and (rows := loader()):
            sources[name] = rows
    return sources


def default_decide(threshold: float = DEFAULT_THRESHOLD) -> Decide:
    """The bundled scanner, flagging at `threshold`."""
    from mithril.services.scanner import Scanner

    scanner = Scanner.from_rule_files()

    def decide(text: str, origin: Origin) -> tuple[bool, float, list[Finding]]:
        result = scanner.scan(text, origin)
        return result.score >= threshold, result.score, list(result.findings)

    return decide


def run_detection(
    datasets_dir: Path,
    decide: Decide | None = None,
    tiers: TierVerdicts | None = None,
    documentation: bool = False,
    follow_ups: bool = False,
) -> DetectionReport:
    """Score every labelled source under `datasets_dir` (and with `documentation` the
    documentation sources, with `follow_ups` the short follow-up turns); see the module
    docstring. With `tiers`, held-out rows also get a per-tier table
    (`DetectionReport.tiers`)."""
    started = time.perf_counter()
    threshold = DEFAULT_THRESHOLD if decide is None else None
    decide = decide or default_decide()
    results: list[SplitResult] = []
    tables: dict[str, TierTable] = {}
    caught: list[str] = []  # held-out prompts as the cascade decided them, for the variants
    passed: list[str] = []
    documents: list[str] = []  # clean held-out BIPIA contexts, to plant translated prompts in
    pages: list[str] = []  # held-out documentation chunks, the same
    novelty: list[NoveltyLine] = []
    sources = load_sources(Path(datasets_dir), documentation, follow_ups=follow_ups)
    dev_index = DevIndex(
        row.own_text for rows in sources.values() for row in rows if row.split == DEV
    )
    for source, rows in sources.items():
        held_out_similarity = iter(
            dev_index.similarities([row.own_text for row in rows if row.split == HELD_OUT])
        )
        novel = NoveltyLine(source)
        by_split = {DEV: SplitResult(source, DEV), HELD_OUT: SplitResult(source, HELD_OUT)}
        misses: dict[str, Counter[str]] = {DEV: Counter(), HELD_OUT: Counter()}
        totals: dict[str, Counter[str]] = {DEV: Counter(), HELD_OUT: Counter()}
        fp_rules: dict[str, Counter[str]] = {DEV: Counter(), HELD_OUT: Counter()}
        fps: dict[str, Counter[str]] = {DEV: Counter(), HELD_OUT: Counter()}
        benign: dict[str, Counter[str]] = {DEV: Counter(), HELD_OUT: Counter()}
        tier_names: tuple[str, ...] | None = None
        tier_rows: list[TierRow] = []
        for row in rows:
            result = by_split[row.split]
            flagged, _, findings = decide(row.text, row.origin)
            if row.carries_facts:
                # Its personal data is found by design; whether the text reads as an
                # attack is what this row measures.
                findings = [f for f in findings if f.category not in FACT_CATEGORIES]
                flagged = score_findings(findings) >= (threshold or DEFAULT_THRESHOLD)
            elif row.split == HELD_OUT and row.origin == Origin.USER and row.label == flagged:
                (caught if flagged else passed).append(row.text)
            if row.split == HELD_OUT:
                novel.add(row.label, flagged, next(held_out_similarity))
            if row.split == HELD_OUT and source == BIPIA and not row.label:
                documents.append(row.text)
            if row.split == HELD_OUT and source in DOCUMENTATION:
                pages.append(row.text)
            if tiers is not None and row.split == HELD_OUT:
                verdicts = tuple(tiers(row.text, row.origin, findings))
                names = tuple(name for name, _ in verdicts)
                if tier_names is not None and names != tier_names:
                    raise ValueError(f"tiers changed between rows: {tier_names} then {names}")
                tier_names = names
                tier_rows.append(TierRow(row.label, tuple(v for _, v in verdicts), flagged))
            result.rows += 1
            if row.label:
                result.attacks += 1
                totals[row.split][row.category or "-"] += 1
                if flagged:
                    result.tp += 1
                else:
                    result.fn += 1
                    misses[row.split][row.category or "-"] += 1
            else:
                result.benign += 1
                result.contested += row.contested
                benign[row.split][row.category or "-"] += 1
                if flagged:
                    result.fp += 1
                    result.contested_fp += row.contested
                    fp_rules[row.split].update({f.rule_id for f in findings})
                    fps[row.split][row.category or "-"] += 1
                else:
                    result.tn += 1
        if novel.rows:
            novelty.append(novel)
        for split, result in by_split.items():
            if not result.rows:
                continue
            result.misses_by_category = dict(misses[split].most_common())
            result.attacks_by_category = dict(totals[split].most_common())
            result.false_positive_rules = dict(fp_rules[split].most_common())
            result.false_positives_by_category = dict(fps[split].most_common())
            result.benign_by_category = dict(benign[split].most_common())
            results.append(result)
        if tier_names is not None:
            table = tier_table(tier_rows, tier_names)
            held = by_split[HELD_OUT]
            # The table must end where the reported totals do, or it is describing
            # something else than the cascade measured above.
            if (table.final_tp, table.final_fp) != (held.tp, held.fp):
                raise AssertionError(
                    f"{source}: tier table ends at TP {table.final_tp} / FP {table.final_fp},"
                    f" the cascade at TP {held.tp} / FP {held.fp}"
                )
            tables[source] = table
    notes = [
        "DEV = rows used while writing rules; HELD_OUT = rows never looked at.",
        "s-labs/neuralchemy: own split (train = DEV, validation = HELD_OUT); other sources: "
        "sha256(text) % 5 == 0 is HELD_OUT; BIPIA: train files DEV, test files HELD_OUT.",
        f"gptfuzz '[INSERT PROMPT HERE]' replaced by the neutral question {GPTFUZZ_PLACEHOLDER!r}.",
        f"BIPIA: each context embeds {BIPIA_ATTACKS_PER_CONTEXT} attacks (start/middle/end) "
        "and is also kept clean as a benign row; scanned as Origin.RETRIEVAL.",
        "jbb-artifacts misses are broken down by attack method (GCG, PAIR, DSN, ...).",
        f"{python_docs.SOURCE} (when measured): docstrings of at least"
        f" {python_docs.MIN_CHARS} characters (the first {python_docs.MAX_CHARS}) of this"
        " Python's standard library outside its test, demo and GUI packages (PSF License),"
        " benign, scanned as Origin.RETRIEVAL; held out as the sources without a split.",
        f"{package_docs.SOURCE} (when measured): the READMEs of the Python distributions"
        f" installed beside Mithril (each under its own licence, read in place), cut into"
        f" chunks of at most {package_docs.MAX_CHARS} characters (at least"
        f" {package_docs.MIN_CHARS}, the first {package_docs.MAX_CHUNKS} of each), benign,"
        " scanned as Origin.RETRIEVAL; held out by distribution (sha256 of its name).",
        f"{package_docstrings.SOURCE} (when measured): the docstrings of the same"
        f" distributions (at least {python_docs.MIN_CHARS} characters, the first"
        f" {python_docs.MAX_CHARS}; at most {package_docstrings.MAX_PER_DISTRIBUTION} of each,"
        f" evenly through at most {package_docstrings.MAX_FILES} of its files, tests left"
        " out), benign, scanned as Origin.RETRIEVAL; held out with their distribution's"
        " README; no training script reads them.",
        f"{package_sources.SOURCE} (when measured): the same distributions' own Python files"
        f" (the same files), cut as the READMEs are and at least {package_docs.MIN_CHARS}"
        f" characters a piece, at most {package_sources.MAX_PER_DISTRIBUTION} pieces of each"
        " evenly through them, benign, scanned as Origin.RETRIEVAL; held out with their"
        " distribution's README; no training script reads them.",
        f"{debian_docs.SOURCE} (when measured): the READMEs of the Debian packages under"
        f" {debian_docs.DOC_ROOT} (README, README.md, README.Debian, ..., gzipped or not; each"
        " under its package's licence, read in place), cut as the distributions' READMEs are;"
        " benign, scanned as Origin.RETRIEVAL; every row held out: nothing was ever chosen on"
        " them.",
        f"{man_pages.SOURCE} (when measured): the English manual pages under"
        f" {man_pages.MAN_ROOT} (each under its package's licence, read in place), rendered by"
        " groff at 100 columns and cut as the READMEs are (at most"
        f" {man_pages.MAX_CHUNKS_PER_PAGE} chunks a page, {man_pages.MAX_CHUNKS} a Debian"
        " package); benign, scanned as Origin.RETRIEVAL; held out by package (sha256 of its"
        " name); no training script reads them.",
        f"contested = benign rows whose first {OPENING_CHARS} characters (whitespace collapsed,"
        " case folded) open an attack row of the same source: the source labels that template"
        " both ways. They count in FPR; 'FPR uncontested' leaves them out.",
        f"near DEV = held-out rows sharing at least {NEAR:.0%} of their character 5-grams"
        " (whitespace collapsed, case folded) with some DEV row of any source, a planted"
        " attack judged by the attack alone; 'novel' rows share less with every DEV row"
        " (near_duplicates.py).",
    ]
    notes.append(
        f"obfuscated variants: {VARIANT_ROWS} held-out prompt attacks the cascade flags and"
        f" {VARIANT_ROWS} benign prompts it passes (fixed sample by sha256), each rewritten by"
        f" every transform in obfuscation.py ({', '.join(TRANSFORMS)})."
    )
    variants = run_variants(caught, passed, decide, Origin.USER)
    notes.append(
        "translated prompts: held-out s-labs and neuralchemy prompts and their translations"
        " into 8 languages (benchmark/data/translated_prompts.jsonl), scanned as user prompts."
    )
    translations = load_translated()  # read once for the three runs over it
    translated = run_translated(decide, rows=translations)
    held_out_translations = [row for row in translations if row.part == HELD_OUT]
    novel_translations = with_novel_originals(held_out_translations, dev_index)
    notes.append(
        f"translated prompts, novel: the {len({r.row for r in novel_translations})} of"
        f" {len({r.row for r in held_out_translations})} held-out rows whose English original"
        " no DEV row comes near (as 'near DEV' above), in every language."
    )
    translated_novel = run_translated(decide, rows=novel_translations)
    notes.append(
        "translated attacks in documents: the same attacks, each planted on its own line at"
        " the start, middle or end of a clean held-out BIPIA context, scanned as retrieved"
        " content."
    )
    in_documents = run_in_documents(decide, documents, rows=translations)
    if pages:
        notes.append(
            "translated attacks in documentation: the same attacks, each planted the same way"
            " in a held-out chunk of the documentation sources (" + ", ".join(DOCUMENTATION) + ")."
        )
    in_documentation = run_in_documents(decide, pages, rows=translations)
    return DetectionReport(
        results,
        threshold,
        time.perf_counter() - started,
        notes,
        tables,
        variants=variants,
        translated=translated,
        translated_in_documents=in_documents,
        translated_in_documentation=in_documentation,
        novelty=novelty,
        translated_novel=translated_novel,
    )


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def format_markdown(report: DetectionReport) -> str:
    """A markdown summary: one table per split, then misses by category."""
    threshold = "custom decide" if report.threshold is None else f"score >= {report.threshold}"
    lines = [
        "# Detection benchmark",
        "",
        f"Flagged when {threshold}. Runtime {report.seconds:.1f} s.",
        "",
    ]
    lines += [f"- {note}" for note in report.notes]
    for split in (HELD_OUT, DEV):
        lines += [
            "",
            f"## {split.replace('_', '-')}",
            "",
            "| source | rows | attacks | benign | TPR | FPR | precision | F1 | contested"
            " | FPR uncontested |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in (r for r in report.results if r.split == split):
            lines.append(
                f"| {r.source} | {r.rows} | {r.attacks} | {r.benign} | {_pct(r.tpr)} | "
                f"{_pct(r.fpr)} | {_pct(r.precision)} | {_pct(r.f1)} | {r.contested} | "
                f"{_pct(r.fpr_uncontested)} |"
            )
    lines += target_markdown(report.target_lines())
    lines += _tier_markdown(report)
    lines += _novelty_markdown(report.novelty)
    lines += _rates_section(
        "Obfuscated variants (held-out prompts)",
        "transform",
        report.variants,
        lambda first: (
            f"{first.attacks} attacks the cascade flags as written and"
            f" {first.benign} benign prompts it passes, each rewritten by one transform"
            " (`benchmark/obfuscation.py`): TPR = still flagged, FPR = now flagged."
        ),
    )
    lines += _rates_section(
        "Translated prompts (held-out)",
        "language",
        report.translated,
        lambda first: (
            f"The same {first.attacks} attacks and {first.benign} benign prompts in"
            " each language (`benchmark/translated.py`; en = as the source has them, the others"
            " translated)."
        ),
    )
    lines += _rates_section(
        "Translated prompts whose English original is novel (held-out)",
        "language",
        report.translated_novel,
        lambda first: (
            f"The {first.attacks} attacks and {first.benign} benign prompts above whose English"
            " original no DEV row comes near (`benchmark/near_duplicates.py`), in each language."
        ),
    )
    lines += _rates_section(
        "Translated attacks in English documents (held-out)",
        "language",
        report.translated_in_documents,
        lambda first: (
            f"The same {first.attacks} attacks, each on its own line in a clean held-out BIPIA"
            " email, table or code context (the same one and the same place for every"
            " language), scanned as retrieved content. No FPR: a benign prompt inside a"
            " retrieved document is itself an injected instruction; the clean contexts' FPR is"
            " the indirect/bipia row's."
        ),
    )
    lines += _rates_section(
        "Translated attacks in documentation (held-out)",
        "language",
        report.translated_in_documentation,
        lambda first: (
            f"The same {first.attacks} attacks, each on its own line in a held-out chunk of"
            " documentation (docstrings, READMEs, npm's manual, the Rust books), the same chunk"
            " and place for every language, scanned as retrieved content: an instruction"
            " planted in the documentation a coding assistant retrieves. The chunks' own FPR"
            " is their sources' rows."
        ),
    )
    lines += _by_category(
        report, "Misses", lambda r: r.misses_by_category, lambda r: r.attacks_by_category
    )
    lines += _by_category(
        report,
        "False positives",
        lambda r: r.false_positives_by_category,
        lambda r: r.benign_by_category,
        every=True,
    )
    lines += ["", "## Rules firing on false positives (held-out)", ""]
    for r in (r for r in report.results if r.split == HELD_OUT and r.false_positive_rules):
        parts = [f"{rule} {count}" for rule, count in r.false_positive_rules.items()]
        lines.append(f"- **{r.source}**: " + ", ".join(parts))
    return "\n".join(lines) + "\n"


def _novelty_markdown(novelty: Sequence[NoveltyLine]) -> list[str]:
    if not novelty:
        return []
    lines = [
        "",
        "## Held-out rows near a DEV row",
        "",
        f"*near* = sharing at least {NEAR:.0%} of the row's character 5-grams with some DEV"
        f" row (*close*: at least {CLOSE:.0%}), a planted attack judged by the attack alone"
        " (`benchmark/near_duplicates.py`). Everything learned was fitted on DEV rows: the"
        " *novel* rates are the ones no copy of a training row decides.",
        "",
        "| source | rows | near | close | TPR near | FPR near | TPR novel | FPR novel |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for line in novelty:
        lines.append(
            f"| {line.source} | {line.rows} | {line.near} | {line.close}"
            f" | {_pct(line.near_tpr)} | {_pct(line.near_fpr)}"
            f" | {_pct(line.novel_tpr)} | {_pct(line.novel_fpr)} |"
        )
    return lines


def _by_category(
    report: DetectionReport,
    what: str,
    counted: Callable[[SplitResult], dict[str, int]],
    of: Callable[[SplitResult], dict[str, int]],
    every: bool = False,
) -> list[str]:
    """'## <what> by category (held-out)': per source, `category counted/of` pairs; with
    `every`, the categories where none was counted too (as `0/of`), after the others."""
    lines = ["", f"## {what} by category (held-out)", ""]
    for r in (r for r in report.results if r.split == HELD_OUT and counted(r)):
        found = counted(r)
        none = [cat for cat in of(r) if cat not in found] if every else []
        parts = [f"{cat} {n}/{of(r).get(cat, 0)}" for cat, n in found.items()]
        parts += [f"{cat} 0/{of(r)[cat]}" for cat in none]
        lines.append(f"- **{r.source}**: " + ", ".join(parts))
    return lines


def _rates_section(
    title: str, column: str, rows: Sequence[VariantResult], intro: Callable[[VariantResult], str]
) -> list[str]:
    """'## <title>', a sentence about the first row, then one TPR / FPR line per row."""
    if not rows:
        return []
    lines = ["", f"## {title}", "", intro(rows[0]), "", f"| {column} | TPR | FPR |"]
    lines.append("|---|---:|---:|")
    return lines + [f"| {v.transform} | {_pct(v.tpr)} | {_pct(v.fpr)} |" for v in rows]


def _tier_markdown(report: DetectionReport) -> list[str]:
    if not report.tiers:
        return []
    lines = [
        "",
        "## Per tier (held-out)",
        "",
        "Each tier's own verdict (its findings scored alone, flagged at the same "
        "threshold), in cascade order: fast (rules + secrets), similarity, classifier, the "
        "planted-line head (part of the classifier tier, on retrieved and tool content of "
        "several lines only), then the judge when an LLM is configured. *adds* = flagged by "
        "this tier and by no earlier one; *alone* = the tier's standalone rate on every row "
        "(the learned tiers are scored even where the cascade skips them because the fast "
        "tier already flagged); *cumulative* = flagged by this tier or an earlier one. "
        "*combined*: rows the cascade flags that no tier flags alone (sub-threshold scores "
        "adding up under the noisy-OR), minus rows a tier flags that the cascade clears (a "
        "judge overruling); after it the cumulative rates are the cascade's, as reported "
        "above.",
        "",
        "| source | tier | adds TP | adds FP | TPR alone | FPR alone | cumulative TPR | "
        "cumulative FPR |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for source, table in report.tiers.items():
        for line in table.lines:
            adds_tp, adds_fp = f"{line.adds_tp}", f"{line.adds_fp}"
            if line.removes_tp or line.removes_fp:
                adds_tp += f" (-{line.removes_tp})"
                adds_fp += f" (-{line.removes_fp})"
            if not table.benign:
                adds_fp = "-"
            alone_tpr = "-" if line.tp is None else _pct(_rate(line.tp, table.attacks))
            alone_fpr = "-" if line.fp is None else _pct(_rate(line.fp, table.benign))
            lines.append(
                f"| {source} | {line.tier} | {adds_tp if table.attacks else '-'} | {adds_fp} | "
                f"{alone_tpr} | {alone_fpr} | {_pct(_rate(line.cumulative_tp, table.attacks))} | "
                f"{_pct(_rate(line.cumulative_fp, table.benign))} |"
            )
    return lines


def cascade_tiers(firewall: Firewall, run: Callable[[Awaitable[Any]], Any]) -> TierVerdicts:
    """Each tier's own verdict for `run_detection`, from a cascade `firewall` (the CLI's
    in-process pipeline) and `run`, which runs a coroutine to completion.

    The decision's findings are split by tier: fast (rules and secrets), similarity,
    classifier, judge; each part is scored alone with the policy (`decide`), as the cascade
    scores findings, and counts when block mode would refuse it (credentials and personal
    data alone are redacted under the default `input_secrets`, not refused). Where the
    cascade did not run the learned tiers (the fast tier's attack score already reached the
    threshold) they are run here, so their standalone rates cover every row; where a judge
    ran (its overruling zeroes earlier findings), the fast and learned tiers are run again
    for their own scores.
    """
    from mithril.gateway.cascade import JUDGE, LEARNED, attack_score
    from mithril.gateway.decision import Action, Mode, decide
    from mithril.gateway.tiers import LEARNED_CATEGORY, PLANTED_LINE_RULE

    policy, cascade = dataclasses.replace(firewall.policy, mode=Mode.BLOCK), firewall.tiers
    names = cascade.names if cascade is not None else frozenset()
    learned = policy.detectors & LEARNED & names
    judged = JUDGE in policy.detectors and JUDGE in names
    learned_tiers = [(name, label) for name, label in LEARNED_TIERS if name in learned]

    def flags(findings: Sequence[Finding]) -> bool:
        return decide(findings, policy).action is Action.BLOCK

    def verdicts(text: str, origin: Origin, findings: list[Finding]) -> list[tuple[str, bool]]:
        later = {LEARNED_CATEGORY, JUDGE}
        judge = [f for f in findings if f.category == JUDGE]
        fast = [f for f in findings if f.category not in later]
        scored = [f for f in findings if f.category == LEARNED_CATEGORY]
        if judge:
            analysis = run(firewall.detectors.analyse(text, origin, policy.detectors))
            fast = list(analysis.findings)
        if learned and cascade is not None and (judge or attack_score(fast) >= policy.threshold):
            scored = list(run(cascade.learned(text, origin, learned)).findings)
        out = [("fast", flags(fast))]
        for name, label in learned_tiers:
            own = [f for f in scored if f.detector == name]
            if name == "classifier":
                # The planted-line head runs inside the classifier tier (documents only);
                # its own line shows it against the budget it was chosen at.
                head = [f for f in own if f.rule_id == PLANTED_LINE_RULE]
                out.append((label, flags([f for f in own if f.rule_id != PLANTED_LINE_RULE])))
                out.append((PLANTED_LINE_TIER, flags(head)))
            else:
                out.append((label, flags(own)))
        if judged:
            out.append((JUDGE, flags(judge)))
        return out

    return verdicts


def write_report(report: DetectionReport, out_dir: Path) -> tuple[Path, Path]:
    """Write `detection.md` and `detection.json` into `out_dir`; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    markdown, data = out / "detection.md", out / "detection.json"
    markdown.write_text(format_markdown(report), encoding="utf-8")
    data.write_text(json.dumps(report.to_dict(), indent=2) + "\n", encoding="utf-8")
    return markdown, data
