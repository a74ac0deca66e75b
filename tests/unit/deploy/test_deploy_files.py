"""The deployment files, checked by parsing them (no container engine runs here).

deploy/Dockerfile, deploy/entrypoint.sh, deploy/healthcheck.py, .dockerignore,
deploy/compose.yaml, deploy/otel-collector.yaml, deploy/prometheus.yml and the Grafana
dashboard and provisioning are read and cross-checked against each other and against the
code they deploy: mithril/cli/components.py (names and ports), the settings classes (every
address a consumer needs is wired), and the gateway's Prometheus registry (every metric the
dashboard queries exists). The compose file is validated against the Compose Specification
JSON schema when a copy is available offline (check-jsonschema ships one); the structural
checks below run regardless.
"""

from __future__ import annotations

import ast
import http.server
import importlib.util
import json
import os
import re
import shlex
import subprocess
import threading
import tomllib
from collections.abc import Iterator
from concurrent import futures
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest
import yaml
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from mithril.cli.components import COMPONENTS, CONSUMERS, GATEWAY, SERVICES
from mithril.gateway.config import GatewaySettings
from mithril.services.memorygate.config import MemoryGateSettings

REPO = Path(__file__).resolve().parents[3]
DEPLOY = REPO / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
COLLECTOR = DEPLOY / "otel-collector.yaml"
PROMETHEUS = DEPLOY / "prometheus.yml"
DASHBOARD = DEPLOY / "grafana" / "mithril-dashboard.json"
ENTRYPOINT = DEPLOY / "entrypoint.sh"
HEALTHCHECK = DEPLOY / "healthcheck.py"
DOCKERIGNORE = REPO / ".dockerignore"

UID = 10001
MITHRIL_SERVICES = tuple(COMPONENTS)
"""Compose service names of the Mithril components: the component names themselves."""


# ================================================================== Dockerfile parsing


