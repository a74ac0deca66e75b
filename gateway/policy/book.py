"""The loaded policy: who a caller is, and what applies to each tenant on each route.

A `PolicyBook` is built once at start-up and never changes, so it is safe to share across
threads and tasks. Every effective `RoutePolicy` is resolved (and every `api_key_env` read)
at load, so a bad file fails at start-up with every problem listed, never mid-request.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import SecretStr, ValidationError

from mithril.gateway.policy.model import (
    ENV_NAME,
    KEY_HASH,
    MIN_ADMIN_TOKEN_CHARS,
    ROUTES,
    PolicyFile,
    PolicyLayer,
    RoutePolicy,
    detector_available,
)
from mithril.gateway.policy.problems import dotted, from_validation_error, parse_yaml

DEFAULT_TENANT = "default"
KEY_PREFIX = "mk-"
DEFAULT_SOURCE = "<built-in default policy>"


@dataclass(frozen=True, slots=True)
class Tenant:
    name: str
    key_id: str = field(default="", compare=False)
    """First 12 hex digits of the matched key's hash (which key was used; not a secret)."""


class PolicyError(Exception):
    """The policy file is unusable; `problems` lists every reason, one line each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(self.problems))


def hash_key(key: str) -> str:
    """The form a gateway API key is stored in: `sha256:<hex>`."""
    return "sha256:" + hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key() -> str:
    """A fresh gateway API key: `mk-` and 40 URL-safe random characters (240 bits)."""
    return KEY_PREFIX + secrets.token_urlsafe(30)


def bearer_token(authorization_header: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header, or None."""
    if not authorization_header:
        return None
    scheme, _, token = authorization_header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        return None
    return token


class PolicyBook:
    """Tenants, their keys, and the effective policy of every (tenant, route)."""

    def __init__(
        self,
        file: PolicyFile,
        *,
        source: str,
        env: Mapping[str, str],
        warnings: tuple[str, ...] = (),
    ) -> None:
        """Use `load`, `from_text` or `open_default`; they check the file first."""
        self.file = file
        self.source = source
        self.warnings = warnings
        self._admin_token = _admin_token(file, env)
        self._key_table: tuple[tuple[bytes, str, str], ...] = tuple(
            (bytes.fromhex(key.removeprefix("sha256:")), name, key[7:19])
            for name, tenant in file.tenants.items()
            for key in tenant.keys
        )
        self.tenant_names: tuple[str, ...] = tuple(file.tenants)
        if DEFAULT_TENANT not in file.tenants and not self._key_table:
            self.tenant_names = (DEFAULT_TENANT, *self.tenant_names)
        # "default" always resolves (the file-level policy), e.g. for internal gRPC callers.
        names = {*self.tenant_names, DEFAULT_TENANT}
        self._policies: dict[tuple[str, str], RoutePolicy] = {
            (name, route): _effective(file, name, route, env) for name in names for route in ROUTES
        }

    # -- construction -------------------------------------------------------------------

    @classmethod
    def load(cls, path: Path, env: Mapping[str, str] = os.environ) -> PolicyBook:
        try:
            text = Path(path).read_bytes().decode("utf-8")
        except OSError as exc:
            raise PolicyError([f"{path}: cannot read: {exc.strerror or exc}"]) from exc
        except UnicodeDecodeError as exc:
            raise PolicyError(
                [f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})"]
            ) from exc
        return cls.from_text(text, source=str(path), env=env)

    @classmethod
    def from_text(
        cls, text: str, source: str = "<policy>", env: Mapping[str, str] = os.environ
    ) -> PolicyBook:
        data, problem = parse_yaml(text)
        if problem is not None:
            raise PolicyError([f"{source}: {problem}"])
        if data is None:
            raise PolicyError(
                [f"{source}: the file is empty; expected a mapping such as `tenants: {{...}}`"]
            )
        return cls.from_data(data, source=source, env=env)

    @classmethod
    def from_data(
        cls, data: object, source: str = "<policy>", env: Mapping[str, str] = os.environ
    ) -> PolicyBook:
        """From already parsed data (what the YAML holds)."""
        if not isinstance(data, dict):
            raise PolicyError([f"{source}: the top level must be a mapping, not a list or value"])
        problems: list[str] = []
        file: PolicyFile | None = None
        try:
            file = PolicyFile.model_validate(data)
        except ValidationError as exc:
            problems.extend(from_validation_error(exc))
        # Cross-checks read the raw data, so they are reported even when fields are wrong.
        problems.extend(_cross_check(data, env))
        if problems or file is None:
            raise PolicyError([f"{source}: {p}" for p in problems])
        return cls(file, source=source, env=env, warnings=_warnings(file))

    @classmethod
    def open_default(cls, env: Mapping[str, str] = os.environ, **overrides: Any) -> PolicyBook:
        """The built-in policy: one tenant `default`, no gateway keys, the callers' own
        `Authorization` forwarded upstream; `overrides` set options of every route
        (`mode="log"`, `upstream={"url": ...}`)."""
        defaults: dict[str, Any] = {"upstream": {"forward_client_key": True}}
        for name, value in overrides.items():
            if isinstance(value, Mapping) and isinstance(defaults.get(name), dict):
                defaults[name] = {**defaults[name], **value}
            else:
                defaults[name] = value
        return cls.from_data({"defaults": defaults}, source=DEFAULT_SOURCE, env=env)

    # -- use ----------------------------------------------------------------------------

    @property
    def requires_keys(self) -> bool:
        """Whether callers must present a gateway API key (some tenant has keys)."""
        return bool(self._key_table)

    @property
    def admin_token(self) -> str | None:
        """The admin token from the file or its environment variable; None if unset."""
        return None if self._admin_token is None else self._admin_token.get_secret_value()

    def authenticate(self, authorization_header: str | None) -> Tenant | None:
        """The tenant of `Authorization: Bearer <key>`; None for a missing or unknown key.

        With no keys configured, every caller is tenant `default` (their header may be
        their own upstream key). Every stored hash is compared in constant time, and all
        of them every time, so timing says nothing about which or how many matched.
        """
        if not self._key_table:
            return Tenant(DEFAULT_TENANT)
        token = bearer_token(authorization_header)
        if token is None:
            return None
        presented = hashlib.sha256(token.encode("utf-8")).digest()
        found: Tenant | None = None
        for digest, name, key_id in self._key_table:
            if hmac.compare_digest(digest, presented) and found is None:
                found = Tenant(name, key_id)
        return found

    def resolve(self, tenant: Tenant | str, route: str) -> RoutePolicy:
        """The effective policy: built-in defaults < `defaults` < `routes[route]` < the
        tenant's options < the tenant's `routes[route]`, merged option by option."""
        name = tenant if isinstance(tenant, str) else tenant.name
        try:
            return self._policies[(name, route)]
        except KeyError:
            if route not in ROUTES:
                raise KeyError(f"unknown route {route!r}; routes are {', '.join(ROUTES)}") from None
            raise KeyError(f"unknown tenant {name!r}") from None

    @staticmethod
    def model_allowed(policy: RoutePolicy, model: str) -> bool:
        """Whether `model` matches the allow-list (fnmatch globs, case-sensitive)."""
        return policy.model_allowed(model)

    def describe(self) -> dict[str, Any]:
        """A JSON-able summary with every secret masked (for `mithril policy check`)."""
        tenants: dict[str, Any] = {}
        for name in self.tenant_names:
            config = self.file.tenants.get(name)
            tenants[name] = {
                "keys": [f"sha256:{k[7:19]}…" for k in config.keys] if config else [],
                "routes": {route: _summary(self._policies[(name, route)]) for route in ROUTES},
            }
        return {
            "source": self.source,
            "version": self.file.version,
            "requires_keys": self.requires_keys,
            "admin_token": _admin_token_source(self.file),
            "tenants": tenants,
            "warnings": list(self.warnings),
        }

    @property
    def fingerprint(self) -> str:
        """A short hash of the effective policy (secrets masked), to tell versions apart."""
        digest = hashlib.sha256(orjson.dumps(self.describe(), option=orjson.OPT_SORT_KEYS))
        return digest.hexdigest()[:12]

    def __repr__(self) -> str:
        return (
            f"PolicyBook(source={self.source!r}, tenants={list(self.tenant_names)!r},"
            f" requires_keys={self.requires_keys})"
        )


