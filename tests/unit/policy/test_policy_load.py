"""Loading policy files: what is accepted, and the exact text of every error."""

from __future__ import annotations

from pathlib import Path

import pytest

from mithril.gateway.policy import EXAMPLE_POLICY, PolicyBook, PolicyError, hash_key
from mithril.services.secrets.detectors import REGISTRY as SECRET_KINDS

KEY_A = hash_key("mk-tenant-a")
KEY_B = hash_key("mk-tenant-b")
KEY_A_UPPER = "SHA256:" + KEY_A.removeprefix("sha256:").upper()  # the same key, shouting
ENV = {"UPSTREAM_KEY": "sk-upstream-secret-value", "ADMIN": "admin-token-0123456789"}


def problems(text: str, env: dict[str, str] = ENV) -> list[str]:
    with pytest.raises(PolicyError) as caught:
        PolicyBook.from_text(text, source="p.yaml", env=env)
    assert str(caught.value) == "\n".join(caught.value.problems)
    return list(caught.value.problems)


VALID = {
    "only defaults": "defaults: {mode: log}",
    "only version": "version: 1",
    "every section": f"""
version: 1
admin_token_env: ADMIN
defaults:
  mode: monitor
  threshold: 0.7
  detectors: [scanner, secrets, embedding, classifier, judge]
  output: {{mode: block, kinds: [email, private_key]}}
  upstream:
    url: http://localhost:11434/v1/
    api_key_env: UPSTREAM_KEY
    timeout_seconds: 30
    connect_timeout_seconds: 1.5
  models: ["llama3*", "qwen?:7b"]
  max_input_chars: 1000
  scan_system_prompt: true
routes:
  /v1/embeddings: {{detectors: []}}
  /v1/models: {{models: ["*"]}}
tenants:
  a: {{keys: ["{KEY_A}"], routes: {{/v1/scan: {{threshold: 0}}}}}}
  b.team-2: {{keys: ["{KEY_B}"], threshold: 1}}
""",
    "literal secrets": """
admin_token: "a-literal-admin-token"
defaults: {upstream: {api_key: "sk-literal"}}
""",
    "forward client key without gateway keys": "defaults: {upstream: {forward_client_key: true}}",
}


@pytest.mark.parametrize("text", VALID.values(), ids=VALID.keys())
def test_valid_files_load(text: str) -> None:
    book = PolicyBook.from_text(text, source="p.yaml", env=ENV)
    assert book.warnings is not None
    assert book.describe()["source"] == "p.yaml"


ROUTE_LIST = (
    "routes are /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/models,"
    " /v1/scan, /v1/redact"
)
LAYER_OPTIONS = (
    "options are detectors, input_secrets, judge_band, max_input_chars, mode, models, output,"
    " scan_system_prompt, threshold, upstream"
)
DETECTOR_LIST = "detectors are scanner, secrets, embedding, classifier, judge"

