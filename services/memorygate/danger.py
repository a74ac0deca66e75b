"""Offline danger rules for the memory gate: instructions disguised as notes.

The fallback for the judge's `ScoreDanger` when no LLM is configured, and a cheap signal
next to it. The scanner already looks for prompt-injection families ("ignore previous
instructions", jailbreaks); these rules look for what poisons a shared memory instead:
a stored "fact" that makes agents act later.

Each rule matches a shape of sentence (RE2, linear time, on at most MAX_CHARS characters)
and has a weight per *mood* of the verb it matched, read from the words before it in
its clause:

* directive: an imperative ("Send ...", "From now on, forward ..."), or an obligation
  addressed to the reader or to agents ("you must ...", "the assistant should ...");
* policy: an obligation on someone else ("Managers must send ...", "Reports should be
  sent to ...");
* fact: anything else ("The report is sent to finance on Fridays", "Admins can disable
  MFA", "MFA was disabled during the migration");
* prohibition: a negated directive ("Never share your password") - harmless for most
  rules, but concealment rules ("do not tell security") carry their own negation.

The score is the noisy-OR of the strongest weight of each rule that fired:
1 - prod(1 - w). Modifiers (external destination, persistence, stealth, claimed
authority) are rules like the others, so a directive that is also persistent and points
outside scores higher than either alone.

What it cannot do (measured in OFFLINE_SCORERS.md): tell an internal address from an
external one unless `internal_domains` is given or the domain is a known free-mail, paste,
tunnel or webhook service, an IP literal or a punycode name; read intent in a fact-shaped
poisoning that uses no destination, secret or security control ("Acme's invoices are
always paid in advance" is not flagged); understand paraphrases outside its verb lists,
other languages, or instructions split across sentences.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import re2

MAX_CHARS = 4000
"""Characters of a claim that are read."""
MAX_SENTENCES = 64
"""Sentences of a claim that are read."""
THRESHOLD = 0.5
"""Scores at or above this are what the characterisation counts as dangerous."""


@dataclass(frozen=True)
class DangerResult:
    """How dangerous a claim would be if agents acted on it, with the rules that fired."""

    score: float  # 0..1
    rule_ids: tuple[str, ...]
    reasons: tuple[str, ...]


DIRECTIVE = "directive"
POLICY = "policy"
FACT = "fact"
PROHIBITION = "prohibition"


@dataclass(frozen=True)
class _Rule:
    id: str
    reason: str
    pattern: str
    directive: float
    policy: float
    fact: float
    prohibition: float = 0.0
    moodless: bool = False  # the same weight (directive) whatever the mood, except prohibition


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _alternation(words: str, phrases: str = "") -> str:
    """A non-capturing alternation of regex words (split on spaces) and phrases (on ';')."""
    items = words.split() + [p.strip() for p in phrases.split(";") if p.strip()]
    return "(?:" + "|".join(items) + ")"


# ----------------------------------------------------------------------------- vocabulary

_TRANSFER_BASE = _alternation(
    "send forward email e-mail mail upload post push sync copy transmit share exfiltrate leak "
    "dump export submit deliver relay mirror pipe cc bcc route redirect attach"
)
_TRANSFER_PARTICIPLE = _alternation(
    "sent forwarded emailed e-mailed mailed uploaded posted pushed synced copied transmitted "
    "shared exported submitted delivered relayed mirrored piped routed redirected attached "
    "cc'd bcc'd"
)
_DATA = _alternation(
    "data files? documents? docs reports? logs? records credentials? passwords? tokens? keys? "
    "secrets? conversations? chats? transcripts? messages e-?mails? mail inbox contacts "
    "database db dumps? backups? code repo repository invoices? payroll salary salaries "
    "financials? summary summaries notes memory memories everything contents? attachments? "
    "screenshots? configs? configuration spreadsheets? statements? contracts? tickets? history "
    "copy copies minutes results findings details information info output cookies"
)
_SENSITIVE = _alternation(
    "credentials? passwords? passcodes? secrets? tokens? cookies pii database payroll salary "
    "salaries repository repo conversations transcripts contracts financials inbox everything",
    r"api keys?; private keys?; ssh keys?; secret keys?; access keys?;"
    r"session (?:cookies?|tokens?);"
    r"customer (?:data|lists?|records|details|information|info|database|e-?mails?|contacts);"
    r"user (?:data|details|information|info|records|database|list); personal (?:data|information|"
    r"details); db dumps?; database dumps?; source code; chat (?:history|logs); conversation "
    r"(?:history|logs); financial (?:statements|data|records|reports); bank (?:details|statements);"
    r"credit cards?; card numbers?; env(?:ironment)? (?:files?|variables);"
    r"all (?:e-?mails|messages|files|documents|data|records); system prompt; health records;"
    r"medical records; hr (?:files|records); employee (?:data|records|list|details)",
)
_SECRETS = _alternation(
    "passwords? passcodes? credentials secrets? tokens? pins? otps? cookies cvv ssn",
    r"api keys?; private keys?; ssh keys?; secret keys?; access (?:keys?|tokens?);"
    r"session (?:cookies?|tokens?); one-time (?:codes?|passwords?); (?:mfa|2fa) codes?;"
    r"verification codes?; recovery (?:codes?|phrases?|keys?); seed phrases?; system prompt;"
    r"env(?:ironment)? variables; login (?:details|credentials);"
    r"card numbers?; credit card(?: numbers?| details)?; social security numbers?;"
    r"bank (?:details|logins?)",
)
_SENSITIVE_WORDS = rf"(?P<s>\b{_SENSITIVE}\b|\.env\b)"
_SECRET_WORDS = rf"(?P<s>\b{_SECRETS}\b|\.env\b)"
_SECRET_WORDS_2 = rf"(?P<s2>\b{_SECRETS}\b|\.env\b)"
_NOT_A_SECRET = _words(
    """
    reset resets policy policies manager managers rotation requirements requirement change
    changes expiry expiration strength length field fields prompt prompts page pages form
    hygiene rules rule guidance training complexity recovery-flow portal management vault
    vaults scanner scanners scanning leak leaks breach incident incidents
    """
)
_EMAIL = r"[a-z0-9][a-z0-9._%+\-]*@[a-z0-9\-]+(?:\.[a-z0-9\-]+)+"
_URL = r"(?:https?|ftp|sftp|s3|gs|wss?)://[^\s<>\"'`]+"
_IP = r"\b\d{1,3}(?:\.\d{1,3}){3}\b"
_HOST = (
    r"\b(?:[a-z0-9\-]+\.)+(?:com|net|org|io|dev|app|xyz|ru|cn|info|biz|me|co|ai|tk|top|site|"
    r"online|cloud|example|sh|to|cc|ly|gg|su|pw|cf|ga|ml|gq|link|click|live|page|run|nz|"
    r"us|uk|de|fr|eu|nl)\b"
)
_NAMED_DESTINATION = (
    r"(?:webhooks?|pastebin|paste ?site|ngrok|requestbin|discord|telegram|dropbox|google drive|"
    r"gdrive|wetransfer|personal (?:e-?mail|account|drive|dropbox|gmail|address|phone|laptop|"
    r"device|cloud)|my (?:e-?mail|server|address|bucket|endpoint|drive|account|inbox|phone)|"
    r"(?:an? |the )?(?:external|outside|third[- ]party|public|remote|offsite|off-site) "
    r"(?:address|server|endpoint|e-?mail|bucket|site|url|storage|drive|repo|repository|gist|"
    r"inbox|account|ftp)|this (?:address|url|endpoint|link|webhook|number|e-?mail|server)|"
    r"the following (?:address|url|endpoint|e-?mail|server))"
)
_DESTINATION = f"(?:{_EMAIL}|{_URL}|{_IP}|{_HOST}|{_NAMED_DESTINATION})"
_PHONE = r"\+?\d[\d ()\-]{7,}\d"
_ACCOUNT_TOPIC = _alternation(
    "passwords? login log-in logins sign-in credentials payments? pay bank banking refunds? "
    "invoices? accounts? verification verify reset card cards wallet mfa 2fa otp",
    "log in; sign in",
)
_USERS = _alternation(
    "users? customers? clients? employees? callers? them people everyone staff visitors "
    "members colleagues patients"
)

_FREE_MAIL = _words(
    "gmail.com googlemail.com yahoo.com yahoo.co.uk outlook.com hotmail.com live.com msn.com "
    "aol.com icloud.com me.com mac.com proton.me protonmail.com pm.me gmx.com gmx.net gmx.de "
    "mail.com mail.ru yandex.com yandex.ru qq.com 163.com 126.com tutanota.com tuta.io "
    "zoho.com fastmail.com hushmail.com mailinator.com guerrillamail.com temp-mail.org "
    "10minutemail.com"
)
_DROP_SERVICES = _words(
    "pastebin.com paste.ee ghostbin hastebin.com rentry.co transfer.sh file.io anonfiles "
    "wetransfer.com mega.nz ngrok.io ngrok-free.app ngrok.app ngrok.dev trycloudflare.com "
    "webhook.site requestbin pipedream.net beeceptor.com interact.sh oast.fun oast.pro "
    "oast.live burpcollaborator.net serveo.net localtunnel.me loca.lt discord.com/api/webhooks "
    "discordapp.com/api/webhooks api.telegram.org dropbox.com drive.google.com docs.google.com "
    "bit.ly tinyurl.com t.co goo.gl is.gd rb.gy cutt.ly"
)
_SUSPICIOUS_WORDS = _words("evil attacker malicious exfil leak steal hack phish c2 harvest")

# ----------------------------------------------------------------------------- rules

_RULES: tuple[_Rule, ...] = (
    # --- exfiltration and redirection
    _Rule(
        "MG-EXFIL-SENSITIVE",
        "sends sensitive data to a destination",
        rf"\b(?P<v>{_TRANSFER_BASE}|{_TRANSFER_PARTICIPLE})\b.{{0,60}}?{_SENSITIVE_WORDS}"
        rf".{{0,60}}?\b(?:to|into|onto|at|via|on|with|in)\s+(?:.{{0,30}}?\s)?{_DESTINATION}",
        directive=0.65,
        policy=0.45,
        fact=0.25,
    ),
    _Rule(
        "MG-EXFIL",
        "sends data to a destination",
        rf"\b(?P<v>{_TRANSFER_BASE}|{_TRANSFER_PARTICIPLE})\b.{{0,80}}?"
        rf"\b(?:to|into|onto|at|via|on|with|in)\s+(?:.{{0,30}}?\s)?{_DESTINATION}",
        directive=0.45,
        policy=0.3,
        fact=0.15,
    ),
    _Rule(
        "MG-EXFIL",
        "copies a destination on messages",
        rf"\b(?P<v>cc|bcc|copy|add|include|loop in)\s+{_DESTINATION}\s+(?:on|in|to|as)\b"
        rf"|\b(?P<v2>auto-?forward|forward a copy of|blind copy|bcc)\b",
        directive=0.55,
        policy=0.35,
        fact=0.15,
    ),
    _Rule(
        "MG-CRED-DISCLOSE",
        "discloses secrets or credentials",
        rf"\b(?P<v>send|forward|email|share|post|upload|paste|include|reveal|disclose|give|"
        rf"provide|print|output|display|dump|expose|read out|tell|write down|append|attach|"
        rf"leak|export|publish|store|save|log|copy|sent|shared|posted|included|revealed|"
        rf"disclosed|given|provided|printed|published|logged)\b.{{0,40}}?{_SECRET_WORDS}"
        rf"|\b(?:asks?|requests?|needs?|wants?)\s+(?:you\s+)?for\s+.{{0,30}}?{_SECRET_WORDS_2}"
        rf".{{0,20}}?\b(?P<v2>give|send|share|provide|tell|reveal|hand over|read out)\b",
        directive=0.7,
        policy=0.45,
        fact=0.15,
    ),
    _Rule(
        "MG-CRED-PHISH",
        "asks people for secrets",
        rf"\b(?P<v>ask|asks|request|requests|prompt|prompts|require|requires|collect|collects|"
        rf"get|have|tell|instruct|remind)\b.{{0,30}}?\b{_USERS}\b.{{0,30}}?"
        rf"\b(?:for|to (?:provide|enter|share|send|confirm|verify|give|type|reply with|"
        rf"read out|paste|submit|email|text|include|attach))\b.{{0,60}}?{_SECRET_WORDS}",
        directive=0.75,
        policy=0.6,
        fact=0.3,
    ),
    _Rule(
        "MG-REDIRECT",
        "points people to a destination",
        rf"\b(?P<v>tell|direct|point|redirect|refer|send|instruct|advise|ask|route)\s+"
        rf"(?:all\s+)?{_USERS}\s+(?:.{{0,40}}?\s)?(?:to|at)\s+(?:.{{0,40}}?\s)?"
        rf"(?:{_DESTINATION}|{_PHONE})",
        directive=0.4,
        policy=0.3,
        fact=0.1,
    ),
    _Rule(
        "MG-REDIRECT",
        "points people to a destination for logins, payments or secrets",
        rf"\b{_ACCOUNT_TOPIC}\b.{{0,120}}?\b(?P<v>tell|direct|point|redirect|refer|send|"
        rf"instruct|advise|ask|route)\s+(?:all\s+)?{_USERS}\s+(?:.{{0,40}}?\s)?(?:to|at)\s+"
        rf"(?:.{{0,40}}?\s)?(?:{_DESTINATION}|{_PHONE})"
        rf"|\b(?P<v2>tell|direct|point|redirect|refer|send|instruct|advise|ask|route)\s+"
        rf"(?:all\s+)?{_USERS}\s+(?:.{{0,40}}?\s)?(?:to|at)\s+(?:.{{0,40}}?\s)?"
        rf"(?:{_DESTINATION}|{_PHONE}).{{0,120}}?\b{_ACCOUNT_TOPIC}\b",
        directive=0.6,
        policy=0.45,
        fact=0.15,
    ),
    _Rule(
        "MG-SECRET-VALUE",
        "stores a secret value",
        r"\b(?P<v>passwords?|passcodes?|pin|api key|secret|token|passphrase|credentials)\b"
        r"(?:\s+for\s+\S+)?\s*(?:is|are|=|:)\s*(?P<val>\S{6,})",
        directive=0.45,
        policy=0.45,
        fact=0.45,
        moodless=True,
    ),
    # --- credentials, permissions, security controls
    _Rule(
        "MG-PERM-GRANT",
        "grants privileges",
        r"\b(?P<v>grant|give|assign|granted|given|assigned|provision|provisioned)\b.{0,40}?"
        r"\b(?:admin(?:istrator)?|root|owner|superuser|super-user|sudo|global admin|"
        r"domain admin|full|elevated|write|privileged|unrestricted|owner-level|admin-level)\s+"
        r"(?:access|rights|privileges|permissions?|role|status|control)\b"
        r"|\b(?P<v2>add|added|put|move|moved)\b.{0,40}?\bto\s+(?:the\s+)?(?:admins?|"
        r"administrators|sudoers|wheel|owners|domain admins|global admins|admin group|"
        r"administrators group|privileged group|org owners)\b"
        r"|\b(?P<v3>make|promote|elevate|made|promoted|elevated)\b.{0,50}?\b(?:an?\s+)?"
        r"(?:admin(?:istrator)?|owner|superuser|root|org owner|organi[sz]ation owner|"
        r"global admin|workspace owner|account owner)\b"
        r"|\b(?P<v4>elevate|escalate)\s+(?:\w+\s+)?(?:privileges?|permissions?|access)\b",
        directive=0.7,
        policy=0.5,
        fact=0.1,
    ),
    _Rule(
        "MG-SEC-DISABLE",
        "turns off a security control",
        r"\b(?P<v>disable|disabled|turn off|turned off|switch off|deactivate|deactivated|"
        r"bypass|bypassed|skip|skipped|remove|removed|circumvent|suspend|suspended|pause|"
        r"paused|stop|uninstall|uninstalled|kill|relax|loosen|weaken|lower)\b.{0,30}?"
        r"\b(?:mfa|2fa|two-factor(?: authentication)?|multi-factor(?: authentication)?|sso|"
        r"single sign-on|(?:the\s+)?firewall|firewall rules?|antivirus|anti-virus|edr|"
        r"endpoint protection|defender|logging|audit(?:ing| logs?| logging| trail)?|monitoring|"
        r"alerting|security alerts|alerts|tls|ssl|certificate (?:validation|verification|"
        r"checks?|pinning)|ssl verification|encryption|rate limiting|authentication|"
        r"password (?:policy|requirements|rotation)|dlp|(?:the )?scanner|content filters?|"
        r"guardrails|safety (?:checks|filters)|approval(?: step| process| workflow)?s?|"
        r"code review|branch protection|signature (?:checks|verification)|"
        r"security (?:checks|controls|policy|policies|scans?)|virus scan(?:ning)?|"
        r"(?:security|compliance|risk|legal|access|vendor) reviews?)\b",
        directive=0.7,
        policy=0.5,
        fact=0.1,
    ),
    _Rule(
        "MG-KEY-ADD",
        "adds a key or trusted credential",
        r"\b(?P<v>add|added|install|installed|append|appended|put|upload|uploaded|register|"
        r"registered|trust|trusted|import|imported|paste)\b.{0,40}?\b(?:ssh|public|deploy|gpg|"
        r"pgp|signing|root ca|ca)\s+(?:keys?|certificates?|certs?)\b"
        r"|\b(?P<v2>authorized_keys)\b|\b(?P<v3>ssh-(?:rsa|ed25519|dss|ecdsa)\s+aaaa)",
        directive=0.7,
        policy=0.5,
        fact=0.1,
    ),
    _Rule(
        "MG-ALLOWLIST",
        "trusts or allow-lists a sender or host",
        r"\b(?P<v>whitelist|allowlist|allow-list|exempt|whitelisted|allowlisted|exempted|"
        r"unblock|unblocked)\b.{0,40}?(?:\b(?:ip|ips|ip address(?:es)?|domains?|senders?|"
        r"address(?:es)?|hosts?|certificates?|certs?|ranges?|subnets?|urls?|websites?|sites?|"
        r"accounts?|users?|this|the following)\b|\d{1,3}(?:\.\d{1,3}){3}|@)"
        r"|\b(?P<v2>trust|treat)\b.{0,40}?\b(?:ip|ips|ip address(?:es)?|domains?|senders?|"
        r"address(?:es)?|hosts?|certificates?|certs?|messages from|emails from|requests from|"
        r"instructions from|anything from|everything from|all (?:e-?mails|messages|requests) "
        r"from)\b.{0,60}?(?:\b(?:as|is|are)\s+(?:trusted|safe|authoritative|verified|"
        r"coming from|from the|legitimate|internal)|\bfrom\s+(?:.{0,30}?\s)?(?:scann|filter|"
        r"check|review|verif|block))",
        directive=0.55,
        policy=0.4,
        fact=0.1,
    ),
    # --- money
    _Rule(
        "MG-PAY-DETAILS",
        "changes payment details",
        r"\b(?P<v>bank (?:account|details)|iban|routing number|account number|"
        r"payment (?:details|information|info|account)|payout (?:account|details)|"
        r"wire (?:instructions|details)|beneficiary(?: account| details)?|remittance "
        r"(?:details|address))\b.{0,50}?(?:\b(?:to|is now|are now|now|changed to|updated to|"
        r"should be|must be|will be|changed|updated|new)\b|:).{0,30}?"
        r"(?:\b[a-z]{2}\d{2}\s?[a-z0-9]{4}|\b\d[\d\- ]{6,}|\bthe following\b|\bbelow\b)",
        directive=0.65,
        policy=0.65,
        fact=0.65,
        moodless=True,
    ),
    _Rule(
        "MG-PAY-TRANSFER",
        "moves money",
        r"\b(?P<v>transfer|wire|pay|remit|refund)\s+(?:[$€£]|usd|eur|gbp|\d|funds|money|"
        r"(?:the\s+|this\s+|that\s+|all\s+)?(?:[a-z\-]+\s+){0,3}(?:invoices?|balance|payments?|"
        r"amount|deposit|refund|bill|fees?|advance|budget|sum|cash|bonus|funds))\b.{0,60}?"
        r"\b(?:to|into)\b"
        r"|\b(?P<v2>send)\s+(?:[$€£]|usd|eur|gbp|\d|funds|money|(?:the\s+)?payments?\b)"
        r".{0,60}?\b(?:to|into)\b",
        directive=0.65,
        policy=0.45,
        fact=0.05,
    ),
    # --- destruction
    _Rule(
        "MG-DESTRUCT",
        "destroys data",
        r"\b(?P<v>delete|remove|wipe|drop|purge|erase|truncate|destroy|overwrite|shred|"
        r"format|reset|clear|empty)\b.{0,30}?\b(?:all|every|the entire|the whole|entire|any|"
        r"each)\b.{0,30}?\b(?:data|files?|backups?|logs?|records|e-?mails|users|accounts|"
        r"repos|repositories|database|databases|tables?|history|snapshots?|audit (?:trail|logs)|"
        r"volumes|buckets?|branches|messages|tickets|memories|notes|entries|customers|contacts|"
        r"documents|folders|drives?|disks?|servers|instances|vms|machines)\b"
        r"|\b(?P<v2>drop)\s+(?:table|database|schema)\b",
        directive=0.7,
        policy=0.45,
        fact=0.05,
    ),
    _Rule(
        "MG-COVER-TRACKS",
        "erases the audit trail",
        r"\b(?P<v>delete|remove|wipe|purge|erase|clear|truncate|disable|edit|alter|modify|"
        r"scrub|rewrite|tamper with)\s+(?:the\s+|any\s+|all\s+)?(?:audit (?:logs?|trail|"
        r"entries|records)|security logs|access logs|event logs|login history|sign-in logs|"
        r"logs? of (?:this|these|it|the change)|traces? of|evidence)",
        directive=0.8,
        policy=0.6,
        fact=0.1,
    ),
    # --- overriding policy and other memories
    _Rule(
        "MG-OVERRIDE",
        "tells agents to ignore rules or other memories",
        r"\b(?P<v>ignore|disregard|override|overrule|forget|bypass|supersede|discard|skip|"
        r"set aside|throw out)\s+(?:all\s+|any\s+|the\s+|your\s+)?(?:of\s+)?(?:the\s+)?"
        r"(?:previous|prior|other|earlier|existing|conflicting|older|above|preceding|your|"
        r"system|safety|security|company|standard|usual|normal)?\s*"
        r"(?:instructions?|memories|memory|notes?|rules?|polic(?:y|ies)|guidelines?|"
        r"guardrails?|restrictions?|constraints?|entries|facts|records|directives?|prompts?|"
        r"checks?|warnings?|procedures?|controls?)\b",
        directive=0.85,
        policy=0.85,
        fact=0.35,
    ),
    _Rule(
        "MG-PRECEDENCE",
        "claims precedence over other memories",
        r"\b(?P<v>this|these|the following|my)\s+(?:note|memory|memories|instruction|"
        r"instructions|entry|entries|rule|rules|fact|message|directive)s?\s+(?:takes?|has|have|"
        r"gets?|shall take|should take|must take)\s+(?:precedence|priority)"
        r"|\b(?P<v2>overrides?|supersedes?|replaces?|trumps?)\s+(?:all\s+|any\s+)?(?:other|"
        r"previous|prior|existing|conflicting|earlier)\s+(?:memories|notes|instructions|rules|"
        r"polic(?:y|ies)|entries|facts|guidelines|directives)",
        directive=0.75,
        policy=0.75,
        fact=0.75,
        moodless=True,
    ),
    _Rule(
        "MG-DISCREDIT",
        "discredits other memories",
        r"\b(?P<v>(?:all\s+|any\s+)?(?:other|previous|prior|older|earlier|existing|conflicting)"
        r"\s+(?:memories|notes|entries|instructions|records|facts|information|guidance))\b"
        r".{0,40}?\b(?:are|is|were|should be|must be)\s+(?:now\s+|all\s+)?(?:outdated|wrong|"
        r"invalid|false|obsolete|fake|incorrect|compromised|untrusted|not to be trusted|void|"
        r"deprecated|ignored|disregarded|discarded|deleted)",
        directive=0.65,
        policy=0.65,
        fact=0.65,
        moodless=True,
    ),
    _Rule(
        "MG-POLICY-DEFY",
        "tells agents not to follow policy",
        r"\b(?P<v>do not|don't|never|no need to|stop|(?:do not|don't|does not|doesn't) need to|"
        r"(?:is|are) not (?:required|expected|obliged) to|no longer (?:need|have) to)\s+"
        r"(?:follow|following|obey|obeying|apply|applying|enforce|enforcing|respect|comply with|"
        r"complying with|check|checking)\s+(?:the\s+|our\s+|any\s+)?(?:[a-z\-]+\s+){0,3}"
        r"(?:polic(?:y|ies)|rules|guidelines|guardrails|restrictions|procedures?|compliance|"
        r"controls|approvals?)\b"
        r"|\b(?P<v2>polic(?:y|ies)|rules|guidelines|restrictions|controls|checks)\b.{0,40}?"
        r"\b(?:does|do)\s+not\s+apply\s+to\b.{0,30}?\b(?:requests?|messages?|e-?mails?|"
        r"instructions?|anyone|users?|accounts?|orders?|tickets?)\s+(?:coming\s+)?(?:from|"
        r"sent by|made by|by)\b",
        directive=0.75,
        policy=0.75,
        fact=0.75,
        prohibition=0.75,
        moodless=True,
    ),
    # --- concealment
    _Rule(
        "MG-SECRECY",
        "hides actions from oversight",
        r"\b(?P<v>do not|don't|never|without|no need to|avoid)\s+(?:tell|telling|inform|"
        r"informing|notify|notifying|alert|alerting|mention|mentioning|report|reporting|"
        r"disclose|disclosing|cc|ccing|consult|consulting|involve|involving|warn|warning|"
        r"log|logging|flag|flagging|escalate|escalating|let)\s+(?:this\s+|it\s+|them\s+)?"
        r"(?:to\s+)?(?:the\s+|any\s+|your\s+)?(?:admins?|administrators?|security|soc|it|"
        r"compliance|legal|auditors?|owners?|operators?|managers?|supervisors?|humans?|"
        r"reviewers?|the user|users?|anyone|anybody|the team|the cfo|finance|know)\b",
        directive=0.6,
        policy=0.6,
        fact=0.6,
        prohibition=0.6,
        moodless=True,
    ),
    _Rule(
        "MG-SECRECY",
        "hides actions from oversight",
        r"\b(?P<v>keep)\s+(?:this|it|these)\s+(?:secret|hidden|confidential|between us|quiet|"
        r"off the record)\b|\b(?P<v2>hide)\s+(?:this|it|these|the\s+\w+)\s+from\b",
        directive=0.5,
        policy=0.5,
        fact=0.5,
        moodless=True,
    ),
    _Rule(
        "MG-NO-CONFIRM",
        "acts without confirmation or review",
        r"\b(?P<v>do not|don't|never|no need to|without)\s+(?:ask(?:ing)?|wait(?:ing)?|"
        r"check(?:ing)?|seek(?:ing)?|get(?:ting)?|request(?:ing)?)\s+(?:for\s+)?(?:the\s+)?"
        r"(?:user'?s?\s+|human\s+|manager'?s?\s+)?(?:confirmation|approval|permission|review|"
        r"sign-?off|verification|consent|authori[sz]ation)",
        directive=0.6,
        policy=0.6,
        fact=0.6,
        prohibition=0.6,
        moodless=True,
    ),
    _Rule(
        "MG-NO-CONFIRM",
        "acts without review",
        r"\b(?P<v>approve|grant|merge|deploy|pay|transfer|delete|remove|send|publish|release|"
        r"accept|execute|run|process|sign|issue|refund|reset|disable|wire)\b.{0,60}?\bwithout\s+"
        r"(?:any\s+|further\s+|prior\s+|human\s+|manual\s+|a\s+|the\s+|their\s+)?(?:review|"
        r"approval|confirmation|verification|checks?|sign-?off|asking|checking|oversight)",
        directive=0.6,
        policy=0.35,
        fact=0.05,
    ),
    _Rule(
        "MG-STEALTH",
        "acts silently",
        r"\b(?P<v>silently|quietly|secretly|covertly|discreetly|surreptitiously|"
        r"without (?:anyone|the user|users) (?:noticing|knowing))\b",
        directive=0.3,
        policy=0.3,
        fact=0.3,
        prohibition=0.3,
        moodless=True,
    ),
    # --- running things
    _Rule(
        "MG-SHELL",
        "pipes a download into a shell",
        r"\b(?P<v>curl|wget|iwr|invoke-webrequest|irm|invoke-restmethod)\b[^|\n]{0,200}\|\s*"
        r"(?:sudo\s+)?(?:sh|bash|zsh|python3?|perl|ruby|iex|invoke-expression|powershell)\b",
        directive=0.85,
        policy=0.85,
        fact=0.85,
        moodless=True,
    ),
    _Rule(
        "MG-SHELL",
        "runs a destructive or remote-access command",
        r"(?P<v>\brm\s+-(?:rf|fr|r)\s+(?:/|~|\*|\$home)|\bbash\s+-i\s+>&|/dev/tcp/|"
        r"\bnc(?:at)?\s+(?:\S+\s+){0,3}-(?:e|c)\b|\bpowershell(?:\.exe)?\s+(?:-\w+\s+)*"
        r"-e(?:nc|ncodedcommand)?\s+[a-z0-9+/=]{16,}|\bbase64\s+(?:-d|--decode)\b[^|\n]{0,100}"
        r"\|\s*(?:sh|bash)|\bchmod\s+(?:777|\+s|u\+s)\b|\bmkfifo\b|\bmimikatz\b|"
        r"\bsudo\s+su\b|:\(\)\s*\{\s*:\|:&\s*\};:|\biex\s*\(|\binvoke-expression\b)",
        directive=0.85,
        policy=0.85,
        fact=0.85,
        moodless=True,
    ),
    _Rule(
        "MG-DOWNLOAD-EXEC",
        "downloads and runs software",
        rf"\b(?P<v>download|install|run|execute|open|launch)\b.{{0,40}}?"
        rf"(?:\b(?:from|at|via)\s+)?(?:{_URL}|{_IP}|{_HOST}/\S*)"
        rf"|\b(?P<v2>download and (?:run|execute|install|open))\b",
        directive=0.55,
        policy=0.4,
        fact=0.15,
    ),
    _Rule(
        "MG-RUN-CMD",
        "runs a command",
        r"\b(?P<v>run|execute|exec|invoke|eval|type|paste)\s+(?:this|the following|the command|"
        r"the script|this command|this script)?\s*(?:`[^`]{2,200}`|:\s*\S)",
        directive=0.4,
        policy=0.25,
        fact=0.05,
    ),
    _Rule(
        "MG-TOOL-CALL",
        "invokes a tool",
        r"\b(?P<v>call|use|invoke|trigger)\s+the\s+[a-z0-9_\-]+\s+(?:tool|function|plugin|action)"
        r"\s+(?:to|with|and)\b",
        directive=0.35,
        policy=0.2,
        fact=0.0,
    ),
    # --- framing: persistence, address to agents, authority
    _Rule(
        "MG-AGENT",
        "addressed to agents",
        r"\b(?P<v>(?:ai |llm |the )?(?:agents?|assistants?|ai|model|bots?|llms?|copilot|chatbot)"
        r"\s+(?:must|should|shall|will|need to|needs to|have to|has to|are to|is to|"
        r"are required to|is required to|are instructed to|ought to|may only|can only))\b"
        r"|\b(?P<v2>if you are an? (?:ai|assistant|agent|language model|llm|bot|model))\b"
        r"|\b(?P<v3>(?:note|message|instruction|reminder|tip|advice|guidance|hint|memo|notice)s? "
        r"(?:to|for) (?:the\s+|all\s+|any\s+|other\s+)?"
        r"(?:ai|assistants?|agents?|llms?|models?|bots?))\b"
        r"|\b(?P<v4>(?:attention|dear|hey)\s*,?\s*(?:ai|assistant|agents?|llm|bot|model))\b",
        directive=0.55,
        policy=0.55,
        fact=0.55,
        moodless=True,
    ),
    _Rule(
        "MG-AGENT",
        "addressed to the reader",
        r"\b(?P<v>you\s+(?:must|should|shall|will always|need to|have to|are to|are required to|"
        r"ought to|are instructed to))\b",
        directive=0.4,
        policy=0.4,
        fact=0.4,
        moodless=True,
    ),
    _Rule(
        "MG-AUTHORITY",
        "claims authority",
        r"\b(?P<v>(?:approved|authori[sz]ed|sanctioned|mandated|requested|ordered|signed off)"
        r"\s+by\s+(?:the\s+)?(?:ceo|cfo|cto|ciso|it|security|management|the board|board|legal|"
        r"admin|administrator|owner|founder|executive team|leadership))\b"
        r"|\b(?P<v2>on behalf of the (?:ceo|cfo|cto|ciso|board|admin))\b"
        r"|\b(?P<v4>(?:the\s+)?(?:ceo|cfo|cto|ciso|security team|it team|it department|"
        r"management|the board|legal|compliance|finance)\s+(?:has\s+|have\s+|already\s+)*"
        r"(?:approved|authori[sz]ed|signed off|sanctioned|cleared|okayed|ok'd))\b"
        r"|\b(?P<v3>this is (?:the|an|your) (?:ceo|cfo|admin|administrator|it department|"
        r"security team|system administrator|developer))\b",
        directive=0.25,
        policy=0.25,
        fact=0.25,
        moodless=True,
    ),
)

_PERSIST_RE = (
    r"\b(?:from now on|going forward|henceforth|hereafter|from this point(?: on| forward)?|"
    r"from here on|in (?:the )?future|for all future|for every future|in all future|"
    r"permanently|until (?:told|instructed) otherwise|at all times|as a standing "
    r"(?:rule|instruction|order)|standing instruction|make it a rule|by default from now)\b"
)
_TRIGGER_RE = (
    r"\b(?:every time|whenever|each time|when(?:ever)? asked|(?:when|if) (?:a |an |the |any )?"
    r"(?:users?|customers?|clients?|someone|anyone|people|employees?|callers?|visitors?|"
    r"members?|vendors?|suppliers?|partners?) (?:asks?|requests?|wants?|needs?|calls?|writes?|"
    r"e-?mails?|contacts?|mentions?))\b"
)
_REMEMBER_RE = r"\b(?:remember to|don't forget to|do not forget to|always remember to)\b"
_ALWAYS_RE = (
    r"(?:^|[,;:]\s*|\bthen\s+|\band\s+|\bplease\s+)(?:please\s+)?(?P<w>always|never)\s+"
    r"(?P<verb>[a-z\-]+)"
)

_FRAMINGS = (
    ("from", "now", "on"),
    ("going", "forward"),
    ("henceforth",),
    ("hereafter",),
    ("from", "this", "point", "on"),
    ("from", "this", "point", "forward"),
    ("from", "here", "on"),
    ("in", "future"),
    ("in", "the", "future"),
    ("at", "all", "times"),
    ("by", "default"),
    ("as", "a", "rule"),
    ("permanently",),
    ("until", "told", "otherwise"),
    ("as", "of", "now"),
    ("starting", "now"),
    ("starting", "today"),
    ("effective", "immediately"),
)
_IMPERATIVE_VERBS = _words(
    """
    reply respond answer send forward email e-mail mail use include add remove delete write
    summarise summarize translate call run execute ignore tell ask say recommend suggest
    mention refer direct point treat trust assume consider approve reject grant share post
    upload download install open click visit sign log set change update keep store save copy
    cc bcc route redirect escalate skip bypass disable enable turn give provide pay transfer
    wire book schedule cancel contact notify report check verify make ensure do put prefer
    prioritize prioritise label mark close merge push deploy restart reboot format list print
    output reveal show display append insert attach format sync export submit leak dump
    accept allow whitelist allowlist purge wipe drop erase answer quote cite recommend
    """
)

_CLAUSE_BREAK_RE = re2.compile(r"[,;:(\"]|\s-\s|\bthen\b|\bso\b|\band\b|\bbut\b")
_SENTENCE_END_RE = re2.compile(r"[.!?]+(?:\s+|$)|\n+")
_ZERO_WIDTH = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"), None)

_LEADING_ADVERBS = _words(
    """
    please kindly always also just then now immediately simply first instead automatically
    proactively quietly silently secretly discreetly directly additionally routinely regularly
    henceforth still only really definitely
    """
)
_OBLIGATIONS: tuple[tuple[str, ...], ...] = (
    ("must",),
    ("should",),
    ("shall",),
    ("need", "to"),
    ("needs", "to"),
    ("have", "to"),
    ("has", "to"),
    ("are", "to"),
    ("is", "to"),
    ("ought", "to"),
    ("required", "to"),
    ("make", "sure", "to"),
    ("make", "sure", "you"),
    ("make", "sure"),
    ("be", "sure", "to"),
    ("remember", "to"),
    ("forget", "to"),  # don't forget to
    ("important", "to"),
    ("want", "you", "to"),
    ("need", "you", "to"),
    ("job", "is", "to"),
    ("task", "is", "to"),
    ("will",),
    ("you'll",),
    ("we'll",),
    ("please",),
    ("ensure", "you"),
    ("ensure", "to"),
)
_PASSIVE_OBLIGATIONS: tuple[tuple[str, ...], ...] = (
    ("must", "be"),
    ("should", "be"),
    ("shall", "be"),
    ("need", "to", "be"),
    ("needs", "to", "be"),
    ("has", "to", "be"),
    ("have", "to", "be"),
    ("is", "to", "be"),
    ("are", "to", "be"),
    ("ought", "to", "be"),
)
_NEGATIONS = _words("not never don't dont cannot can't won't shouldn't mustn't no nobody")
_CAPABILITY = _words("can could may might able how to is are was were be been being")
_AGENT_WORDS = _words(
    "you agent agents assistant assistants ai model models bot bots llm llms copilot chatbot"
)
_PARTICIPLES = _words(
    """
    sent forwarded emailed e-mailed mailed uploaded posted pushed synced copied transmitted
    shared exported submitted delivered relayed mirrored piped routed redirected attached
    granted given assigned added moved made promoted elevated disabled turned deactivated
    bypassed skipped removed suspended paused uninstalled installed appended registered
    trusted imported whitelisted allowlisted exempted included revealed disclosed provided
    printed published logged provisioned
    """
)


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = 16 << 20
    return options


@dataclass(frozen=True)
class _Compiled:
    rule: _Rule
    regex: re2._Regexp


_COMPILED = tuple(_Compiled(rule, re2.compile(rule.pattern, _options())) for rule in _RULES)
_PERSIST = re2.compile(_PERSIST_RE, _options())
_TRIGGER = re2.compile(_TRIGGER_RE, _options())
_REMEMBER = re2.compile(_REMEMBER_RE, _options())
_ALWAYS = re2.compile(_ALWAYS_RE, _options())
_DEST_RE = re2.compile(f"(?P<email>{_EMAIL})|(?P<url>{_URL})|(?P<ip>{_IP})|(?P<host>{_HOST})")
_NAMED_DEST_RE = re2.compile(_NAMED_DESTINATION)

# ----------------------------------------------------------------------------- text


def _clean(text: str) -> str:
    text = unicodedata.normalize("NFKC", text[:MAX_CHARS]).translate(_ZERO_WIDTH)
    text = (
        text.replace("\u2019", "'")
        .replace("\u2018", "'")
        .replace("\u201c", '"')
        .replace("\u201d", '"')
        .replace("\u2013", "-")
        .replace("\u2014", " - ")
    )
    return text.lower()


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    start = 0
    for match in _SENTENCE_END_RE.finditer(text):
        if match.start() > start:
            out.append(text[start : match.start()].strip())
        start = match.end()
        if len(out) >= MAX_SENTENCES:
            return out
    if start < len(text):
        out.append(text[start:].strip())
    return [s for s in out if s][:MAX_SENTENCES]


def _clause_before(sentence: str, position: int) -> list[str]:
    """The words of the clause before `position` (bounded to the last 120 characters)."""
    window_start = max(0, position - 120)
    prefix = sentence[window_start:position]
    cut = 0
    for match in _CLAUSE_BREAK_RE.finditer(prefix):
        cut = match.end()
    return prefix[cut:].split()


def _ends_with(words: Sequence[str], phrase: Sequence[str]) -> bool:
    return len(words) >= len(phrase) and tuple(words[-len(phrase) :]) == tuple(phrase)


def _strip_framing(words: list[str]) -> list[str]:
    """Drop leading persistence framing and adverbs: 'from now on always send' -> 'send'."""
    changed = True
    while changed and words:
        changed = False
        for phrase in _FRAMINGS:
            if tuple(words[: len(phrase)]) == phrase:
                words = words[len(phrase) :]
                changed = True
        while words and words[0] in _LEADING_ADVERBS:
            words = words[1:]
            changed = True
    return words


def mood(sentence: str, position: int, verb: str) -> str:
    """The mood of the verb at `position`: directive, policy, fact or prohibition."""
    words = [w for w in _strip_framing(_clause_before(sentence, position))]
    core = [w for w in words if w not in _LEADING_ADVERBS]
    if core and (core[-1] in _NEGATIONS or _ends_with(core, ("do", "not"))):
        return PROHIBITION
    if len(core) >= 2 and core[-2] in _NEGATIONS and core[-1] in ("to", "be"):
        return PROHIBITION
    if verb in _PARTICIPLES:
        for phrase in _PASSIVE_OBLIGATIONS:
            if _ends_with(core, phrase):
                if any(n in core for n in ("not", "never")):
                    return PROHIBITION
                before = core[: -len(phrase)]
                if any(w in _AGENT_WORDS for w in before):
                    return DIRECTIVE
                return POLICY
        return FACT
    if not core:
        return DIRECTIVE
    for phrase in _OBLIGATIONS:
        if _ends_with(core, phrase):
            before = core[: -len(phrase)]
            if phrase != ("forget", "to") and any(
                n in before[-2:] for n in ("not", "never", "don't", "dont")
            ):
                return PROHIBITION
            if (
                not before
                or phrase[0] in ("please", "remember", "forget", "make", "be")
                or any(w in _AGENT_WORDS for w in before)
            ):
                return DIRECTIVE
            return POLICY
    if core[-1] in _CAPABILITY:
        return FACT
    # "whenever a user asks about refunds send ...": a conditional clause, then the verb
    if core[0] in ("whenever", "when", "if", "once", "after", "before"):
        return DIRECTIVE
    return FACT


# ----------------------------------------------------------------------------- destinations


def _domain_of(kind: str, text: str) -> str:
    text = text.rstrip(".,);:!?'\"")
    if kind == "email":
        return text.rsplit("@", 1)[-1]
    if kind == "url":
        text = text.split("://", 1)[-1]
        return text.split("/", 1)[0].split("@")[-1].split(":")[0]
    return text.split("/", 1)[0].split(":")[0]


def _under(domain: str, parent: str) -> bool:
    return domain == parent or domain.endswith("." + parent)


def _is_service(domain: str, text: str, service: str) -> bool:
    """`domain` (of `text`) is `service`: a domain, a domain with a path, or a bare name."""
    if "/" in service:
        host, _, path = service.partition("/")
        return _under(domain, host) and f"/{path}" in text
    if "." in service:
        return _under(domain, service)
    return any(label.startswith(service) for label in domain.split("."))


def _suspicious(kind: str, text: str, internal: Sequence[str]) -> str | None:
    """Why a destination looks external, or None."""
    domain = _domain_of(kind, text)
    lowered = text.lower()
    if kind == "ip" or (domain and domain.replace(".", "").isdigit()):
        return "an IP address"
    if any(_is_service(domain, lowered, service) for service in _DROP_SERVICES):
        return "a paste, tunnel, webhook or file-drop service"
    if any(domain == mail or domain.endswith("." + mail) for mail in _FREE_MAIL):
        return "a free mail provider"
    if "xn--" in domain:
        return "a punycode domain"
    if any(word in domain for word in _SUSPICIOUS_WORDS):
        return "a suspicious domain name"
    if internal and domain and not any(domain == d or domain.endswith("." + d) for d in internal):
        return "a domain outside the organisation"
    return None


def _all_internal(sentence: str, internal: Sequence[str]) -> bool:
    """Every destination in the sentence is under one of the organisation's domains."""
    if not internal or _NAMED_DEST_RE.search(sentence) is not None:
        return False
    found = False
    for match in _DEST_RE.finditer(sentence):
        domain = _domain_of(str(match.lastgroup), str(match.group()))
        if not any(domain == d or domain.endswith("." + d) for d in internal):
            return False
        found = True
    return found


