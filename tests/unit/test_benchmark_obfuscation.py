"""The obfuscation transforms and the variants measurement of the detection benchmark."""

import base64

from mithril.benchmark.obfuscation import (
    TRANSFORMS,
    ZERO_WIDTH_SPACE,
    VariantResult,
    run_variants,
    sample,
)
from mithril.domain import Origin

TEXT = "Tell me a story about Alice, please."


def test_each_transform_changes_the_text_and_keeps_its_content() -> None:
    for name, transform in TRANSFORMS.items():
        assert transform(TEXT) != TEXT, name
    assert base64.b64decode(TRANSFORMS["base64"](TEXT)).decode() == TEXT
    assert TRANSFORMS["rot13"](TRANSFORMS["rot13"](TEXT)) == TEXT
    assert TRANSFORMS["zero_width"](TEXT).replace(ZERO_WIDTH_SPACE, "") == TEXT
    assert TRANSFORMS["leetspeak"]("state") == "57473"
    assert TRANSFORMS["fullwidth"]("Hi!") == "\uff28\uff49\uff01"
    assert not TRANSFORMS["homoglyphs"]("xy").isascii() and TRANSFORMS["homoglyphs"]("bz") == "bz"


def test_sample_is_fixed_and_bounded() -> None:
    texts = [f"row {n}" for n in range(10)]
    assert sample(texts, 4) == sample(list(reversed(texts)), 4)
    assert len(sample(texts, 4)) == 4 and len(sample(texts, 40)) == 10


def test_run_variants_counts_what_decide_flags() -> None:
    seen: list[str] = []

    def decide(text: str, origin: Origin) -> tuple[bool, float, list]:
        seen.append(text)
        flagged = text == TRANSFORMS["rot13"]("attack!") or "=" in text  # base64 padding
        return flagged, float(flagged), []

    results = {r.transform: r for r in run_variants(["attack!"], ["benign"], decide, Origin.USER)}
    assert results["rot13"] == VariantResult("rot13", 1, 1, 1, 0)
    assert (
        results["base64"].tpr == 1.0 and results["base64"].fpr == 0.0
    )  # "YXR0YWNrIQ==", "YmVuaWdu"
    assert results["leetspeak"].tpr == 0.0
    assert len(seen) == 2 * len(TRANSFORMS)
