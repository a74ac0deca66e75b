"""The probability a line must reach, read alone by the n-gram part, to count.

    .venv/bin/python -m mithril.services.embedding.training.lines [--datasets DIR]

The n-gram part reads each run of whole lines of a document (`runs.py`) so that an
instruction planted on one line is not outweighed by the document. A line has few n-grams,
and one sentence of a code answer addressed to its reader ("just replace `var` with your
variable name") can read as an instruction: at the window's threshold (0.5), the lines of
some clean DEV code contexts flagged them (2 of 50 with the n-gram model of 2026-12-01, 1
with the one trained on documentation too).

Rows: DEV only, as `train.py` cuts them. Clean documents: every clean DEV BIPIA context,
standard-library docstring and README chunk (FIT and VALIDATION; the n-gram model was
fitted on windows, not on lines, and its FIT windows lowering these scores only makes the
choice cautious). Planted attacks, for the report:
VALIDATION attacks of s-labs and neuralchemy, each on its own line of a VALIDATION clean
context (`insert_into`, as the detection benchmark plants them).

The choice: the lowest of CANDIDATES that at most MAX_CLEAN_RATE of the clean documents
reach with a line.
Only the n-gram model is read, which scores text the same on every CPU. Run it after
`train.py`, whose n-gram calibration it reads; prints the report and writes
`data/line_threshold_report.md`. The shipped value is `config.NGRAM_LINE_PROBABILITY`.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence

from mithril.benchmark.detection import BIPIA, HELD_OUT, insert_into
from mithril.services.embedding.config import BUNDLED_NGRAM_CLASSIFIER
from mithril.services.embedding.ngrams import NgramModel
from mithril.services.embedding.runs import line_runs
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.embedding.training.train import (
    DOCUMENT_SOURCES,
    VALIDATION,
    Sample,
    samples,
)
from mithril.services.scanner.readable import as_read

CANDIDATES = (0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99)
MAX_CLEAN_RATE = 0.001
"""Of the clean documents, the most whose lines may reach the chosen threshold (as for the
planted-line head). It was none while only BIPIA's 1,000 contexts were read; among 2,700
documents with the docstrings and READMEs, a line that reaches 0.999 ('If you're asking
yourself "Do I need to configure anything?" the answer is') would make every candidate
fail a rule of none."""
PLANTED = 400
PROMPT_SOURCES = ("injection/s-labs", "injection/neuralchemy")


def highest_line_probability(model: NgramModel, text: str) -> float:
    """The n-gram part's highest probability over the runs of lines of `text`; 0 for a
    text of one run."""
    runs = line_runs(text)
    if not runs:
        return 0.0
    return float(model.calibration.probability(model.logits(runs)).max())


def choose(clean_highest: Sequence[float], candidates: Sequence[float] = CANDIDATES) -> float:
    """The lowest candidate at which at most MAX_CLEAN_RATE of the clean documents have a
    line that reaches it."""
    allowed = int(MAX_CLEAN_RATE * len(clean_highest))
    for candidate in sorted(candidates):
        if sum(p >= candidate for p in clean_highest) <= allowed:
            return candidate
    raise ValueError(f"every candidate flags more than {allowed} clean documents")


def planted_texts(rows: list[Sample]) -> list[str]:
    """VALIDATION prompt attacks, each planted in a VALIDATION clean context."""
    contexts = [s.view for s in rows if s.source == BIPIA and s.label == 0 and s.part == VALIDATION]
    keyed = sorted(
        (hashlib.sha256(s.view.encode("utf-8")).hexdigest(), s.view)
        for s in rows
        if s.source in PROMPT_SOURCES and s.label == 1 and s.part == VALIDATION
    )[:PLANTED]
    return [
        insert_into(contexts[i % len(contexts)], attack, key)
        for i, (key, attack) in enumerate(keyed)
    ]


def report(
    clean: dict[str, list[float]], planted: list[float], chosen: float, model: NgramModel
) -> str:
    lines = [
        "# The n-gram part's line threshold",
        "",
        f"Written by `services/embedding/training/lines.py` for `{model.meta.get('version')}`."
        " A line read alone counts when its probability reaches the threshold; the windows'"
        " threshold stays 0.5. *clean*: clean DEV documents (BIPIA contexts by task,"
        " docstrings, README chunks) whose lines reach it;"
        " *planted*: VALIDATION prompt attacks, each planted on a line of a VALIDATION clean"
        f" context ({len(planted)}), whose lines reach it (the n-gram lines alone: the rules,"
        " the windows and the attack encoder catch most of them too).",
        "",
        "| threshold | " + " | ".join(f"clean {task}" for task in sorted(clean)) + " | planted |",
        "|---:|" + "---:|" * (len(clean) + 1),
    ]
    for candidate in CANDIDATES:
        counts = [
            f"{sum(p >= candidate for p in clean[task])}/{len(clean[task])}"
            for task in sorted(clean)
        ]
        hit = sum(p >= candidate for p in planted)
        mark = " (chosen)" if candidate == chosen else ""
        lines.append(f"| {candidate}{mark} | " + " | ".join(counts) + f" | {hit}/{len(planted)} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = training_parser(__doc__)
    args = parse_training_args(parser)
    model = NgramModel.from_file(BUNDLED_NGRAM_CLASSIFIER)
    rows = [s for s in samples(args.datasets) if s.part != HELD_OUT]
    clean: dict[str, list[float]] = defaultdict(list)
    for s in rows:
        if s.source in DOCUMENT_SOURCES and s.label == 0:
            # BIPIA's by task (code, email, table), the others by source.
            kind = (s.category or "-").split(":")[0] if s.source == BIPIA else s.source
            clean[kind].append(highest_line_probability(model, s.view))
    planted = [highest_line_probability(model, as_read(text)) for text in planted_texts(rows)]
    chosen = choose([p for values in clean.values() for p in values])
    text = report(dict(clean), planted, chosen, model)
    (args.out / "line_threshold_report.md").write_text(text, encoding="utf-8")
    print(text)
    print(f"chosen: {chosen}")


if __name__ == "__main__":
    main()
