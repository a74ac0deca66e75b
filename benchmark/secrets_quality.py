"""Quality of the secrets library on public labelled data.

Sources (see datasets/README.md and datasets/licenses/):
- secrets/gitleaks-literals.jsonl: gitleaks' per-rule true/false positive literals (MIT).
- secrets/detect-secrets-fixtures/: detect-secrets' config fixtures (Apache-2.0); the planted
  secrets are identified through the fixtures' own baseline.file (sha1 of each secret).
- pii/presidio-synth.json: presidio-research synthetic sentences with PII spans (MIT).

Honest split: rows with sha256(text) % 5 == 0 are held out; detector rules were tuned on the
rest. Both parts are reported, the held-out part separately.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from mithril.domain import Finding
from mithril.services.secrets import SecretsDetector

SPLIT_RULE = "held-out = sha256(text) % 5 == 0; tuned on the rest"

PRESIDIO_KINDS = {
    "CREDIT_CARD": "credit_card",
    "PHONE_NUMBER": "phone",
    "EMAIL_ADDRESS": "email",
    "IBAN_CODE": "iban",
    "US_SSN": "ssn",
}
"""presidio entity type -> our kind; every other presidio type is unsupported."""

GITLEAKS_IN_SCOPE = {
    "aws.go", "github.go", "slack.go", "gcp.go", "anthropic.go", "jwt.go", "privatekey.go",
    "curl.go", "generic.go", "sidekiq.go",
}  # fmt: skip
"""gitleaks rule files whose secret types this library claims to cover (fully or partly)."""


def held_out(text: str) -> bool:
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest(), 16) % 5 == 0


def _split_name(text: str) -> str:
    return "held_out" if held_out(text) else "tune"


def _rate(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


# --------------------------------------------------------------------------- gitleaks


def gitleaks_quality(path: Path, detector: SecretsDetector) -> dict[str, Any]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    labels: dict[str, set[int]] = defaultdict(set)
    for row in rows:
        labels[row["text"]].add(int(row["label"]))
    conflicting = {text for text, seen in labels.items() if len(seen) > 1}
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    per_rule: dict[str, Counter[str]] = defaultdict(Counter)
    fp_kinds: Counter[str] = Counter()
    for row in rows:
        text, label, rule = row["text"], int(row["label"]), row["file"]
        if text in conflicting:
            continue
        flagged = bool(detector.detect(text))
        credential = any(f.category == "credential" for f in detector.detect(text))
        for scope in ("all", "in_scope") if rule in GITLEAKS_IN_SCOPE else ("all",):
            bucket = counts[f"{scope}:{_split_name(text)}"]
            bucket[f"label{label}"] += 1
            bucket[f"label{label}_flagged"] += flagged
            bucket[f"label{label}_credential"] += credential
        per_rule[rule][f"label{label}"] += 1
        per_rule[rule][f"label{label}_flagged"] += flagged
        if label == 0 and flagged:
            fp_kinds.update(f.kind for f in detector.detect(text))
    summary = {}
    for key, bucket in sorted(counts.items()):
        summary[key] = {
            "positives": bucket["label1"],
            "tp_rate": _rate(bucket["label1_flagged"], bucket["label1"]),
            "negatives": bucket["label0"],
            "fp_rate": _rate(bucket["label0_flagged"], bucket["label0"]),
            "fp_rate_credentials_only": _rate(bucket["label0_credential"], bucket["label0"]),
        }
    return {
        "rows": len(rows),
        "conflicting_labels_excluded": len(conflicting),
        "summary": summary,
        "per_rule": {
            rule: {
                "positives": c["label1"],
                "found": c["label1_flagged"],
                "negatives": c["label0"],
                "flagged": c["label0_flagged"],
            }
            for rule, c in sorted(per_rule.items())
        },
        "false_positive_kinds": dict(fp_kinds.most_common()),
    }


# --------------------------------------------------------------------- detect-secrets

_TOKEN = re.compile(r"[^\s\"'`=:,;()\[\]{}<>]+")


def _identify(text: str, hashed: str) -> tuple[int, int] | None:
    """The span of the string whose sha1 is `hashed` (how detect-secrets' baseline stores it)."""
    for match in _TOKEN.finditer(text):
        token = match.group()
        if hashlib.sha1(token.encode()).hexdigest() == hashed:
            if token.startswith("!!"):  # detect-secrets hashed the YAML tag; take the value
                line_end = text.find("\n", match.end())
                return match.start(), len(text) if line_end < 0 else line_end
            return match.span()
    return None


def detect_secrets_quality(folder: Path, detector: SecretsDetector) -> dict[str, Any]:
    baseline = json.loads((folder / "baseline.file").read_text(encoding="utf-8"))
    planted: dict[tuple[str, int, int], set[str]] = defaultdict(set)
    unidentified: list[str] = []
    for name, entries in baseline["results"].items():
        path = folder / name
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for entry in entries:
            span = _identify(text, entry["hashed_secret"])
            if span is None and entry["type"] == "Private Key":
                begin = text.find("-----BEGIN")
                span = (begin, begin + 10) if begin >= 0 else None
            if span is None:
                unidentified.append(f"{name}:{entry['line_number']} ({entry['type']})")
                continue
            planted[(name, *span)].add(entry["type"])
    found, missed = [], []
    extra: list[str] = []
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "baseline.file")
    for path in files:
        name = path.relative_to(folder).as_posix()
        text = path.read_text(encoding="utf-8", errors="replace")
        findings = detector.detect(text)
        matched: set[int] = set()
        for (file, start, end), types in sorted(planted.items()):
            if file != name:
                continue
            hits = [i for i, f in enumerate(findings) if f.start < end and start < f.end]
            line = text.count("\n", 0, start) + 1
            label = f"{file}:{line} ({', '.join(sorted(types))})"
            if hits:
                matched.update(hits)
                found.append(f"{label} -> {findings[hits[0]].kind}")
            else:
                missed.append(label)
        for index, finding in enumerate(findings):
            if index not in matched:
                line = text.count("\n", 0, finding.start) + 1
                extra.append(f"{name}:{line} {finding.kind}")
    return {
        "files": len(files),
        "planted_identified": len(planted),
        "found": found,
        "missed": missed,
        "recall": _rate(len(found), len(found) + len(missed)),
        "unidentified_in_this_copy": unidentified,
        "other_findings": extra,
        "note": (
            "planted = entries of the fixtures' own baseline.file (detect-secrets' output, "
            "including its entropy-only hits) located by sha1; not split, not tuned on"
        ),
    }


