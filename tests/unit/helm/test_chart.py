"""The Helm chart (helm/mithril), rendered and linted offline by Helm v4's own engine
(helm-python-sdk), every object validated against the Kubernetes schemas
(kubernetes-validate), and the rendered output checked against what the code expects:
components and ports, the call graph, probes, security, secrets, state, telemetry."""

from __future__ import annotations

import base64
import copy
import functools
import json
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import helm_python
import kubernetes_validate
import pytest
import yaml

from mithril.cli.components import COMPONENTS
from mithril.gateway.policy import PolicyBook

REPO = Path(__file__).resolve().parents[3]
CHART = REPO / "helm" / "mithril"
HA_FILE = CHART / "values-ha.yaml"
RELEASE = "mithril"
NAMESPACE = "firewall"
SERVICES = ("scanner", "secrets", "embedding", "judge", "reputation", "memory-gate")
ALL = ("gateway", *SERVICES)
CALLS = {
    "gateway": {"scanner", "secrets", "embedding", "judge", "reputation", "memory-gate"},
    "memory-gate": {"secrets", "scanner", "reputation", "judge"},
}
"""Who calls whom: the services each consumer is configured with in the code."""
DATABASE_USERS = {"gateway", "reputation", "memory-gate"}
HOME = "/var/lib/mithril"
POLICY_FILE = "/etc/mithril/policy/policy.yaml"
KUBE_VERSIONS = ("1.27.0", kubernetes_validate.latest_version())
"""The chart's minimum Kubernetes (native gRPC probes are GA there) and the newest schemas."""

Obj = dict[str, Any]


# -- rendering ----------------------------------------------------------------------------


@functools.cache
def _chart() -> helm_python.Chart:
    return helm_python.Chart.load(CHART)


@functools.cache
def _ha_values() -> Obj:
    values: Obj = yaml.safe_load(HA_FILE.read_text())
    return values


def merged(*layers: Obj) -> Obj:
    """Values layers merged like repeated `-f` files: maps key by key, the rest replaced."""
    out: Obj = {}
    for layer in layers:
        out = _merge(out, layer)
    return out


