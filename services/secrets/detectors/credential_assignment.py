"""Credential assignments: password=, api_key:, "secret": "...", token = '...' and so on.

Covers env (`PASSWORD=x`), YAML (`password: x`), JSON (`"password": "x"`), code
(`password = "x"`, `api_key='x'`, `token := "x"`, `:password => "x"`) and URL query forms.
Only the value is redacted: `password=[REDACTED:credential_assignment]`.
"""

import re

from mithril.domain import Severity
from mithril.services.secrets.detectors._keyword import KeywordValueDetector
from mithril.services.secrets.detectors.base import ALT, L, O, Piece, R
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo
from mithril.services.secrets.validators import is_placeholder, shannon_entropy

_KEY_CHAR = r"[A-Za-z0-9_.\-]"
_KEYWORDS = (
    r"passwd|password|passphrase|pwd|secret|api[_.\-]?key|apikey|access[_.\-]?key"
    r"|auth[_.\-]?token|access[_.\-]?token|refresh[_.\-]?token|token|private[_.\-]?key"
    r"|credentials?|db[_.\-]?pass|database[_.\-]?pass"
)
_KEY = rf"(?i:{_KEY_CHAR}*(?:{_KEYWORDS}){_KEY_CHAR}*)"
_SEP = r"[\"']?[ \t]*(?::=|=>|=|:)[ \t]*(?:!![A-Za-z0-9/:.]*[ \t]+)?"  # YAML tag: !!binary
_UNQUOTED = r"[^\s\"'`,;<>]"
# An unquoted value never ends with sentence punctuation: "the key is k=AbC9xYz." keeps
# its full stop and still redacts the value.
_UNQUOTED_VALUE = _UNQUOTED + r"*[^\s\"'`,;<>.!?]"
# In a link, a value closed by the bracket that ends the link: `![x](https://e.example/p?
# password=hunter2xyz)`, `...?d=PASSWORD=hunter2xyz)`. Tried before the plain value, which
# would take the bracket in and be rejected as code. Outside a query (`?`, `&`) only inside
# a markdown link (`_in_link`): in code, `f(token=shard_id)` is a call's keyword argument.
_CLOSED = r"[.!?]*\)(?:[\s.,;:!?]|$)"
_IN_LINK = (
    rf"[?&]{_KEY}=([^&\s#\"'<>()]*[^&\s#\"'<>().!?]){_CLOSED}"
    rf"|{_KEY}{_SEP}([^\s\"'`,;<>()]*[^\s\"'`,;<>().!?]){_CLOSED}"
)
# URL query parameters end at "&"; this alternative starts earlier, so it wins there.
_QUERY = r"[?&]" + _KEY + r"=([^&\s#\"'<>]+)"
_QUOTED = r"\"([^\"\n]*)\"|'([^'\n]*)'|`([^`\n]*)`"
PATTERN = f"{_IN_LINK}|{_QUERY}|{_KEY}{_SEP}(?:{_QUOTED}|({_UNQUOTED_VALUE}))"
MAX_KEY = 64
MAX_VALUE = 256
MAX_LINK = 4096
"""How far before a key a markdown link's `](` is looked for."""

# Words in a key name that show it names something other than the secret itself.
_EXCLUDED_WORDS = frozenset(
    {
        "id", "ids", "name", "names", "file", "files", "path", "dir", "url", "uri", "endpoint",
        "length", "len", "size", "type", "format", "field", "label", "prompt", "hint",
        "placeholder", "regex", "pattern", "policy", "header", "param", "params", "version",
        "ttl", "timeout", "expiry", "expires", "expiration", "count", "limit", "max", "min",
        "num", "mode", "store", "manager", "provider", "strategy", "class", "hash", "hashed",
        "salt", "algorithm", "algo", "required", "enabled", "reset", "public", "csrf", "xsrf",
        "authenticity", "tokenizer", "tokens", "variable", "input", "secretary", "rotation",
        "validator", "generator", "strength", "confirm", "confirmation", "detector",
    }
)  # fmt: skip
_KEY_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def _excluded_key(key: str) -> bool:
    return any(word.lower() in _EXCLUDED_WORDS for word in _KEY_WORDS.findall(key))


_IDENTIFIER_PATH = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*(?:(?:\.|->|::)[A-Za-z_$][\w$]*)+")
_NUMBER = re.compile(r"[-+]?\d{1,7}(?:[.,]\d+)?")
# A version, or a pin to one: "tiktoken==0.2.0" matches as tiktoken = "=0.2.0".
_VERSION = re.compile(r"=?[vV]?\d{1,6}(?:\.\d{1,6}){1,3}(?:[.+-]?[A-Za-z0-9]{1,12})?")
_SNAKE_OR_CAMEL = re.compile(r"[a-z]+(?:[_A-Z][a-zA-Z]*)+|[A-Z]+(?:_[A-Z]+)+")
_SECRETISH = re.compile(r"(?i)pass|secret|token|key|cred|auth")
_SELF_NAMED = re.compile(r"[a-z]+(?:[-_][a-z]+)*")
_METAVARIABLE = re.compile(r"[A-Z]+(?:[_-][A-Z]+)*")
"""What a command-line option's value is called in its documentation: --passwd=FILE,
--token=NAME."""
_FIELD_LIST = re.compile(r"[a-z_]+(?::[a-z_]+){2,}")
"""A record's field names in order (pw_name:pw_passwd:pw_uid:...), as passwd(5) gives it."""
_SECRET_NOUN = re.compile(r"token|password|passwd|secret|apikey|credential")
"""Lower-case words, run together or joined by - or _, with a secret's own noun in them
("myregistrytoken", "my-auth-token-here"): a value that names what belongs there. Not
"key" or "pass" alone, which common passwords hold ("monkey", "compass")."""


