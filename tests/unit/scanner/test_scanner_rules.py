"""Rule files: schema validation, bundled rules, user rule files."""

from pathlib import Path

import pytest

from mithril.domain import Origin, Severity
from mithril.services.scanner import FAMILIES, RuleError, Scanner
from mithril.services.scanner.rules import expand_macros

GOOD = """
rules:
  - id: custom.banana
    family: jailbreak
    severity: high
    confidence: 0.9
    message: Banana mode.
    patterns: ['\\bbanana mode\\b']
"""


def write(tmp_path: Path, text: str, name: str = "custom.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_bundled_rules_cover_every_family(scanner: Scanner) -> None:
    assert {rule.family for rule in scanner.rules} == set(FAMILIES)
    assert scanner.families == FAMILIES
    ids = [rule.id for rule in scanner.rules]
    assert len(ids) == len(set(ids))
    for rule in scanner.rules:
        assert isinstance(rule.severity, Severity)
        assert 0 < rule.confidence <= 1
        assert rule.message


def test_user_rule_file_is_loaded_and_used(tmp_path: Path) -> None:
    scanner = Scanner.from_rule_files([write(tmp_path, GOOD)])
    assert "custom.banana" in {rule.id for rule in scanner.rules}
    result = scanner.scan("please enter BANANA MODE now")
    assert result.findings[0].rule_id == "custom.banana"
    assert result.findings[0].start == 13


def test_duplicate_id_is_a_clear_error(tmp_path: Path) -> None:
    duplicate = GOOD.replace("custom.banana", "jailbreak.dan")
    with pytest.raises(RuleError, match=r"duplicate rule id 'jailbreak.dan'"):
        Scanner.from_rule_files([write(tmp_path, duplicate)])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (("family: jailbreak", "family: nonsense"), "family"),
        (("severity: high", "severity: extreme"), "severity"),
        (("confidence: 0.9", "confidence: 1.5"), "confidence"),
        (("patterns: ['\\bbanana mode\\b']", "patterns: ['(unclosed']"), "invalid RE2"),
        (("patterns: ['\\bbanana mode\\b']", "patterns: ['(?=lookahead)']"), "invalid RE2"),
        (("patterns: ['\\bbanana mode\\b']", "patterns: ['{{nomacro}}']"), "invalid RE2"),
        (("message: Banana mode.", "message: ''"), "message"),
        (("    message: Banana mode.", "    message: x\n    colour: red"), "unknown keys"),
        (("    message: Banana mode.", "    message: x\n    detector: nope"), "detector"),
        (("    message: Banana mode.", "    message: x\n    origins: aliens"), "origins"),
        (("    message: Banana mode.", "    message: x\n    views: [nowhere]"), "views"),
    ],
)
def test_invalid_rules_are_rejected_with_file_and_id(
    tmp_path: Path, change: tuple[str, str], message: str
) -> None:
    text = GOOD.replace(*change)
    assert text != GOOD
    path = write(tmp_path, text)
    with pytest.raises(RuleError, match=message) as error:
        Scanner.from_rule_files([path])
    assert str(path) in str(error.value)


def test_missing_key_and_bad_document(tmp_path: Path) -> None:
    with pytest.raises(RuleError, match="missing required key 'message'"):
        Scanner.from_rule_files([write(tmp_path, GOOD.replace("    message: Banana mode.\n", ""))])
    with pytest.raises(RuleError, match="single key 'rules'"):
        Scanner.from_rule_files([write(tmp_path, "other: []\n", "b.yaml")])
    with pytest.raises(RuleError, match="cannot read"):
        Scanner.from_rule_files([tmp_path / "missing.yaml"])


def test_untrusted_origin_scope(tmp_path: Path) -> None:
    text = GOOD.replace("    message: Banana mode.", "    message: x\n    origins: untrusted")
    scanner = Scanner.from_rule_files([write(tmp_path, text)])
    assert scanner.scan("banana mode", Origin.USER).score < 0.5
    assert scanner.scan("banana mode", Origin.TOOL).findings[0].rule_id == "custom.banana"


def test_macros_expand() -> None:
    assert "previous" in expand_macros("{{prior}}")
    with pytest.raises(RuleError):
        expand_macros("{{unknown}}")