def _merge(base: Obj, over: Obj) -> Obj:
    out = copy.deepcopy(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def ha(*overrides: Obj) -> Obj:
    return merged(_ha_values(), *overrides)


def comp(name: str, **settings: Any) -> Obj:
    return {"components": {name: settings}}


def render_raw(values: Obj | None = None) -> dict[str, str]:
    return _chart().render(values, name=RELEASE, namespace=NAMESPACE)


def render(values: Obj | None = None) -> list[Obj]:
    objects: list[Obj] = []
    for path, text in sorted(render_raw(values).items()):
        if path.endswith("NOTES.txt"):
            continue
        objects.extend(doc for doc in yaml.safe_load_all(text) if doc)
    return objects


class Rendered:
    """A rendered release, indexed by kind and component."""

    def __init__(self, values: Obj | None = None) -> None:
        self.values = values
        self.objects = render(values)

    def of(self, kind: str) -> list[Obj]:
        return [o for o in self.objects if o["kind"] == kind]

    def one(self, kind: str, component: str) -> Obj:
        found = [o for o in self.of(kind) if component_of(o) == component]
        assert len(found) == 1, f"{len(found)} {kind} objects for {component}"
        return found[0]

    def maybe(self, kind: str, component: str) -> Obj | None:
        found = [o for o in self.of(kind) if component_of(o) == component]
        return found[0] if found else None

    def components(self, kind: str) -> set[str]:
        return {component_of(o) for o in self.of(kind)}

    def container(self, component: str) -> Obj:
        containers = self.one("Deployment", component)["spec"]["template"]["spec"]["containers"]
        assert len(containers) == 1
        container: Obj = containers[0]
        return container

    def env(self, component: str) -> dict[str, Obj]:
        return {e["name"]: e for e in self.container(component)["env"]}

    def plain_env(self, component: str) -> dict[str, str]:
        return {n: e["value"] for n, e in self.env(component).items() if "value" in e}

    def secret(self) -> Obj | None:
        secrets = self.of("Secret")
        assert len(secrets) <= 1
        return secrets[0] if secrets else None


def component_of(obj: Obj) -> str:
    return str(obj["metadata"].get("labels", {}).get("app.kubernetes.io/component", ""))


@functools.cache
def _default() -> Rendered:
    return Rendered()


@functools.cache
def _ha() -> Rendered:
    return Rendered(_ha_values())


@pytest.fixture(params=["default", "ha"])
def release(request: pytest.FixtureRequest) -> Rendered:
    return _default() if request.param == "default" else _ha()


def selector_component(peer: Obj) -> str:
    return str(peer["podSelector"]["matchLabels"]["app.kubernetes.io/component"])


def grpc_port(name: str) -> int:
    return COMPONENTS[name].default_grpc_port


# -- the chart itself ---------------------------------------------------------------------


def test_chart_metadata_follows_the_project() -> None:
    meta = _chart().metadata
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert meta["apiVersion"] == "v2"
    assert meta["name"] == "mithril"
    assert meta["appVersion"] == pyproject["project"]["version"]
    assert _chart().schema is not None, "values.schema.json must ship with the chart"
    assert set(_chart().values["components"]) == set(COMPONENTS) == set(ALL)


@pytest.mark.parametrize("values_file", ["values.yaml", "values-ha.yaml"])
def test_lint_reports_no_errors_or_warnings(values_file: str) -> None:
    values = None if values_file == "values.yaml" else _ha_values()
    report = helm_python.lint(CHART, values, strict=True, namespace=NAMESPACE)
    assert report["errors"] == []
    serious = [m for m in report["messages"] if m["severity"] >= 2]
    assert serious == []


@pytest.mark.parametrize("kube_version", KUBE_VERSIONS)
def test_every_object_validates_against_the_kubernetes_schemas(
    release: Rendered, kube_version: str
) -> None:
    assert release.objects
    for obj in release.objects:
        if obj["kind"] == "ServiceMonitor":
            # A CRD: kubernetes-validate ships no schema for it (checked below by hand).
            with pytest.raises(kubernetes_validate.SchemaNotFoundError):
                kubernetes_validate.validate(obj, kube_version, strict=True)
            continue
        try:
            kubernetes_validate.validate(obj, kube_version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = ".".join(str(p) for p in exc.path)
            pytest.fail(f"{obj['kind']}/{obj['metadata']['name']}: {where}: {exc.message}")


def test_objects_are_named_and_namespaced_per_release(release: Rendered) -> None:
    names = [(o["kind"], o["metadata"]["name"]) for o in release.objects]
    assert len(names) == len(set(names)), "two objects share a kind and name"
    for obj in release.objects:
        assert obj["metadata"]["namespace"] == NAMESPACE
        assert obj["metadata"]["name"].startswith(f"{RELEASE}-") or obj["metadata"]["name"] == (
            RELEASE
        )
        assert obj["metadata"]["labels"]["app.kubernetes.io/instance"] == RELEASE


def test_default_release_runs_every_component_once() -> None:
    r = _default()
    assert r.components("Deployment") == set(ALL)
    assert r.components("Service") == set(ALL)
    for name in ALL:
        assert r.one("Deployment", name)["spec"]["replicas"] == 1
    assert r.of("HorizontalPodAutoscaler") == []
    assert r.of("PodDisruptionBudget") == []
    assert r.of("ServiceMonitor") == []
    assert r.components("PersistentVolumeClaim") == {"memory-gate"}


def test_one_image_and_the_component_as_argument(release: Rendered) -> None:
    version = _chart().metadata["appVersion"]
    for name in ALL:
        container = release.container(name)
        assert container["image"] == f"mithril:{version}"
        assert container["command"] == ["mithril", "serve"]
        assert container["args"] == [name]
        assert container["name"] == name


# -- toggles, replicas, HPA, PDB -------------------------------------------------------------


def test_ha_replica_counts_autoscalers_and_budgets() -> None:
    r = _ha()
    hpas = {component_of(h): h for h in r.of("HorizontalPodAutoscaler")}
    assert set(hpas) == {"gateway", "scanner", "secrets"}
    for name, hpa in hpas.items():
        assert hpa["spec"]["minReplicas"] == 3
        assert hpa["spec"]["maxReplicas"] >= 3
        assert hpa["spec"]["scaleTargetRef"] == {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "name": f"{RELEASE}-{name}",
        }
        # The HPA owns the count: a replicas field would reset it on every upgrade.
        assert "replicas" not in r.one("Deployment", name)["spec"]
    for name, replicas in {"embedding": 2, "reputation": 2, "judge": 2, "memory-gate": 1}.items():
        assert r.one("Deployment", name)["spec"]["replicas"] == replicas
    pdbs = {component_of(p): p["spec"] for p in r.of("PodDisruptionBudget")}
    assert set(pdbs) == set(ALL) - {"memory-gate"}
    assert pdbs["gateway"]["minAvailable"] == 2
    assert pdbs["embedding"]["minAvailable"] == 1
    for name, spec in pdbs.items():
        labels = spec["selector"]["matchLabels"]
        assert labels["app.kubernetes.io/component"] == name
        assert labels == r.one("Deployment", name)["spec"]["selector"]["matchLabels"]


def test_ha_spreads_replicated_components_over_nodes_and_zones() -> None:
    r = _ha()
    for name in set(ALL) - {"memory-gate"}:
        pod = r.one("Deployment", name)["spec"]["template"]["spec"]
        (constraint,) = pod["topologySpreadConstraints"]
        assert constraint["topologyKey"] == "topology.kubernetes.io/zone"
        assert constraint["labelSelector"]["matchLabels"]["app.kubernetes.io/component"] == name
        (term,) = pod["affinity"]["podAntiAffinity"][
            "preferredDuringSchedulingIgnoredDuringExecution"
        ]
        assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
        selector = term["podAffinityTerm"]["labelSelector"]["matchLabels"]
        assert selector["app.kubernetes.io/component"] == name
    memory_gate = r.one("Deployment", "memory-gate")["spec"]["template"]["spec"]
    assert "affinity" not in memory_gate
    assert "topologySpreadConstraints" not in memory_gate


def test_hpa_and_pdb_exist_only_where_enabled() -> None:
    r = Rendered(
        comp(
            "scanner",
            replicas=2,
            autoscaling={"enabled": True, "minReplicas": 2, "maxReplicas": 4},
            podDisruptionBudget={"enabled": True, "minAvailable": None, "maxUnavailable": 1},
        )
    )
    assert r.components("HorizontalPodAutoscaler") == {"scanner"}
    assert r.components("PodDisruptionBudget") == {"scanner"}
    assert r.one("PodDisruptionBudget", "scanner")["spec"]["maxUnavailable"] == 1
    hpa = r.one("HorizontalPodAutoscaler", "scanner")["spec"]
    assert (hpa["minReplicas"], hpa["maxReplicas"]) == (2, 4)
    assert hpa["metrics"][0]["resource"]["target"]["averageUtilization"] == 70


@pytest.mark.parametrize("name", SERVICES)
def test_a_disabled_component_leaves_no_object_behind(name: str) -> None:
    values = comp(name, enabled=False)
    if name in ("scanner", "secrets", "reputation"):  # the memory gate needs them
        values = merged(values, comp("memory-gate", enabled=False))
    r = Rendered(values)
    assert name not in {component_of(o) for o in r.objects}
    text = json.dumps(r.objects)
    assert f"{RELEASE}-{name}." not in text  # no address points at it
    assert f'"app.kubernetes.io/component": "{name}"' not in text  # no policy names it


def test_disabling_the_judge_adjusts_its_callers() -> None:
    r = Rendered(comp("judge", enabled=False))
    assert "judge" not in r.components("Deployment")
    gateway = r.plain_env("gateway")
    assert "MITHRIL_GATEWAY_JUDGE_ADDR" not in gateway
    assert json.loads(gateway["MITHRIL_GATEWAY_LEARNED_TIERS"]) == ["embedding", "classifier"]
    # An empty address makes the memory gate skip the judge (its default is localhost).
    assert r.plain_env("memory-gate")["MITHRIL_MEMORY_GATE_JUDGE_ADDR"] == ""
    for name in ("gateway", "memory-gate"):
        policy = r.one("NetworkPolicy", name)
        callees = {
            selector_component(p)
            for rule in policy["spec"]["egress"]
            for p in rule.get("to", [])
            if "podSelector" in p
        }
        assert callees == CALLS[name] - {"judge"}
    # Default: every learned tier is on.
    default_tiers = _default().plain_env("gateway")["MITHRIL_GATEWAY_LEARNED_TIERS"]
    assert json.loads(default_tiers) == ["embedding", "classifier", "judge"]


def test_disabling_embedding_leaves_only_the_judge_tier() -> None:
    r = Rendered(comp("embedding", enabled=False))
    assert json.loads(r.plain_env("gateway")["MITHRIL_GATEWAY_LEARNED_TIERS"]) == ["judge"]
    assert "MITHRIL_GATEWAY_EMBEDDING_ADDR" not in r.plain_env("gateway")


# -- probes, ports, addresses -----------------------------------------------------------------


def test_probes_are_native_grpc_on_each_component_port(release: Rendered) -> None:
    for name in ALL:
        container = release.container(name)
        for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
            spec = container[probe]
            assert spec["grpc"] == {"port": grpc_port(name)}, (name, probe)
            assert not {"httpGet", "tcpSocket", "exec"} & set(spec)
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        expected = {"grpc": grpc_port(name)}
        if name == "gateway":
            expected["http"] = COMPONENTS["gateway"].default_http_port or 0
        assert ports == expected


def test_components_listen_where_the_chart_says(release: Rendered) -> None:
    for name in SERVICES:
        assert release.plain_env(name)[COMPONENTS[name].grpc_port_env] == str(grpc_port(name))
    gateway = release.plain_env("gateway")
    assert gateway["MITHRIL_GATEWAY_GRPC_PORT"] == str(grpc_port("gateway"))
    assert gateway["MITHRIL_GATEWAY_HTTP_PORT"] == str(COMPONENTS["gateway"].default_http_port)
    assert gateway["MITHRIL_GATEWAY_HTTP_HOST"] == "0.0.0.0"  # reachable from other pods


def test_services_are_headless_and_callers_resolve_every_pod(release: Rendered) -> None:
    for name in SERVICES:
        service = release.one("Service", name)["spec"]
        assert service["clusterIP"] == "None"
        assert service["ports"] == [
            {
                "name": "grpc",
                "port": grpc_port(name),
                "targetPort": "grpc",
                "protocol": "TCP",
                "appProtocol": "grpc",
            }
        ]
    gateway_service = release.one("Service", "gateway")["spec"]
    assert gateway_service["type"] == "ClusterIP"
    assert {p["name"] for p in gateway_service["ports"]} == {"grpc", "http"}
    for consumer, callees in CALLS.items():
        env = release.plain_env(consumer)
        addresses = {k: v for k, v in env.items() if k.endswith("_ADDR")}
        assert set(addresses) == {
            COMPONENTS[c].addr_env(consumer.upper().replace("-", "_")) for c in callees
        }
        for callee in callees:
            service = release.one("Service", callee)["metadata"]["name"]
            address = addresses[COMPONENTS[callee].addr_env(consumer.upper().replace("-", "_"))]
            assert address == (
                f"dns:///{service}.{NAMESPACE}.svc.cluster.local:{grpc_port(callee)}"
            )


# -- security -----------------------------------------------------------------------------


def test_every_container_is_hardened(release: Rendered) -> None:
    deployments = release.of("Deployment")
    assert len(deployments) == len(ALL)
    for deployment in deployments:
        pod = deployment["spec"]["template"]["spec"]
        assert pod["automountServiceAccountToken"] is False
        # Service links would inject MITHRIL_SCANNER_PORT=tcp://... (from the Service
        # "mithril-scanner") over the component's own integer setting.
        assert pod["enableServiceLinks"] is False
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
        for container in [*pod.get("initContainers", []), *pod["containers"]]:
            sc = container["securityContext"]
            assert sc["runAsNonRoot"] is True
            assert sc["runAsUser"] == 10001
            assert sc["readOnlyRootFilesystem"] is True
            assert sc["allowPrivilegeEscalation"] is False
            assert sc["privileged"] is False
            assert sc["capabilities"] == {"drop": ["ALL"]}
            assert sc["seccompProfile"] == {"type": "RuntimeDefault"}


def test_writable_paths_are_volumes(release: Rendered) -> None:
    for name in ALL:
        pod = release.one("Deployment", name)["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in pod["volumes"]}
        mounts = {m["mountPath"]: m["name"] for m in pod["containers"][0]["volumeMounts"]}
        assert "emptyDir" in volumes[mounts["/tmp"]]
        home = volumes[mounts[HOME]]
        if name == "memory-gate":
            claim = home["persistentVolumeClaim"]["claimName"]
            assert claim in {p["metadata"]["name"] for p in release.of("PersistentVolumeClaim")}
        else:
            assert "emptyDir" in home
        assert release.plain_env(name)["MITHRIL_HOME"] == HOME


SENTINELS = {
    "serviceToken": "sentinel-service-token-0123456789",
    "adminToken": "sentinel-admin-token-0123456789",
    "gatewayAuthToken": "sentinel-gateway-auth-0123456789",
    "judgeApiKey": "sentinel-judge-key-0123456789",
    "memoryGateLlmApiKey": "sentinel-cognee-key-0123456789",
}
SECRET_DB = "postgresql+psycopg://mithril:sentinel-db-password@db.example:5432/mithril"


def test_secrets_reach_containers_only_through_secret_key_refs() -> None:
    values = ha(
        {
            "secrets": {**SENTINELS, "extra": {"upstream-api-key": "sentinel-upstream-0123"}},
            "database": {"url": SECRET_DB},
            "components": {
                "gateway": {"secretEnv": {"OPENAI_API_KEY": "upstream-api-key"}},
                "judge": {"llm": {"baseUrl": "https://llm.example/v1", "model": "m"}},
            },
        }
    )
    r = Rendered(values)
    secret = r.secret()
    assert secret is not None
    decoded = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert decoded == {
        "service-token": SENTINELS["serviceToken"],
        "admin-token": SENTINELS["adminToken"],
        "gateway-auth-token": SENTINELS["gatewayAuthToken"],
        "judge-api-key": SENTINELS["judgeApiKey"],
        "memory-gate-llm-api-key": SENTINELS["memoryGateLlmApiKey"],
        "database-url": SECRET_DB,
        "upstream-api-key": "sentinel-upstream-0123",
    }
    everything_else = json.dumps([o for o in r.objects if o["kind"] != "Secret"])
    for value in [*decoded.values(), "sentinel-db-password"]:
        assert value not in everything_else
    secret_name = secret["metadata"]["name"]
    expected_refs = {
        "gateway": {
            "MITHRIL_GATEWAY_SERVICE_TOKEN": "service-token",
            "MITHRIL_GATEWAY_ADMIN_TOKEN": "admin-token",
            "MITHRIL_GATEWAY_AUTH_TOKEN": "gateway-auth-token",
            "MITHRIL_GATEWAY_DATABASE_URL": "database-url",
            "OPENAI_API_KEY": "upstream-api-key",
        },
        "memory-gate": {
            "MITHRIL_MEMORY_GATE_AUTH_TOKEN": "service-token",
            "MITHRIL_MEMORY_GATE_SERVICE_TOKEN": "service-token",
            "MITHRIL_MEMORY_GATE_LLM_API_KEY": "memory-gate-llm-api-key",
            "MITHRIL_MEMORY_GATE_DATABASE_URL": "database-url",
        },
        "judge": {
            "MITHRIL_JUDGE_AUTH_TOKEN": "service-token",
            "MITHRIL_JUDGE_API_KEY": "judge-api-key",
        },
        "reputation": {
            "MITHRIL_REPUTATION_AUTH_TOKEN": "service-token",
            "MITHRIL_REPUTATION_DATABASE_URL": "database-url",
        },
        **{
            s: {f"MITHRIL_{s.upper()}_AUTH_TOKEN": "service-token"}
            for s in ("scanner", "secrets", "embedding")
        },
    }
    for name in ALL:
        env = r.env(name)
        names = [e["name"] for e in r.container(name)["env"]]
        assert len(names) == len(set(names)), f"{name}: an env var is set twice"
        refs = {
            n: e["valueFrom"]["secretKeyRef"]
            for n, e in env.items()
            if "secretKeyRef" in e.get("valueFrom", {})
        }
        assert {n: ref["key"] for n, ref in refs.items()} == expected_refs[name], name
        assert {ref["name"] for ref in refs.values()} == {secret_name}
        for var, entry in env.items():
            if any(word in var for word in ("TOKEN", "KEY", "PASSWORD", "DATABASE_URL")):
                assert "value" not in entry, f"{name}: {var} is plain env"


def test_tokens_are_generated_when_not_given() -> None:
    secret = _default().secret()
    assert secret is not None
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert set(data) == {"service-token", "admin-token"}  # optional keys only when set
    assert all(len(v) >= 32 and v.isalnum() for v in data.values())


def test_an_existing_secret_replaces_the_charts() -> None:
    r = Rendered(
        {
            "secrets": {"existingSecret": "my-keys"},
            "database": {"existingSecret": "my-db", "existingSecretKey": "url"},
        }
    )
    assert r.secret() is None
    for name in ALL:
        for entry in r.env(name).values():
            ref = entry.get("valueFrom", {}).get("secretKeyRef")
            if ref is None:
                continue
            if entry["name"].endswith("_DATABASE_URL"):
                assert (ref["name"], ref["key"]) == ("my-db", "url")
            else:
                assert ref["name"] == "my-keys"
    with_url = {n for n in ALL if any(e.endswith("_DATABASE_URL") for e in r.env(n))}
    assert with_url == DATABASE_USERS


def test_database_url_only_for_its_users_and_only_when_set() -> None:
    for name in ALL:
        assert not any(n.endswith("_DATABASE_URL") for n in _default().env(name))
        has_url = any(n.endswith("_DATABASE_URL") for n in _ha().env(name))
        assert has_url == (name in DATABASE_USERS), name


# -- network policies -----------------------------------------------------------------------


def _ingress_callers(policy: Obj) -> dict[str, set[str]]:
    """Callers (by component) allowed in, per port name."""
    allowed: dict[str, set[str]] = {}
    for rule in policy["spec"]["ingress"]:
        peers = [
            p for p in rule.get("from", []) if "podSelector" in p and "namespaceSelector" not in p
        ]
        for port in rule["ports"]:
            allowed.setdefault(port["port"], set()).update(selector_component(p) for p in peers)
    return allowed


def _egress_callees(policy: Obj) -> dict[str, int]:
    return {
        selector_component(peer): rule["ports"][0]["port"]
        for rule in policy["spec"].get("egress", [])
        for peer in rule.get("to", [])
        if "matchLabels" in peer.get("podSelector", {})
        and "app.kubernetes.io/component" in peer["podSelector"]["matchLabels"]
    }


def test_ingress_is_denied_by_default(release: Rendered) -> None:
    (deny,) = [
        p for p in release.of("NetworkPolicy") if p["metadata"]["name"].endswith("-default-deny")
    ]
    assert deny["spec"]["podSelector"]["matchLabels"] == {
        "app.kubernetes.io/name": "mithril",
        "app.kubernetes.io/instance": RELEASE,
    }
    assert deny["spec"]["policyTypes"] == ["Ingress", "Egress"]
    assert "ingress" not in deny["spec"] and "egress" not in deny["spec"]
    assert release.components("NetworkPolicy") == set(ALL) | {""}


def test_network_policies_allow_exactly_the_call_graph(release: Rendered) -> None:
    for name in SERVICES:
        policy = release.one("NetworkPolicy", name)
        assert policy["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/component"] == name
        callers = {c for c, callees in CALLS.items() if name in callees}
        assert _ingress_callers(policy) == {"grpc": callers}, name
        # Services reach no other pod of the release unless they call it.
        assert _egress_callees(policy) == {c: grpc_port(c) for c in CALLS.get(name, ())}, name
    assert _egress_callees(release.one("NetworkPolicy", "gateway")) == {
        c: grpc_port(c) for c in CALLS["gateway"]
    }


def test_gateway_is_open_to_clients_and_to_prometheus(release: Rendered) -> None:
    rules = release.one("NetworkPolicy", "gateway")["spec"]["ingress"]
    clients, metrics = rules
    assert "from" not in clients  # from anywhere by default
    assert {p["port"] for p in clients["ports"]} == {"http", "grpc"}
    assert metrics["ports"] == [{"port": "http", "protocol": "TCP"}]
    (peer,) = metrics["from"]
    assert peer["namespaceSelector"] == {
        "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
    }


def test_gateway_clients_and_scrapers_are_configurable() -> None:
    clients = [{"namespaceSelector": {"matchLabels": {"team": "apps"}}}]
    scrapers = [{"namespaceSelector": {"matchLabels": {"x": "prom"}}, "podSelector": {}}]
    rules = Rendered({"networkPolicy": {"ingress": {"gateway": clients, "metrics": scrapers}}}).one(
        "NetworkPolicy", "gateway"
    )["spec"]["ingress"]
    assert [rule["from"] for rule in rules] == [clients, scrapers]
    # No scrapers: clients only.
    rules = Rendered({"networkPolicy": {"ingress": {"gateway": clients, "metrics": []}}}).one(
        "NetworkPolicy", "gateway"
    )["spec"]["ingress"]
    assert [rule["from"] for rule in rules] == [clients]


def test_egress_reaches_dns_database_collector_and_llms_only_where_needed() -> None:
    def port_sets(r: Rendered, name: str) -> list[set[int]]:
        return [
            {p["port"] for p in rule["ports"]}
            for rule in r.one("NetworkPolicy", name)["spec"]["egress"]
            if not any(
                "podSelector" in peer and "namespaceSelector" not in peer
                for peer in rule.get("to", [])
            )
        ]

    default, full = (
        _default(),
        Rendered(
            ha(
                comp("judge", llm={"baseUrl": "https://llm.example/v1", "model": "m"}),
                comp("memory-gate", llm={"baseUrl": "https://llm.example/v1", "model": "m"}),
            )
        ),
    )
    for name in ALL:
        assert {53} in port_sets(default, name) and {53} in port_sets(full, name)
        # Nothing but DNS (and the gateway's upstream) without a database, collector or LLM.
        assert port_sets(default, name) == ([{53}, {443}] if name == "gateway" else [{53}])
        rules = port_sets(full, name)
        assert ({5432} in rules) == (name in DATABASE_USERS), name
        assert {4317, 4318} in rules, name
        assert ({443} in rules) == (name in {"gateway", "judge", "memory-gate"}), name
    ha_policy = full.one("NetworkPolicy", "reputation")["spec"]["egress"]
    (db_rule,) = [rule for rule in ha_policy if rule["ports"][0]["port"] == 5432]
    assert db_rule["to"] == [
        {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "database"}}}
    ]


def test_network_policies_can_be_turned_off() -> None:
    assert Rendered({"networkPolicy": {"enabled": False}}).of("NetworkPolicy") == []
    ingress_only = Rendered({"networkPolicy": {"egress": {"enabled": False}}})
    for policy in ingress_only.of("NetworkPolicy"):
        assert policy["spec"]["policyTypes"] == ["Ingress"]
        assert "egress" not in policy["spec"]


# -- policy, state, telemetry, monitoring ----------------------------------------------------


def test_policy_comes_from_a_mounted_config_map(release: Rendered) -> None:
    (config_map,) = release.of("ConfigMap")
    pod = release.one("Deployment", "gateway")["spec"]["template"]["spec"]
    assert release.plain_env("gateway")["MITHRIL_GATEWAY_POLICY_FILE"] == POLICY_FILE
    (mount,) = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] == "policy"]
    assert mount["mountPath"] == str(Path(POLICY_FILE).parent) and mount["readOnly"] is True
    (volume,) = [v for v in pod["volumes"] if v["name"] == "policy"]
    assert volume["configMap"]["name"] == config_map["metadata"]["name"]
    assert volume["configMap"]["items"] == [{"key": "policy.yaml", "path": "policy.yaml"}]
    text = config_map["data"]["policy.yaml"]
    assert yaml.safe_load(text) == _chart().values["policy"]["content"]
    # The gateway accepts it as it stands (no environment needed).
    book = PolicyBook.from_text(text, source="policy.yaml", env={})
    assert book.tenant_names == ("default",)
    for name in SERVICES:  # only the gateway reads a policy
        assert "MITHRIL_GATEWAY_POLICY_FILE" not in release.plain_env(name)