# -- load-time helpers ------------------------------------------------------------------


def _admin_token(file: PolicyFile, env: Mapping[str, str]) -> SecretStr | None:
    if file.admin_token_env is not None:
        return SecretStr(env[file.admin_token_env])
    return file.admin_token


def _admin_token_source(file: PolicyFile) -> str | None:
    if file.admin_token_env is not None:
        return f"${file.admin_token_env}"
    return "policy file" if file.admin_token is not None else None


def _layers(file: PolicyFile, tenant: str, route: str) -> Iterator[PolicyLayer]:
    yield file.defaults
    if route in file.routes:
        yield file.routes[route]
    config = file.tenants.get(tenant)
    if config is not None:
        yield config
        if route in config.routes:
            yield config.routes[route]


_NESTED = ("output", "upstream")
_KEY_SOURCE = frozenset({"api_key", "api_key_env"})


def _effective(file: PolicyFile, tenant: str, route: str, env: Mapping[str, str]) -> RoutePolicy:
    merged: dict[str, Any] = {}
    for layer in _layers(file, tenant, route):
        written = layer.model_dump(exclude_unset=True, exclude={"keys", "routes"})
        for name, value in written.items():
            if name in _NESTED:
                nested = dict(merged.get(name, {}))
                if name == "upstream" and _KEY_SOURCE & value.keys():
                    # A layer naming a key replaces the key source beneath it as a whole.
                    nested.pop("api_key", None)
                    nested.pop("api_key_env", None)
                nested.update(value)
                merged[name] = nested
            else:
                merged[name] = value
    policy = RoutePolicy.model_validate(merged)
    upstream = policy.upstream
    if upstream.api_key_env is not None:
        key = SecretStr(env[upstream.api_key_env])
        policy = policy.model_copy(
            update={"upstream": upstream.model_copy(update={"api_key": key})}
        )
    return policy


