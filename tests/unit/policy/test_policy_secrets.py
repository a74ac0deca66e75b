"""Upstream keys and the admin token never show: repr, str, describe, dumps, errors."""

from __future__ import annotations

import json
import logging

import pytest

from mithril.gateway.policy import ROUTES, PolicyBook, PolicyError, hash_key

UPSTREAM_SECRET = "sk-proj-UPSTREAMSECRET0123456789"
LITERAL_SECRET = "sk-ant-LITERALSECRET0123456789"
ADMIN_SECRET = "admin-SECRET-0123456789abcdef"
SECRETS = (UPSTREAM_SECRET, LITERAL_SECRET, ADMIN_SECRET)

TEXT = f"""
admin_token_env: ADMIN
defaults:
  upstream: {{api_key_env: UPSTREAM}}
tenants:
  acme:
    keys: [{hash_key("mk-acme")}]
    upstream: {{api_key: "{LITERAL_SECRET}"}}
  beta:
    keys: [{hash_key("mk-beta")}]
"""
ENV = {"UPSTREAM": UPSTREAM_SECRET, "ADMIN": ADMIN_SECRET}


@pytest.fixture(scope="module")
def book() -> PolicyBook:
    return PolicyBook.from_text(TEXT, env=ENV)


def assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text
        assert secret[8:20] not in text  # no fragment either


def test_the_keys_are_there_for_the_gateway(book: PolicyBook) -> None:
    beta = book.resolve("beta", "/v1/chat/completions").upstream.api_key
    acme = book.resolve("acme", "/v1/chat/completions").upstream.api_key
    assert beta is not None and beta.get_secret_value() == UPSTREAM_SECRET
    assert acme is not None and acme.get_secret_value() == LITERAL_SECRET
    assert book.admin_token == ADMIN_SECRET


def test_nothing_printable_holds_a_secret(
    book: PolicyBook, caplog: pytest.LogCaptureFixture
) -> None:
    outputs = [repr(book), str(book), json.dumps(book.describe()), book.fingerprint]
    outputs += [repr(book.file), str(book.file), book.file.model_dump_json()]
    outputs.append(repr(book.file.model_dump()))
    for name in book.tenant_names:
        for route in ROUTES:
            policy = book.resolve(name, route)
            outputs += [repr(policy), str(policy), policy.model_dump_json()]
            outputs += [repr(policy.model_dump()), repr(policy.upstream), f"{policy.upstream}"]
    with caplog.at_level(logging.DEBUG):
        logging.getLogger("test").info("policy %s %s", book, book.resolve("acme", "/v1/scan"))
    outputs.append(caplog.text)
    for text in outputs:
        assert_clean(text)


def test_describe_masks_and_names_the_key_source(book: PolicyBook) -> None:
    summary = book.describe()
    assert summary["admin_token"] == "$ADMIN"
    acme = summary["tenants"]["acme"]["routes"]["/v1/scan"]["upstream"]
    beta = summary["tenants"]["beta"]["routes"]["/v1/scan"]["upstream"]
    assert (acme["api_key"], acme["key_source"]) == ("**********", "policy file")
    assert (beta["api_key"], beta["key_source"]) == ("**********", "$UPSTREAM")
    assert summary["tenants"]["acme"]["keys"] == [f"{hash_key('mk-acme')[:19]}…"]


@pytest.mark.parametrize(
    "text",
    [
        # a secret in a field of the wrong type, a misspelt field, a malformed URL, a raw
        # key in keys: the error names the place, never the value
        f"defaults: {{upstream: {{api_key: [{LITERAL_SECRET}]}}}}",
        f"defaults: {{upstream: {{apikey: {LITERAL_SECRET}}}}}",
        f"defaults: {{upstream: {{url: 'https://x:{LITERAL_SECRET}@h/v1'}}}}",
        f"tenants: {{a: {{keys: [{LITERAL_SECRET}]}}}}",
        f"tenants: {{a: {{keys: ['sha256:{LITERAL_SECRET}']}}}}",
        f"admin_token: ['{ADMIN_SECRET}']",
        f"defaults: {{upstream: {{api_key: {LITERAL_SECRET}, api_key_env: UPSTREAM}}}}",
    ],
)
def test_errors_never_echo_a_secret(text: str) -> None:
    with pytest.raises(PolicyError) as caught:
        PolicyBook.from_text(text, env=ENV)
    assert_clean(str(caught.value))
    assert_clean(repr(caught.value.__cause__))
