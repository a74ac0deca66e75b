import pytest

from mithril.services.scanner import Scanner


@pytest.fixture(scope="session")
def scanner() -> Scanner:
    return Scanner.from_rule_files()
