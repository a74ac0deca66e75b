"""Gateway API keys: hashing, bearer parsing, tenant lookup, constant-time comparison."""

from __future__ import annotations

import hashlib
import hmac
import re

import pytest

from mithril.gateway.policy import PolicyBook, Tenant, bearer_token, hash_key, new_key
from mithril.gateway.policy import book as book_module

ACME_KEY = "mk-acme-0123456789"
ACME_OLD_KEY = "mk-acme-old-key"
BETA_KEY = "mk-beta-0123456789"


@pytest.fixture(scope="module")
def book() -> PolicyBook:
    return PolicyBook.from_text(
        f"""
tenants:
  acme: {{keys: [{hash_key(ACME_KEY)}, {hash_key(ACME_OLD_KEY)}]}}
  beta: {{keys: [{hash_key(BETA_KEY)}]}}
""",
        env={},
    )


def test_hash_key_is_sha256_of_the_utf8_key() -> None:
    assert hash_key("abc") == "sha256:" + hashlib.sha256(b"abc").hexdigest()
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", hash_key("ключ"))


def test_new_keys_are_random_and_well_formed() -> None:
    keys = {new_key() for _ in range(50)}
    assert len(keys) == 50
    for key in keys:
        assert re.fullmatch(r"mk-[A-Za-z0-9_-]{40}", key)


@pytest.mark.parametrize(
    ("header", "token"),
    [
        ("Bearer abc", "abc"),
        ("bearer abc", "abc"),
        ("BEARER   abc  ", "abc"),
        ("  Bearer abc", "abc"),
        ("Bearer", None),
        ("Bearer ", None),
        ("Basic abc", None),
        ("abc", None),
        ("", None),
        (None, None),
    ],
)
def test_bearer_parsing(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_each_key_finds_its_tenant(book: PolicyBook) -> None:
    assert book.requires_keys
    assert book.authenticate(f"Bearer {ACME_KEY}") == Tenant("acme")
    assert book.authenticate(f"bearer {ACME_OLD_KEY}") == Tenant("acme")
    beta = book.authenticate(f"Bearer {BETA_KEY}")
    assert beta is not None and beta.name == "beta"
    assert beta.key_id == hash_key(BETA_KEY)[7:19]


@pytest.mark.parametrize(
    "header",
    [
        None,
        "",
        "Bearer",
        f"Basic {ACME_KEY}",
        "Bearer mk-wrong",
        f"Bearer {ACME_KEY}x",
        f"Bearer {hash_key(ACME_KEY)}",  # the stored hash is not a key
        f"Bearer {ACME_KEY.upper()}",
    ],
)
def test_missing_or_wrong_keys_are_refused(book: PolicyBook, header: str | None) -> None:
    assert book.authenticate(header) is None


def test_without_keys_every_caller_is_default() -> None:
    book = PolicyBook.from_text("defaults: {mode: log}", env={})
    assert not book.requires_keys
    for header in (None, "", "Bearer sk-their-own-openai-key", "garbage"):
        assert book.authenticate(header) == Tenant("default")


def test_keys_are_compared_in_constant_time_all_of_them(
    book: PolicyBook, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(book_module.hmac, "compare_digest", spy)
    assert book.authenticate(f"Bearer {ACME_KEY}") == Tenant("acme")
    # every stored hash is compared even after the first one matched
    assert len(calls) == 3
    presented = hashlib.sha256(ACME_KEY.encode()).digest()
    assert all(b == presented for _, b in calls)
    calls.clear()
    assert book.authenticate("Bearer mk-nope") is None
    assert len(calls) == 3