@dataclass
class Instruction:
    keyword: str
    args: str
    line: int


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[Instruction] = field(default_factory=list)

    def all(self, keyword: str) -> list[Instruction]:
        return [i for i in self.instructions if i.keyword == keyword]

    def env(self) -> dict[str, str]:
        values: dict[str, str] = {}
        for instruction in self.all("ENV"):
            for token in shlex.split(instruction.args):
                key, sep, value = token.partition("=")
                assert sep, f"line {instruction.line}: ENV must use the KEY=VALUE form"
                values[key] = value
        return values

    def copies(self) -> list[tuple[dict[str, str], list[str], str]]:
        """(flags, sources, destination) of every COPY."""
        result = []
        for instruction in self.all("COPY"):
            words = shlex.split(instruction.args)
            flags = dict(w[2:].partition("=")[::2] for w in words if w.startswith("--"))
            paths = [w for w in words if not w.startswith("--")]
            result.append((flags, paths[:-1], paths[-1]))
        return result


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Instructions with their continuation lines joined; comments dropped."""
    buffer: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not buffer and (not stripped or stripped.startswith("#")):
            continue
        if buffer and stripped.startswith("#"):
            continue  # a comment inside a continued instruction
        if not buffer:
            start = number
        if stripped.endswith("\\"):
            buffer.append(stripped[:-1].strip())
            continue
        buffer.append(stripped)
        yield start, " ".join(part for part in buffer if part)
        buffer = []
    assert not buffer, "the Dockerfile ends inside a continued instruction"


@cache
def dockerfile() -> tuple[dict[str, str], tuple[Stage, ...]]:
    """(global ARG defaults, stages)."""
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for number, line in _logical_lines(DOCKERFILE.read_text(encoding="utf-8")):
        keyword, _, rest = line.partition(" ")
        keyword = keyword.upper()
        if keyword == "FROM":
            words = rest.split()
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m[1] or m[2]], words[0])
            name = words[2] if len(words) == 3 and words[1].upper() == "AS" else None
            stages.append(Stage(image, name))
        elif not stages:
            assert keyword == "ARG", f"line {number}: only ARG may precede the first FROM"
            key, _, value = rest.partition("=")
            args[key.strip()] = value.strip()
        else:
            stages[-1].instructions.append(Instruction(keyword, rest.strip(), number))
    return args, tuple(stages)


def stages() -> tuple[Stage, ...]:
    return dockerfile()[1]


def runtime() -> Stage:
    return stages()[-1]


def image_env() -> dict[str, str]:
    return runtime().env()


def exec_form(instruction: Instruction) -> list[str]:
    value = json.loads(instruction.args)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value)
    return value


# ================================================================== Dockerfile


def test_dockerfile_is_multi_stage_on_python_311_slim() -> None:
    all_stages = stages()
    assert len(all_stages) >= 2
    for stage in all_stages:
        assert stage.image == "python:3.11-slim", stage.image
    names = {s.name for s in all_stages[:-1]}
    sources = {flags["from"] for flags, _, _ in runtime().copies() if "from" in flags}
    assert sources and sources <= names, "the runtime stage copies from the build stage(s)"
    # The runtime stage builds nothing: no pip, no compiler, no source tree.
    for instruction in runtime().all("RUN"):
        assert "pip " not in instruction.args, instruction
    for flags, paths, _ in runtime().copies():
        if "from" not in flags:
            assert all(p.startswith("deploy/") for p in paths), paths


def test_runtime_runs_as_a_fixed_non_root_uid() -> None:
    users = runtime().all("USER")
    assert users, "the runtime stage sets USER"
    uid, _, gid = users[-1].args.partition(":")
    assert uid == str(UID) and gid in ("", str(UID)), "numeric, so runAsNonRoot can check it"
    created = " ".join(i.args for i in runtime().all("RUN"))
    assert f"--uid {UID}" in created and f"--gid {UID}" in created


def test_only_runtime_dependencies_are_installed() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    runtime_deps = " ".join(pyproject["project"]["dependencies"]).lower()
    assert "torch" not in runtime_deps and "sentence-transformers" not in runtime_deps
    assert any("torch" in d for d in pyproject["project"]["optional-dependencies"]["dev"])

    installs = []
    for stage in stages():
        for instruction in stage.all("RUN"):
            for command in re.split(r"&&|;", instruction.args):
                if re.search(r"\bpip\b.*\binstall\b", command):
                    installs.append(command.strip())
    # At the versions CI tested: constraints.txt is in the build context and pins them.
    wheel = r"pip install -c constraints\.txt /dist/mithril_firewall-\*\.whl$"
    assert any(re.search(wheel, c) for c in installs), installs
    for command in installs:
        assert "[" not in command, f"no extras (dev pulls torch): {command}"
        assert not re.search(r"torch|sentence-transformers|\s-e\s|\.\[", command), command


def test_embedding_index_is_prebuilt_into_the_image() -> None:
    build = stages()[0]
    cache_dir = build.env()["MITHRIL_EMBEDDING_CACHE_DIR"]
    assert cache_dir.startswith("/opt/"), "outside MITHRIL_HOME: a volume would hide it"
    prebuilt = [i.args for i in build.all("RUN") if "EmbeddingTiers.load" in i.args]
    assert prebuilt and "index_from_cache" in prebuilt[0], "built, then checked to be a hit"
    # The int8 network is derived first, into the virtualenv's share/ (copied whole), so a
    # read-only root filesystem never needs to write it.
    assert prebuilt[0].index("-m mithril.services.embedding.network") < prebuilt[0].index(
        "EmbeddingTiers.load"
    )
    copied = [(p, d) for flags, p, d in runtime().copies() if flags.get("from") == build.name]
    assert ([cache_dir], cache_dir) in copied
    assert (["/opt/venv"], "/opt/venv") in copied
    env = image_env()
    assert env["MITHRIL_EMBEDDING_CACHE_DIR"] == cache_dir
    for offline in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        assert env[offline] == "1"
    assert env["GLINER_AUTO_INSTALL"] == "false"


def test_state_lives_only_in_mithril_home_and_tmp() -> None:
    env = image_env()
    home = env["MITHRIL_HOME"]
    assert env["HOME"] == home, "anything a library writes under ~ lands on the volume too"
    assert env["TMPDIR"] == "/tmp"
    assert env["PYTHONDONTWRITEBYTECODE"] == "1"
    assert exec_form(runtime().all("VOLUME")[-1]) == [home]
    created = " ".join(i.args for i in runtime().all("RUN"))
    assert f"install -d -o {UID} -g {UID}" in created and home in created
    assert env["MITHRIL_GATEWAY_HTTP_HOST"] == "0.0.0.0", "reachable from outside the container"
    assert env["PATH"].startswith("/opt/venv/bin:")


def test_exposed_ports_are_the_components_defaults() -> None:
    exposed = {int(p) for i in runtime().all("EXPOSE") for p in i.args.split()}
    defaults = {c.default_grpc_port for c in COMPONENTS.values()}
    defaults |= {c.default_http_port for c in COMPONENTS.values() if c.default_http_port}
    assert exposed == defaults


def test_entrypoint_selects_a_component() -> None:
    entrypoint = exec_form(runtime().all("ENTRYPOINT")[-1])
    assert entrypoint == ["mithril-entrypoint"]
    cmd = exec_form(runtime().all("CMD")[-1])
    assert len(cmd) == 1 and cmd[0] in COMPONENTS
    installed = {dest: paths for _, paths, dest in runtime().copies()}
    assert installed["/usr/local/bin/mithril-entrypoint"] == ["deploy/entrypoint.sh"]
    assert installed["/usr/local/bin/mithril-healthcheck"] == ["deploy/healthcheck.py"]


def test_entrypoint_lists_exactly_the_components() -> None:
    script = ENTRYPOINT.read_text(encoding="utf-8")
    listed = re.search(r'^COMPONENTS="([^"]+)"', script, re.M)
    assert listed and listed[1].split() == list(COMPONENTS)
    case = re.search(r"^\s*([\w-]+(?:\s*\|\s*[\w-]+)+)\)\s*$", script, re.M)
    assert case and [c.strip() for c in case[1].split("|")] == list(COMPONENTS)
    assert os.access(ENTRYPOINT, os.X_OK) and os.access(HEALTHCHECK, os.X_OK)


@pytest.fixture
def fake_mithril(tmp_path: Path) -> dict[str, str]:
    """PATH with a `mithril` that prints its arguments instead of serving."""
    binary = tmp_path / "mithril"
    binary.write_text('#!/bin/sh\necho "mithril $*"\n', encoding="utf-8")
    binary.chmod(0o755)
    return {"PATH": f"{tmp_path}:/usr/bin:/bin"}


def _entrypoint(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", str(ENTRYPOINT), *args], env=env, capture_output=True, text=True, timeout=10
    )


@pytest.mark.parametrize("component", list(COMPONENTS))
def test_entrypoint_runs_the_named_component(fake_mithril: dict[str, str], component: str) -> None:
    result = _entrypoint(fake_mithril, component)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"mithril serve {component}"


def test_entrypoint_passes_commands_through_and_refuses_unknown_names(
    fake_mithril: dict[str, str],
) -> None:
    passed = _entrypoint(fake_mithril, "mithril", "scan", "some text")
    assert passed.returncode == 0 and passed.stdout.strip() == "mithril scan some text"
    unknown = _entrypoint(fake_mithril, "scaner")
    assert unknown.returncode == 64
    assert "unknown component" in unknown.stderr and "memory-gate" in unknown.stderr
    extra = _entrypoint(fake_mithril, "gateway", "--port", "1")
    assert extra.returncode == 64 and "MITHRIL_*" in extra.stderr
    assert _entrypoint(fake_mithril).returncode == 64


# ================================================================== .dockerignore


def _dockerignore_patterns() -> list[tuple[bool, str]]:
    patterns = []
    for raw in DOCKERIGNORE.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        patterns.append((negated, line.lstrip("!").strip("/")))
    return patterns


def _pattern_matches(pattern: str, path: str) -> bool:
    """Docker's rule: a pattern matches a path or any of its parent folders; `*` stays
    within one path segment, `**` crosses them."""
    regex = ""
    for part in re.split(r"(\*\*/?|\*|\?|\[[^\]]*\])", pattern):
        if part.startswith("[") and part.endswith("]") and len(part) > 2:
            regex += "[" + part[1:-1].replace("\\", "\\\\") + "]"
        elif part.startswith("**"):
            regex += "(?:.*/)?" if part.endswith("/") else ".*"
        elif part == "*":
            regex += "[^/]*"
        elif part == "?":
            regex += "[^/]"
        else:
            regex += re.escape(part)
    parts = path.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(re.fullmatch(regex, prefix) for prefix in prefixes)


def dockerignored(path: str) -> bool:
    ignored = False
    for negated, pattern in _dockerignore_patterns():
        if _pattern_matches(pattern, path):
            ignored = not negated
    return ignored


def test_dockerignore_sends_what_the_build_copies_and_nothing_else() -> None:
    copied = [p for s in stages() for flags, paths, _ in s.copies() if "from" not in flags
              for p in paths]  # fmt: skip
    for source in copied:
        assert (REPO / source).exists(), source
        assert not dockerignored(source), f"{source} is copied but excluded from the context"
    for kept in ("mithril/cli/components.py", "services/embedding/data/attack_corpus.jsonl"):
        assert not dockerignored(kept)
    for secret_or_junk in (
        ".git/config",
        ".venv/bin/python",
        ".cache/embedding/x.npy",
        "tests/conftest.py",
        "benchmark/results/latest.json",
        "mithril/__pycache__/x.cpython-311.pyc",
        "deploy/compose.yaml",
        ".env",
        "deploy/.env",
        "mithril_firewall.egg-info/PKG-INFO",
    ):
        assert dockerignored(secret_or_junk), secret_or_junk


def test_build_copies_every_package_root_of_setup_py() -> None:
    tree = ast.parse((REPO / "setup.py").read_text(encoding="utf-8"))
    roots = next(
        ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "ROOTS"
    )
    build = stages()[0]
    copied = {p for flags, paths, _ in build.copies() if "from" not in flags for p in paths}
    assert set(roots.values()) <= copied
    assert {"pyproject.toml", "setup.py", "README.md"} <= copied


# ================================================================== healthcheck.py


def _load_healthcheck() -> ModuleType:
    spec = importlib.util.spec_from_file_location("mithril_healthcheck", HEALTHCHECK)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def health_server() -> Iterator[tuple[int, health.HealthServicer]]:
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    servicer = health.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield port, servicer
    server.stop(None)


class _Healthz(http.server.BaseHTTPRequestHandler):
    status = 200

    def do_GET(self) -> None:
        self.send_response(self.status if self.path == "/healthz" else 404)
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def healthz_server() -> Iterator[tuple[int, type[_Healthz]]]:
    handler = type("Handler", (_Healthz,), {"status": 200})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], handler
    server.shutdown()
    server.server_close()


def test_healthcheck_follows_the_grpc_health_service(
    health_server: tuple[int, health.HealthServicer], monkeypatch: pytest.MonkeyPatch
) -> None:
    port, servicer = health_server
    module = _load_healthcheck()
    monkeypatch.setenv(COMPONENTS["scanner"].grpc_port_env, str(port))
    servicer.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
    assert module.main(["scanner"]) == 1, "loading, or draining after SIGTERM"
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    assert module.main(["scanner"]) == 0
    servicer.set("", health_pb2.HealthCheckResponse.SERVICE_UNKNOWN)
    assert module.main(["scanner"]) == 1
    assert module.main(["nope"]) == 2


def test_healthcheck_of_the_gateway_also_needs_healthz(
    health_server: tuple[int, health.HealthServicer],
    healthz_server: tuple[int, type[_Healthz]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    grpc_port, servicer = health_server
    http_port, handler = healthz_server
    module = _load_healthcheck()
    monkeypatch.setenv(GATEWAY.grpc_port_env, str(grpc_port))
    assert GATEWAY.http_port_env
    monkeypatch.setenv(GATEWAY.http_port_env, str(http_port))
    servicer.set("", health_pb2.HealthCheckResponse.SERVING)
    assert module.main(["gateway"]) == 0
    handler.status = 503
    assert module.main(["gateway"]) == 1


# ================================================================== compose

_INTERPOLATION = re.compile(r"\$\$|\$\{(\w+)(?:(:?[-?])([^}]*))?\}|\$(\w+)")


def interpolate(value: Any, env: dict[str, str] | None = None) -> Any:
    """Compose's variable substitution, as with an empty environment (or `env`)."""
    env = env or {}
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        if match[0] == "$$":
            return "$"
        name = match[1] or match[4]
        operator, argument = match[2], match[3] or ""
        current = env.get(name)
        if operator in (":-", "-"):
            unset = current is None or (operator == ":-" and current == "")
            return argument if unset else str(current)
        if operator in (":?", "?"):
            assert current, f"${{{name}}} is required: {argument}"
        return current or ""

    return _INTERPOLATION.sub(substitute, value)


