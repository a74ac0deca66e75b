"""Per-detector true and false positives, redaction format and the facade contract."""

from __future__ import annotations

import itertools

import pytest
from secrets_samples import ALL, AWS, GITHUB, OPENAI_PROJ, PEM, PROSE_AFTER, PROSE_BEFORE, Sample

from mithril.domain import Finding, Severity
from mithril.services.secrets import KindInfo, Redaction, SecretsDetector
from mithril.services.secrets.detectors import REGISTRY

DETECTOR = SecretsDetector.default()
BLOCK_THRESHOLD = 0.5


def _kinds(findings: list[Finding]) -> list[str]:
    return [finding.kind for finding in findings]


@pytest.mark.parametrize("sample", ALL, ids=lambda s: s.id)
def test_true_positive_alone_and_in_prose(sample: Sample) -> None:
    for text in (sample.text, PROSE_BEFORE + sample.text + PROSE_AFTER):
        findings = DETECTOR.detect(text)
        assert _kinds(findings) == [sample.kind], (text, findings)
        finding = findings[0]
        assert text[finding.start : finding.end] == sample.secret
        assert sample.secret not in finding.message


@pytest.mark.parametrize("sample", ALL, ids=lambda s: s.id)
def test_redaction_replaces_exactly_the_secret(sample: Sample) -> None:
    text = PROSE_BEFORE + sample.text + PROSE_AFTER
    redaction = DETECTOR.redact(text)
    expected = text.replace(sample.secret, f"[REDACTED:{sample.kind}]")
    assert redaction.text == expected
    assert isinstance(redaction, Redaction)
    assert [text[f.start : f.end] for f in redaction.findings] == [sample.secret]