def test_an_existing_policy_config_map_is_mounted_instead() -> None:
    r = Rendered({"policy": {"existingConfigMap": "team-policy"}})
    assert r.of("ConfigMap") == []
    pod = r.one("Deployment", "gateway")["spec"]["template"]["spec"]
    (volume,) = [v for v in pod["volumes"] if v["name"] == "policy"]
    assert volume["configMap"]["name"] == "team-policy"


def test_memory_gate_runs_one_replica_on_a_kept_volume(release: Rendered) -> None:
    deployment = release.one("Deployment", "memory-gate")["spec"]
    assert deployment["replicas"] == 1
    assert deployment["strategy"] == {"type": "Recreate"}
    assert release.maybe("HorizontalPodAutoscaler", "memory-gate") is None
    assert release.maybe("PodDisruptionBudget", "memory-gate") is None
    claim = release.one("PersistentVolumeClaim", "memory-gate")
    assert claim["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    assert claim["spec"]["accessModes"] == ["ReadWriteOnce"]


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"replicas": 2}, "must run exactly 1 replica"),
        ({"autoscaling": {"enabled": True}}, "cannot scale"),
    ],
)
def test_memory_gate_refuses_to_scale(settings: Obj, message: str) -> None:
    for base in ({}, _ha_values()):
        with pytest.raises(helm_python.HelmRenderError, match=message):
            render_raw(merged(base, comp("memory-gate", **settings)))


