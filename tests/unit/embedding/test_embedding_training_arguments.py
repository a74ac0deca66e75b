"""The command line every training script shares (training/arguments.py)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pytest

from mithril.services.embedding.config import DATA_DIR, EmbeddingSettings
from mithril.services.embedding.training.arguments import parse_training_args, training_parser


def _parse(monkeypatch: pytest.MonkeyPatch, *argv: str, **options: bool) -> argparse.Namespace:
    monkeypatch.setattr(sys, "argv", ["train", *argv])
    return parse_training_args(training_parser("Fit a part.\n\nMore.", **options))


def test_the_defaults_are_the_shipped_folder_and_the_datasets_the_benchmarks_find(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The datasets folder is looked for only when none is given, as the benchmarks look
    for it (beside the checkout, else beside the working directory)."""
    from mithril.benchmark import cli

    monkeypatch.setattr(cli, "default_datasets_dir", lambda: tmp_path / "found")
    args = _parse(monkeypatch, cache=True)
    assert args.datasets == tmp_path / "found"
    assert args.out == DATA_DIR
    assert args.cache == EmbeddingSettings().cache_dir / "training"


def test_given_folders_are_kept_and_options_a_script_does_not_take_are_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = _parse(monkeypatch, "--datasets", str(tmp_path), "--out", str(tmp_path / "o"))
    assert (args.datasets, args.out) == (tmp_path, tmp_path / "o")
    with pytest.raises(SystemExit):
        _parse(monkeypatch, "--cache", str(tmp_path))  # a script that keeps no embeddings
    with pytest.raises(SystemExit):
        _parse(monkeypatch, "--out", str(tmp_path), out=False)
    assert "unrecognized arguments" in capsys.readouterr().err
    assert training_parser("Fit a part.\n\nMore.").description == "Fit a part."


def test_a_seed_is_refused_where_the_factors_are_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`multilingual.py --calibrate-only` keeps the fitted factors and the seed in their meta:
    a `--seed` beside it would be silently ignored, so it is refused before any work."""
    from mithril.services.embedding.training import multilingual

    argv = ["multilingual", "--calibrate-only", "--seed", "3", "--out", str(tmp_path)]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as refused:
        multilingual.main()
    assert refused.value.code == 2
    assert "--calibrate-only keeps the fitted factors" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
