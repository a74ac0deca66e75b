"""What `mithril bench detection` and `mithril bench latency` run."""

from __future__ import annotations

import asyncio
import json
import platform
import time
from pathlib import Path
from typing import Any

from rich.console import Console

from mithril.domain import Finding, Origin


def default_datasets_dir() -> Path:
    """../shared/datasets next to the checkout, else next to the working directory."""
    for base in (Path(__file__).resolve().parent.parent, Path.cwd()):
        candidate = base.parent / "shared" / "datasets"
        if candidate.is_dir():
            return candidate
    raise SystemExit("datasets not found: pass --datasets DIR")


def _machine() -> dict[str, Any]:
    import os

    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "machine": platform.machine(),
    }


def detection(datasets: Path | None, results: Path, console: Console) -> None:
    from mithril.benchmark import detection as prompt_detection
    from mithril.benchmark import secrets_quality
    from mithril.cli.pipeline import LocalPipeline
    from mithril.gateway.decision import Action, Mode

    datasets = datasets or default_datasets_dir()
    pipeline = LocalPipeline()
    loop = asyncio.new_event_loop()

    def decide(text: str, origin: Origin) -> tuple[bool, float, list[Finding]]:
        # Counted as caught when block mode refuses it: credentials and personal data alone
        # are redacted and passed on under the default policy (`input_secrets: redact`).
        scan = pipeline.firewall.scan(text, origin, mode=Mode.BLOCK)
        decision = loop.run_until_complete(scan)
        return decision.action is Action.BLOCK, decision.score, list(decision.findings)

    tiers = prompt_detection.cascade_tiers(pipeline.firewall, loop.run_until_complete)
    started = time.perf_counter()
    report = prompt_detection.run_detection(
        datasets, decide, tiers, documentation=True, follow_ups=True
    )
    secrets = secrets_quality.run_secrets_quality(datasets)
    elapsed = time.perf_counter() - started
    loop.close()
    results.mkdir(parents=True, exist_ok=True)
    prompt_detection.write_report(report, results)
    secrets_md = secrets_quality.format_markdown(secrets)
    (results / "secrets.md").write_text(secrets_md)
    (results / "secrets.json").write_text(json.dumps(secrets, indent=2, default=str))
    console.print(prompt_detection.format_markdown(report), markup=False)
    console.print(secrets_md, markup=False)
    console.print(f"({elapsed:.1f}s; written to {results}/detection.md and secrets.md)")


def latency(results: Path, repeat: int, console: Console) -> None:
    from mithril.benchmark import latency as bench

    sizes = bench.fast_tier(repeat=repeat)
    trips = bench.round_trip()
    markdown = bench.format_markdown(sizes, trips)
    results.mkdir(parents=True, exist_ok=True)
    (results / "latency.md").write_text(markdown)
    payload = bench.to_json(sizes, trips) | {"machine": _machine()}
    (results / "latency.json").write_text(json.dumps(payload, indent=2))
    console.print(markdown, markup=False)
    console.print(f"(written to {results}/latency.md)")


def gateway(results: Path, requests: int, runs: int, console: Console) -> None:
    from mithril.benchmark import gateway as bench

    report = bench.run(requests=requests, runs=runs)
    markdown = bench.format_markdown(report)
    results.mkdir(parents=True, exist_ok=True)
    (results / "gateway.md").write_text(markdown)
    payload = {
        "rows": report.rows,
        "ttft_ms": report.ttft_ms,
        "machine": _machine(),
    }
    (results / "gateway.json").write_text(json.dumps(payload, indent=2))
    console.print(markdown, markup=False)
    console.print(f"(written to {results}/gateway.md)")


def embedding(datasets: Path | None, results: Path, threads: int, console: Console) -> None:
    from mithril.benchmark import embedding as bench

    report = bench.run(datasets or default_datasets_dir(), threads=threads)
    markdown = bench.format_markdown(report)
    results.mkdir(parents=True, exist_ok=True)
    (results / "embedding.md").write_text(markdown)
    (results / "embedding.json").write_text(json.dumps(report.to_dict(), indent=2))
    console.print(markdown, markup=False)
    console.print(f"(written to {results}/embedding.md)")
