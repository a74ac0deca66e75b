#!/usr/bin/env python3
"""`mithril-healthcheck COMPONENT`: exit 0 when the component in this container is ready.

Installed in the image as /usr/local/bin/mithril-healthcheck and run by compose's
healthchecks. It asks the component's standard gRPC health service (overall status, the
empty service name) on 127.0.0.1, at the port the component itself reads from its
MITHRIL_* variable, and for the gateway also GET /healthz on its HTTP port. Health checks
never need the services' bearer token. Kubernetes does not need this: it probes gRPC
health natively.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from mithril.cli.components import COMPONENTS

TIMEOUT_SECONDS = 3.0


def grpc_serving(port: int, timeout: float = TIMEOUT_SECONDS) -> str | None:
    """None when the gRPC health service answers SERVING, else why not."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        try:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=timeout
            )
        except grpc.RpcError as error:
            return f"gRPC health on port {port}: {error.code().name}"
    if reply.status != health_pb2.HealthCheckResponse.SERVING:
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
        return f"gRPC health on port {port}: {status}"
    return None


def http_ok(port: int, timeout: float = TIMEOUT_SECONDS) -> str | None:
    """None when GET /healthz answers 200, else why not."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=timeout) as reply:
            if reply.status == 200:
                return None
            return f"GET /healthz on port {port}: HTTP {reply.status}"
    except (urllib.error.URLError, OSError) as error:
        return f"GET /healthz on port {port}: {error}"


def check(name: str) -> str | None:
    """None when `name` is ready, else the first reason it is not."""
    component = COMPONENTS[name]
    problem = grpc_serving(component.grpc_port)
    if problem is None and component.http_port is not None:
        problem = http_ok(component.http_port)
    return problem


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in COMPONENTS:
        print(f"usage: mithril-healthcheck {{{'|'.join(COMPONENTS)}}}", file=sys.stderr)
        return 2
    problem = check(argv[0])
    if problem is not None:
        print(f"{argv[0]} not ready: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