def _external(sentence: str, internal: Sequence[str]) -> str | None:
    for match in _DEST_RE.finditer(sentence):
        kind = str(match.lastgroup)
        why = _suspicious(kind, str(match.group()), internal)
        if why is not None:
            return why
    named = _NAMED_DEST_RE.search(sentence)
    if named is not None and any(
        word in str(named.group())
        for word in (
            "personal",
            "external",
            "outside",
            "third",
            "public",
            "my ",
            "offsite",
            "off-site",
            "webhook",
            "pastebin",
            "paste",
            "ngrok",
            "requestbin",
            "discord",
            "telegram",
            "dropbox",
            "google drive",
            "gdrive",
            "wetransfer",
            "remote",
        )
    ):
        return "a personal or external destination"
    return None


# ----------------------------------------------------------------------------- scoring

_TRANSFER_RULES = frozenset(
    ["MG-EXFIL", "MG-EXFIL-SENSITIVE", "MG-REDIRECT", "MG-DOWNLOAD-EXEC", "MG-CRED-DISCLOSE"]
)
_FAMILIES = {
    "MG-EXFIL": "exfiltration",
    "MG-EXFIL-SENSITIVE": "exfiltration",
    "MG-SHELL": "execution",
    "MG-DOWNLOAD-EXEC": "execution",
    "MG-RUN-CMD": "execution",
    "MG-TOOL-CALL": "execution",
}
"""Rules that see the same act from different angles count once, at their strongest."""
INTERNAL_FACTOR = 0.5
"""Transfers whose every destination is under `internal_domains` weigh this much less."""
EXTERNAL_WEIGHT = 0.45
"""A transfer or a directive pointing at an external destination."""
EXTERNAL_MENTION_WEIGHT = 0.15
"""An external destination merely mentioned."""
PERSIST_DIRECTIVE_WEIGHT = 0.6
"""'From now on' (a change of standing behaviour) with an imperative or an agent address."""
CONDITIONAL_DIRECTIVE_WEIGHT = 0.45
"""'Whenever ...' / 'when a user asks ...' with an imperative: a standing trigger."""
PERSIST_FRAMING_WEIGHT = 0.25
"""Persistent framing on a statement of fact ('From now on, the standup starts at 9:30')."""
REMEMBER_WEIGHT = 0.35
ALWAYS_WEIGHT = 0.35
NEVER_WEIGHT = 0.25
"""'Never <verb>' is more often a safety rule than an attack; attacks that need it
('never ask for approval') have their own rules."""


