"""Why the judge gave no answer. The servicer maps these onto google.rpc statuses.

- `JudgeUnavailable` -> UNAVAILABLE: no LLM is configured, or it could not be reached
  (timeouts, connection errors, 429, 5xx) within the retries and the deadline. Transient
  or operator-fixable; callers skip the judge.
- `JudgeFailed` -> FAILED_PRECONDITION: the LLM answered but not usefully: it refused the
  request (4xx other than 429: bad key, unknown model) or its reply was not the JSON asked
  for after the retries. Retrying the same call will not help until the configuration
  (key, model) changes; callers skip the judge.
"""

from __future__ import annotations

NOT_CONFIGURED = "JUDGE_NOT_CONFIGURED"
UNREACHABLE = "JUDGE_LLM_UNREACHABLE"
REJECTED = "JUDGE_LLM_REJECTED"
BAD_REPLY = "JUDGE_LLM_BAD_REPLY"


class JudgeError(Exception):
    """The judge could not answer. `reason` is a stable machine-readable code."""

    reason: str = ""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


class JudgeUnavailable(JudgeError):
    """No LLM configured, or it could not be reached within the retries and deadline."""


class JudgeFailed(JudgeError):
    """The LLM refused the request, or did not reply with the JSON asked for."""


class UnparseableReply(ValueError):
    """A reply that holds no usable JSON answer. The message never quotes the reply."""