@cache
def compose_raw() -> dict[str, Any]:
    document = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


@cache
def compose() -> dict[str, Any]:
    """The compose file as `docker compose config` would see it with no variables set."""
    result = interpolate(compose_raw())
    assert isinstance(result, dict)
    return result


def services() -> dict[str, dict[str, Any]]:
    return compose()["services"]


def environment(service: str) -> dict[str, str | None]:
    env = services()[service].get("environment", {})
    if isinstance(env, list):
        env = dict(item.partition("=")[::2] for item in env)
    return {k: None if v is None else str(v) for k, v in env.items()}


def parse_target(target: str) -> tuple[str, int]:
    """host and port of a gRPC target: host:port or dns:///host:port."""
    target = target.removeprefix("dns:///")
    host, _, port = target.rpartition(":")
    return host, int(port)


def compose_schema_path() -> Path | None:
    """The Compose Specification schema: $MITHRIL_COMPOSE_SCHEMA, else the copy that
    check-jsonschema vendors (found without importing it)."""
    explicit = os.environ.get("MITHRIL_COMPOSE_SCHEMA")
    if explicit:
        return Path(explicit)
    spec = importlib.util.find_spec("check_jsonschema")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        path = Path(location) / "builtin_schemas" / "vendor" / "compose-spec.json"
        if path.exists():
            return path
    return None