def _split_key(context: str) -> tuple[str, str]:
    """(key, separator) from the matched context before the value."""
    index = len(context)
    tag = context.rfind("!!")
    if tag >= 0:
        context = context[:tag]
        index = len(context)
    while index > 0 and context[index - 1] in "\"'` \t:=>":
        index -= 1
    return context[:index].lstrip("?&"), context[index:]


_BADGE_URL = re.compile(
    r"(?i)^https?://(?:[\w-]+\.)*(?:codecov\.io|circleci\.com|coveralls\.io|travis-ci\.(?:com|org))"
    r"/[^?\s]*badge[\w.\-/]*\.(?:svg|png)$"
)
"""A README badge's image URL on a coverage or CI service, up to its query: its ?token= is
public by design (a Codecov graph token or a CircleCI status token only reads a project's
coverage or build status, and READMEs publish it)."""


def _in_badge_url(text: str, key_start: int) -> bool:
    """Whether the query parameter at `key_start` (just after its ? or &) belongs to a
    badge."""
    url_start = max(text.rfind(c, 0, key_start) for c in " \t\n\"'(<") + 1
    return _BADGE_URL.match(text[url_start : key_start - 1].split("?")[0]) is not None


_CLOSING = re.compile(_CLOSED)
"""What follows a value the `_IN_LINK` alternative matched."""


def _in_link(text: str, key_start: int) -> bool:
    """Whether `key_start` lies in a markdown link's target: `](` before it, not closed."""
    opener = text.rfind("](", max(0, key_start - MAX_LINK), key_start)
    return opener >= 0 and ")" not in text[opener + 2 : key_start]


def _validate(text: str, start: int, end: int, context: str, value: str) -> float | None:
    key, separator = _split_key(context)
    if len(key) > MAX_KEY or _excluded_key(key):
        return None
    key_start = start - len(context)
    if key_start > 0 and text[key_start - 1] in "_$@":
        return None
    if context.startswith(("?", "&")) and _in_badge_url(text, key_start + 1):
        return None
    closed = _CLOSING.match(text, end) is not None and ")" not in value
    if closed and not context.startswith(("?", "&")) and not _in_link(text, key_start):
        return None  # `f(token=shard_id)`: a call's argument, not a link's value
    quoted = separator.rstrip(" \t").endswith(('"', "'", "`"))
    stripped = value.strip()
    if len(stripped) < 4 or is_placeholder(stripped):
        return None
    if stripped.isdigit() and len(stripped) < 8:
        return None
    if _SELF_NAMED.fullmatch(stripped) and _SECRET_NOUN.search(stripped):
        return None  # documentation's stand-in: token: 'myregistrytoken'
    if not quoted:
        if stripped.startswith("!") or _NUMBER.fullmatch(stripped):
            return None  # a YAML tag or a plain number such as 1.35953
        if _VERSION.fullmatch(stripped):
            return None  # a version, or a pin: tokenizers==0.13.2
        if "(" in stripped or "[" in stripped or stripped.endswith((")", "]", ".")):
            return None
        if _IDENTIFIER_PATH.fullmatch(stripped) and not any(c.isdigit() for c in stripped):
            return None  # self.token, config.api_key, os.environ
        if _SNAKE_OR_CAMEL.fullmatch(stripped) and _SECRETISH.search(stripped):
            return None
        if key.startswith("-") and _METAVARIABLE.fullmatch(stripped):
            return None  # --passwd-master=FILE: the option's documentation
        if _FIELD_LIST.fullmatch(stripped):
            return None
        # Prose ("password: make sure ...") vs assignment: a bare word after ": " or " = "
        # must look like a secret (digits, symbols, mixed case or length).
        tight = "=" in separator and " " not in separator
        if stripped.isalpha() and len(stripped) < 12 and not tight:
            return None
    entropy = shannon_entropy(stripped)
    if len(stripped) >= 16 and entropy >= 3.5:
        return 0.9
    if stripped.isalpha():
        return 0.7
    return 0.8


DETECTOR = KeywordValueDetector(
    info=KindInfo(
        "credential_assignment",
        CREDENTIAL,
        Severity.HIGH,
        "A value assigned to a password/secret/token/api-key name",
    ),
    priority=50,
    pattern=PATTERN,
    partial_pieces=(
        Piece(_KEY, f"{_KEY_CHAR}*"),
        R("[\"' \t]", False),
        ALT((L(":="),), (L("=>"),), (L("="),), (L(":"),)),
        R("[ \t]", False),
        O(ALT((L("!!"), R("[A-Za-z0-9/:.]", False), R("[ \t]")))),
        ALT(
            (L('"'), R('[^"\n]', False)),
            (L("'"), R("[^'\n]", False)),
            (L("`"), R("[^`\n]", False)),
            (R(_UNQUOTED),),
        ),
    ),
    prefilter=rf"(?i){_KEYWORDS}",
    lookbehind=MAX_KEY + 16,
    max_value=MAX_VALUE,
    validate=_validate,
)
