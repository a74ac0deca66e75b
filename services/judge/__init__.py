"""Second-opinion judge over an OpenAI-compatible LLM; contradiction and danger scores.

Public API: `Judge`, `JudgeResult`, `ScoreResult`, `Verdict`, `JudgeError`,
`JudgeUnavailable`, `JudgeFailed`, `JudgeSettings`.
"""

from .config import JudgeSettings
from .errors import JudgeError, JudgeFailed, JudgeUnavailable
from .judge import Judge, JudgeResult, ScoreResult
from .verdict import Verdict

__all__ = [
    "Judge",
    "JudgeError",
    "JudgeFailed",
    "JudgeResult",
    "JudgeSettings",
    "JudgeUnavailable",
    "ScoreResult",
    "Verdict",
]