def test_compose_matches_the_compose_specification_schema() -> None:
    path = compose_schema_path()
    if path is None:
        pytest.skip(
            "no Compose Specification schema offline: install check-jsonschema (it vendors"
            " compose-spec.json) or set MITHRIL_COMPOSE_SCHEMA; structural checks still run"
        )
    import jsonschema

    schema = json.loads(path.read_text(encoding="utf-8"))
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    errors = sorted(validator_class(schema).iter_errors(compose()), key=lambda e: e.json_path)
    assert not errors, "\n".join(f"{e.json_path}: {e.message}" for e in errors)


def test_compose_structure() -> None:
    """What the schema would also catch, checked without it."""
    document = compose()
    allowed_top = {"name", "services", "volumes", "networks", "configs", "secrets", "include"}
    assert {k for k in document if not k.startswith("x-")} <= allowed_top
    for name, service in services().items():
        assert isinstance(service, dict), name
        assert "image" in service or "build" in service, name
        for key in ("command", "cap_drop", "security_opt", "tmpfs", "ports"):
            if key in service:
                assert isinstance(service[key], list), f"{name}.{key}"
        env = service.get("environment", {})
        assert isinstance(env, dict), f"{name}: environment as a map"
        for key, value in env.items():
            assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key), f"{name}: {key}"
            assert value is None or isinstance(value, str | int | float | bool), f"{name}: {key}"
        health = service.get("healthcheck")
        if health:
            assert health["test"][0] in ("CMD", "CMD-SHELL", "NONE"), name
            for key in ("interval", "timeout", "start_period"):
                if key in health:
                    assert re.fullmatch(r"\d+(ms|s|m|h)", str(health[key])), f"{name}.{key}"
    declared = set(document.get("volumes", {}))
    for name, service in services().items():
        for mount in service.get("volumes", []):
            source = mount.split(":")[0]
            if source.startswith((".", "/")):
                assert (DEPLOY / source).resolve().exists(), f"{name}: {source} is missing"
            else:
                assert source in declared, f"{name}: volume {source} is not declared"


