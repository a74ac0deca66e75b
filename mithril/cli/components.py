"""The processes `mithril up` starts and `mithril serve` runs, in start order."""

from __future__ import annotations

import os
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Component:
    name: str
    module: str
    grpc_port_env: str
    default_grpc_port: int
    http_port_env: str | None = None
    default_http_port: int | None = None

    @property
    def grpc_port(self) -> int:
        return int(os.environ.get(self.grpc_port_env, self.default_grpc_port))

    @property
    def http_port(self) -> int | None:
        if self.http_port_env is None:
            return None
        return int(os.environ.get(self.http_port_env, self.default_http_port or 0))

    @property
    def gateway_addr_env(self) -> str:
        """The gateway setting that points at this service."""
        return self.addr_env("GATEWAY")

    def addr_env(self, consumer: str) -> str:
        """The setting of `consumer` ("GATEWAY", "MEMORY_GATE") that points at this service."""
        return f"MITHRIL_{consumer}_{self.name.upper().replace('-', '_')}_ADDR"


# Services first, the gateway last: it needs them to answer.
SERVICES = (
    Component("scanner", "mithril.services.scanner", "MITHRIL_SCANNER_PORT", 50051),
    Component("secrets", "mithril.services.secrets", "MITHRIL_SECRETS_PORT", 50052),
    Component("embedding", "mithril.services.embedding", "MITHRIL_EMBEDDING_PORT", 50053),
    Component("judge", "mithril.services.judge", "MITHRIL_JUDGE_PORT", 50054),
    Component("reputation", "mithril.services.reputation", "MITHRIL_REPUTATION_PORT", 50055),
    # After the services it calls: it reports SERVING only once it can decide.
    Component("memory-gate", "mithril.services.memorygate", "MITHRIL_MEMORY_GATE_PORT", 50056),
)
CONSUMERS = ("GATEWAY", "MEMORY_GATE")
"""Components that call services: each is told where every service listens."""
GATEWAY = Component(
    "gateway",
    "mithril.gateway",
    "MITHRIL_GATEWAY_GRPC_PORT",
    50050,
    "MITHRIL_GATEWAY_HTTP_PORT",
    8080,
)
COMPONENTS: dict[str, Component] = {c.name: c for c in (*SERVICES, GATEWAY)}