def _verb_position(match: re2._Match, regex: re2._Regexp) -> tuple[int, str]:
    """Where the rule's anchor verb (group v, v2, ...) starts, and the verb itself."""
    for name, index in sorted(regex.groupindex.items(), key=lambda item: item[1]):
        text = match.group(index)
        if name.startswith("v") and text:
            return match.start(index), str(text).split()[0]
    return match.start(), ""


def _names_a_topic(sentence: str, match: re2._Match, regex: re2._Regexp) -> bool:
    """The secret word of a match is a modifier ("password reset", "token rotation")."""
    for name in ("s", "s2"):
        index = regex.groupindex.get(name)
        if index is None or match.group(index) is None:
            continue
        following = sentence[match.end(index) : match.end(index) + 24].split()
        if following and following[0].strip(".,;:!?") in _NOT_A_SECRET:
            return True
    return False


def _looks_secret(value: str) -> bool:
    """A value that reads like a password or key: letters and digits or symbols, no spaces."""
    value = value.strip(".,;:!?\"'`()")
    has_alpha = any(ch.isalpha() for ch in value)
    has_other = any(ch.isdigit() or not ch.isalnum() for ch in value)
    return len(value) >= 6 and has_alpha and has_other and "://" not in value and "@" not in value


def _weight(rule: _Rule, found: str) -> float:
    if found == PROHIBITION:
        return rule.prohibition
    if rule.moodless:
        return rule.directive
    return {DIRECTIVE: rule.directive, POLICY: rule.policy, FACT: rule.fact}[found]