def test_every_component_runs_from_the_one_image() -> None:
    assert set(MITHRIL_SERVICES) <= set(services())
    images = {services()[name]["image"] for name in MITHRIL_SERVICES}
    assert len(images) == 1
    for name in MITHRIL_SERVICES:
        service = services()[name]
        assert service["command"] == [name], name
        build = service["build"]
        assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == DOCKERFILE
        assert service["healthcheck"]["test"] == ["CMD", "mithril-healthcheck", name]


def test_every_component_is_hardened() -> None:
    home = image_env()["MITHRIL_HOME"]
    for name in MITHRIL_SERVICES:
        service = services()[name]
        assert service["user"] == f"{UID}:{UID}", name
        assert service["read_only"] is True, name
        assert service["cap_drop"] == ["ALL"], name
        assert "cap_add" not in service and not service.get("privileged"), name
        assert "no-new-privileges:true" in service["security_opt"], name
        assert any(t.split(":")[0] == "/tmp" for t in service["tmpfs"]), name
        mounts = {m.split(":")[1]: m.split(":")[0] for m in service["volumes"]}
        assert mounts.get(home) == f"{name}-home", f"{name}: its own volume as MITHRIL_HOME"
        assert environment(name).get("MITHRIL_HOME") in (None, home)


def test_secrets_are_never_written_into_the_compose_file() -> None:
    for name, service in compose_raw()["services"].items():
        for key, value in (service.get("environment") or {}).items():
            if re.search(r"TOKEN|API_KEY|PASSWORD", key):
                assert value is None or str(value).startswith("${"), f"{name}: {key}"


def _consumer_service(consumer: str) -> str:
    return consumer.lower().replace("_", "-")


def _addr_fields(consumer: str) -> set[str]:
    """The *_addr settings of a consumer: every service it can call."""
    settings = {"GATEWAY": GatewaySettings, "MEMORY_GATE": MemoryGateSettings}[consumer]
    return {f for f in settings.model_fields if f.endswith("_addr")}


@pytest.mark.parametrize("consumer", CONSUMERS)
def test_every_address_a_consumer_needs_resolves_to_its_service(consumer: str) -> None:
    env = environment(_consumer_service(consumer))
    wanted = {f"MITHRIL_{consumer}_{f.upper()}" for f in _addr_fields(consumer)}
    by_env = {c.addr_env(consumer): c for c in SERVICES}
    assert wanted <= set(by_env), "every address setting names a component"
    missing = wanted - set(env)
    assert not missing, f"{consumer} would fall back to 127.0.0.1 for {sorted(missing)}"
    for key, value in env.items():
        if not key.endswith("_ADDR"):
            continue
        assert key in by_env, f"{key} names no component"
        assert value, key
        host, port = parse_target(value)
        component = by_env[key]
        assert host == component.name and host in services(), f"{key}={value}"
        own_port = environment(host).get(component.grpc_port_env)
        assert port == int(own_port or component.default_grpc_port), f"{key}={value}"


def test_only_the_gateway_is_published_on_its_default_ports() -> None:
    for name, service in services().items():
        for mapping in service.get("ports", []):
            host_ip, host_port, container_port = str(mapping).split(":")
            assert host_ip == "127.0.0.1", f"{name}: {mapping} binds the host's loopback only"
            assert host_port == container_port, mapping
    published = {int(str(m).split(":")[-1]) for m in services()["gateway"]["ports"]}
    assert published == {GATEWAY.default_http_port, GATEWAY.default_grpc_port}
    for name in MITHRIL_SERVICES:
        if name != "gateway":
            assert "ports" not in services()[name], f"{name} stays on the compose network"
        env = environment(name)
        for component in COMPONENTS.values():
            for port_env in (component.grpc_port_env, component.http_port_env):
                assert port_env is None or port_env not in env, "default ports throughout"
    assert environment("gateway")["MITHRIL_GATEWAY_HTTP_HOST"] == "0.0.0.0"


