"""presidio-research's sentences as a benign source: text with personal data in it."""

from __future__ import annotations

import json
from pathlib import Path

from mithril.benchmark.detection import (
    DEV,
    HELD_OUT,
    PRESIDIO,
    PRESIDIO_FILE,
    held_out,
    load_sources,
    run_detection,
)
from mithril.domain import Finding, Origin, Severity


def _sentences(root: Path, templates: int = 40) -> Path:
    items = []
    for template in range(templates):
        for name in ("Ana Silva", "Jon Berg"):
            items.append(
                {
                    "full_text": f"Template {template}: please ship it to {name}.",
                    "spans": [{"entity_type": "PERSON"}],
                    "template_id": template,
                }
            )
    path = root / PRESIDIO_FILE
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


def test_a_template_and_its_fillings_share_a_split(tmp_path: Path) -> None:
    _sentences(tmp_path)
    rows = load_sources(tmp_path)[PRESIDIO]
    assert len(rows) == 80 and {r.label for r in rows} == {0}
    assert {r.origin for r in rows} == {Origin.USER} and all(r.carries_facts for r in rows)
    assert {r.split for r in rows} == {DEV, HELD_OUT}
    for first, second in zip(rows[::2], rows[1::2], strict=True):
        assert first.group == second.group and first.split == second.split
        assert (first.split == HELD_OUT) == held_out(first.group)
    assert rows[0].category == "person"


def _finding(category: str) -> Finding:
    return Finding(f"{category}.test", "test", category, Severity.HIGH, 0.9, category)


def test_personal_data_found_is_not_an_attack_but_attack_evidence_is(tmp_path: Path) -> None:
    _sentences(tmp_path)

    def decide(text: str, origin: Origin) -> tuple[bool, float, list[Finding]]:
        # Every sentence's name is found; those naming Jon also read as an attack.
        findings = [_finding("pii")] + [_finding("jailbreak")] * ("Jon" in text)
        return True, 0.9, findings

    held = run_detection(tmp_path, decide).get(PRESIDIO, HELD_OUT)
    assert held is not None and held.benign > 0
    assert held.fp == held.benign // 2  # the Jon half, flagged for its attack finding only
