"""The command line the training scripts share: where the datasets are, where the shipped
files go, where embeddings are kept between runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from mithril.services.embedding.config import DATA_DIR, EmbeddingSettings


def training_parser(
    doc: str | None, *, out: bool = True, cache: bool = False
) -> argparse.ArgumentParser:
    """`--datasets` (default: ../shared/datasets beside the checkout, as the benchmarks find
    it), `--out` (the shipped data folder) unless the script writes elsewhere, and `--cache`
    for a script that keeps embeddings; described by the first line of `doc`."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n")[0])
    parser.add_argument("--datasets", type=Path, help="default: ../shared/datasets")
    if out:
        parser.add_argument("--out", type=Path, default=DATA_DIR)
    if cache:
        training_cache = EmbeddingSettings().cache_dir / "training"
        parser.add_argument("--cache", type=Path, default=training_cache)
    return parser


def parse_training_args(parser: argparse.ArgumentParser) -> argparse.Namespace:
    """The command line, with the datasets folder found when it was not given."""
    from mithril.benchmark.cli import default_datasets_dir

    args = parser.parse_args()
    args.datasets = args.datasets or default_datasets_dir()
    return args
