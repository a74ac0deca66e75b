"""Basic-auth credentials inside other URLs: https://user:PASSWORD@host (password redacted)."""

from mithril.domain import Severity
from mithril.services.secrets.detectors._uri import UriCredentialDetector
from mithril.services.secrets.kinds import CREDENTIAL, KindInfo

SCHEMES = (
    "https", "http", "ftps", "ftp", "sftp", "ssh", "smtps", "smtp", "ldaps", "ldap", "git",
    "svn", "wss", "ws", "imaps", "imap", "pop3", "socks5", "socks4",
)  # fmt: skip

DETECTOR = UriCredentialDetector(
    info=KindInfo("url_credentials", CREDENTIAL, Severity.HIGH, "Password inside a URL"),
    priority=74,
    schemes=SCHEMES,
    confidence=0.85,
)
