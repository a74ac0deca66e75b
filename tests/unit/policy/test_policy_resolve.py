"""Resolving the effective policy: precedence, field-level merge, model allow-lists."""

from __future__ import annotations

import pytest

from mithril.gateway.decision import FactsAction, Mode, Policy
from mithril.gateway.policy import (
    ROUTES,
    PolicyBook,
    PolicyLayer,
    RoutePolicy,
    Tenant,
    TenantConfig,
    hash_key,
)

ENV = {"BASE_KEY": "sk-base", "ACME_KEY": "sk-acme"}

LAYERED = f"""
defaults:
  threshold: 0.6
  detectors: [scanner]
  output: {{mode: log, kinds: [email]}}
  upstream: {{url: "https://base.example/v1", api_key_env: BASE_KEY, timeout_seconds: 10}}
routes:
  /v1/chat/completions:
    threshold: 0.7
    output: {{mode: block}}
  /v1/embeddings:
    detectors: [secrets]
tenants:
  acme:
    keys: [{hash_key("mk-acme")}]
    threshold: 0.8
    upstream: {{api_key: "sk-literal-acme"}}
    routes:
      /v1/chat/completions:
        threshold: 0.9
        upstream: {{url: "https://acme.example/v1"}}
  beta:
    keys: [{hash_key("mk-beta")}]
    mode: monitor
"""


@pytest.fixture(scope="module")
def book() -> PolicyBook:
    return PolicyBook.from_text(LAYERED, env=ENV)


@pytest.mark.parametrize(
    ("tenant", "route", "threshold"),
    [
        ("default", "/v1/scan", 0.6),  # file defaults
        ("default", "/v1/chat/completions", 0.7),  # file route beats defaults
        ("beta", "/v1/chat/completions", 0.7),  # a tenant that does not set it
        ("acme", "/v1/scan", 0.8),  # tenant beats file defaults
        ("acme", "/v1/embeddings", 0.8),
        ("acme", "/v1/chat/completions", 0.9),  # tenant route beats everything
    ],
)
def test_precedence(book: PolicyBook, tenant: str, route: str, threshold: float) -> None:
    assert book.resolve(Tenant(tenant), route).threshold == threshold


def test_tenant_option_beats_file_route(book: PolicyBook) -> None:
    # routes[/v1/embeddings] sets detectors, beta sets nothing: the route applies
    assert book.resolve("beta", "/v1/embeddings").detectors == ("secrets",)
    # built-in defaults only where nothing is written
    assert book.resolve("beta", "/v1/scan").max_input_chars == 1_048_576
    assert book.resolve("beta", "/v1/scan").mode == "monitor"


def test_nested_sections_merge_field_by_field(book: PolicyBook) -> None:
    chat = book.resolve("default", "/v1/chat/completions")
    assert (chat.output.mode, chat.output.kinds) == ("block", ("email",))
    acme = book.resolve("acme", "/v1/chat/completions").upstream
    assert acme.url == "https://acme.example/v1"  # tenant route
    assert acme.timeout_seconds == 10  # file defaults
    assert acme.connect_timeout_seconds == 5  # built-in


def test_a_layer_naming_a_key_replaces_the_key_source(book: PolicyBook) -> None:
    base = book.resolve("default", "/v1/scan").upstream
    assert base.api_key is not None and base.api_key.get_secret_value() == "sk-base"
    assert (base.api_key_env, base.key_source) == ("BASE_KEY", "$BASE_KEY")
    acme = book.resolve("acme", "/v1/scan").upstream
    assert acme.api_key is not None and acme.api_key.get_secret_value() == "sk-literal-acme"
    assert (acme.api_key_env, acme.key_source) == (None, "policy file")


def test_every_tenant_and_route_resolves(book: PolicyBook) -> None:
    for name in ("default", "acme", "beta"):
        for route in ROUTES:
            assert isinstance(book.resolve(name, route), RoutePolicy)
    with pytest.raises(KeyError, match="unknown route '/v2/x'"):
        book.resolve("acme", "/v2/x")
    with pytest.raises(KeyError, match="unknown tenant 'nobody'"):
        book.resolve("nobody", "/v1/scan")


def test_effective_policies_are_immutable(book: PolicyBook) -> None:
    policy = book.resolve("acme", "/v1/scan")
    with pytest.raises(ValueError, match="frozen"):
        policy.threshold = 0.1  # type: ignore[misc]


@pytest.mark.parametrize(
    ("mode", "decision", "output_mode"),
    [
        ("block", Policy(Mode.BLOCK, 0.5, frozenset({"scanner", "judge"})), "redact"),
        ("log", Policy(Mode.LOG, 0.5, frozenset({"scanner", "judge"})), "redact"),
        ("monitor", Policy(Mode.MONITOR, 0.5, frozenset({"scanner", "judge"})), "log"),
    ],
)
def test_modes_map_onto_the_decision(mode: str, decision: Policy, output_mode: str) -> None:
    policy = RoutePolicy.model_validate({"mode": mode, "detectors": ["scanner", "judge"]})
    assert policy.decision_policy == decision
    assert policy.output_mode == output_mode
    assert policy.monitor is (mode == "monitor")


@pytest.mark.parametrize(
    ("written", "facts"),
    [({}, FactsAction.REDACT)] + [({"input_secrets": f.value}, f) for f in FactsAction],
)
def test_input_secrets_map_onto_the_decision(written: dict[str, str], facts: FactsAction) -> None:
    assert RoutePolicy.model_validate(written).decision_policy.facts is facts


def test_input_secrets_take_only_the_three_actions() -> None:
    with pytest.raises(ValueError, match="'block', 'redact' or 'log'"):
        RoutePolicy.model_validate({"input_secrets": "drop"})


@pytest.mark.parametrize(
    ("patterns", "model", "allowed"),
    [
        ([], "anything-at-all", True),
        (["gpt-4o*"], "gpt-4o", True),
        (["gpt-4o*"], "gpt-4o-mini-2024-07-18", True),
        (["gpt-4o*"], "gpt-4", False),
        (["gpt-4o*"], "GPT-4o", False),  # case-sensitive, as model names are
        (["gpt-4o*"], "my-gpt-4o", False),  # anchored at both ends
        (["llama3:?b"], "llama3:8b", True),
        (["llama3:?b"], "llama3:70b", False),
        (["o[13]-mini"], "o3-mini", True),
        (["o[13]-mini"], "o2-mini", False),
        (["a", "b*"], "bert", True),
    ],
)
def test_model_allow_list_globs(patterns: list[str], model: str, allowed: bool) -> None:
    book = PolicyBook.from_text(f"defaults: {{models: {patterns!r}}}", env={})
    policy = book.resolve("default", "/v1/chat/completions")
    assert book.model_allowed(policy, model) is allowed
    assert policy.model_allowed(model) is allowed


def test_layer_models_have_the_same_options() -> None:
    # TenantConfig and RoutePolicy share PolicyLayer's options; a tenant adds keys and routes.
    assert set(RoutePolicy.model_fields) == set(PolicyLayer.model_fields)
    assert set(TenantConfig.model_fields) == set(PolicyLayer.model_fields) | {"keys", "routes"}


def test_upstream_url_is_normalised() -> None:
    book = PolicyBook.from_text("defaults: {upstream: {url: ' http://h:8000/v1/ '}}", env={})
    upstream = book.resolve("default", "/v1/completions").upstream
    assert (upstream.url, upstream.host) == ("http://h:8000/v1", "h:8000")