def _init_script() -> str:
    mounts = [m for m in services()["postgres"]["volumes"] if "docker-entrypoint-initdb.d" in m]
    assert len(mounts) == 1
    script = DEPLOY / mounts[0].split(":")[0]
    # Executable, so the postgres image runs it in its own shell instead of sourcing it.
    assert os.access(script, os.X_OK)
    return script.read_text(encoding="utf-8")


@pytest.mark.parametrize("component", ["gateway", "reputation", "memory-gate"])
def test_stores_are_postgres_databases_of_their_own(component: str) -> None:
    key = f"MITHRIL_{component.upper().replace('-', '_')}_DATABASE_URL"
    url = urlsplit(environment(component)[key] or "")
    assert url.scheme in ("postgresql", "postgresql+psycopg")
    assert url.hostname in services() and services()[url.hostname]["image"].startswith("postgres:")
    database = url.path.lstrip("/")
    assert url.username == database, "one role per database"
    created = re.findall(r"^create_store (\w+) \"\$(\w+)\"", _init_script(), re.M)
    passwords = dict(created)
    assert database in passwords, f"{database} is created by the init script"
    assert url.password == environment(url.hostname)[passwords[database]], (
        "the password the service uses is the one the role was created with"
    )
    assert "postgres" in services()[component]["depends_on"]