@pytest.mark.parametrize(
    "text",
    [
        # Identifiers, hashes and encodings that are not secrets.
        "request id 550e8400-e29b-41d4-a716-446655440000 failed",
        "commit e83c5163316f89bfbde7d9ab23ca2e25604af290 fixed it",
        "md5 9e107d9d372bb6826bd81d3542a419d6 sha1 2fd4e1c67a2d28fced849ee1bb76e7391b93eb12",
        "sha256 d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592",
        "![img](data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42"
        "mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==)",
        "Upgrade to v1.2.3 or Python 3.11.4; macOS version 10.15.7 and build 22631.2861",
        # Ordinary numbers, dates, times and addresses.
        "The population is 8,000,000,000 and the budget 1234567890 dollars.",
        "Order 123456789012 shipped on 2023-01-15 10:30:00, invoice 15.01.2023.",
        "Ranges 2019 2020 2021 and 1 000 000 units; server 192.168.100.200 port 8080.",
        "Chapter 3, verses 16-18, page 1024; call me in 5 minutes.",
        # Placeholders for credentials.
        "password=<your password>",
        "PASSWORD=${PASSWORD}",
        "password: ********",
        'token = os.environ["TOKEN"]',
        'password = ""',
        "api_key: ${API_KEY}",
        "password: str",
        '"token": null',
        "secret = get_secret()",
        "token = self.token",
        "Authorization: Bearer $API_KEY",
        "Authorization: Bearer <token>",
        "curl -u user:pass https://example.com",
        "postgres://user:password@localhost/db",
        "aws_access_key: AKIAIOSFODNN7EXAMPLE",
        "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        "-----BEGIN OPENSSH PRIVATE KEY----------END OPENSSH PRIVATE KEY-----",
        # Prose about secrets.
        "The password must be at least 12 characters long.",
        "Where is the password? Ask about the token: see the wiki.",
        "For the api_key, config.api_key.",
        "Rotate the token: nobody should reuse it.",
        "Set max_tokens = 4096 and token_count: 12345 for the run.",
        "secret_length = X25519.secret_length",
        "Use sk-learn and the sk-ant- prefix, xoxb- tokens and AIza keys in docs.",
        # READMEs: elided and named example keys, a badge's public token, an id in a URL.
        'client = instructor.from_provider("openai/gpt-4o", api_key="sk-...")',
        'client = Groq(api_key="gsk_\u2026")',
        'add `OPENAI_API_KEY="My API Key"` to your `.env` file',
        'client = openai.OpenAI(api_key="anything", base_url="http://0.0.0.0:4000")',
        '<img src="https://codecov.io/gh/org/repo/branch/main/graph/badge.svg?token=RX5P9LE2XL">',
        "https://www.linkedin.com/posts/someone_python-activity-6963242628536487936-trAp/",
        # Versions pinned: a distribution whose name holds "token" is no credential.
        "measured with `tokenizers==0.13.2`, `transformers==4.24.0` and `tiktoken==0.2.0`",
        "pip install auth-token==2.1.0rc1 secret_sauce=1.4",
        # A manual's stand-ins: a value that names itself, hex-speak, a filler.
        "await team.create('@npm:cli', {token: 'myregistrytoken'})",
        "publish(manifest, tarData, {token: 'my-auth-token-here'})",
        "token: 'deadbeefcafebad', '//registry.foo.com:token': 'blahblahblah'",
        # Manual pages: an option's value named for what goes there, a record's field names.
        "       -p, --passwd-master=FILE\n              Use FILE as the master copy.",
        "git credential-cache --token=NAME",
        "       pw_name:pw_passwd:pw_uid:pw_gid:pw_gecos:pw_dir:pw_shell",
    ],
)
def test_false_positives(text: str) -> None:
    assert DETECTOR.detect(text) == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("123-45-6789", "ssn"),
        ("000-12-3456", "not:ssn"),
        ("666-12-3456", "not:ssn"),
        ("912-12-3456", "not:ssn"),
        ("123-00-4567", "not:ssn"),
        ("123-45-0000", "not:ssn"),
        ("4111 1111 1111 1111", "credit_card"),
        ("4111 1111 1111 1112", None),
        ("4111-1111 1111-1111", None),
        ("GB82 WEST 1234 5698 7654 32", "iban"),
        ("GB82 WEST 1234 5698 7654 33", None),
        ("gb82west12345698765432", "iban"),
        ("+33 1 23 45 67 89", "phone"),
        ("(415) 555-0132", "phone"),
        ("415.555.0132", "phone"),
        ("my number is 467 3395", "phone"),
        ("467 3395", None),
        ("9498777106", None),
        ("2023-01-15", None),
        ("10.15.7.1234", None),
        ("bob@example.com", "email"),
        ("icon@2x.png", None),
        ("strict-uri-encode@npm:^2.0.0", None),
    ],
)
def test_pii_validation(text: str, kind: str | None) -> None:
    found = _kinds(DETECTOR.detect(f"value: {text} ok"))
    if kind is not None and kind.startswith("not:"):
        assert kind[4:] not in found
    else:
        assert found == ([kind] if kind else [])


def test_finding_contract() -> None:
    text = f"key {AWS} and mail bob@example.com"
    aws, email = DETECTOR.detect(text)
    assert aws.rule_id == "secrets.aws_access_key"
    assert aws.detector == "secrets"
    assert aws.category == "credential"
    assert aws.kind == "aws_access_key"
    assert aws.severity is Severity.CRITICAL
    assert aws.view == "raw"
    assert aws.confidence >= BLOCK_THRESHOLD
    assert (email.category, email.kind) == ("pii", "email")
    assert email.confidence < BLOCK_THRESHOLD
    assert AWS not in aws.message and "bob@" not in email.message


def test_private_key_blocks_and_mere_email_does_not() -> None:
    (key,) = DETECTOR.detect(PEM)
    assert key.confidence >= BLOCK_THRESHOLD
    (mail,) = DETECTOR.detect("write to jane@example.org please")
    assert mail.confidence < BLOCK_THRESHOLD


def test_overlaps_prefer_the_specific_kind() -> None:
    text = f"Authorization: Bearer {OPENAI_PROJ}\npassword={GITHUB}\n"
    assert _kinds(DETECTOR.detect(text)) == ["openai_api_key", "github_token"]


def test_findings_are_in_text_order_and_disjoint() -> None:
    text = "\n\n".join(sample.text for sample in ALL)
    findings = DETECTOR.detect(text)
    assert [(f.kind, text[f.start : f.end]) for f in findings] == [
        (sample.kind, sample.secret) for sample in ALL
    ]
    for left, right in itertools.pairwise(findings):
        assert left.end <= right.start