# --------------------------------------------------------------------------- presidio


def _overlaps(finding: Finding, start: int, end: int) -> bool:
    return finding.start is not None and finding.start < end and start < (finding.end or 0)


def presidio_quality(path: Path, detector: SecretsDetector) -> dict[str, Any]:
    rows = json.loads(path.read_text(encoding="utf-8"))
    recall: dict[str, Counter[str]] = defaultdict(Counter)
    false_positive: dict[str, Counter[str]] = defaultdict(Counter)
    findings_total: dict[str, Counter[str]] = defaultdict(Counter)
    sentences: Counter[str] = Counter()
    for row in rows:
        text = row["full_text"]
        split = _split_name(text)
        sentences[split] += 1
        findings = detector.detect(text)
        spans = row["spans"]
        for span in spans:
            kind = PRESIDIO_KINDS.get(span["entity_type"])
            if kind is None:
                continue
            start, end = span["start_position"], span["end_position"]
            bucket = recall[f"{span['entity_type']}:{split}"]
            bucket["total"] += 1
            same = [f for f in findings if f.kind == kind and _overlaps(f, start, end)]
            bucket["found"] += bool(same)
            bucket["exact"] += any(f.start == start and f.end == end for f in same)
        for finding in findings:
            findings_total[split][finding.kind] += 1
            supported = [
                s
                for s in spans
                if PRESIDIO_KINDS.get(s["entity_type"]) == finding.kind
                and _overlaps(finding, s["start_position"], s["end_position"])
            ]
            if supported:
                continue
            other = [
                s["entity_type"]
                for s in spans
                if _overlaps(finding, s["start_position"], s["end_position"])
            ]
            false_positive[split][f"{finding.kind} on {other[0] if other else 'unlabelled'}"] += 1
    per_type = {}
    for key, c in sorted(recall.items()):
        per_type[key] = {
            "spans": c["total"],
            "recall": _rate(c["found"], c["total"]),
            "exact_span": _rate(c["exact"], c["total"]),
        }
    precision = {}
    for split, kinds in findings_total.items():
        for kind, total in kinds.items():
            wrong = sum(n for k, n in false_positive[split].items() if k.startswith(f"{kind} "))
            precision[f"{kind}:{split}"] = {
                "findings": total,
                "precision": _rate(total - wrong, total),
            }
    unsupported = sorted(
        {s["entity_type"] for row in rows for s in row["spans"]} - set(PRESIDIO_KINDS)
    )
    return {
        "sentences": dict(sentences),
        "recall": per_type,
        "precision": dict(sorted(precision.items())),
        "false_positives": {split: dict(c.most_common()) for split, c in false_positive.items()},
        "unsupported_types": unsupported,
    }