def test_telemetry_goes_to_the_collector() -> None:
    collector = yaml.safe_load(COLLECTOR.read_text(encoding="utf-8"))
    grpc_endpoint = collector["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
    names = set()
    for name in MITHRIL_SERVICES:
        env = environment(name)
        endpoint = urlsplit(env["OTEL_EXPORTER_OTLP_ENDPOINT"] or "")
        assert endpoint.hostname == "otel-collector" and endpoint.hostname in services()
        assert f"0.0.0.0:{endpoint.port}" == grpc_endpoint
        service_name = env["OTEL_SERVICE_NAME"] or ""
        assert service_name == f"mithril-{name}"
        names.add(service_name)
    assert len(names) == len(MITHRIL_SERVICES)


def _depends_on(service: dict[str, Any]) -> dict[str, dict[str, Any]]:
    value = service.get("depends_on", {})
    if isinstance(value, list):
        return {target: {"condition": "service_started"} for target in value}
    return value


def test_depends_on_targets_exist_and_form_no_cycle() -> None:
    graph = {name: set(_depends_on(service)) for name, service in services().items()}
    for name, service in services().items():
        for target, options in _depends_on(service).items():
            assert target in services(), f"{name} depends on unknown {target}"
            condition = options.get("condition", "service_started")
            assert condition in (
                "service_started",
                "service_healthy",
                "service_completed_successfully",
            )
            if condition == "service_healthy":
                assert "healthcheck" in services()[target], f"{target} has no healthcheck"
    done: set[str] = set()
    while len(done) < len(graph):
        ready = {n for n, deps in graph.items() if n not in done and deps <= done}
        assert ready, f"dependency cycle among {sorted(set(graph) - done)}"
        done |= ready
    # The gateway waits until the detectors it calls in block mode are SERVING.
    gateway = _depends_on(services()["gateway"])
    for name in ("scanner", "secrets", "embedding", "judge", "reputation", "postgres"):
        assert gateway[name]["condition"] == "service_healthy", name


def test_compose_mounts_the_configuration_files_where_their_programs_read_them() -> None:
    def mount_target(service: str, source: str) -> str:
        for mount in services()[service]["volumes"]:
            parts = mount.split(":")
            if (DEPLOY / parts[0]).resolve() == (DEPLOY / source).resolve():
                return parts[1]
        raise AssertionError(f"{source} is not mounted into {service}")

    config = mount_target("otel-collector", "otel-collector.yaml")
    assert f"--config={config}" in services()["otel-collector"]["command"]
    config = mount_target("prometheus", "prometheus.yml")
    assert f"--config.file={config}" in services()["prometheus"]["command"]
    provisioning = mount_target("grafana", "grafana/provisioning")
    assert provisioning == "/etc/grafana/provisioning"
    dashboard = mount_target("grafana", "grafana/mithril-dashboard.json")
    providers = yaml.safe_load(
        (DEPLOY / "grafana/provisioning/dashboards/mithril.yaml").read_text(encoding="utf-8")
    )["providers"]
    assert any(str(Path(dashboard).parent) == p["options"]["path"] for p in providers)


# ================================================================== OTel collector


def test_collector_pipelines_reference_defined_components() -> None:
    config = yaml.safe_load(COLLECTOR.read_text(encoding="utf-8"))
    receivers = config.get("receivers", {})
    processors = config.get("processors", {})
    exporters = config.get("exporters", {})
    connectors = config.get("connectors", {})
    extensions = config.get("extensions", {})
    service = config["service"]
    for extension in service.get("extensions", []):
        assert extension in extensions, extension
    used: set[tuple[str, str]] = set()
    as_exporter: set[str] = set()
    as_receiver: set[str] = set()
    pipelines = service["pipelines"]
    assert "traces" in pipelines
    for pipeline_name, pipeline in pipelines.items():
        assert pipeline_name.split("/")[0] in ("traces", "metrics", "logs", "profiles")
        assert pipeline["receivers"] and pipeline["exporters"], pipeline_name
        for receiver in pipeline["receivers"]:
            assert receiver in receivers or receiver in connectors, receiver
            used.add(("receivers" if receiver in receivers else "connectors", receiver))
            if receiver in connectors:
                as_receiver.add(receiver)
        for processor in pipeline.get("processors", []):
            assert processor in processors, processor
            used.add(("processors", processor))
        for exporter in pipeline["exporters"]:
            assert exporter in exporters or exporter in connectors, exporter
            used.add(("exporters" if exporter in exporters else "connectors", exporter))
            if exporter in connectors:
                as_exporter.add(exporter)
        processors_list = pipeline.get("processors", [])
        if "memory_limiter" in processors_list:
            assert processors_list[0] == "memory_limiter", "the memory limiter goes first"
    assert as_exporter == as_receiver == set(connectors), "each connector joins two pipelines"
    for section, defined in (
        ("receivers", receivers),
        ("processors", processors),
        ("exporters", exporters),
        ("connectors", connectors),
    ):
        for name in defined:
            assert (section, name) in used, f"{section}.{name} is defined but unused"
    # Traces reach Jaeger, a compose service, over OTLP.
    traces = pipelines["traces"]["exporters"]
    jaeger = [e for e in traces if e.split("/")[0] in ("otlp", "otlp_grpc")]
    assert jaeger
    host, port = exporters[jaeger[0]]["endpoint"].rsplit(":", 1)
    assert host in services() and services()[host]["image"].startswith("jaegertracing/")
    assert int(port) == 4317


# ================================================================== Prometheus


def _scrape_targets() -> dict[str, list[str]]:
    config = yaml.safe_load(PROMETHEUS.read_text(encoding="utf-8"))
    return {
        job["job_name"]: [t for sc in job.get("static_configs", []) for t in sc["targets"]]
        for job in config["scrape_configs"]
    }


def test_prometheus_targets_exist_in_compose() -> None:
    targets = _scrape_targets()
    for job, hosts in targets.items():
        assert hosts, job
        for target in hosts:
            host, _, port = target.rpartition(":")
            assert host in services(), f"{job}: {target}"
            assert port.isdigit()
    assert targets["mithril-gateway"] == [f"gateway:{GATEWAY.default_http_port}"]
    config = yaml.safe_load(PROMETHEUS.read_text(encoding="utf-8"))
    gateway_job = next(j for j in config["scrape_configs"] if j["job_name"] == "mithril-gateway")
    assert gateway_job.get("metrics_path", "/metrics") == "/metrics"
    # The collector's span-metrics exporter and its own telemetry are scraped where they listen.
    collector = yaml.safe_load(COLLECTOR.read_text(encoding="utf-8"))
    exporter_port = collector["exporters"]["prometheus"]["endpoint"].rsplit(":", 1)[1]
    reader = collector["service"]["telemetry"]["metrics"]["readers"][0]["pull"]["exporter"]
    scraped = {t for hosts in targets.values() for t in hosts}
    assert f"otel-collector:{exporter_port}" in scraped
    assert f"otel-collector:{reader['prometheus']['port']}" in scraped


# ================================================================== Grafana


@cache
def dashboard() -> dict[str, Any]:
    result = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    assert isinstance(result, dict)
    return result


def _panels() -> list[dict[str, Any]]:
    panels = []
    for panel in dashboard()["panels"]:
        panels.append(panel)
        panels.extend(panel.get("panels", []))  # collapsed rows keep theirs inside
    return panels


def _expressions() -> list[str]:
    return [t["expr"] for p in _panels() for t in p.get("targets", [])]


@cache
def exposed_metric_names() -> frozenset[str]:
    """Every sample name the gateway's /metrics can expose (its process-wide registry)."""
    from prometheus_client import REGISTRY

    import mithril.gateway.app  # noqa: F401  (imports every module that defines a metric)

    suffixes = {
        "counter": ("_total", "_created"),
        "gauge": ("",),
        "histogram": ("_bucket", "_count", "_sum", "_created"),
        "summary": ("", "_count", "_sum", "_created"),
        "info": ("_info",),
        "stateset": ("",),
        "enum": ("",),
        "unknown": ("",),
    }
    names = set()
    for family in REGISTRY.collect():
        names.update(family.name + suffix for suffix in suffixes[family.type])
        names.update(sample.name for sample in family.samples)
    return frozenset(names)


_PROMQL_WORDS = frozenset(
    {"by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool", "and",
     "or", "unless", "inf", "nan", "atan2"}
)  # fmt: skip


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (functions, labels, keywords removed)."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    text = re.sub(r"\{[^}]*\}", "", text)
    text = re.sub(r"\[[^\]]*\]", "", text)
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = set()
    for match in re.finditer(r"(?<![\w$.])([A-Za-z_:][A-Za-z0-9_:]*)", text):
        rest = text[match.end() :].lstrip()
        if rest.startswith("(") or match[1] in _PROMQL_WORDS:
            continue
        names.add(match[1])
    return names


