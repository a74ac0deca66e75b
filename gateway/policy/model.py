"""The policy file's schema: pydantic models, strict about every name and value.

One set of fields (`PolicyLayer`) serves every level of the file: `defaults`, `routes`, each
tenant and each tenant's `routes`. A layer only contributes the fields it writes, so an
effective `RoutePolicy` is the built-in defaults overlaid, field by field (nested `output`
and `upstream` included), by every layer that applies. `extra="forbid"` everywhere: a
misspelt option is an error, never silently ignored.
"""

from __future__ import annotations

import dataclasses
import difflib
import fnmatch
import functools
import re
from typing import Annotated, Literal
from urllib.parse import urlsplit

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    SecretStr,
    field_validator,
    model_validator,
)

from mithril.gateway.decision import FactsAction, Mode, Policy
from mithril.gateway.detectors import AVAILABLE
from mithril.services.secrets.detectors import REGISTRY as SECRET_KINDS

ROUTES: tuple[str, ...] = (
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/embeddings",
    "/v1/models",
    "/v1/scan",
    "/v1/redact",
)
"""Route paths a policy can address; `/v1/models` only uses `upstream` and `models`."""

DETECTORS: tuple[str, ...] = ("scanner", "secrets", "embedding", "classifier", "judge")
"""Detector names a policy may list; see `detector_available` for what this build runs."""

DEFAULT_UPSTREAM_URL = "https://api.openai.com/v1"
MIN_ADMIN_TOKEN_CHARS = 16
KEY_HASH = re.compile(r"sha256:[0-9a-f]{64}")
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TENANT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def detector_available(name: str) -> bool:
    """Whether this build can run detector `name`."""
    return name in AVAILABLE


def suggest(word: str, choices: tuple[str, ...] | list[str]) -> str:
    """' (did you mean 'x'?)' for the closest choice, or ''."""
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _route(value: str) -> str:
    if value not in ROUTES:
        longer = [route for route in ROUTES if value and route.startswith(value)]
        hint = f" (did you mean {longer[0]!r}?)" if len(longer) == 1 else suggest(value, ROUTES)
        raise ValueError(f"unknown route {value!r}{hint}; routes are {', '.join(ROUTES)}")
    return value


def _detector(value: str) -> str:
    if value not in DETECTORS:
        raise ValueError(
            f"unknown detector {value!r}{suggest(value, DETECTORS)};"
            f" detectors are {', '.join(DETECTORS)}"
        )
    return value


def _kind(value: str) -> str:
    if value not in SECRET_KINDS:
        raise ValueError(
            f"unknown secret kind {value!r}{suggest(value, list(SECRET_KINDS))};"
            f" kinds are {', '.join(SECRET_KINDS)}"
        )
    return value


def _model_pattern(value: str) -> str:
    if not value.strip() or value != value.strip():
        raise ValueError("a model name or glob must be non-empty, without surrounding spaces")
    return value


def _key_hash(value: object) -> object:
    # Before validation, so a raw key put here by mistake is never echoed back.
    if not isinstance(value, str):
        return value
    normal = value.strip().lower()
    if KEY_HASH.fullmatch(normal):
        return normal
    if normal.startswith("sha256:"):
        raise ValueError("malformed key hash: expected 'sha256:' and 64 hex digits")
    raise ValueError(
        "not a key hash: store 'sha256:<64 hex digits>', never the key itself"
        " (`mithril policy hash-key KEY` prints it)"
    )


def _env_name(value: str) -> str:
    if not ENV_NAME.fullmatch(value):
        raise ValueError(f"{value!r} is not an environment variable name")
    return value


def _tenant_name(value: str) -> str:
    if not TENANT_NAME.fullmatch(value):
        raise ValueError(
            f"tenant name {value!r} must be 1-64 letters, digits, '_', '.' or '-',"
            " starting with a letter or digit"
        )
    return value