# ------------------------------------------------------------------------------ api


def run_secrets_quality(datasets_dir: Path) -> dict[str, Any]:
    """Measure every source present under `datasets_dir` (missing ones are skipped)."""
    detector = SecretsDetector.default()
    result: dict[str, Any] = {"split": SPLIT_RULE}
    gitleaks = datasets_dir / "secrets" / "gitleaks-literals.jsonl"
    if gitleaks.is_file():
        result["gitleaks"] = gitleaks_quality(gitleaks, detector)
    fixtures = datasets_dir / "secrets" / "detect-secrets-fixtures"
    if (fixtures / "baseline.file").is_file():
        result["detect_secrets"] = detect_secrets_quality(fixtures, detector)
    presidio = datasets_dir / "pii" / "presidio-synth.json"
    if presidio.is_file():
        result["presidio"] = presidio_quality(presidio, detector)
    return result


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 100:.1f}%"


def format_markdown(result: dict[str, Any]) -> str:
    lines = ["# Secrets quality", "", f"Split: {result['split']}.", ""]
    gitleaks = result.get("gitleaks")
    if gitleaks:
        lines += [
            "## gitleaks rule literals",
            "",
            f"{gitleaks['rows']} rows; {gitleaks['conflicting_labels_excluded']} texts with "
            "both labels excluded. Positives include rule fragments (e.g. `user`, "
            "`Content-Type: application/json`), so TP rates are lower bounds.",
            "",
            "| subset:split | positives | TP rate | negatives | FP rate | FP rate (credentials) |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for key, row in gitleaks["summary"].items():
            lines.append(
                f"| {key} | {row['positives']} | {_pct(row['tp_rate'])} | {row['negatives']} "
                f"| {_pct(row['fp_rate'])} | {_pct(row['fp_rate_credentials_only'])} |"
            )
        lines += ["", "| rule | found / positives | flagged / negatives |", "|---|---:|---:|"]
        for rule, row in gitleaks["per_rule"].items():
            lines.append(
                f"| {rule} | {row['found']} / {row['positives']} "
                f"| {row['flagged']} / {row['negatives']} |"
            )
        kinds = ", ".join(f"{k}: {n}" for k, n in gitleaks["false_positive_kinds"].items())
        lines += ["", f"False-positive kinds: {kinds or 'none'}.", ""]
    fixtures = result.get("detect_secrets")
    if fixtures:
        lines += [
            "## detect-secrets fixtures",
            "",
            f"{fixtures['note']}.",
            "",
            f"Planted secrets found: {len(fixtures['found'])} / "
            f"{len(fixtures['found']) + len(fixtures['missed'])} ({_pct(fixtures['recall'])}).",
            "",
        ]
        lines += [f"- found: {item}" for item in fixtures["found"]]
        lines += [f"- missed: {item}" for item in fixtures["missed"]]
        lines += [f"- not in this copy: {item}" for item in fixtures["unidentified_in_this_copy"]]
        lines += [f"- other finding: {item}" for item in fixtures["other_findings"]]
        lines.append("")
    presidio = result.get("presidio")
    if presidio:
        sentences = ", ".join(f"{k}: {v}" for k, v in presidio["sentences"].items())
        lines += [
            "## presidio-research synthetic PII",
            "",
            f"Sentences: {sentences}. Unsupported types (not detected by design): "
            f"{', '.join(presidio['unsupported_types'])}.",
            "",
            "| type:split | spans | recall (overlap) | exact span |",
            "|---|---:|---:|---:|",
        ]
        for key, row in presidio["recall"].items():
            lines.append(
                f"| {key} | {row['spans']} | {_pct(row['recall'])} | {_pct(row['exact_span'])} |"
            )
        lines += ["", "| kind:split | findings | precision |", "|---|---:|---:|"]
        for key, row in presidio["precision"].items():
            lines.append(f"| {key} | {row['findings']} | {_pct(row['precision'])} |")
        for split, errors in presidio["false_positives"].items():
            listed = ", ".join(f"{k}: {n}" for k, n in errors.items())
            lines.append(f"\nFalse positives ({split}): {listed or 'none'}.")
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else Path("/work/shared/datasets")
    print(format_markdown(run_secrets_quality(folder)))


if __name__ == "__main__":
    main()