def test_kind_filter_and_unknown_kind() -> None:
    text = f"{AWS} bob@example.com"
    assert _kinds(DETECTOR.detect(text, kinds=["email"])) == ["email"]
    assert DETECTOR.detect(text, kinds=[]) == []
    with pytest.raises(ValueError, match="no_such_kind"):
        DETECTOR.detect(text, kinds=["no_such_kind"])


def test_kinds_describe_the_registry() -> None:
    infos = DETECTOR.kinds
    assert all(isinstance(info, KindInfo) for info in infos)
    assert {info.name for info in infos} == set(REGISTRY)
    assert {info.category for info in infos} == {"credential", "pii"}
    required = {
        "private_key", "aws_access_key", "github_token", "slack_token", "google_api_key",
        "openai_api_key", "anthropic_api_key", "stripe_key", "jwt", "database_uri",
        "bearer_token", "credential_assignment", "ssn", "credit_card", "email", "phone", "iban",
    }  # fmt: skip
    assert required <= set(REGISTRY)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("![x](https://e.example/p.png?password=hunter2xyz9)", "hunter2xyz9"),
        ("![x](https://e.example/p.png?d=PASSWORD=Tr0ub4dor&3x)", "Tr0ub4dor&3x"),
        ("[status](https://e.example/s?d=token=RX5P9LE2XLq8.) Then run it.", "RX5P9LE2XLq8"),
        ("password=ab)cd!x and more", "ab)cd!x"),
    ],
)
def test_a_value_closed_by_a_bracket_is_found_without_it(text: str, value: str) -> None:
    assert [(f.kind, text[f.start : f.end]) for f in DETECTOR.detect(text)] == [
        ("credential_assignment", value)
    ]


@pytest.mark.parametrize(
    "text",
    [
        "password=getpass() now",
        "token=read(path) ok",
        "key=f(x).",
        "repo.create(identity_token=shard_id)",  # a keyword argument, bracket and all
    ],
)
def test_a_call_is_still_no_value(text: str) -> None:
    assert DETECTOR.detect(text) == []


def test_default_is_shared_and_immutable() -> None:
    assert SecretsDetector.default() is DETECTOR
    with pytest.raises(AttributeError):
        DETECTOR.extra = 1  # type: ignore[attr-defined]


def test_linear_time_on_adversarial_input() -> None:
    import time

    nasty = (
        "a" * 20000
        + "@" * 2000
        + "1 " * 20000
        + "password=" * 2000
        + "-----BEGIN RSA PRIVATE KEY-----" * 200
        + "eyJ" * 5000
        + "QUtJQ " * 4000  # a base64 form of "AKIA", too short a run to decode
        + "QUtJQUtJQUtJQUtJQUtJ " * 2000  # the same run again: decoded once
        + "pass\u200bword= " * 2000  # read again around each invisible character
        + "p a s s w o r d %3D " * 2000  # spaced, and percent-encoded
    )
    start = time.perf_counter()
    DETECTOR.detect(nasty)
    assert time.perf_counter() - start < 5.0


@pytest.mark.parametrize(
    "text",
    [
        "https://api.example.com/v1/items?token=RX5P9LE2XLq8",
        "https://collector.example/badge.svg?token=Zx9mQ2vL8kP4QQ",  # not a badge service
        'api_key="sk-live-9f8e7d6c5b4a"',
        # A common password holding "key" or "pass" is still one.
        'password = "monkey"',
        'db_password: "compassion"',
    ],
)
def test_a_token_outside_a_badge_service_and_a_whole_key_are_still_found(text: str) -> None:
    assert "credential_assignment" in _kinds(DETECTOR.detect(text))


@pytest.mark.parametrize(
    "text",
    [
        "card 4111 1111 1111 1111",
        "(4111111111111111)",
        "cc_number=4111111111111111&exp=12",
        "GET /cards/4111111111111111/charges",
    ],
)
def test_a_card_number_standing_apart_is_still_found(text: str) -> None:
    assert _kinds(DETECTOR.detect(text)) == ["credit_card"]