@pytest.mark.parametrize("name", ["gateway", "reputation"])
def test_replicated_state_needs_postgresql(name: str) -> None:
    with pytest.raises(helm_python.HelmRenderError, match=r"database\.url"):
        render_raw(comp(name, replicas=2))
    with pytest.raises(helm_python.HelmRenderError, match=r"database\.url"):
        render_raw(ha({"database": {"url": ""}}, comp(name, replicas=2)))


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (comp("reputation", enabled=False), "memory-gate needs components.reputation"),
        (comp("secrets", enabled=False), "memory-gate needs components.secrets"),
        (
            merged(
                comp("scanner", enabled=False),
                comp("memory-gate", enabled=False),
                comp("gateway", env={"MITHRIL_GATEWAY_FAST_TIER": "remote"}),
            ),
            "the gateway calls components.scanner",
        ),
        (
            {"default": {"podDisruptionBudget": {"enabled": True, "minAvailable": 1}}},
            "would block every node drain",
        ),
    ],
)
def test_inconsistent_values_fail_with_the_reason(values: Obj, message: str) -> None:
    with pytest.raises(helm_python.HelmRenderError, match=message):
        render_raw(values)


def test_otel_is_configured_on_every_component(release: Rendered) -> None:
    for name in ALL:
        env = release.plain_env(name)
        names = [e["name"] for e in release.container(name)["env"]]
        assert env["OTEL_SERVICE_NAME"] == f"mithril-{name}"
        attributes = dict(kv.split("=", 1) for kv in env["OTEL_RESOURCE_ATTRIBUTES"].split(","))
        assert attributes["k8s.pod.name"] == "$(K8S_POD_NAME)"
        assert attributes["mithril.component"] == name
        # $(VAR) expands only for variables defined earlier in the list.
        assert names.index("K8S_POD_NAME") < names.index("OTEL_RESOURCE_ATTRIBUTES")
        endpoint = release.values and release.values["otel"]["endpoint"]
        if endpoint:
            assert env["OTEL_EXPORTER_OTLP_ENDPOINT"] == endpoint
            assert attributes["deployment.environment"] == "production"
        else:
            assert "OTEL_EXPORTER_OTLP_ENDPOINT" not in env


