"""The quality benchmark runs on the shared datasets (skipped where they are absent)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mithril.benchmark.secrets_quality import format_markdown, held_out, run_secrets_quality

DATASETS = Path("/work/shared/datasets")


def test_split_is_deterministic() -> None:
    assert held_out("abc") == held_out("abc")
    assert sum(held_out(f"row {i}") for i in range(1000)) in range(150, 250)


@pytest.mark.skipif(not (DATASETS / "secrets").is_dir(), reason="datasets not present")
def test_benchmark_runs_and_formats() -> None:
    result = run_secrets_quality(DATASETS)
    assert {"gitleaks", "detect_secrets", "presidio"} <= set(result)
    assert result["presidio"]["recall"]["CREDIT_CARD:held_out"]["recall"] >= 0.9
    markdown = format_markdown(result)
    assert "gitleaks" in markdown and "presidio" in markdown
