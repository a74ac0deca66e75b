"""Client channels between Mithril's components: one way to open them, one way to
authenticate, so every caller (gateway, memory gate, CLI) reconnects and traces alike.

A target names one service, however many replicas it has. Calls are spread round robin
over every address the target resolves to:

- `dns:///scanner:50051` (or plain `scanner:50051`): every A/AAAA record of the name,
  re-resolved when a connection drops (a Kubernetes headless service, a compose service
  with several replicas);
- `10.0.0.5:50051,10.0.0.6:50051`: a comma-separated list of IP literals (`[::1]:50051`
  for IPv6; `localhost` means 127.0.0.1), turned into gRPC's static `ipv4:` / `ipv6:`
  target by `channel_target`. gRPC cannot resolve a list of host names in one channel, so
  a list naming hosts is refused: give one DNS name that resolves to every replica.

Calls to the read-only services (scanner, secrets, embedding, reputation reads) that fail
with UNAVAILABLE, or that a stopping replica cancels, are retried on another address, so a
replica that dies or is stopped mid-call costs no request while another one is up. Calls
that change state (a reputation outcome, a memory write) and the judge (an LLM call,
UNAVAILABLE by design without one) are never retried.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable

import grpc

from mithril.runtime.tracing import ClientTracingInterceptor

CallObserver = Callable[[str, str, float], None]
"""Called with (service full name, method, seconds) after every unary call."""

GRPC_SCHEMES = frozenset(
    {"dns", "ipv4", "ipv6", "unix", "unix-abstract", "vsock", "xds", "google-c2p"}
)
"""Target schemes gRPC resolves itself; such targets are passed through untouched."""

_IDEMPOTENT: tuple[dict[str, str], ...] = (
    {"service": "mithril.scanner.v1.ScannerService"},
    {"service": "mithril.secrets.v1.SecretsService"},
    {"service": "mithril.embedding.v1.EmbeddingService"},
    {"service": "mithril.reputation.v1.ReputationService", "method": "GetReputation"},
    {"service": "mithril.reputation.v1.ReputationService", "method": "ListReputations"},
    {"service": "mithril.reputation.v1.ReputationService", "method": "GetHistory"},
)
SERVICE_CONFIG = json.dumps(
    {
        "methodConfig": [
            {
                "name": list(_IDEMPOTENT),
                # Within the caller's deadline: a lone dead replica fails as it did before,
                # a few tenths of a second later.
                "retryPolicy": {
                    "maxAttempts": 3,
                    "initialBackoff": "0.02s",
                    "maxBackoff": "0.2s",
                    "backoffMultiplier": 2,
                    # CANCELLED: a replica stopping (a rolling update, SIGTERM past its
                    # grace) cancels the calls it is still serving; a read can go elsewhere.
                    "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"],
                },
            }
        ]
    }
)
"""Retries of read-only calls on UNAVAILABLE or a server's CANCELLED (round robin sends a
retry to the next ready address; a call the caller cancels is never retried)."""


def bearer_metadata(token: str) -> tuple[tuple[str, str], ...]:
    """The call metadata carrying the shared service token, if one is configured."""
    return (("authorization", f"Bearer {token}"),) if token else ()


def _address(entry: str, target: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    host, separator, port = entry.rpartition(":")
    if not separator or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"gRPC target {target!r}: {entry!r} needs a port (host:port)")
    host = host.removeprefix("[").removesuffix("]") if host.startswith("[") else host
    if host == "localhost":
        host = "127.0.0.1"
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(
            f"gRPC target {target!r}: {host!r} is not an IP address; a list of replicas"
            " takes IP literals (10.0.0.5:50051,10.0.0.6:50051); for host names give one"
            " DNS name that resolves to every replica (dns:///scanner:50051)"
        ) from None


def channel_target(target: str) -> str:
    """The gRPC target for `target`: a comma-separated list of `ip:port` replicas becomes
    one static `ipv4:` (or, with any IPv6 address, `ipv6:`) target; anything else (one
    host:port, `dns:///name:port`, any scheme gRPC knows) is returned unchanged.

    >>> channel_target("127.0.0.1:5001, 127.0.0.1:5002")
    'ipv4:127.0.0.1:5001,127.0.0.1:5002'
    >>> channel_target("[::1]:5001,127.0.0.1:5002")
    'ipv6:[::1]:5001,[::ffff:127.0.0.1]:5002'
    """
    target = target.strip()
    scheme, colon, _ = target.partition(":")
    if colon and scheme.lower() in GRPC_SCHEMES:
        return target
    entries = [entry.strip() for entry in target.split(",") if entry.strip()]
    if len(entries) <= 1:
        return entries[0] if entries else target
    ports = [entry.rpartition(":")[2] for entry in entries]
    addresses = [_address(entry, target) for entry in entries]
    if all(isinstance(address, ipaddress.IPv4Address) for address in addresses):
        return "ipv4:" + ",".join(f"{a}:{p}" for a, p in zip(addresses, ports, strict=True))
    # ipv6: takes IPv4 addresses in their mapped form (dual-stack sockets reach them).
    mapped = (f"::ffff:{a}" if isinstance(a, ipaddress.IPv4Address) else str(a) for a in addresses)
    return "ipv6:" + ",".join(f"[{a}]:{p}" for a, p in zip(mapped, ports, strict=True))


def open_channel(target: str, observe: CallObserver | None = None) -> grpc.aio.Channel:
    """An insecure channel with tracing and round robin over every address of `target`
    (see `channel_target` for lists of replicas)."""
    return grpc.aio.insecure_channel(
        channel_target(target),
        options=[
            ("grpc.lb_policy_name", "round_robin"),
            ("grpc.max_receive_message_length", 64 * 1024 * 1024),
            ("grpc.max_send_message_length", 64 * 1024 * 1024),
            ("grpc.enable_retries", 1),
            ("grpc.service_config", SERVICE_CONFIG),
            # A restarted service is found again within a second, not after grpc's default
            # exponential backoff (up to two minutes), during which every call fails fast.
            ("grpc.initial_reconnect_backoff_ms", 100),
            ("grpc.min_reconnect_backoff_ms", 100),
            ("grpc.max_reconnect_backoff_ms", 1000),
            # Connections of this channel only: from gRPC's process-wide pool a new channel
            # would inherit another channel's connection to the same address while it waits
            # out a backoff (that service was down a moment ago), and fail its first calls.
            ("grpc.use_local_subchannel_pool", 1),
        ],
        interceptors=[ClientTracingInterceptor(observe=observe)],
    )
