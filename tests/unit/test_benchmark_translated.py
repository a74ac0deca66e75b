"""The translated prompts: complete, consistent with their English rows, chosen as documented."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from mithril.benchmark.translated import (
    FIT_PER_PART,
    LANGUAGES,
    PER_PART,
    load,
    run_in_documents,
    run_translated,
    select,
)
from mithril.domain import Finding, Origin
from tests.conftest import DATASETS


def test_every_row_is_there_in_every_language_with_its_english_label() -> None:
    rows = load()
    by_row = defaultdict(dict)
    for row in rows:
        by_row[row.row][row.language] = row
    assert len(by_row) == 380 and len(rows) == 380 * len(LANGUAGES)
    for versions in by_row.values():
        assert set(versions) == set(LANGUAGES)
        english = versions["en"]
        for row in versions.values():
            assert (row.part, row.source, row.label) == (
                english.part,
                english.source,
                english.label,
            )
            assert row.text.strip()
    parts = defaultdict(lambda: [0, 0])
    for row in (r for r in rows if r.language == "en"):
        parts[row.part][row.label] += 1
    assert dict(parts) == {"dev": [30, 30], "held_out": [60, 60], "fit": [100, 100]}


def test_translations_are_translated() -> None:
    """Left as written: rows that are nothing but the token an attacker wants repeated
    (d041), code (f028) or escaped characters (f107), and rows that are Spanish already
    (d035 in Spanish; f129, the token and its Spanish, in every language)."""
    rows = load()
    english = {r.row: r.text for r in rows if r.language == "en"}
    unchanged = {
        (r.row, r.language) for r in rows if r.language != "en" and r.text == english[r.row]
    }
    assert unchanged == (
        {("d041", lang) for lang in LANGUAGES[1:] if lang != "ru"}
        | {("d035", "es")}
        | {(row, lang) for row in ("f028", "f107", "f129") for lang in LANGUAGES[1:]}
    )
    assert set(english["d041"].replace("I have been PWNED", "").split()) <= {"a:", "b:", "c:", "d:"}


@pytest.mark.skipif(not (DATASETS / "injection").is_dir(), reason="datasets not present")
def test_the_english_rows_are_the_documented_selection() -> None:
    """dev rows are VALIDATION rows (never fitted on), held_out rows the held-out split, fit
    rows FIT rows; no text is in two parts."""
    english = [(r.part, r.source, r.label, r.text) for r in load() if r.language == "en"]
    assert english == select(DATASETS, PER_PART | FIT_PER_PART)
    assert len({text for *_, text in english}) == len(english)


def test_run_translated_scores_each_language_on_one_part() -> None:
    seen: list[tuple[str, Origin]] = []

    def decide(text: str, origin: Origin) -> tuple[bool, float, list[Finding]]:
        seen.append((text, origin))
        return "PWNED" in text, 0.0, []

    results = run_translated(decide, "held_out")
    assert [r.transform for r in results] == list(LANGUAGES)
    assert all((r.attacks, r.benign) == (60, 60) for r in results)
    assert len(seen) == 120 * len(LANGUAGES) and {o for _, o in seen} == {Origin.USER}
    held_out = [r for r in load() if r.part == "held_out"]
    for result in results:
        texts = [r for r in held_out if r.language == result.transform]
        assert result.caught == sum("PWNED" in r.text for r in texts if r.label)
        assert result.flagged == sum("PWNED" in r.text for r in texts if not r.label)


def test_the_report_has_a_row_per_language() -> None:
    from mithril.benchmark.detection import DetectionReport, format_markdown
    from mithril.benchmark.obfuscation import VariantResult

    report = DetectionReport([], None, 1.0)
    assert "Translated prompts" not in format_markdown(report)
    report.translated = [VariantResult("en", 60, 53, 60, 0), VariantResult("zh", 60, 56, 60, 6)]
    markdown = format_markdown(report)
    section = markdown[markdown.index("## Translated prompts (held-out)") :]
    assert "The same 60 attacks and 60 benign prompts in each language" in section
    assert "| language | TPR | FPR |" in section
    assert "| en | 88.3% | 0.0% |" in section and "| zh | 93.3% | 10.0% |" in section


def test_run_in_documents_plants_every_language_of_a_row_in_the_same_place() -> None:
    documents = [f"Document {n}.\nLine two of document {n}.\nLast line {n}." for n in range(7)]
    seen: dict[str, str] = {}
    origins: set[Origin] = set()

    def decide(text: str, origin: Origin) -> tuple[bool, float, list[Finding]]:
        origins.add(origin)
        return "PWNED" in text, 0.0, []

    rows = [r for r in load() if r.part == "held_out"]

    def recording(text: str, origin: Origin) -> tuple[bool, float, list[Finding]]:
        for row in rows:
            if row.text in text:
                seen[row.id] = text.replace(row.text, "<prompt>")
        return decide(text, origin)

    results = run_in_documents(recording, documents)
    assert [r.transform for r in results] == list(LANGUAGES)
    assert all((r.attacks, r.benign) == (60, 0) for r in results)
    assert origins == {Origin.RETRIEVAL}
    assert not any(r.id in seen for r in rows if not r.label)
    by_row: dict[str, set[str]] = defaultdict(set)
    for row in (r for r in rows if r.label):
        planted = seen[row.id]
        assert planted.replace("\n<prompt>", "").replace("<prompt>\n", "") in documents
        by_row[row.row].add(planted)
    assert all(len(places) == 1 for places in by_row.values())
    assert len({planted for places in by_row.values() for planted in places}) > 1
    assert run_in_documents(decide, []) == []


def test_the_report_has_a_section_for_prompts_in_documents() -> None:
    from mithril.benchmark.detection import DetectionReport, format_markdown
    from mithril.benchmark.obfuscation import VariantResult

    report = DetectionReport([], None, 1.0)
    assert "in English documents" not in format_markdown(report)
    report.translated_in_documents = [VariantResult("de", 60, 51, 0, 0)]
    markdown = format_markdown(report)
    section = markdown[markdown.index("## Translated attacks in English documents (held-out)") :]
    assert "| de | 85.0% | - |" in section
    (entry,) = report.to_dict()["translated_in_documents_held_out"]
    assert (entry["transform"], entry["caught"], entry["benign"]) == ("de", 51, 0)


def test_the_attacks_are_also_planted_in_held_out_documentation(tmp_path: Path) -> None:
    from mithril.benchmark.detection import (
        DOCUMENTATION,
        HELD_OUT,
        format_markdown,
        load_sources,
        run_detection,
    )

    attacks = [r for r in load() if r.part == "held_out" and r.label]
    planted: list[str] = []

    def decide(text: str, origin: Origin) -> tuple[bool, float, list[Finding]]:
        if origin == Origin.RETRIEVAL and any(r.text in text for r in attacks):
            planted.append(text)
            return True, 1.0, []
        return False, 0.0, []

    report = run_detection(tmp_path, decide, documentation=True)
    assert [r.transform for r in report.translated_in_documentation] == list(LANGUAGES)
    assert all(r.attacks == r.caught == 60 for r in report.translated_in_documentation)
    sources = load_sources(tmp_path, documentation=True)
    held = (r.text for s in DOCUMENTATION for r in sources.get(s, []) if r.split == HELD_OUT)
    pages = {" ".join(text.split()) for text in held}
    assert len(planted) == 60 * len(LANGUAGES)
    for text in planted:  # each is a held-out page with one attack added on a line of its own
        attack = next(r.text for r in attacks if r.text in text)
        assert " ".join(text.replace(attack, "", 1).split()) in pages
    assert "## Translated attacks in documentation (held-out)" in format_markdown(report)
