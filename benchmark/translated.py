"""Prompts translated into eight languages: is an attack still caught in another language, and
does a benign prompt stay clean?

The rows are `data/translated_prompts.jsonl` (where they come from: `data/README.md`):
English prompts of s-labs and neuralchemy, each with its translations into French,
Spanish, German, Italian, Portuguese, Russian, Chinese and Japanese. Two parts:

- `dev`: 30 attacks and 30 benign prompts from the embedding tiers' VALIDATION rows, what
  the multilingual tier's choices were made on;
- `held_out`: 60 attacks and 60 benign prompts from the held-out split, scored here only;
- `fit`: 100 attacks and 100 benign prompts from the rows the classifiers are fitted on,
  which the multilingual head trains on (`services/embedding/training/multilingual.py`);
  never scored here.

Every language is scanned as a user prompt through the same cascade; the English rows are
the baseline, so the cost of the translation shows beside them. `select` picks the English
rows again from the datasets, so that which rows were translated can be checked.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mithril.benchmark.near_duplicates import NEAR, DevIndex
from mithril.benchmark.obfuscation import VariantResult

if TYPE_CHECKING:
    from mithril.benchmark.detection import Decide

DATA = Path(__file__).resolve().parent / "data" / "translated_prompts.jsonl"
LANGUAGES = ("en", "fr", "es", "de", "it", "pt", "ru", "zh", "ja")
"""In report order: English, the row as the source has it, first."""

SELECTION_SALT = "mithril-multilingual:"
PER_PART = {"dev": 15, "held_out": 30}
"""Rows per (source, label) in each part of the evaluation set."""
FIT_PER_PART = {"fit": 50}
"""Rows per (source, label) translated for the multilingual head to train on."""
UNTRANSLATABLE = frozenset(
    {"encoding", "encoding_obfuscation", "adversarial", "obfuscation", "token_smuggling"}
)
"""neuralchemy categories whose attack is in how the text is written, not what it says."""
_ENCODED = re.compile(r"[A-Za-z0-9+/=]{24,}")


@dataclass(frozen=True, slots=True)
class TranslatedRow:
    id: str
    row: str
    """The English row's id: a row and its translations share it."""
    language: str
    part: str
    source: str
    label: int
    text: str


def load(path: Path = DATA) -> list[TranslatedRow]:
    rows = []
    with Path(path).open(encoding="utf-8") as handle:
        for line in handle:
            if not line.strip():
                continue
            item = json.loads(line)
            rows.append(
                TranslatedRow(
                    item["id"],
                    item["row"],
                    item["lang"],
                    item["part"],
                    item["source"],
                    int(item["label"]),
                    item["text"],
                )
            )
    return rows


def run_translated(
    decide: Decide, part: str = "held_out", rows: Sequence[TranslatedRow] | None = None
) -> list[VariantResult]:
    """One result per language (English first): attacks flagged, benign prompts flagged."""
    from mithril.domain import Origin

    chosen = [r for r in (load() if rows is None else rows) if r.part == part]
    results = []
    for language in sorted({r.language for r in chosen}, key=_order):
        of_language = [r for r in chosen if r.language == language]
        attacks = [r for r in of_language if r.label]
        benign = [r for r in of_language if not r.label]
        caught = sum(decide(r.text, Origin.USER)[0] for r in attacks)
        flagged = sum(decide(r.text, Origin.USER)[0] for r in benign)
        results.append(VariantResult(language, len(attacks), caught, len(benign), flagged))
    return results


def with_novel_originals(rows: Sequence[TranslatedRow], dev: DevIndex) -> list[TranslatedRow]:
    """The rows whose English original no DEV row comes near (`near_duplicates.NEAR`): the
    parts were fitted on DEV rows and the multilingual head on translations of some of
    them, so a translation of a near copy is half seen."""
    english = {r.row: r.text for r in rows if r.language == "en"}
    similarities = dev.similarities(list(english.values()))
    near = {
        row for row, similarity in zip(english, similarities, strict=True) if similarity >= NEAR
    }
    return [r for r in rows if r.row not in near]


def run_in_documents(
    decide: Decide,
    documents: Sequence[str],
    part: str = "held_out",
    rows: Sequence[TranslatedRow] | None = None,
) -> list[VariantResult]:
    """The same attacks, each planted in an English document (a clean BIPIA context, or a
    chunk of documentation) and scanned as retrieved content: an instruction in another
    language inside English text.
    A row and its translations go into the same document at the same place (start, middle
    or end, as BIPIA's attacks are), so the languages differ in nothing else.

    Benign prompts are not planted: a question or a request inside a retrieved document is
    an instruction injected into data, what BIPIA labels an attack. What the documents cost
    in false positives is the clean contexts' FPR (the BIPIA source)."""
    from mithril.domain import Origin

    if not documents:
        return []

    chosen = [r for r in (load() if rows is None else rows) if r.part == part and r.label]
    return run_translated(
        lambda text, _origin: decide(text, Origin.RETRIEVAL),
        part,
        [dataclasses.replace(row, text=planted_in(documents, row)) for row in chosen],
    )


def planted_in(documents: Sequence[str], row: TranslatedRow) -> str:
    """`row`'s text planted in one of `documents`, the same one and at the same place for
    a row and its translations (chosen by the English row's id)."""
    from mithril.benchmark.detection import insert_into

    key = _selection_key(row.row)
    document = documents[int.from_bytes(key[:4], "big") % len(documents)]
    return insert_into(document, row.text, row.row)


def _order(language: str) -> tuple[int, str]:
    return (LANGUAGES.index(language), "") if language in LANGUAGES else (len(LANGUAGES), language)


def translatable(item: dict) -> bool:
    """A short, plain, single-paragraph English prompt whose meaning a translation keeps."""
    text = str(item["text"])
    return (
        20 <= len(text) <= 280
        and text.isascii()
        and "\n\n" not in text
        and not _ENCODED.search(text)
        and item.get("category", "") not in UNTRANSLATABLE
    )


def select(datasets: Path, per_part: dict[str, int] = PER_PART) -> list[tuple[str, str, int, str]]:
    """The English rows that were translated, as (part, source, label, text), in file order:
    per part, source (s-labs, neuralchemy) and label (attacks first), the translatable rows
    with the lowest sha256(SELECTION_SALT + text). `dev` rows come from the embedding tiers'
    VALIDATION rows (never fitted on), `held_out` rows from the sources' validation split,
    and `fit` rows (`FIT_PER_PART`, what the multilingual head trains on) from the rows the
    classifiers are fitted on."""
    from mithril.services.embedding.training.train import in_validation

    def in_part(item: dict, part: str) -> bool:
        if part == "held_out":
            return bool(item["split"] == "validation")
        return item["split"] == "train" and in_validation(item["text"]) == (part == "dev")

    items: dict[str, list[dict]] = {}
    for source in ("s-labs", "neuralchemy"):
        with (Path(datasets) / "injection" / f"{source}.jsonl").open(encoding="utf-8") as handle:
            items[source] = [json.loads(line) for line in handle if line.strip()]
    chosen = []
    for part, count in per_part.items():
        for source, rows in items.items():
            for label in (1, 0):
                pool = {
                    item["text"]: item
                    for item in rows
                    if int(item["label"]) == label and translatable(item) and in_part(item, part)
                }
                ordered = sorted(pool, key=_selection_key)
                chosen += [(part, f"injection/{source}", label, text) for text in ordered[:count]]
    return chosen


def _selection_key(text: str) -> bytes:
    return hashlib.sha256((SELECTION_SALT + text).encode("utf-8")).digest()