INVALID = {
    "misspelt option": (
        "defaults: {treshold: 0.4}",
        [f"p.yaml: defaults.treshold: unknown option (did you mean 'threshold'?); {LAYER_OPTIONS}"],
    ),
    "option at the wrong level": (
        "threshold: 0.4",
        [
            "p.yaml: threshold: unknown option (it belongs under defaults:); options are"
            " admin_token, admin_token_env, defaults, routes, tenants, version"
        ],
    ),
    "upstream option on the layer": (
        "defaults: {url: 'http://x'}",
        [f"p.yaml: defaults.url: unknown option (it belongs under upstream:); {LAYER_OPTIONS}"],
    ),
    "bad mode": (
        "defaults: {mode: blok}",
        ["p.yaml: defaults.mode: expected 'block', 'log' or 'monitor' (got 'blok')"],
    ),
    "threshold above 1": (
        "routes: {/v1/scan: {threshold: 1.5}}",
        ["p.yaml: routes./v1/scan.threshold: must be at most 1 (got 1.5)"],
    ),
    "threshold below 0": (
        "defaults: {threshold: -0.1}",
        ["p.yaml: defaults.threshold: must be at least 0 (got -0.1)"],
    ),
    "yaml reads off as false": (
        "defaults: {mode: off}",
        [
            "p.yaml: defaults.mode: expected 'block', 'log' or 'monitor' (got false; quote"
            " words such as off, on, no, yes)"
        ],
    ),
    "null where a value is needed": (
        "defaults: {mode: null}",
        ["p.yaml: defaults.mode: expected 'block', 'log' or 'monitor' (got null)"],
    ),
    "not a boolean": (
        "defaults: {scan_system_prompt: maybe}",
        ["p.yaml: defaults.scan_system_prompt: expected true or false (got 'maybe')"],
    ),
    "tenant name not a string": (
        "tenants: {7: {}}",
        ["p.yaml: tenants.7: expected a string, got a number"],
    ),
    "threshold not a number": (
        "defaults: {threshold: high}",
        ["p.yaml: defaults.threshold: expected a number (got 'high')"],
    ),
    "unknown route": (
        "routes: {/v1/chat: {mode: log}}",
        [
            "p.yaml: routes./v1/chat: unknown route '/v1/chat' (did you mean"
            f" '/v1/chat/completions'?); {ROUTE_LIST}"
        ],
    ),
    "unknown tenant route": (
        "tenants: {a: {routes: {/v1/embedding: {}}}}",
        [
            "p.yaml: tenants.a.routes./v1/embedding: unknown route '/v1/embedding' (did you"
            f" mean '/v1/embeddings'?); {ROUTE_LIST}"
        ],
    ),
    "unknown detector": (
        "defaults: {detectors: [scanner, secret]}",
        [
            "p.yaml: defaults.detectors[1]: unknown detector 'secret' (did you mean"
            f" 'secrets'?); {DETECTOR_LIST}"
        ],
    ),
    "detector twice": (
        "defaults: {detectors: [scanner, scanner]}",
        ["p.yaml: defaults.detectors: 'scanner' is listed twice"],
    ),
    "unknown output kind": (
        "defaults: {output: {kinds: [emial]}}",
        [
            "p.yaml: defaults.output.kinds[0]: unknown secret kind 'emial' (did you mean"
            f" 'email'?); kinds are {', '.join(SECRET_KINDS)}"
        ],
    ),
    "bad output mode": (
        "defaults: {output: {mode: mask}}",
        ["p.yaml: defaults.output.mode: expected 'block', 'redact' or 'log' (got 'mask')"],
    ),
    "upstream not http": (
        "defaults: {upstream: {url: 'ftp://x/v1'}}",
        ["p.yaml: defaults.upstream.url: must be an http(s) URL such as https://api.openai.com/v1"],
    ),
    "upstream with credentials": (
        "defaults: {upstream: {url: 'https://user:sk-in-url@x/v1'}}",
        ["p.yaml: defaults.upstream.url: must not carry credentials; put the key in api_key_env"],
    ),
    "both key sources": (
        "defaults: {upstream: {api_key: sk-1, api_key_env: UPSTREAM_KEY}}",
        ["p.yaml: defaults.upstream: set api_key or api_key_env, not both"],
    ),
    "missing env var": (
        "tenants: {a: {upstream: {api_key_env: NOT_THERE}}}",
        ["p.yaml: tenants.a.upstream.api_key_env: environment variable NOT_THERE is not set"],
    ),
    "bad env var name": (
        "defaults: {upstream: {api_key_env: 'sk-oops'}}",
        ["p.yaml: defaults.upstream.api_key_env: 'sk-oops' is not an environment variable name"],
    ),
    "zero timeout": (
        "defaults: {upstream: {timeout_seconds: 0}}",
        ["p.yaml: defaults.upstream.timeout_seconds: must be greater than 0 (got 0)"],
    ),
    "fractional size": (
        "defaults: {max_input_chars: 10.5}",
        ["p.yaml: defaults.max_input_chars: expected a whole number (got 10.5)"],
    ),
    "empty model glob": (
        "defaults: {models: ['']}",
        [
            "p.yaml: defaults.models[0]: a model name or glob must be non-empty, without"
            " surrounding spaces"
        ],
    ),
    "raw key instead of hash": (
        "tenants: {a: {keys: [mk-my-raw-key]}}",
        [
            "p.yaml: tenants.a.keys[0]: not a key hash: store 'sha256:<64 hex digits>', never"
            " the key itself (`mithril policy hash-key KEY` prints it)"
        ],
    ),
    "short hash": (
        "tenants: {a: {keys: ['sha256:abcd']}}",
        ["p.yaml: tenants.a.keys[0]: malformed key hash: expected 'sha256:' and 64 hex digits"],
    ),
    "same key in two tenants": (
        f"tenants: {{a: {{keys: [{KEY_A}]}}, b: {{keys: [{KEY_B}, {KEY_A_UPPER}]}}}}",
        [
            "p.yaml: tenants.b.keys[1]: the same key is already a key of tenant 'a' (a key"
            " identifies one tenant)"
        ],
    ),
    "same key twice in a tenant": (
        f"tenants: {{a: {{keys: [{KEY_A}, {KEY_A}]}}}}",
        ["p.yaml: tenants.a.keys[1]: the same key is listed twice"],
    ),
    "bad tenant name": (
        "tenants: {'acme corp': {}}",
        [
            "p.yaml: tenants.acme corp: tenant name 'acme corp' must be 1-64 letters, digits,"
            " '_', '.' or '-', starting with a letter or digit"
        ],
    ),
    "tenant not a mapping": (
        "tenants: {a: [x]}",
        ["p.yaml: tenants.a: expected a mapping, got a list"],
    ),
    "forwarding a gateway key": (
        f"tenants: {{a: {{keys: [{KEY_A}], upstream: {{forward_client_key: true}}}}}}",
        [
            "p.yaml: tenants.a.upstream.forward_client_key: cannot be true while gateway keys"
            " are on: the caller's Authorization header carries its gateway key, not an"
            " upstream one"
        ],
    ),
    "wrong version": ("version: 2", ["p.yaml: version: expected 1 (got 2)"]),
    "short admin token": (
        "admin_token: short",
        ["p.yaml: admin_token: is too short; use at least 16 characters"],
    ),
    "short admin token in env": (
        "admin_token_env: SHORT",
        [
            "p.yaml: admin_token_env: environment variable SHORT is too short; use at least 16"
            " characters"
        ],
    ),
    "both admin token sources": (
        "admin_token: a-long-enough-admin-token\nadmin_token_env: ADMIN",
        ["p.yaml: set admin_token or admin_token_env, not both"],
    ),
    "empty env var": (
        "admin_token_env: BLANK",
        ["p.yaml: admin_token_env: environment variable BLANK is empty"],
    ),
    "empty file": ("", ["p.yaml: the file is empty; expected a mapping such as `tenants: {...}`"]),
    "top level list": (
        "- a\n- b",
        ["p.yaml: the top level must be a mapping, not a list or value"],
    ),
    "yaml syntax": (
        "defaults:\n  mode: log\n  threshold: [0.5\n",
        [
            "p.yaml: line 4, column 1: expected ',' or ']', but got '<stream end>'"
            " (while parsing a flow sequence)"
        ],
    ),
    "duplicate yaml key": (
        "tenants:\n  a: {}\n  b: {}\n  a: {mode: log}\n",
        ["p.yaml: line 4, column 3: duplicate key 'a' (first at line 2)"],
    ),
}