def test_metric_name_extraction() -> None:
    expr = (
        'histogram_quantile(0.99, sum by (le, route) (rate(x_seconds_bucket{route=~"/v1/.*",'
        ' instance=~"$instance"}[$__rate_interval]))) / on (route) group_left sum(y_total)'
    )
    assert metric_names(expr) == {"x_seconds_bucket", "y_total"}


def test_dashboard_panels_have_targets() -> None:
    board = dashboard()
    assert board["uid"] and board["title"]
    panels = _panels()
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    graphs = [p for p in panels if p["type"] != "row"]
    assert len(graphs) >= 10
    for panel in graphs:
        assert panel["targets"], panel["title"]
        assert {"h", "w", "x", "y"} <= set(panel["gridPos"]), panel["title"]
        x, w = panel["gridPos"]["x"], panel["gridPos"]["w"]
        assert x >= 0 and x + w <= 24, panel["title"]
        for target in panel["targets"]:
            assert target["expr"].strip() and target["refId"], panel["title"]


def test_dashboard_queries_only_metrics_the_gateway_exposes() -> None:
    exposed = exposed_metric_names()
    for expr in _expressions():
        names = metric_names(expr)
        assert names, f"no metric in {expr}"
        unknown = names - exposed
        assert not unknown, f"{sorted(unknown)} in {expr} are not on the gateway's /metrics"


def test_dashboard_covers_every_mithril_metric() -> None:
    """A metric added to the gateway gets a panel (or this test names it)."""
    from prometheus_client import REGISTRY

    exposed_metric_names()
    families = {f.name for f in REGISTRY.collect() if f.name.startswith("mithril_")}
    used = {n for expr in _expressions() for n in metric_names(expr)}
    missing = {f for f in families if not any(u.startswith(f) for u in used)}
    assert not missing, f"no panel shows {sorted(missing)}"


def test_dashboard_variables_and_datasources_are_defined() -> None:
    variables = {v["name"]: v for v in dashboard()["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    text = DASHBOARD.read_text(encoding="utf-8")
    used = set(re.findall(r"\$\{?(\w+)", text)) - {"__rate_interval", "__range", "__interval"}
    assert used <= set(variables), f"undefined variables {sorted(used - set(variables))}"
    for panel in _panels():
        if panel["type"] == "row":
            continue
        for source in [panel.get("datasource"), *(t.get("datasource") for t in panel["targets"])]:
            assert source == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
    provisioned = yaml.safe_load(
        (DEPLOY / "grafana/provisioning/datasources/mithril.yaml").read_text(encoding="utf-8")
    )["datasources"]
    prometheus = next(d for d in provisioned if d["type"] == "prometheus")
    assert prometheus["isDefault"] is True
    host = urlsplit(prometheus["url"]).hostname
    assert host in services() and host == "prometheus"


def test_dashboard_promql_parses() -> None:
    """With PyPI promql-parser installed, every expression must parse (else skipped)."""
    parser = pytest.importorskip("promql_parser")
    for expr in _expressions():
        concrete = expr.replace("$__rate_interval", "1m").replace("$__range", "1h").replace("$", "")
        parser.parse(concrete)


def test_dockerignore_matcher_follows_dockers_rules() -> None:
    """The cases the .dockerignore test relies on."""
    assert _pattern_matches("*", "anything/below")
    assert _pattern_matches("**/__pycache__", "a/b/__pycache__/x.pyc")
    assert _pattern_matches("**/*.py[cod]", "x.pyc")
    assert _pattern_matches("benchmark/results", "benchmark/results/x.json")
    assert not _pattern_matches("benchmark/results", "benchmark/resultsx")
    assert not _pattern_matches("mithril/*.py", "mithril/cli/main.py")
