"""Every custom span attribute Mithril sets, in one place.

Spans carry identifiers, scores, actions, lengths and hashes; never prompt text, never a
secret. Adding an attribute means adding it here.
"""

SERVICE = "mithril.service"
ACTION = "mithril.action"
SCORE = "mithril.score"
FLAGGED = "mithril.flagged"
MODE = "mithril.mode"
THRESHOLD = "mithril.threshold"
RULE_IDS = "mithril.rule_ids"
FINDING_COUNT = "mithril.finding_count"
TEXT_LENGTH = "mithril.text.length"
TEXT_SHA256 = "mithril.text.sha256_prefix"
ORIGIN = "mithril.origin"
DIRECTION = "mithril.direction"
DECISION_ID = "mithril.decision_id"
REQUEST_ID = "mithril.request_id"
UNAVAILABLE_SERVICES = "mithril.unavailable_services"
VIEWS = "mithril.views"
BATCH_SIZE = "mithril.batch_size"
REDACTED_KINDS = "mithril.redacted_kinds"
JUDGE_VERDICT = "mithril.judge.verdict"
JUDGE_CACHED = "mithril.judge.cached"
JUDGE_MODEL = "mithril.judge.model"
JUDGE_ATTEMPTS = "mithril.judge.attempts"
MEMORY_STATUS = "mithril.memory.status"
MEMORY_SOURCE_REPUTATION = "mithril.memory.reputation"

ALL = frozenset(value for name, value in dict(globals()).items() if name.isupper())