def test_service_monitor_scrapes_the_gateway_metrics() -> None:
    (monitor,) = _ha().of("ServiceMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["labels"]["release"] == "prometheus"
    service = _ha().one("Service", "gateway")
    labels = service["metadata"]["labels"]
    for key, value in monitor["spec"]["selector"]["matchLabels"].items():
        assert labels[key] == value
    # Selects the gateway's Service and nothing else.
    assert monitor["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"] == "gateway"
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [NAMESPACE]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["path"] == "/metrics"
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    assert endpoint["port"] == "http"


def test_env_settings_merge_over_the_charts() -> None:
    r = Rendered(
        {
            "default": {"env": {"MITHRIL_LOG_LEVEL_HINT": "x"}},
            "components": {
                "scanner": {
                    "env": {"MITHRIL_SCANNER_LOG_LEVEL": "DEBUG", "OTEL_SERVICE_NAME": "s"}
                },
                "judge": {"llm": {"baseUrl": "http://vllm.llm:8000/v1", "model": "qwen"}},
            },
        }
    )
    scanner = r.plain_env("scanner")
    assert scanner["MITHRIL_SCANNER_LOG_LEVEL"] == "DEBUG"
    assert scanner["OTEL_SERVICE_NAME"] == "s"
    assert all(r.plain_env(n)["MITHRIL_LOG_LEVEL_HINT"] == "x" for n in ALL)
    judge = r.plain_env("judge")
    assert judge["MITHRIL_JUDGE_BASE_URL"] == "http://vllm.llm:8000/v1"
    assert judge["MITHRIL_JUDGE_MODEL"] == "qwen"


# -- values.schema.json ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "where"),
    [
        (comp("scanner", replicas="three"), "/components/scanner/replicas"),
        ({"default": {"replicas": -1}}, "/default/replicas"),
        (comp("gateway", port=70000), "/components/gateway/port"),
        ({"components": {"firewall": {"enabled": True, "port": 1}}}, "/components"),
        ({"default": {"replicaCount": 2}}, "/default"),
        ({"default": {"podAntiAffinity": "sometimes"}}, "/default/podAntiAffinity"),
        ({"database": {"url": "mysql://db/mithril"}}, "/database/url"),
        ({"default": {"probes": {"liveness": {"periodSeconds": 0}}}}, "/default/probes"),
        ({"secrets": {"adminToken": "short"}}, "/secrets/adminToken"),
        ({"secrets": {"extra": {"service-token": "x"}}}, "propertyName 'service-token'"),
    ],
)
def test_schema_rejects_bad_values(values: Obj, where: str) -> None:
    with pytest.raises(helm_python.HelmValuesError, match=where):
        render_raw(values)
    report = helm_python.lint(CHART, values)
    assert any(where in error for error in report["errors"]), report


def test_rendering_is_stable_apart_from_generated_tokens() -> None:
    """Two renders of the same values differ only where tokens are generated."""

    def without_secret(objects: list[Obj]) -> Iterator[Obj]:
        return (o for o in objects if o["kind"] != "Secret")

    assert list(without_secret(render())) == list(without_secret(render()))
    values = {"secrets": {"serviceToken": "t" * 32, "adminToken": "a" * 32}}
    assert render(values) == render(values)