@pytest.mark.parametrize(("text", "expected"), INVALID.values(), ids=INVALID.keys())
def test_invalid_files_say_exactly_what_is_wrong(text: str, expected: list[str]) -> None:
    env = {**ENV, "SHORT": "0123456789", "BLANK": "  "}
    assert problems(text, env) == expected


def test_every_problem_is_reported_at_once() -> None:
    text = f"""
admin_token_env: MISSING_ADMIN
defaults:
  mode: blok
  upstream: {{api_key_env: MISSING_UPSTREAM}}
routes:
  /v1/chat: {{}}
tenants:
  a: {{keys: [{KEY_A}], threshold: 2}}
  b: {{keys: [{KEY_A}], detectors: [judge, bogus]}}
"""
    found = problems(text)
    assert [line.split(":")[1].strip() for line in found] == [
        "defaults.mode",
        "routes./v1/chat",
        "tenants.a.threshold",
        "tenants.b.detectors[1]",
        "admin_token_env",
        "tenants.b.keys[0]",
        "defaults.upstream.api_key_env",
    ]


def test_warnings_for_unreachable_tenants() -> None:
    book = PolicyBook.from_text(
        f"tenants: {{a: {{keys: [{KEY_A}]}}, b: {{detectors: [scanner, judge]}}}}", env={}
    )
    assert book.warnings == ("tenants.b: has no keys, so no caller can reach it",)
    keyless = PolicyBook.from_text("tenants: {a: {mode: log}}", env={})
    assert keyless.warnings == (
        "tenants.a: no tenant has keys, so every caller is tenant 'default' and this tenant"
        " is never used",
    )


