"""Attack-technique scanner: text views, YAML rules, RE2 set matching, detectors.

Public API: `Scanner`, `ScanResult`, `Rule`, `RuleError`, `FAMILIES`.
"""

from .rules import FAMILIES, Rule, RuleError
from .scanner import Scanner, ScanResult

__all__ = ["FAMILIES", "Rule", "RuleError", "ScanResult", "Scanner"]