RouteName = Annotated[str, AfterValidator(_route)]
DetectorName = Annotated[str, AfterValidator(_detector)]
SecretKind = Annotated[str, AfterValidator(_kind)]
ModelPattern = Annotated[str, AfterValidator(_model_pattern)]
KeyHash = Annotated[str, BeforeValidator(_key_hash)]
EnvName = Annotated[str, AfterValidator(_env_name)]
TenantName = Annotated[str, AfterValidator(_tenant_name)]


def _no_duplicates(values: tuple[str, ...]) -> tuple[str, ...]:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"{value!r} is listed twice")
        seen.add(value)
    return values


class _Strict(BaseModel):
    # hide_input_in_errors: a raw ValidationError, if ever printed, never shows a value.
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)


class OutputPolicy(_Strict):
    """What happens to a credential or personal data found in a completion."""

    mode: Literal["block", "redact", "log"] = "redact"
    """block: answer 403; redact: replace each with `[REDACTED:<kind>]`; log: record only."""
    kinds: Annotated[tuple[SecretKind, ...], AfterValidator(_no_duplicates)] = ()
    """Secret kinds this applies to; empty means every kind."""


class UpstreamPolicy(_Strict):
    """Where requests go, and with which key."""

    url: str = DEFAULT_UPSTREAM_URL
    """Base URL, like the OpenAI SDK's `base_url` (`http://localhost:11434/v1` for Ollama)."""
    api_key: SecretStr | None = None
    """A literal key (discouraged: prefer `api_key_env`). Never printed or logged."""
    api_key_env: EnvName | None = None
    """Name of an environment variable holding the key; read when the policy is loaded."""
    forward_client_key: bool = False
    """With no key configured, pass the caller's own `Authorization` upstream (only when
    gateway keys are off, or it would be the gateway key)."""
    timeout_seconds: float = Field(60.0, gt=0)
    connect_timeout_seconds: float = Field(5.0, gt=0)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("must be an http(s) URL such as https://api.openai.com/v1")
        if parts.username is not None or parts.password is not None:
            # Checked before anything could echo the URL.
            raise ValueError("must not carry credentials; put the key in api_key_env")
        if parts.query or parts.fragment:
            raise ValueError("must be a base URL, without a query or fragment")
        return value.strip().rstrip("/")

    @field_validator("api_key")
    @classmethod
    def _api_key(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("is empty")
        return value

    @model_validator(mode="after")
    def _one_key_source(self) -> UpstreamPolicy:
        if self.api_key is not None and self.api_key_env is not None:
            raise ValueError("set api_key or api_key_env, not both")
        return self

    @property
    def host(self) -> str:
        return urlsplit(self.url).netloc

    @property
    def key_source(self) -> str:
        """Where the upstream key comes from, for people (never the key)."""
        if self.api_key_env is not None:
            return f"${self.api_key_env}"
        if self.api_key is not None:
            return "policy file"
        return "client" if self.forward_client_key else "none"


class PolicyLayer(_Strict):
    """Every policy option. In a file, a layer sets only the options it writes; the rest
    come from the layers beneath it."""

    mode: Literal["block", "log", "monitor"] = "block"
    """block: flagged input is refused (403) and an unreachable detector fails closed (503);
    log: flagged input is recorded and allowed, and the output mode still applies;
    monitor: decide and record, never block or alter anything, and fail open."""
    threshold: float = Field(0.5, ge=0, le=1)
    """Score at or above which content is flagged."""
    detectors: Annotated[tuple[DetectorName, ...], AfterValidator(_no_duplicates)] = (
        "scanner",
        "secrets",
        "embedding",
        "classifier",
        "judge",
    )
    """Detectors run on the input, by name: the fast tier (scanner, secrets), then the
    learned tiers (embedding, classifier) below the threshold, then the judge on the
    ambiguous band. A deployment runs only the tiers it has (GATEWAY_LEARNED_TIERS)."""
    input_secrets: Literal["block", "redact", "log"] = "redact"
    """Credentials and personal data in the input, when nothing in it reads as an attack:
    redact: forward it with each replaced by `[REDACTED:<kind>]`; block: refuse it (403);
    log: record and forward it untouched. Only `mode: block` alters or refuses input."""
    output: OutputPolicy = OutputPolicy()
    upstream: UpstreamPolicy = UpstreamPolicy()
    models: tuple[ModelPattern, ...] = ()
    """Allow-list of model names or fnmatch globs (`gpt-4o*`); empty allows every model."""
    max_input_chars: int = Field(1_048_576, gt=0)
    """Longest input accepted (all scanned text of one request), in characters; 413 beyond."""
    scan_system_prompt: bool = False
    """Scan the application's own system prompt too (trusted by default)."""
    judge_band: tuple[float, float] = (0.25, 0.75)
    """The ambiguous band: the judge (when listed in `detectors`) is asked only about texts
    whose attack score after the learned tiers falls in [low, high)."""

    @field_validator("judge_band")
    @classmethod
    def _band(cls, value: tuple[float, float]) -> tuple[float, float]:
        low, high = value
        if not 0 <= low < high <= 1:
            raise ValueError("must be [low, high] with 0 <= low < high <= 1")
        return value


class RoutePolicy(PolicyLayer):
    """The effective policy of one (tenant, route): every option resolved."""

    @property
    def monitor(self) -> bool:
        return self.mode == "monitor"

    @property
    def runnable_detectors(self) -> frozenset[str]:
        """The listed detectors this build can run (the others are skipped)."""
        return frozenset(d for d in self.detectors if detector_available(d))

    @functools.cached_property
    def decision_policy(self) -> Policy:
        """The input decision's policy: mode, threshold and the detectors to run (built
        once: a resolved policy is frozen and cached by the book)."""
        return Policy(
            Mode(self.mode),
            self.threshold,
            self.runnable_detectors,
            self.judge_band,
            FactsAction(self.input_secrets),
        )

    @functools.cached_property
    def scan_output_policy(self) -> Policy:
        """The policy of a scan of text travelling out (`/v1/scan`, FirewallService): the
        input's, except that credentials and personal data follow the output mode."""
        return dataclasses.replace(self.decision_policy, facts=FactsAction(self.output_mode))

    @property
    def output_mode(self) -> Literal["block", "redact", "log"]:
        """What to do with output findings; monitor never alters a response, so `log`."""
        return "log" if self.monitor else self.output.mode

    def model_allowed(self, model: str) -> bool:
        return not self.models or any(fnmatch.fnmatchcase(model, p) for p in self.models)


class TenantConfig(PolicyLayer):
    """One tenant: its API keys (hashed), its overrides, and per-route overrides."""

    keys: tuple[KeyHash, ...] = ()
    """`sha256:<hex>` hashes of the tenant's gateway API keys (`mithril policy new-key`)."""
    routes: dict[RouteName, PolicyLayer] = {}


class PolicyFile(_Strict):
    """The whole file."""

    version: Literal[1] = 1
    admin_token: SecretStr | None = None
    """Guards the admin endpoints and the dashboard (discouraged: prefer admin_token_env)."""
    admin_token_env: EnvName | None = None
    """Name of an environment variable holding the admin token."""
    defaults: PolicyLayer = PolicyLayer()
    routes: dict[RouteName, PolicyLayer] = {}
    tenants: dict[TenantName, TenantConfig] = {}

    @field_validator("admin_token")
    @classmethod
    def _admin_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value()) < MIN_ADMIN_TOKEN_CHARS:
            raise ValueError(f"is too short; use at least {MIN_ADMIN_TOKEN_CHARS} characters")
        return value

    @model_validator(mode="after")
    def _one_token_source(self) -> PolicyFile:
        if self.admin_token is not None and self.admin_token_env is not None:
            raise ValueError("set admin_token or admin_token_env, not both")
        return self