def _summary(policy: RoutePolicy) -> dict[str, Any]:
    summary = policy.model_dump(mode="json")  # SecretStr dumps as "**********"
    summary["upstream"]["key_source"] = policy.upstream.key_source
    return summary


def _raw_layers(data: Mapping[str, Any]) -> Iterator[tuple[tuple[str, ...], Mapping[str, Any]]]:
    """(path, layer) for every layer of the raw data that is at least a mapping."""
    if isinstance(data.get("defaults"), Mapping):
        yield ("defaults",), data["defaults"]
    routes = data.get("routes")
    if isinstance(routes, Mapping):
        for route, layer in routes.items():
            if isinstance(layer, Mapping):
                yield ("routes", str(route)), layer
    tenants = data.get("tenants")
    if isinstance(tenants, Mapping):
        for name, tenant in tenants.items():
            if not isinstance(tenant, Mapping):
                continue
            yield ("tenants", str(name)), tenant
            routes = tenant.get("routes")
            if isinstance(routes, Mapping):
                for route, layer in routes.items():
                    if isinstance(layer, Mapping):
                        yield ("tenants", str(name), "routes", str(route)), layer


def _raw_keys(data: Mapping[str, Any]) -> Iterator[tuple[str, int, str]]:
    """(tenant, index, normalised hash) for every well-formed key hash in the raw data."""
    tenants = data.get("tenants")
    if not isinstance(tenants, Mapping):
        return
    for name, tenant in tenants.items():
        keys = tenant.get("keys") if isinstance(tenant, Mapping) else None
        if isinstance(keys, list):
            for index, key in enumerate(keys):
                if isinstance(key, str) and KEY_HASH.fullmatch(key.strip().lower()):
                    yield str(name), index, key.strip().lower()


def _env_problem(path: str, name: object, env: Mapping[str, str], min_chars: int = 1) -> str | None:
    if not isinstance(name, str) or not ENV_NAME.fullmatch(name):
        return None  # the schema reports it
    value = env.get(name)
    if value is None:
        return f"{path}: environment variable {name} is not set"
    if not value.strip():
        return f"{path}: environment variable {name} is empty"
    if len(value) < min_chars:
        return (
            f"{path}: environment variable {name} is too short; use at least {min_chars} characters"
        )
    return None


def _cross_check(data: Mapping[str, Any], env: Mapping[str, str]) -> list[str]:
    """What the schema cannot see: environment variables, keys across tenants, and
    options that contradict each other across layers."""
    problems: list[str] = []
    problem = _env_problem(
        "admin_token_env", data.get("admin_token_env"), env, MIN_ADMIN_TOKEN_CHARS
    )
    if problem:
        problems.append(problem)
    first: dict[str, str] = {}
    for tenant, index, key in _raw_keys(data):
        where = dotted(["tenants", tenant, "keys", index])
        if key in first:
            owner = first[key]
            if owner == tenant:
                problems.append(f"{where}: the same key is listed twice")
            else:
                problems.append(
                    f"{where}: the same key is already a key of tenant {owner!r}"
                    " (a key identifies one tenant)"
                )
        else:
            first[key] = tenant
    keys_on = bool(first)
    for path, layer in _raw_layers(data):
        upstream = layer.get("upstream")
        if not isinstance(upstream, Mapping):
            continue
        problem = _env_problem(
            dotted([*path, "upstream", "api_key_env"]), upstream.get("api_key_env"), env
        )
        if problem:
            problems.append(problem)
        if keys_on and upstream.get("forward_client_key") is True:
            problems.append(
                f"{dotted([*path, 'upstream', 'forward_client_key'])}: cannot be true while"
                " gateway keys are on: the caller's Authorization header carries its gateway"
                " key, not an upstream one"
            )
    return problems


def _warnings(file: PolicyFile) -> tuple[str, ...]:
    warnings: list[str] = []
    keys_on = any(t.keys for t in file.tenants.values())
    for name, tenant in file.tenants.items():
        if keys_on and not tenant.keys:
            warnings.append(f"tenants.{name}: has no keys, so no caller can reach it")
        elif not keys_on and name != DEFAULT_TENANT:
            warnings.append(
                f"tenants.{name}: no tenant has keys, so every caller is tenant"
                f" {DEFAULT_TENANT!r} and this tenant is never used"
            )
    layers: list[tuple[str, PolicyLayer]] = [("defaults", file.defaults)]
    layers += [(f"routes.{r}", layer) for r, layer in file.routes.items()]
    for name, tenant in file.tenants.items():
        layers.append((f"tenants.{name}", tenant))
        layers += [(f"tenants.{name}.routes.{r}", layer) for r, layer in tenant.routes.items()]
    for path, layer in layers:
        if "detectors" not in layer.model_fields_set:
            continue
        for detector in layer.detectors:
            if not detector_available(detector):
                warnings.append(
                    f"{path}.detectors: {detector!r} is not available in this build yet;"
                    " it is skipped"
                )
    return tuple(warnings)
