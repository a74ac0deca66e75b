"""Measure the classifier's threshold on retrieved content (`gateway/document_scale.py`).

    .venv/bin/python -m mithril.services.embedding.training.document_threshold [--out DIR]

Run after the classifier and the combiner are final: it reads the cascade's findings as the
gateway makes them. What it writes is a measurement, not a setting: the gateway reads
documents on the prompts' scale unless MITHRIL_GATEWAY_DOCUMENT_CLASSIFIER_THRESHOLD says
otherwise (`document_scale.py` says why).

- Rows: the DEV rows of the document sources (`train.DOCUMENT_SOURCES`: BIPIA's contexts,
  clean and with attacks, the standard library's docstrings, the installed distributions'
  README chunks), as `mithril bench detection` splits them; the `dev` attacks of
  `benchmark/data/translated_prompts.jsonl` planted in DEV's clean BIPIA contexts as the
  benchmark plants the held-out ones; and the VALIDATION prompt attacks planted in
  VALIDATION's clean BIPIA contexts (`train.planted_samples`). HELD_OUT rows are never
  read. DEV, not only its VALIDATION slice: that slice holds 129 README chunks, too few to
  say 1 %.
- Each row is scanned once by the full cascade as retrieved content, the classifier on the
  prompts' scale; each candidate threshold then rescales the classifier's finding and
  scores the findings again, as the gateway would (`decision.score_findings`).
- The threshold suggested is the lowest of CANDIDATES at which the cascade flags at most
  MAX_FPR of every benign document source's DEV rows.

Writes `data/document_threshold_report.json`: the suggestion and, at every candidate up to
it, what each source's rows come to. About ten minutes.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from mithril.benchmark import translated
from mithril.benchmark.detection import BIPIA
from mithril.domain import Finding, Origin
from mithril.gateway.decision import score_findings
from mithril.gateway.detectors import Analysis
from mithril.gateway.document_scale import OFF, rescaled
from mithril.services.embedding.training.arguments import parse_training_args, training_parser
from mithril.services.embedding.training.train import (
    DOCUMENT_SOURCES,
    HELD_OUT,
    PLANTED,
    VALIDATION,
    samples,
)

MAX_FPR = 0.01
CANDIDATES = tuple(round(0.5 + step / 100, 2) for step in range(0, 41))
"""0.50 to 0.90 by 0.01."""
POLICY_THRESHOLD = 0.5
"""The default policy's threshold, at which the rows are flagged."""
TRANSLATED = "translated-in-documents"
REPORT = "document_threshold_report.json"


@dataclasses.dataclass(frozen=True, slots=True)
class Scanned:
    source: str
    label: int
    findings: tuple[Finding, ...]


@dataclasses.dataclass(slots=True)
class Counts:
    attacks: int = 0
    caught: int = 0
    benign: int = 0
    flagged: int = 0

    @property
    def fpr(self) -> float | None:
        return self.flagged / self.benign if self.benign else None

    def to_dict(self) -> dict[str, object]:
        return dataclasses.asdict(self)


def counts_at(rows: Iterable[Scanned], threshold: float) -> dict[str, Counts]:
    """Per source, what the cascade flags with the classifier's document threshold at
    `threshold`."""
    by_source: dict[str, Counts] = {}
    for row in rows:
        findings = rescaled(Analysis(row.findings), threshold).findings
        flagged = score_findings(findings) >= POLICY_THRESHOLD
        counts = by_source.setdefault(row.source, Counts())
        if row.label:
            counts.attacks += 1
            counts.caught += flagged
        else:
            counts.benign += 1
            counts.flagged += flagged
    return by_source


def choose(rows: Sequence[Scanned], candidates: Sequence[float] = CANDIDATES) -> float:
    """The lowest candidate at which no source's benign rows are flagged above MAX_FPR."""
    for threshold in candidates:
        rates = [c.fpr for c in counts_at(rows, threshold).values() if c.fpr is not None]
        if all(rate <= MAX_FPR for rate in rates):
            return threshold
    raise ValueError(f"no threshold up to {candidates[-1]} holds every source at {MAX_FPR:.0%}")


def dev_rows(datasets: Path) -> list[tuple[str, int, str]]:
    """(source, label, text) of the DEV document rows, of the DEV translated attacks
    planted in DEV's clean BIPIA contexts, and of the VALIDATION prompt attacks planted in
    VALIDATION's (`train.planted_samples`)."""
    dev = [s for s in samples(datasets, planted=True) if s.part != HELD_OUT]
    rows = [
        (source, sample.label, sample.text)
        for source in DOCUMENT_SOURCES
        for sample in dev
        if sample.source == source
    ]
    contexts = [s.text for s in dev if s.source == BIPIA and not s.label]
    if contexts:
        for attack in translated.load():
            if attack.part == "dev" and attack.label:
                rows.append((TRANSLATED, 1, translated.planted_in(contexts, attack)))
    rows += [(PLANTED, 1, s.text) for s in dev if s.source == PLANTED and s.part == VALIDATION]
    return rows


def scan(rows: Sequence[tuple[str, int, str]]) -> list[Scanned]:
    """Each row's findings from the full cascade, the classifier on the prompts' scale."""
    from mithril.cli.pipeline import LocalPipeline
    from mithril.gateway.config import GatewaySettings

    pipeline = LocalPipeline(GatewaySettings(document_classifier_threshold=OFF))
    loop = asyncio.new_event_loop()
    try:
        return [
            Scanned(
                source,
                label,
                loop.run_until_complete(pipeline.firewall.scan(text, Origin.RETRIEVAL)).findings,
            )
            for source, label, text in rows
        ]
    finally:
        loop.close()


def summary(rows: Sequence[Scanned], threshold: float) -> dict[str, object]:
    def table(at: float) -> Mapping[str, object]:
        return {source: c.to_dict() for source, c in sorted(counts_at(rows, at).items())}

    return {
        "threshold": threshold,
        "chosen_on": "DEV rows of "
        + ", ".join(DOCUMENT_SOURCES)
        + f": the lowest of {CANDIDATES[0]:.2f}-{CANDIDATES[-1]:.2f} holding each benign"
        f" source at {MAX_FPR:.0%} or less",
        "written_by": "services/embedding/training/document_threshold.py",
        "by_threshold": {f"{at:.2f}": table(at) for at in CANDIDATES if at <= threshold},
    }


def main() -> None:
    args = parse_training_args(training_parser(__doc__))
    rows = scan(dev_rows(args.datasets))
    threshold = choose(rows)
    path = Path(args.out) / REPORT
    path.write_text(json.dumps(summary(rows, threshold), indent=2) + "\n", encoding="utf-8")
    print(f"document threshold suggested: {threshold} -> {path}")


if __name__ == "__main__":
    main()