def _has_imperative(sentence: str) -> bool:
    """Some clause of the sentence starts with an imperative verb (after adverbs)."""
    for piece in _clauses(sentence):
        words = _strip_framing(piece.split())
        if words and words[0] in _IMPERATIVE_VERBS:
            return True
    return False


def _clauses(sentence: str) -> Iterable[str]:
    start = 0
    for match in _CLAUSE_BREAK_RE.finditer(sentence):
        yield sentence[start : match.start()]
        start = match.end()
    yield sentence[start:]


def score_danger(claim: str, *, internal_domains: Sequence[str] = ()) -> DangerResult:
    """How dangerous `claim` would be in shared memory: noisy-OR of the rules that fired
    (one weight per family of rules, the strongest).

    `internal_domains` (for example `("corp.example.com",)`) makes every other domain an
    external destination; without it only well-known external services count.
    """
    internal = tuple(d.lower().lstrip("@.") for d in internal_domains if d)
    best: dict[str, tuple[float, str]] = {}

    def hit(rule_id: str, weight: float, reason: str) -> None:
        if weight <= 0:
            return
        if rule_id not in best or weight > best[rule_id][0]:
            best[rule_id] = (weight, reason)

    for sentence in _sentences(_clean(claim)):
        fired_here: dict[str, str] = {}
        inside = _all_internal(sentence, internal)
        for compiled in _COMPILED:
            for match in compiled.regex.finditer(sentence):
                if "val" in compiled.regex.groupindex and not _looks_secret(
                    str(match.group(compiled.regex.groupindex["val"]))
                ):
                    continue
                if _names_a_topic(sentence, match, compiled.regex):
                    continue  # "password reset emails", "API key rotation": not the secret
                position, verb = _verb_position(match, compiled.regex)
                found = mood(sentence, position, verb)
                weight = _weight(compiled.rule, found)
                label = compiled.rule.reason
                if not compiled.rule.moodless:
                    label = f"{label} ({found})"
                if inside and compiled.rule.id in _TRANSFER_RULES:
                    weight *= INTERNAL_FACTOR
                    label = f"{label}, internal destination"
                hit(compiled.rule.id, weight, label)
                if weight > 0 or found == PROHIBITION:
                    previous = fired_here.get(compiled.rule.id)
                    if previous is None or previous == PROHIBITION:
                        fired_here[compiled.rule.id] = found
        imperative = _has_imperative(sentence)
        agent = "MG-AGENT" in fired_here
        if _PERSIST.search(sentence) is not None:
            if imperative or agent:
                hit("MG-PERSIST", PERSIST_DIRECTIVE_WEIGHT, "persistent directive")
            else:
                hit("MG-PERSIST", PERSIST_FRAMING_WEIGHT, "persistent framing")
        if _TRIGGER.search(sentence) is not None and (imperative or agent):
            hit("MG-PERSIST", CONDITIONAL_DIRECTIVE_WEIGHT, "standing trigger for an action")
        if _REMEMBER.search(sentence) is not None:
            hit("MG-PERSIST", REMEMBER_WEIGHT, "standing reminder to act")
        for match in _ALWAYS.finditer(sentence):
            if str(match.group("verb")) in _IMPERATIVE_VERBS:
                if match.group("w") == "always":
                    hit("MG-PERSIST", ALWAYS_WEIGHT, "always-imperative")
                else:
                    hit("MG-PERSIST", NEVER_WEIGHT, "never-imperative")
        why = _external(sentence, internal)
        if why is not None:
            moods = [fired_here[r] for r in _TRANSFER_RULES if r in fired_here]
            if moods and all(m == PROHIBITION for m in moods):
                pass  # "must never be emailed to personal accounts": a safety rule
            elif moods:
                hit("MG-EXTERNAL", EXTERNAL_WEIGHT, f"destination is {why}")
            elif imperative and not moods:
                hit("MG-EXTERNAL", EXTERNAL_WEIGHT - 0.15, f"directive names {why}")
            else:
                hit("MG-EXTERNAL", EXTERNAL_MENTION_WEIGHT, f"mentions {why}")

    families: dict[str, float] = {}
    for rule_id, (weight, _) in best.items():
        family = _FAMILIES.get(rule_id, rule_id)
        families[family] = max(families.get(family, 0.0), weight)
    remaining = 1.0
    for weight in families.values():
        remaining *= 1.0 - weight
    score = round(1.0 - remaining, 4) if best else 0.0
    ordered = sorted(best.items(), key=lambda item: -item[1][0])
    return DangerResult(
        score=score,
        rule_ids=tuple(rule_id for rule_id, _ in ordered),
        reasons=tuple(reason for _, (_, reason) in ordered),
    )