def test_load_reads_files_and_reports_unreadable_ones(tmp_path: Path) -> None:
    path = tmp_path / "policy.yaml"
    path.write_text("defaults: {mode: log}\n")
    assert PolicyBook.load(path, env={}).resolve("default", "/v1/scan").mode == "log"
    with pytest.raises(PolicyError, match=r"missing\.yaml: cannot read: No such file"):
        PolicyBook.load(tmp_path / "missing.yaml", env={})
    path.write_bytes(b"defaults: {mode: \xff}\n")
    with pytest.raises(PolicyError, match=r"policy\.yaml: not UTF-8 text"):
        PolicyBook.load(path, env={})
    path.write_text("defaults: {mode: blok}\n")
    with pytest.raises(PolicyError) as caught:
        PolicyBook.load(path, env={})
    assert caught.value.problems[0].startswith(f"{path}: defaults.mode: ")


def test_example_policy_validates() -> None:
    env = {
        "MITHRIL_ADMIN_TOKEN": "example-admin-token-123",
        "OPENAI_API_KEY": "sk-example",
        "RESEARCH_VLLM_KEY": "vllm-example",
    }
    book = PolicyBook.load(Path(EXAMPLE_POLICY), env=env)
    assert book.tenant_names == ("acme", "research")
    assert book.requires_keys
    assert book.admin_token == "example-admin-token-123"
    assert book.resolve("research", "/v1/chat/completions").mode == "monitor"
    assert book.warnings == ()


def test_example_policy_shows_every_option() -> None:
    from mithril.gateway.policy import OutputPolicy, PolicyFile, TenantConfig, UpstreamPolicy

    text = Path(EXAMPLE_POLICY).read_text()
    for model in (PolicyFile, TenantConfig, OutputPolicy, UpstreamPolicy):
        for name in model.model_fields:
            assert f"{name}:" in text or f"`{name}: " in text, f"{model.__name__}.{name}"


def test_example_policy_defaults_are_the_built_in_values() -> None:
    """The file says its `defaults:` show the built-in values; only where the upstream
    key comes from is the example's own."""
    import yaml

    from mithril.gateway.policy import PolicyFile

    shown = PolicyFile.model_validate(yaml.safe_load(Path(EXAMPLE_POLICY).read_text())).defaults
    built_in = PolicyFile().defaults
    assert shown.model_fields_set >= {"mode", "detectors", "input_secrets", "output", "upstream"}
    for name in shown.model_fields_set - {"upstream"}:
        assert getattr(shown, name) == getattr(built_in, name), name
    assert shown.upstream.model_copy(update={"api_key_env": None}) == built_in.upstream


def test_open_default_and_its_overrides() -> None:
    book = PolicyBook.open_default(env={})
    assert not book.requires_keys
    assert book.tenant_names == ("default",)
    assert book.admin_token is None
    policy = book.resolve("default", "/v1/chat/completions")
    assert (policy.mode, policy.threshold, policy.detectors) == (
        "block",
        0.5,
        ("scanner", "secrets", "embedding", "classifier", "judge"),
    )
    assert policy.upstream.forward_client_key
    tuned = PolicyBook.open_default(
        env={}, mode="log", threshold=0.8, upstream={"url": "http://127.0.0.1:9/v1"}
    )
    policy = tuned.resolve("default", "/v1/scan")
    assert (policy.mode, policy.threshold) == ("log", 0.8)
    assert (policy.upstream.url, policy.upstream.forward_client_key) == (
        "http://127.0.0.1:9/v1",
        True,
    )
    with pytest.raises(PolicyError, match=r"defaults\.threshold: must be at most 1"):
        PolicyBook.open_default(env={}, threshold=3)
